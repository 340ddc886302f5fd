/*
 * escape.c - the HTML escaping of docs/CONTRACT.md section 5.
 *
 * Safe bytes are copied in runs with memcpy, so a value with nothing to
 * escape costs one scan and one copy.
 */
#include <string.h>

#include "escape.h"

/* Extra bytes each input byte needs once escaped; non-zero only for 5. */
static const unsigned char blog_escape_extra[256] = {
    ['&'] = 4,                  /* &amp; */
    ['<'] = 3,                  /* &lt;  */
    ['>'] = 3,                  /* &gt;  */
    ['"'] = 4,                  /* &#34; */
    ['\''] = 4,                 /* &#39; */
};

size_t
blog_escaped_len(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *) s;
    size_t n = len;
    size_t i;

    for (i = 0; i < len; i++)
        n += blog_escape_extra[p[i]];
    return n;
}

static char *
blog_escape_entity(char *dst, unsigned char c)
{
    const char *e;
    size_t n;

    switch (c) {
    case '&':
        e = "&amp;";
        n = 5;
        break;
    case '<':
        e = "&lt;";
        n = 4;
        break;
    case '>':
        e = "&gt;";
        n = 4;
        break;
    case '"':
        e = "&#34;";
        n = 5;
        break;
    default:
        e = "&#39;";
        n = 5;
        break;
    }
    memcpy(dst, e, n);
    return dst + n;
}

char *
blog_escape(char *dst, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *) s;
    size_t run = 0;
    size_t i;

    for (i = 0; i < len; i++) {
        if (blog_escape_extra[p[i]] == 0)
            continue;
        if (i > run) {
            memcpy(dst, s + run, i - run);
            dst += i - run;
        }
        dst = blog_escape_entity(dst, p[i]);
        run = i + 1;
    }
    if (len > run) {
        memcpy(dst, s + run, len - run);
        dst += len - run;
    }
    return dst;
}

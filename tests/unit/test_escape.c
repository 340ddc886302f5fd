/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_escape.c - the five escapes of docs/CONTRACT.md section 5, and
 * nothing else.
 */
#include <stdlib.h>

#include "core/escape.h"
#include "harness.h"

static void
check_escape(const char *in, size_t len, const char *want)
{
    size_t n = blog_escaped_len(in, len);
    char *out = malloc(n ? n : 1);
    char *end;

    if (out == NULL)
        abort();
    end = blog_escape(out, in, len);

    CHECK(n == strlen(want));
    CHECK((size_t) (end - out) == n);
    CHECK_MEM(out, (size_t) (end - out), want, strlen(want));
    free(out);
}

static void
test_five_bytes(void)
{
    check_escape("&", 1, "&amp;");
    check_escape("<", 1, "&lt;");
    check_escape(">", 1, "&gt;");
    check_escape("\"", 1, "&#34;");
    check_escape("'", 1, "&#39;");
    check_escape("<>&\"'", 5, "&lt;&gt;&amp;&#34;&#39;");
    check_escape("&amp;", 5, "&amp;amp;");
}

static void
test_mixed(void)
{
    check_escape("", 0, "");
    check_escape("plain words", 11, "plain words");
    check_escape("Ken & Dennis", 12, "Ken &amp; Dennis");
    check_escape("Why <b>bold</b> matters", 23,
                 "Why &lt;b&gt;bold&lt;/b&gt; matters");
    check_escape("O'Hara", 6, "O&#39;Hara");
    check_escape("a&", 2, "a&amp;");
    check_escape("&a", 2, "&amp;a");
    /* UTF-8, NUL and control bytes pass through */
    check_escape("Z\xc3\xab \xe2\x80\x94 \xe6\x9d\x8e", 11,
                 "Z\xc3\xab \xe2\x80\x94 \xe6\x9d\x8e");
    {
        const char in[] = {'a', '\0', '<', '\n'};
        const char want[] = {'a', '\0', '&', 'l', 't', ';', '\n'};
        char out[16];
        char *end = blog_escape(out, in, sizeof(in));

        CHECK(blog_escaped_len(in, sizeof(in)) == sizeof(want));
        CHECK_MEM(out, (size_t) (end - out), want, sizeof(want));
    }
}

static void
test_every_byte(void)
{
    int c;

    for (c = 0; c < 256; c++) {
        char ch = (char) c;
        char out[8];
        char *end = blog_escape(out, &ch, 1);
        size_t n = (size_t) (end - out);

        CHECK(n == blog_escaped_len(&ch, 1));
        if (strchr("&<>\"'", c) == NULL || c == 0)
            CHECK(n == 1 && out[0] == ch);
        else
            CHECK(n > 1 && out[0] == '&' && out[n - 1] == ';');
    }
}

static void
test_long_runs(void)
{
    /* long safe runs around escapes, into a buffer of the exact size */
    size_t len = 10000;
    char *in = malloc(len);
    char *out;
    char *end;
    size_t i;
    size_t amps = 0;

    if (in == NULL)
        abort();
    for (i = 0; i < len; i++) {
        in[i] = (i % 97 == 0) ? '&' : 'x';
        amps += in[i] == '&';
    }
    out = malloc(blog_escaped_len(in, len));
    if (out == NULL)
        abort();
    end = blog_escape(out, in, len);
    CHECK((size_t) (end - out) == len + 4 * amps);
    CHECK(memcmp(out, "&amp;xxx", 8) == 0);
    CHECK(memcmp(out + 5 + 96, "&amp;", 5) == 0);
    free(out);
    free(in);
}

/* The contract's five escapes, a byte at a time, as the check for escape.c. */
static size_t
reference_escape(char *dst, const unsigned char *s, size_t len)
{
    size_t n = 0;
    size_t i;

    for (i = 0; i < len; i++) {
        const char *e = NULL;

        switch (s[i]) {
        case '&': e = "&amp;"; break;
        case '<': e = "&lt;"; break;
        case '>': e = "&gt;"; break;
        case '"': e = "&#34;"; break;
        case '\'': e = "&#39;"; break;
        }
        if (e) {
            memcpy(dst + n, e, strlen(e));
            n += strlen(e);
        } else
            dst[n++] = (char) s[i];
    }
    return n;
}

/*
 * escape.c scans 16 bytes at a time, then the tail a byte at a time: every
 * byte value at every offset of values of every length up to 70, alone and
 * beside neighbours that need escaping too, from buffers of exactly their
 * length (ASan sees a read past one).
 */
static void
test_block_edges(void)
{
    static const unsigned char near[] = {'&', '\'', '<', '>', '"', 0x24,
                                         0x25, 0x28, 0x3b, 0x3d, 0x3f, 0x20,
                                         0x22 | 0x80, 0x3e | 0x80, 0xff};
    size_t len;
    int bad = 0;

    for (len = 1; len <= 70; len++) {
        unsigned char *in = malloc(len);
        char *want = malloc(5 * len);
        size_t at;
        int c;

        if (in == NULL || want == NULL)
            abort();

        for (at = 0; at < len; at++)
            for (c = 0; c < 256; c++) {
                size_t k, wn, gn;
                char *got;

                for (k = 0; k < len; k++)
                    in[k] = (k % 7 == 3) ? near[(k + at + (size_t) c)
                                                % sizeof(near)] : 'a';
                in[at] = (unsigned char) c;
                wn = reference_escape(want, in, len);
                gn = blog_escaped_len((const char *) in, len);
                got = malloc(gn ? gn : 1);
                if (got == NULL)
                    abort();
                if (gn != wn
                    || (size_t) (blog_escape(got, (const char *) in, len) - got)
                    != wn || memcmp(got, want, wn) != 0)
                    bad++;
                free(got);
            }
        free(want);
        free(in);
    }
    CHECK(bad == 0);
}

const t_case t_escape_cases[] = {
    {"escape: the five bytes", test_five_bytes},
    {"escape: mixed text, UTF-8, NUL", test_mixed},
    {"escape: every byte value", test_every_byte},
    {"escape: long runs", test_long_runs},
    {"escape: every byte at every offset of the 16-byte blocks", test_block_edges},
    {NULL, NULL}
};

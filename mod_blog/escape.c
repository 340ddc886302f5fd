/*
 * escape.c - docs/CONTRACT.md section 5's escaping: safe runs copied with
 * memcpy, found 16 bytes at a time with SSE2, 8 elsewhere.
 */
#include <stdint.h>
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

#if defined(__SSE2__)
#include <emmintrin.h>

#define ESCAPE_BLOCK 16

/*
 * A bit per byte of the 16 at p that needs escaping.  '<' and '>' differ
 * only in bit 1, '&' and '\'' only in bit 0: three compares find all five.
 */
static inline unsigned
blog_escape_block(const unsigned char *p)
{
    __m128i     v = _mm_loadu_si128((const __m128i *) p);
    __m128i     angle = _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(0x02)),
                                       _mm_set1_epi8(0x3e));
    __m128i     amp = _mm_cmpeq_epi8(_mm_or_si128(v, _mm_set1_epi8(0x01)),
                                     _mm_set1_epi8(0x27));
    __m128i     quot = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x22));

    return (unsigned) _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(angle, amp),
                                                     quot));
}
#endif

/* Whether one of the 8 bytes at p needs escaping: a zero byte of x ^ b. */
#define ESCAPE_WORD 8
#define BYTES(b) (0x0101010101010101ULL * (b))

static inline int
blog_escape_word(const unsigned char *p)
{
    uint64_t    x;
    uint64_t    angle;
    uint64_t    amp;
    uint64_t    quot;

    memcpy(&x, p, sizeof(x));
    angle = (x | BYTES(0x02)) ^ BYTES(0x3e);
    amp = (x | BYTES(0x01)) ^ BYTES(0x27);
    quot = x ^ BYTES(0x22);
    return (((angle - BYTES(0x01)) & ~angle)
            | ((amp - BYTES(0x01)) & ~amp)
            | ((quot - BYTES(0x01)) & ~quot)) & BYTES(0x80) ? 1 : 0;
}

/* The first byte at or after i that needs escaping, or len. */
static inline size_t
blog_escape_next(const unsigned char *p, size_t i, size_t len)
{
#if defined(__SSE2__)
    for (; i + ESCAPE_BLOCK <= len; i += ESCAPE_BLOCK) {
        unsigned m = blog_escape_block(p + i);

        if (m != 0)
            return i + (size_t) __builtin_ctz(m);
    }
#endif
    while (i + ESCAPE_WORD <= len && !blog_escape_word(p + i))
        i += ESCAPE_WORD;
    for (; i < len; i++)
        if (blog_escape_extra[p[i]] != 0)
            return i;
    return len;
}

size_t
blog_escaped_len(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *) s;
    size_t n = len;
    size_t i;

    for (i = blog_escape_next(p, 0, len); i < len;
         i = blog_escape_next(p, i + 1, len))
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

/* The bytes s[from..to), unchanged. */
static char *
blog_escape_copy(char *dst, const char *s, size_t from, size_t to)
{
    if (to > from) {
        memcpy(dst, s + from, to - from);
        dst += to - from;
    }
    return dst;
}

char *
blog_escape(char *dst, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *) s;
    size_t run = 0;             /* the first byte not yet written */
    size_t i;

    for (i = blog_escape_next(p, 0, len); i < len;
         i = blog_escape_next(p, i + 1, len)) {
        dst = blog_escape_copy(dst, s, run, i);
        dst = blog_escape_entity(dst, p[i]);
        run = i + 1;
    }
    return blog_escape_copy(dst, s, run, len);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* escape.c - safe runs found 16 bytes at a time with SSE2, copied whole. */
#include <string.h>

#include "core/escape.h"

/* What each byte becomes, and how many bytes longer: only five change. */
static const char *const blog_entity[256] = {
    ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&#34;",
    ['\''] = "&#39;",
};
static const unsigned char blog_escape_extra[256] = {
    ['&'] = 4, ['<'] = 3, ['>'] = 3, ['"'] = 4, ['\''] = 4,
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
    while (i < len && blog_escape_extra[p[i]] == 0)
        i++;
    return i;
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

char *
blog_escape(char *dst, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *) s;
    size_t run = 0;             /* the first byte not yet written */
    size_t i;

    for (i = blog_escape_next(p, 0, len); i < len;
         i = blog_escape_next(p, i + 1, len)) {
        memcpy(dst, s + run, i - run);
        dst += i - run;
        memcpy(dst, blog_entity[p[i]], blog_escape_extra[p[i]] + 1u);
        dst += blog_escape_extra[p[i]] + 1u;
        run = i + 1;
    }
    if (len > run)
        memcpy(dst, s + run, len - run);
    return dst + (len - run);
}

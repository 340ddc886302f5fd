/* SPDX-License-Identifier: Apache-2.0 */
/* decode.c - int4send's, timestamptz_send's, array_send's bytes, in place. */
#include "core/decode.h"

/* ndim, flags, element type; then per dimension its size and lower bound */
#define ARRAY_HEADER        12
#define ARRAY_DIM           8
#define ELEMENT_LEN_BYTES   4

static uint32_t
blog_be32(const char *p)
{
    const unsigned char *u = (const unsigned char *) p;

    return ((uint32_t) u[0] << 24) | ((uint32_t) u[1] << 16)
        | ((uint32_t) u[2] << 8) | u[3];
}

int
blog_dec_int4(blog_cell c, int32_t *out)
{
    if (c.ptr == NULL || c.len != 4)
        return -1;
    *out = (int32_t) blog_be32(c.ptr);
    return 0;
}

int
blog_dec_int8(blog_cell c, int64_t *out)
{
    if (c.ptr == NULL || c.len != 8)
        return -1;
    *out = (int64_t) (((uint64_t) blog_be32(c.ptr) << 32)
                      | blog_be32(c.ptr + 4));
    return 0;
}

int
blog_dec_array(blog_cell c, uint32_t elemtype, blog_alloc_fn alloc,
               void *alloc_ctx, blog_cell **out, uint32_t *n)
{
    const char *end;
    const char *q;
    blog_cell  *elems;
    uint32_t    ndim, count, i;

    *out = NULL;
    *n = 0;
    if (c.ptr == NULL)
        return 0;
    if (c.len < ARRAY_HEADER)
        return -1;
    end = c.ptr + c.len;
    ndim = blog_be32(c.ptr);
    if (ndim == 0)
        return 0;
    if (ndim != 1 || c.len < ARRAY_HEADER + ARRAY_DIM
        || blog_be32(c.ptr + 8) != elemtype)
        return -1;
    count = blog_be32(c.ptr + ARRAY_HEADER);
    /* each element takes at least its length word: bounds the allocation */
    if (count > (uint32_t) (c.len - ARRAY_HEADER - ARRAY_DIM)
        / ELEMENT_LEN_BYTES)
        return -1;
    if (count == 0)
        return 0;
    elems = alloc(alloc_ctx, sizeof(*elems) * count);
    if (elems == NULL)
        return -1;
    q = c.ptr + ARRAY_HEADER + ARRAY_DIM;
    for (i = 0; i < count; i++) {
        int32_t     len;

        if (end - q < ELEMENT_LEN_BYTES)
            return -1;
        len = (int32_t) blog_be32(q);
        q += ELEMENT_LEN_BYTES;
        if (len < 0 || len > end - q)   /* -1 is a NULL element */
            return -1;
        elems[i] = (blog_cell) {q, len};
        q += len;
    }
    if (q != end)               /* array_send writes nothing after them */
        return -1;
    *out = elems;
    *n = count;
    return 0;
}

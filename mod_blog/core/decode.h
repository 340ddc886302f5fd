/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode.h - PostgreSQL's binary int4, timestamptz, text and 1-D arrays.
 * Pure C.  A cell is untrusted: nothing is read outside it; each function
 * returns 0, or -1 when it is not a well-formed value of its type.
 */
#ifndef BLOG_DECODE_H
#define BLOG_DECODE_H

#include <stdint.h>

#include "core/alloc.h"

/* Element type OIDs, fixed in PostgreSQL's catalog (pg_type.dat). */
#define BLOG_OID_TEXT           25
#define BLOG_OID_TIMESTAMPTZ    1184

/* A value, or an array's element: len bytes at ptr (NULL: SQL NULL). */
typedef struct blog_cell
{
    const char *ptr;
    int         len;
} blog_cell;

int blog_dec_int4(blog_cell c, int32_t *out);
/* timestamptz: microseconds since 2000-01-01 00:00 UTC. */
int blog_dec_int8(blog_cell c, int64_t *out);

/* A 1-D array of elemtype into *out (*n, from alloc): a NULL cell is
 * empty, a NULL element is an error. */
int blog_dec_array(blog_cell c, uint32_t elemtype, blog_alloc_fn alloc,
                   void *alloc_ctx, blog_cell **out, uint32_t *n);

#endif

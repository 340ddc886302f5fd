/*
 * decode.h - PostgreSQL's binary wire format for the types pg_blog's page
 * functions return: int4, timestamptz (an int8 of microseconds), text and
 * one-dimensional arrays of them.
 *
 * Pure C: no libpq, no APR.  A cell is what the caller's result gives for
 * one value; everything in it is untrusted.  Nothing is read outside
 * [ptr, ptr + len), nothing is copied: text and array elements point into
 * the cell.  The only allocation, an array's element table, comes from
 * the caller's allocator.  Each function returns 0, or -1 when the cell is
 * not a well-formed value of its type (the page is then a 503).
 */
#ifndef BLOG_DECODE_H
#define BLOG_DECODE_H

#include <stdint.h>

#include "alloc.h"

/* Element type OIDs, fixed in PostgreSQL's catalog (pg_type.dat). */
#define BLOG_OID_TEXT           25
#define BLOG_OID_TIMESTAMPTZ    1184

typedef struct blog_cell
{
    const char *ptr;            /* NULL for SQL NULL */
    int         len;
} blog_cell;

typedef struct blog_bytes
{
    const char *ptr;
    uint32_t    len;
} blog_bytes;

/* A big-endian 32-bit integer at p (4 readable bytes). */
uint32_t blog_be32(const char *p);

int blog_dec_text(blog_cell c, blog_bytes *out);
int blog_dec_int4(blog_cell c, int32_t *out);
/* timestamptz: microseconds since 2000-01-01 00:00 UTC. */
int blog_dec_int8(blog_cell c, int64_t *out);

/*
 * A one-dimensional array of elemtype: header (ndim, flags, element type,
 * then size and lower bound per dimension), then one (length, bytes) per
 * element.  A NULL cell and a zero-dimensional array are empty; a NULL
 * element, another element type, more than one dimension, any length
 * that overruns the cell and bytes left after the last element are
 * errors.  *out holds *n elements (undefined when *n is 0).
 */
int blog_dec_array(blog_cell c, uint32_t elemtype, blog_alloc_fn alloc,
                   void *alloc_ctx, blog_bytes **out, uint32_t *n);

#endif

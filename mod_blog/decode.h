/*
 * decode.h - PostgreSQL's binary format for int4, timestamptz, text and
 * one-dimensional arrays of them.  Pure C.  A cell is untrusted: nothing
 * is read outside it or copied; each function returns 0, or -1 when the
 * cell is not a well-formed value of its type.
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
 * A one-dimensional array of elemtype into *out (*n elements, from alloc).
 * A NULL cell or zero dimensions is empty; a NULL element, another type,
 * more dimensions, an overrun or trailing bytes are errors.
 */
int blog_dec_array(blog_cell c, uint32_t elemtype, blog_alloc_fn alloc,
                   void *alloc_ctx, blog_bytes **out, uint32_t *n);

#endif

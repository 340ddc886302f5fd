/* SPDX-License-Identifier: Apache-2.0 */
/*
 * build.h - the page templates, and pg_blog's rows into rendered pages.
 * Pure C.  The rows are untrusted: what is missing or malformed makes the
 * 503 page, its column and row named.
 */
#ifndef BLOG_BUILD_H
#define BLOG_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "core/decode.h"
#include "core/template.h"

#define BLOG_STATUS_OK          200
#define BLOG_STATUS_NOT_FOUND   404
#define BLOG_STATUS_UNAVAILABLE 503
#define BLOG_BAD_RENDER         (-2)

/* The six pages, each wrapped in layout.html. */
typedef struct blog_pageset
{
    const blog_tpl *index;
    const blog_tpl *post;
    const blog_tpl *tag;
    const blog_tpl *compute;
    const blog_tpl *not_found;
    const blog_tpl *unavailable;
} blog_pageset;

/* Compile the pages, each a "layout" around its own template, from
 * source's; NULL with "file:line: message" in err. */
const blog_pageset *blog_pageset_load(blog_tpl_source_fn source,
                                      void *source_ctx, blog_alloc_fn alloc,
                                      void *alloc_ctx, char *err,
                                      size_t errlen);

typedef struct blog_page
{
    int         status;         /* 200, 404 or 503 */
    const char *body;
    size_t      len;
} blog_page;

/* One result set as the store hands it up, every cell already read:
 * cells[row * ncols + col], a NULL ptr for SQL NULL. */
typedef struct blog_rows
{
    int         nrows;
    int         ncols;
    const char *const *names;   /* each column's */
    const blog_cell *cells;
} blog_rows;

typedef struct blog_build
{
    const blog_pageset *pages;
    blog_alloc_fn alloc;
    void       *alloc_ctx;
    const char *base;           /* the mount, without trailing slash */
    size_t      base_len;
    /* answered as they are when the rows name nothing / are malformed */
    const blog_page *not_found;
    const blog_page *unavailable;
    /* in: the size to render in one pass (0: none); out: raised past it */
    size_t      size_hint;
    /* out: on a 503, the column at fault and its row (-1: no such column,
     * BLOG_BAD_RENDER: no memory for the page) */
    const char *bad_column;
    int         bad_row;
} blog_build;

/* blog.index_page(20): the cards, newest first. */
void blog_build_index(blog_build *b, const blog_rows *rs, blog_page *out);
/* blog.post_page(slug): no row is the 404 page. */
void blog_build_post(blog_build *b, const blog_rows *rs, blog_page *out);
/* blog.tag_page(slug): no row is the 404 page. */
void blog_build_tag(blog_build *b, const blog_rows *rs, blog_page *out);
void blog_build_compute(blog_build *b, uint32_t limit, uint64_t sum,
                        blog_page *out);

/* The 404 and 503 pages, rendered once at start-up: 0, or -1. */
int blog_build_static(blog_build *b, blog_page *not_found,
                      blog_page *unavailable);

#endif

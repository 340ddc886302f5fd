/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_decode.c - libFuzzer target: pg_blog's rows as the network could
 * bring them.  The input is cut into cells (a 2-byte length, then that
 * many bytes; 0xffff is SQL NULL), which fill the columns of a detail page
 * row, then of an index page of up to four rows; the builder must answer
 * 200, 503, or 404 for no row, and never read outside a cell.  Each cell is its own exact-
 * size malloc block, so ASan sees any overrun.  Every array the input holds
 * is decoded on its own too, and a decoded array's elements must tile it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/build.h"
#include "core/decode.h"
#include "httpd/tplfiles.h"
#include "rows.h"

#define MAX_CELLS 64

static const blog_pageset *pages;
static blog_page not_found = {BLOG_STATUS_NOT_FOUND, "", 0};
static blog_page unavailable = {BLOG_STATUS_UNAVAILABLE, "", 0};

/* Everything the builder allocates, freed after each input. */
static void *blocks[1 << 16];
static size_t nblocks;

static void *
fz_alloc(void *ctx, size_t size)
{
    void *p;

    (void) ctx;
    if (nblocks == sizeof(blocks) / sizeof(blocks[0]))
        return NULL;
    p = malloc(size ? size : 1);
    blocks[nblocks++] = p;
    return p;
}

/* The templates' memory, kept (and reachable) for the whole run. */
static void *tpl_blocks[1 << 12];
static size_t ntpl_blocks;

static void *
tpl_alloc(void *ctx, size_t size)
{
    (void) ctx;
    if (ntpl_blocks == sizeof(tpl_blocks) / sizeof(tpl_blocks[0]))
        return NULL;
    return tpl_blocks[ntpl_blocks++] = malloc(size ? size : 1);
}

static void
fz_free_all(void)
{
    while (nblocks > 0)
        free(blocks[--nblocks]);
}

static void
fz_build(const t_rows *t, void (*build) (blog_build *, const blog_rows *,
                                         blog_page *))
{
    blog_rows rs = t_rows_view(t);
    blog_build b;
    blog_page pg;
    int nrows = t->nrows;

    memset(&b, 0, sizeof(b));
    b.pages = pages;
    b.alloc = fz_alloc;
    b.base = "/b";
    b.base_len = 2;
    b.not_found = &not_found;
    b.unavailable = &unavailable;
    build(&b, &rs, &pg);
    if (pg.status == BLOG_STATUS_OK) {
        if (b.bad_column != NULL || pg.body == NULL)
            abort();
    }
    else if (pg.status == BLOG_STATUS_NOT_FOUND) {
        if (nrows != 0 || pg.body != not_found.body)
            abort();
    }
    else if (pg.status != BLOG_STATUS_UNAVAILABLE || pg.body != unavailable.body
             || (b.bad_column == NULL && nrows > 0))
        abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    blog_tpl_files files = {TEMPLATES_DIR, tpl_alloc, NULL};
    char err[512];

    (void) argc;
    (void) argv;
    pages = blog_pageset_load(blog_tpl_file_source, &files,
                              tpl_alloc, NULL, err, sizeof(err));
    if (pages == NULL)
        abort();
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const post_cols[] = {
        "title", "author_name", "published_at", "body", "tag_slugs",
        "tag_names", "comment_authors", "comment_bodies", "comment_times"
    };
    static const char *const card_cols[] = {
        "slug", "title", "author_name", "published_at", "comment_count",
        "tag_slugs", "tag_names", "summary"
    };
    blog_cell cells[MAX_CELLS] = {{0}};
    blog_cell grid[MAX_CELLS];
    int n = 0;
    size_t at = 0;
    t_rows t;
    int i;

    while (n < MAX_CELLS && size - at >= 2) {
        size_t len = (size_t) data[at] << 8 | data[at + 1];

        at += 2;
        if (len == 0xffff) {
            cells[n].ptr = NULL;
            cells[n++].len = 0;
            continue;
        }
        if (len > size - at)
            len = size - at;
        cells[n].ptr = fz_alloc(NULL, len);
        memcpy((char *) cells[n].ptr, data + at, len);
        cells[n++].len = (int) len;
        at += len;
    }
    for (i = 0; i < n; i++) {
        static const uint32_t types[] = {BLOG_OID_TEXT, BLOG_OID_TIMESTAMPTZ};
        blog_cell  *el;
        uint32_t ne, k;
        size_t j;

        for (j = 0; j < 2; j++)
            if (blog_dec_array(cells[i], types[j], fz_alloc, NULL, &el,
                               &ne) == 0 && ne > 0) {
                /* 20 header bytes, then (length, bytes) with no gap */
                const char *q = cells[i].ptr + 20;

                for (k = 0; k < ne; k++) {
                    if (el[k].ptr != q + 4)
                        abort();
                    q = el[k].ptr + el[k].len;
                }
                if (q != cells[i].ptr + cells[i].len)
                    abort();
            }
    }
    /* the cells row by row; the ones the input did not fill are NULL */
    memset(grid, 0, sizeof(grid));
    memcpy(grid, cells, sizeof(blog_cell) * (size_t) n);
    t.cells = grid;
    t.ncols = 9;
    t.nrows = n > 0;
    memcpy(t.names, post_cols, sizeof(post_cols));
    fz_build(&t, blog_build_post);
    t.ncols = 8;
    t.nrows = n / 8 < 4 ? n / 8 : 4;
    memcpy(t.names, card_cols, sizeof(card_cols));
    fz_build(&t, blog_build_index);
    fz_free_all();
    return 0;
}

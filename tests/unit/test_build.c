/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_build.c - pg_blog's rows in PostgreSQL's binary format, decoded
 * (decode.c, date.c) and built into pages (build.c) with the real
 * templates: rows made from the seed formulas give the reference pages of
 * tests/golden/ byte for byte, and every truncated, NULL, mistyped or
 * missing value gives the 503 page, never a read past the value.
 */
#define _GNU_SOURCE
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "core/arena.h"
#include "core/build.h"
#include "core/date.h"
#include "core/decode.h"
#include "httpd/tplfiles.h"
#include "harness.h"
#include "rows.h"
#include "seed.h"

/* Seconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch. */
#define PG_EPOCH_UNIX 946684800

/* ---- binary values, as PostgreSQL sends them ---- */

typedef struct enc
{
    char buf[1 << 16];
    size_t n;
} enc;

static void
put32(enc *e, uint32_t v)
{
    e->buf[e->n++] = (char) (v >> 24);
    e->buf[e->n++] = (char) (v >> 16);
    e->buf[e->n++] = (char) (v >> 8);
    e->buf[e->n++] = (char) v;
}

static void
put_bytes(enc *e, const char *s, size_t len)
{
    memcpy(e->buf + e->n, s, len);
    e->n += len;
}

/* A copy of exactly len bytes, so that ASan sees a read past the value. */
static blog_cell
cell_of(t_arena *a, const char *s, size_t len)
{
    char *p = t_arena_alloc(a, len ? len : 1);
    blog_cell c;

    memcpy(p, s, len);
    c.ptr = p;
    c.len = (int) len;
    return c;
}

static blog_cell
text_cell(t_arena *a, const char *s)
{
    return cell_of(a, s, strlen(s));
}

static blog_cell
int4_cell(t_arena *a, int32_t v)
{
    enc e;

    e.n = 0;
    put32(&e, (uint32_t) v);
    return cell_of(a, e.buf, e.n);
}

static void
put_ts(enc *e, int p, int minutes)
{
    int64_t us = ((int64_t) T_FIRST_POST - PG_EPOCH_UNIX
                  + (int64_t) (p - 1) * 6 * 3600 + minutes * 60)
        * 1000000;

    put32(e, (uint32_t) ((uint64_t) us >> 32));
    put32(e, (uint32_t) us);
}

static blog_cell
ts_cell(t_arena *a, int p, int minutes)
{
    enc e;

    e.n = 0;
    put_ts(&e, p, minutes);
    return cell_of(a, e.buf, e.n);
}

/* array_send's header; an empty array has no dimension at all. */
static void
put_array_header(enc *e, uint32_t elemtype, uint32_t n)
{
    put32(e, n ? 1 : 0);
    put32(e, 0);
    put32(e, elemtype);
    if (n) {
        put32(e, n);
        put32(e, 1);
    }
}

static blog_cell
text_array_cell(t_arena *a, const char *const *items, uint32_t n)
{
    static enc e;
    uint32_t i;

    e.n = 0;
    put_array_header(&e, BLOG_OID_TEXT, n);
    for (i = 0; i < n; i++) {
        put32(&e, (uint32_t) strlen(items[i]));
        put_bytes(&e, items[i], strlen(items[i]));
    }
    return cell_of(a, e.buf, e.n);
}

/* ---- a result set ---- */

static blog_cell *
at(t_rows *t, int row, const char *name)
{
    return &t->cells[row * t->ncols + t_rows_column(t, name)];
}

static void
rows_init(t_arena *a, t_rows *t, int nrows, const char *const *names)
{
    t->nrows = nrows;
    for (t->ncols = 0; names[t->ncols]; t->ncols++)
        t->names[t->ncols] = names[t->ncols];
    t->cells = t_arena_alloc(a, sizeof(blog_cell) * (size_t) (nrows ? nrows : 1)
                             * (size_t) t->ncols);
    memset(t->cells, 0, sizeof(blog_cell) * (size_t) (nrows ? nrows : 1)
           * (size_t) t->ncols);
}

/* The tag arrays of post p, in the columns of row. */
static void
tags_into(t_arena *a, t_rows *t, int row, int p)
{
    int ids[3];
    int n = t_post_tags(p, ids);
    const char *slugs[3] = {NULL, NULL, NULL};
    const char *names[3] = {NULL, NULL, NULL};
    int k;

    for (k = 0; k < n; k++) {
        slugs[k] = t_arena_printf(a, "tag-%d", ids[k]);
        names[k] = t_tag_name(a, ids[k]);
    }
    *at(t, row, "tag_slugs") = text_array_cell(a, slugs, (uint32_t) n);
    *at(t, row, "tag_names") = text_array_cell(a, names, (uint32_t) n);
}

static const char *const card_names[] = {
    "slug", "title", "author_name", "published_at", "comment_count",
    "tag_slugs", "tag_names", "summary", NULL
};

static void
card_into(t_arena *a, t_rows *t, int row, int p)
{
    *at(t, row, "slug") = text_cell(a, t_arena_printf(a, "post-%d", p));
    *at(t, row, "title") = text_cell(a, t_arena_printf(a, "Post %d: %s", p,
                                                        t_titles[p % 8]));
    *at(t, row, "author_name") = text_cell(a, t_author_names[p % 10]);
    *at(t, row, "published_at") = ts_cell(a, p, 0);
    *at(t, row, "comment_count") = int4_cell(a, t_comment_count(p));
    tags_into(a, t, row, p);
    *at(t, row, "summary") = text_cell(a, t_arena_printf(a, "A short summary "
                                                          "of post %d.", p));
}

/* blog.index_page(20) */
static void
index_rows(t_arena *a, t_rows *t)
{
    int i;

    rows_init(a, t, 20, card_names);
    for (i = 0; i < 20; i++)
        card_into(a, t, i, 1000 - i);
}

/* blog.tag_page(tag-<tg>): the tag's name on every row, then a card */
static void
tag_rows(t_arena *a, t_rows *t, int tg)
{
    static const char *const names[] = {
        "tag_name", "slug", "title", "author_name", "published_at",
        "comment_count", "tag_slugs", "tag_names", "summary", NULL
    };
    int n = 0;
    int p;

    for (p = 1000; p >= 1; p--)
        n += t_post_has_tag(p, tg);
    rows_init(a, t, n, names);
    n = 0;
    for (p = 1000; p >= 1; p--)
        if (t_post_has_tag(p, tg)) {
            *at(t, n, "tag_name") = text_cell(a, t_tag_name(a, tg));
            card_into(a, t, n++, p);
        }
}

/* blog.post_page(post-<p>): one row */
static void
post_rows(t_arena *a, t_rows *t, int p)
{
    static const char *const names[] = {
        "title", "author_name", "published_at", "body", "tag_slugs",
        "tag_names", "comment_authors", "comment_bodies", "comment_times",
        NULL
    };
    static enc e;
    int nc = t_comment_count(p);
    const char **authors = t_arena_alloc(a, sizeof(char *) * (size_t) (nc + 1));
    const char **bodies = t_arena_alloc(a, sizeof(char *) * (size_t) (nc + 1));
    char *body = t_arena_printf(a, "Body of post %d. ", p);
    int k;

    rows_init(a, t, 1, names);
    *at(t, 0, "title") = text_cell(a, t_arena_printf(a, "Post %d: %s", p,
                                                      t_titles[p % 8]));
    *at(t, 0, "author_name") = text_cell(a, t_author_names[p % 10]);
    *at(t, 0, "published_at") = ts_cell(a, p, 0);
    for (k = 0; k < 5 + p % 10; k++)
        body = t_arena_printf(a, "%s%s", body, LOREM);
    *at(t, 0, "body") = text_cell(a, body);
    tags_into(a, t, 0, p);
    for (k = 1; k <= nc; k++) {
        authors[k - 1] = t_readers[(p + k) % 6];
        bodies[k - 1] = t_arena_printf(a, "Comment %d on post %d: %s", k, p,
                                       t_comment_texts[k % 4]);
    }
    *at(t, 0, "comment_authors") = text_array_cell(a, authors, (uint32_t) nc);
    *at(t, 0, "comment_bodies") = text_array_cell(a, bodies, (uint32_t) nc);
    e.n = 0;
    put_array_header(&e, BLOG_OID_TIMESTAMPTZ, (uint32_t) nc);
    for (k = 1; k <= nc; k++) {
        put32(&e, 8);
        put_ts(&e, p, k);
    }
    *at(t, 0, "comment_times") = cell_of(a, e.buf, e.n);
}

/* ---- building ---- */

typedef struct t_site
{
    const blog_pageset *pages;
    blog_page not_found;
    blog_page unavailable;
} t_site;

static void
builder(t_arena *a, t_site *site, blog_build *b)
{
    memset(b, 0, sizeof(*b));
    b->pages = site->pages;
    b->alloc = t_arena_alloc;
    b->alloc_ctx = a;
    b->base = "";
    b->base_len = 0;
    b->not_found = &site->not_found;
    b->unavailable = &site->unavailable;
}

/* The templates and the two static pages, as mod_blog.c makes them. */
static int
site_load(t_arena *a, t_site *site)
{
    blog_tpl_files files = {TEMPLATES_DIR, t_arena_alloc, a};
    char err[512] = "";
    blog_build b;

    site->pages = blog_pageset_load(blog_tpl_file_source, &files,
                                    t_arena_alloc, a, err, sizeof(err));
    if (site->pages == NULL) {
        fprintf(stderr, "  %s\n", err);
        return -1;
    }
    builder(a, site, &b);
    return blog_build_static(&b, &site->not_found, &site->unavailable);
}

static void
expect_golden(t_arena *a, const blog_page *got, const char *golden)
{
    char path[512];
    size_t glen = 0;
    char *want;

    snprintf(path, sizeof(path), "%s/%s", GOLDEN_DIR, golden);
    want = t_read_file(a, path, &glen);
    CHECK(want != NULL);
    CHECK(got->status == BLOG_STATUS_OK);
    if (want && got->body) {
        if (got->len != glen || memcmp(got->body, want, glen) != 0)
            fprintf(stderr, "  %s differs:\n", golden);
        CHECK_MEM(got->body, got->len, want, glen);
    }
}

/* The page is the site's 503 page, byte for byte. */
static int
is_unavailable(const t_site *site, const blog_page *pg)
{
    return pg->status == BLOG_STATUS_UNAVAILABLE
        && pg->len == site->unavailable.len
        && memcmp(pg->body, site->unavailable.body, pg->len) == 0;
}

typedef void (*build_fn) (blog_build *, const blog_rows *, blog_page *);

/* Build with fn from t: the page, and in *b what the builder said. */
static blog_page
build_from(t_arena *a, t_site *site, const t_rows *t, build_fn fn,
           blog_build *b)
{
    blog_rows rs = t_rows_view(t);
    blog_page pg;

    builder(a, site, b);
    fn(b, &rs, &pg);
    return pg;
}

/* An arena and the site every build test starts from. */
typedef struct t_fix
{
    t_arena *a;
    t_site site;
    blog_build b;
    blog_page pg;
    t_rows t;
} t_fix;

static int
fix_init(t_fix *f)
{
    memset(f, 0, sizeof(*f));
    f->a = t_arena_new();
    CHECK(site_load(f->a, &f->site) == 0);
    if (f->site.pages != NULL)
        return 0;
    t_arena_free(f->a);
    return -1;
}

static void
fix_build(t_fix *f, build_fn fn)
{
    f->pg = build_from(f->a, &f->site, &f->t, fn, &f->b);
}

/* As fix_build, with a size hint kept between builds (pages.c's). */
static void
fix_build_hinted(t_fix *f, build_fn fn, size_t *hint)
{
    blog_rows rs = t_rows_view(&f->t);

    builder(f->a, &f->site, &f->b);
    f->b.size_hint = *hint;
    fn(&f->b, &rs, &f->pg);
    *hint = f->b.size_hint;
}

/*
 * Pages built with a size hint, as Apache builds them: the first of a kind
 * takes two passes and sets the hint an eighth above its size, the next
 * fit in one pass; a larger page raises the hint, a smaller one leaves it;
 * every byte is the reference page's.
 */
static void
test_build_hinted(void)
{
    static const int posts[] = {2, 1, 31, 1000, 1};
    size_t hint = 0;
    size_t want = 0;
    size_t i;
    t_fix f;

    if (fix_init(&f) != 0)
        return;
    for (i = 0; i < 2; i++) {
        tag_rows(f.a, &f.t, 7);
        fix_build_hinted(&f, blog_build_tag, &hint);
        expect_golden(f.a, &f.pg, "tag-7.html");
        CHECK(hint == f.pg.len + f.pg.len / 8);
    }
    hint = 0;
    for (i = 0; i < sizeof(posts) / sizeof(posts[0]); i++) {
        post_rows(f.a, &f.t, posts[i]);
        fix_build_hinted(&f, blog_build_post, &hint);
        expect_golden(f.a, &f.pg, t_arena_printf(f.a, "post-%d.html",
                                                 posts[i]));
        if (f.pg.len > want)
            want = f.pg.len + f.pg.len / 8;
        CHECK(hint == want);
    }
    t_arena_free(f.a);
}

static void
test_build_golden(void)
{
    static const int posts[] = {1, 2, 21, 31, 1000};
    static const int tags[] = {5, 7, 21};
    t_fix f;
    size_t i;

    if (fix_init(&f) != 0)
        return;
    index_rows(f.a, &f.t);
    fix_build(&f, blog_build_index);
    expect_golden(f.a, &f.pg, "index.html");
    CHECK(f.b.bad_column == NULL);
    for (i = 0; i < sizeof(posts) / sizeof(posts[0]); i++) {
        post_rows(f.a, &f.t, posts[i]);
        fix_build(&f, blog_build_post);
        expect_golden(f.a, &f.pg, t_arena_printf(f.a, "post-%d.html",
                                                 posts[i]));
    }
    for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
        tag_rows(f.a, &f.t, tags[i]);
        fix_build(&f, blog_build_tag);
        expect_golden(f.a, &f.pg, t_arena_printf(f.a, "tag-%d.html",
                                                 tags[i]));
    }
    t_arena_free(f.a);
}

/*
 * Pages built in core's arena, as pages.c builds them: one too small gives
 * the 503 page and the size it lacked; grown to that (or twice its size),
 * the reference page; exactly the bytes it used suffice, one fewer not.
 */
static void
arena_build(t_fix *f, build_fn fn, size_t size, blog_arena *ar)
{
    blog_rows rs = t_rows_view(&f->t);

    builder(f->a, &f->site, &f->b);
    blog_arena_init(ar, t_arena_alloc(f->a, size), size);
    f->b.alloc = blog_arena_alloc;
    f->b.alloc_ctx = ar;
    fn(&f->b, &rs, &f->pg);
    blog_arena_done(ar);
}

static void
expect_arena_builds(t_fix *f, build_fn fn, const char *golden)
{
    blog_arena ar;
    size_t size = 256;
    size_t used;
    int tries = 0;

    do {
        arena_build(f, fn, size, &ar);
        if (ar.need == 0)
            break;
        CHECK(is_unavailable(&f->site, &f->pg) && f->b.bad_column != NULL);
        CHECK(ar.need > size - ar.left);
        size = ar.need > size * 2 ? ar.need : size * 2;
    } while (++tries < 12);
    CHECK(tries > 0 && tries < 12);
    expect_golden(f->a, &f->pg, golden);
    used = ar.used;
    arena_build(f, fn, used, &ar);
    CHECK(ar.need == 0 && ar.used == used);
    expect_golden(f->a, &f->pg, golden);
    arena_build(f, fn, used - 1, &ar);
    CHECK(ar.need != 0 && is_unavailable(&f->site, &f->pg));
}

static void
test_build_arena(void)
{
    t_fix f;

    if (fix_init(&f) != 0)
        return;
    index_rows(f.a, &f.t);
    expect_arena_builds(&f, blog_build_index, "index.html");
    post_rows(f.a, &f.t, 31);
    expect_arena_builds(&f, blog_build_post, "post-31.html");
    tag_rows(f.a, &f.t, 7);
    expect_arena_builds(&f, blog_build_tag, "tag-7.html");
    t_arena_free(f.a);
}

/* An arena's pieces: aligned, apart, and NULL once spent. */
static void
test_arena_pieces(void)
{
    static max_align_t block[64];
    blog_arena ar;
    char *p, *q;

    blog_arena_init(&ar, (char *) block + 1, sizeof(block) - 1);
    p = blog_arena_alloc(&ar, 3);
    q = blog_arena_alloc(&ar, 0);
    CHECK(p != NULL && q != NULL && q >= p + 3);
    CHECK((uintptr_t) p % alignof(max_align_t) == 0
          && (uintptr_t) q % alignof(max_align_t) == 0);
    CHECK(blog_arena_alloc(&ar, sizeof(block)) == NULL);
    CHECK(ar.need > sizeof(block));
    CHECK(blog_arena_alloc(&ar, SIZE_MAX) == NULL && ar.need > sizeof(block)
          && ar.need < SIZE_MAX);
    p = blog_arena_alloc(&ar, 8);
    CHECK(p != NULL && p > q);
    if (p != NULL)
        memset(p, 1, 8);
    blog_arena_done(&ar);
}

/* /compute's figures at their types' ends, written without printf. */
static void
test_build_compute_bounds(void)
{
    t_fix f;

    if (fix_init(&f) != 0)
        return;
    builder(f.a, &f.site, &f.b);
    blog_build_compute(&f.b, 4294967295u, 18446744073709551615ull, &f.pg);
    CHECK(f.pg.status == BLOG_STATUS_OK
          && memmem(f.pg.body, f.pg.len,
                    "below 4294967295: 18446744073709551615<", 39) != NULL);
    blog_build_compute(&f.b, 0, 0, &f.pg);
    CHECK(f.pg.status == BLOG_STATUS_OK
          && memmem(f.pg.body, f.pg.len, "below 0: 0<", 11) != NULL);
    t_arena_free(f.a);
}

/* A post's (or tag's) rows cut to none: the 404 page. */
static void
expect_no_rows_404(t_fix *f, int tag)
{
    if (tag)
        tag_rows(f->a, &f->t, 7);
    else
        post_rows(f->a, &f->t, 31);
    f->t.nrows = 0;
    fix_build(f, tag ? blog_build_tag : blog_build_post);
    CHECK(f->pg.status == BLOG_STATUS_NOT_FOUND
          && f->pg.body == f->site.not_found.body);
}

static void
test_build_no_rows(void)
{
    t_fix f;

    if (fix_init(&f) != 0)
        return;
    expect_no_rows_404(&f, 0);
    expect_no_rows_404(&f, 1);
    /* a tag without posts: one row with its name and NULL cards */
    tag_rows(f.a, &f.t, 7);
    f.t.nrows = 1;
    memset(at(&f.t, 0, "slug"), 0, sizeof(blog_cell)
           * (size_t) (f.t.ncols - 1));
    fix_build(&f, blog_build_tag);
    CHECK(f.pg.status == BLOG_STATUS_OK && f.pg.body != NULL
          && memmem(f.pg.body, f.pg.len,
                    "<h1>Posts tagged Topic 7</h1>\n</main>", 37) != NULL);
    t_arena_free(f.a);
}

static int
is_array_column(const char *name)
{
    static const char *const arrays[] = {
        "tag_slugs", "tag_names", "comment_authors", "comment_bodies",
        "comment_times", NULL
    };
    int i;

    for (i = 0; arrays[i]; i++)
        if (strcmp(name, arrays[i]) == 0)
            return 1;
    return 0;
}

/*
 * Every value of a row that has a fixed size or a structure (numbers,
 * dates, arrays), cut short at every length, and every value set to NULL
 * where NULL is not allowed: the 503 page, with the column named.
 */
static void
malformed_each(t_fix *f, int row, build_fn build, const char *what)
{
    t_rows *t = &f->t;
    int c;

    for (c = 0; c < t->ncols; c++) {
        blog_cell *cl = &t->cells[row * t->ncols + c];
        blog_cell good = *cl;
        int is_array = is_array_column(t->names[c]);
        int fixed = is_array || strcmp(t->names[c], "published_at") == 0
            || strcmp(t->names[c], "comment_count") == 0;
        int cut;

        /* the tag page's slug is NULL on purpose for a tag without posts */
        if (strcmp(what, "tag") == 0 && strcmp(t->names[c], "slug") == 0)
            continue;
        for (cut = 0; fixed && cut < good.len; cut++) {
            *cl = cell_of(f->a, good.ptr, (size_t) cut);
            fix_build(f, build);
            if (!is_unavailable(&f->site, &f->pg) || f->b.bad_column == NULL
                || strcmp(f->b.bad_column, t->names[c]) != 0
                || f->b.bad_row != row)
                fprintf(stderr, "  %s: %s cut to %d of %d bytes: status %d, "
                        "column %s\n", what, t->names[c], cut, good.len,
                        f->pg.status, f->b.bad_column ? f->b.bad_column
                        : "none");
            CHECK(is_unavailable(&f->site, &f->pg));
            CHECK(f->b.bad_column != NULL && f->b.bad_row == row
                  && strcmp(f->b.bad_column, t->names[c]) == 0);
        }
        /* NULL: an empty array, an error anywhere else */
        if (!is_array) {
            cl->ptr = NULL;
            cl->len = 0;
            fix_build(f, build);
            CHECK(is_unavailable(&f->site, &f->pg));
        }
        *cl = good;
    }
}

static void
test_build_malformed(void)
{
    t_fix f;

    if (fix_init(&f) != 0)
        return;
    post_rows(f.a, &f.t, 31);
    malformed_each(&f, 0, blog_build_post, "post");
    index_rows(f.a, &f.t);
    malformed_each(&f, 7, blog_build_index, "index");
    tag_rows(f.a, &f.t, 7);
    malformed_each(&f, 0, blog_build_tag, "tag");
    t_arena_free(f.a);
}

static void
test_build_missing_column(void)
{
    t_fix f;
    int c;

    if (fix_init(&f) != 0)
        return;
    post_rows(f.a, &f.t, 31);
    for (c = 0; c < f.t.ncols; c++) {
        const char *name = f.t.names[c];

        f.t.names[c] = "renamed";
        fix_build(&f, blog_build_post);
        CHECK(is_unavailable(&f.site, &f.pg));
        CHECK(f.b.bad_row == -1 && f.b.bad_column
              && strcmp(f.b.bad_column, name) == 0);
        f.t.names[c] = name;
    }
    t_arena_free(f.a);
}

/* Arrays whose parts disagree: the 503 page. */
static void
test_build_mismatched_arrays(void)
{
    static const char *const one[] = {"x"};
    t_fix f;

    if (fix_init(&f) != 0)
        return;
    post_rows(f.a, &f.t, 31);       /* 10 comments, 3 tags */
    *at(&f.t, 0, "comment_authors") = text_array_cell(f.a, one, 1);
    fix_build(&f, blog_build_post);
    CHECK(is_unavailable(&f.site, &f.pg));
    post_rows(f.a, &f.t, 31);
    *at(&f.t, 0, "tag_names") = text_array_cell(f.a, one, 1);
    fix_build(&f, blog_build_post);
    CHECK(is_unavailable(&f.site, &f.pg));
    /* text where timestamps are due: another element type */
    post_rows(f.a, &f.t, 31);
    *at(&f.t, 0, "comment_times") = *at(&f.t, 0, "comment_bodies");
    fix_build(&f, blog_build_post);
    CHECK(is_unavailable(&f.site, &f.pg));
    t_arena_free(f.a);
}

/* ---- decode.c ---- */

static int
dec(t_arena *a, const enc *e, uint32_t type, uint32_t *n)
{
    blog_cell  *out;

    return blog_dec_array(cell_of(a, e->buf, e->n), type, t_arena_alloc, a,
                          &out, n);
}

static void
test_decode_scalars(void)
{
    t_arena *a = t_arena_new();
    blog_cell null = {NULL, 0};
    int32_t i4 = 0;
    int64_t i8 = 0;

    CHECK(blog_dec_int4(cell_of(a, "\x80\x00\x00\x01", 4), &i4) == 0
          && i4 == INT32_MIN + 1);
    CHECK(blog_dec_int4(int4_cell(a, -2), &i4) == 0 && i4 == -2);
    CHECK(blog_dec_int4(cell_of(a, "\0\0\0", 3), &i4) == -1);
    CHECK(blog_dec_int4(cell_of(a, "\0\0\0\0\0", 5), &i4) == -1);
    CHECK(blog_dec_int4(null, &i4) == -1);
    CHECK(blog_dec_int8(cell_of(a, "\xff\xff\xff\xff\xff\xff\xff\xfe", 8),
                        &i8) == 0 && i8 == -2);
    CHECK(blog_dec_int8(cell_of(a, "\0\0\0\0", 4), &i8) == -1);
    CHECK(blog_dec_int8(null, &i8) == -1);
    t_arena_free(a);
}

static void
test_decode_arrays(void)
{
    static const char *const items[] = {"ab", "", "c"};
    t_arena *a = t_arena_new();
    blog_cell  *out = NULL;
    blog_cell good = text_array_cell(a, items, 3);
    blog_cell null = {NULL, 0};
    uint32_t n = 99;
    size_t cut;
    enc e;

    CHECK(blog_dec_array(good, BLOG_OID_TEXT, t_arena_alloc, a, &out,
                         &n) == 0);
    CHECK(n == 3 && out[0].len == 2 && memcmp(out[0].ptr, "ab", 2) == 0
          && out[1].len == 0 && out[2].len == 1 && out[2].ptr[0] == 'c');
    CHECK(blog_dec_array(good, BLOG_OID_TIMESTAMPTZ, t_arena_alloc, a, &out,
                         &n) == -1);
    CHECK(blog_dec_array(null, BLOG_OID_TEXT, t_arena_alloc, a, &out,
                         &n) == 0 && n == 0);

    e.n = 0;                    /* empty: no dimension */
    put_array_header(&e, BLOG_OID_TEXT, 0);
    CHECK(dec(a, &e, BLOG_OID_TEXT, &n) == 0 && n == 0);
    e.n = 0;                    /* two dimensions */
    put32(&e, 2), put32(&e, 0), put32(&e, BLOG_OID_TEXT);
    put32(&e, 1), put32(&e, 1), put32(&e, 1), put32(&e, 1);
    put32(&e, 0);
    CHECK(dec(a, &e, BLOG_OID_TEXT, &n) == -1);
    e.n = 0;                    /* a count no cell could hold */
    put_array_header(&e, BLOG_OID_TEXT, 0x7fffffff);
    put32(&e, 0);
    CHECK(dec(a, &e, BLOG_OID_TEXT, &n) == -1);
    e.n = 0;                    /* a negative count */
    put_array_header(&e, BLOG_OID_TEXT, 0xffffffffu);
    CHECK(dec(a, &e, BLOG_OID_TEXT, &n) == -1);
    e.n = 0;                    /* a NULL element */
    put_array_header(&e, BLOG_OID_TEXT, 1);
    put32(&e, 0xffffffffu);
    CHECK(dec(a, &e, BLOG_OID_TEXT, &n) == -1);
    e.n = 0;                    /* an element longer than what is left */
    put_array_header(&e, BLOG_OID_TEXT, 1);
    put32(&e, 3);
    put_bytes(&e, "ab", 2);
    CHECK(dec(a, &e, BLOG_OID_TEXT, &n) == -1);
    e.n = 0;                    /* a byte after the last element */
    put_array_header(&e, BLOG_OID_TEXT, 1);
    put32(&e, 2);
    put_bytes(&e, "abc", 3);
    CHECK(dec(a, &e, BLOG_OID_TEXT, &n) == -1);
    e.n = 0;                    /* a length word cut short */
    put_array_header(&e, BLOG_OID_TEXT, 2);
    put32(&e, 0);
    put_bytes(&e, "\0\0", 2);
    CHECK(dec(a, &e, BLOG_OID_TEXT, &n) == -1);
    for (cut = 0; cut < 20; cut++)      /* a header cut short */
        CHECK(blog_dec_array(cell_of(a, good.ptr, cut), BLOG_OID_TEXT,
                             t_arena_alloc, a, &out, &n) == -1);
    t_arena_free(a);
}

/* ---- date.c, against glibc's gmtime over the years 0 to 9999 ---- */

static void
test_format_date(void)
{
    char d[BLOG_DATE_LEN];
    char want[64];
    int64_t secs;
    int bad = 0;

    CHECK(blog_format_date(0, d) == 0
          && memcmp(d, "2000-01-01 00:00", BLOG_DATE_LEN) == 0);
    CHECK(blog_format_date(-1, d) == 0
          && memcmp(d, "1999-12-31 23:59", BLOG_DATE_LEN) == 0);
    CHECK(blog_format_date(INT64_MIN, d) == -1);
    CHECK(blog_format_date(INT64_MAX, d) == -1);
    /* 0000-01-01 and 9999-12-31 23:59:59 are the ends; one second out */
    secs = -62167219200LL - PG_EPOCH_UNIX;
    CHECK(blog_format_date(secs * 1000000, d) == 0
          && memcmp(d, "0000-01-01 00:00", BLOG_DATE_LEN) == 0);
    CHECK(blog_format_date(secs * 1000000 - 1, d) == -1);
    secs = 253402300799LL - PG_EPOCH_UNIX;
    CHECK(blog_format_date(secs * 1000000, d) == 0
          && memcmp(d, "9999-12-31 23:59", BLOG_DATE_LEN) == 0);
    CHECK(blog_format_date((secs + 1) * 1000000, d) == -1);
    /* a prime step visits every minute, hour, day and month many times */
    for (secs = -62167219200LL; secs < 253402300799LL; secs += 7919 * 61) {
        time_t tt = (time_t) secs;
        struct tm tm;

        gmtime_r(&tt, &tm);
        snprintf(want, sizeof(want), "%04d-%02d-%02d %02d:%02d",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min);
        if (blog_format_date((secs - PG_EPOCH_UNIX) * 1000000 + 999999, d) != 0
            || memcmp(d, want, BLOG_DATE_LEN) != 0) {
            if (bad++ == 0)
                fprintf(stderr, "  %lld: got %.16s, want %s\n",
                        (long long) secs, d, want);
        }
    }
    CHECK(bad == 0);
}

/*
 * For `make fuzz`: the rows of post-31 and of the index in fuzz_decode.c's
 * input format (each cell a 2-byte length and its bytes, 0xffff for NULL),
 * so that the fuzzer starts from pages that build.
 */
int
t_fuzz_seeds(const char *dir)
{
    t_arena *a = t_arena_new();
    t_rows t;
    int which;
    int rc = 0;

    for (which = 0; which < 2 && rc == 0; which++) {
        size_t cap = 1 << 20;
        char *buf = t_arena_alloc(a, cap);
        size_t n = 0;
        int c;
        FILE *f;

        if (which == 0)
            post_rows(a, &t, 31);
        else
            index_rows(a, &t);
        for (c = 0; c < t.nrows * t.ncols && n + 2 < cap; c++) {
            blog_cell cl = t.cells[c];
            size_t len = cl.ptr ? (size_t) cl.len : 0xffff;

            buf[n++] = (char) (len >> 8);
            buf[n++] = (char) len;
            if (cl.ptr && n + len <= cap) {
                memcpy(buf + n, cl.ptr, len);
                n += len;
            }
        }
        f = fopen(t_arena_printf(a, "%s/seed-%s", dir,
                                 which ? "index" : "post-31"), "wb");
        if (f == NULL || fwrite(buf, 1, n, f) != n)
            rc = -1;
        if (f != NULL && fclose(f) != 0)
            rc = -1;
    }
    t_arena_free(a);
    return rc;
}

const t_case t_build_cases[] = {
    {"decode: int4, int8, text", test_decode_scalars},
    {"decode: arrays, well formed and not", test_decode_arrays},
    {"date: years 0 to 9999 as gmtime has them", test_format_date},
    {"build: rows from the seed give the reference pages", test_build_golden},
    {"build: in an arena, the 503 and its lack, then the same pages",
     test_build_arena},
    {"arena: aligned pieces, NULL once spent, the lack said",
     test_arena_pieces},
    {"build: with a size hint, one pass and the same pages",
     test_build_hinted},
    {"build: /compute's figures at 0 and at their types' ends",
     test_build_compute_bounds},
    {"build: no rows is the 404 page, a tag without posts its heading",
     test_build_no_rows},
    {"build: every value cut short or NULL gives the 503 page",
     test_build_malformed},
    {"build: a missing column gives the 503 page", test_build_missing_column},
    {"build: arrays that disagree give the 503 page",
     test_build_mismatched_arrays},
    {NULL, NULL}
};

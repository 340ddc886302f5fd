/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pages.c - each route's page: its one pg_blog call, built by core in an
 * arena as large as that kind of page last needed.  The rows live as long
 * as r->pool: the page points into them.
 */
#include "httpd/pages.h"
#include "httpd/page_pool.h"
#include "httpd/store_call.h"
#include "core/logno.h"

#include "core/arena.h"
#include "core/compute.h"
#include "store/db.h"
#include "store/ratelog.h"

#include "http_log.h"

#include "apr_atomic.h"

APLOG_USE_MODULE(blog);

/* blog.index_page's one argument, the contract's (below 128: one byte). */
#define INDEX_LIMIT 20

/* A kind's first arena, before any page of it was built; past ARENA_HINT_MAX
 * a page starts there and grows; past ARENA_MAX it is a 503 (BLOG00062). */
#define ARENA_FIRST     (16 * 1024)
#define ARENA_HINT_MAX  (256 * 1024)
#define ARENA_MAX       (64 * 1024 * 1024)
/* An eighth of room for the next page of the kind. */
#define HINT_FOR(len)   ((len) + (len) / 8)

typedef void (*build_fn) (blog_build *b, const blog_rows *rs,
                          blog_page *out);

/* A kind of page: how it is built from its rows (NULL: /compute's), and
 * what the last one needed (raised without a lock: a lost raise costs one
 * page a second build). */
typedef struct page_kind
{
    const char *what;           /* in log lines */
    build_fn    build;
    apr_uint32_t render_hint;   /* build.h's size_hint */
    apr_uint32_t arena_hint;
} page_kind;

/* Indexed by db.h's blog_stmt, then /compute. */
static page_kind kinds[] = {
    {"blog.index_page", blog_build_index, 0, ARENA_FIRST},
    {"blog.post_page", blog_build_post, 0, ARENA_FIRST},
    {"blog.tag_page", blog_build_tag, 0, ARENA_FIRST},
    {"/compute", NULL, 0, ARENA_FIRST}
};
#define KIND_COMPUTE (BLOG_STMT_TAG + 1)

static void
build_init(const blog_site *site, blog_alloc_fn alloc, void *ctx,
           blog_build *b)
{
    *b = (blog_build) {.pages = site->pages, .alloc = alloc,
        .alloc_ctx = ctx, .base = site->base, .base_len = site->base_len,
        .not_found = &site->not_found, .unavailable = &site->unavailable};
}

int
blog_pages_site(apr_pool_t *p, blog_site *site)
{
    blog_build  b;

    build_init(site, blog_pool_alloc, p, &b);
    return blog_build_static(&b, &site->not_found, &site->unavailable);
}

/* A schema that does not match fails every page alike: one line per 5 s
 * per child, as a failing back end's. */
static blog_ratelog pages_log;

static void
page_log(request_rec *r, const blog_build *b, const page_kind *k)
{
    blog_call   call = blog_call_of(r);

    if (b->bad_row == BLOG_BAD_RENDER)
        blog_call_log_limited(&pages_log, APLOG_ERR, APR_ENOMEM, &call,
                              BLOGLOGNO(00062) "%s: no memory to render "
                              "the page", k->what);
    else if (b->bad_row < 0)
        blog_call_log_limited(&pages_log, APLOG_ERR, 0, &call,
                              BLOGLOGNO(00038) "%s returned no column %s",
                              k->what, b->bad_column);
    else
        blog_call_log_limited(&pages_log, APLOG_ERR, 0, &call,
                              BLOGLOGNO(00039) "%s returned a malformed %s "
                              "in row %d", k->what, b->bad_column, b->bad_row);
}

static void
hint_raise(apr_uint32_t *hint, size_t len, size_t max)
{
    if (len > apr_atomic_read32(hint) && len <= max)
        apr_atomic_set32(hint, (apr_uint32_t) len);
}

/* The size of the next arena for a page that did not fit in size. */
static size_t
arena_next(size_t size, size_t need)
{
    size_t      next = need > size * 2 ? need : size * 2;

    return next < ARENA_MAX ? next : ARENA_MAX;
}

/*
 * k's page from rs (/compute's from sum, computed once for all the
 * tries), built in an arena of its kind's size: again in a larger one when
 * it failed for lack of room (a child's first pages, a page larger than the
 * hints keep), so that core never calls back up.  (A render that found no
 * room for its hint's buffer sizes itself and may still fit.)
 */
static void
page_build(request_rec *r, const blog_site *site, page_kind *k,
           const blog_rows *rs, uint64_t sum, blog_page *out)
{
    apr_pool_t *p = blog_page_pool(r);
    size_t      size = apr_atomic_read32(&k->arena_hint);
    blog_arena  a;
    blog_build  b;

    for (;;) {
        void       *block = apr_palloc(p, size);

        blog_arena_init(&a, block, block != NULL ? size : 0);
        build_init(site, blog_arena_alloc, &a, &b);
        b.size_hint = apr_atomic_read32(&k->render_hint);
        if (k->build != NULL)
            k->build(&b, rs, out);
        else
            blog_build_compute(&b, site->compute_limit, sum, out);
        blog_arena_done(&a);
        if (b.bad_column == NULL || a.need == 0 || block == NULL
            || size >= ARENA_MAX)
            break;
        size = arena_next(size, a.need);
    }
    if (b.bad_column != NULL && a.need != 0) {
        b.bad_column = "(rendering)";
        b.bad_row = BLOG_BAD_RENDER;
        *out = site->unavailable;
    }
    hint_raise(&k->render_hint, b.size_hint, ARENA_HINT_MAX);
    hint_raise(&k->arena_hint, HINT_FOR(a.used), ARENA_HINT_MAX);
    if (b.bad_column != NULL)
        page_log(r, &b, k);
}

/* stmt's page, or 503. */
static void
page_query(request_rec *r, const blog_site *site, blog_stmt stmt,
           const char *param, apr_size_t param_len, blog_page *out)
{
    blog_rows   rs;
    blog_call   call = blog_call_of(r);

    if (blog_db_rows(&call, stmt, param, param_len, &rs) != APR_SUCCESS) {
        *out = site->unavailable;
        return;
    }
    page_build(r, site, &kinds[stmt], &rs, 0, out);
}

void
blog_page_for(request_rec *r, const blog_site *site, const blog_route *rt,
              blog_page *out)
{
    /* the int4 in binary format, big-endian */
    static const char limit_be[4] = {0, 0, 0, INDEX_LIMIT};

    switch (rt->kind) {
    case BLOG_ROUTE_INDEX:
    case BLOG_ROUTE_CACHED_INDEX:
        page_query(r, site, BLOG_STMT_INDEX, limit_be, 4, out);
        break;
    case BLOG_ROUTE_POST:
    case BLOG_ROUTE_CACHED_POST:
        page_query(r, site, BLOG_STMT_POST, rt->slug, rt->slug_len, out);
        break;
    case BLOG_ROUTE_TAG:
        page_query(r, site, BLOG_STMT_TAG, rt->slug, rt->slug_len, out);
        break;
    case BLOG_ROUTE_COMPUTE:
        page_build(r, site, &kinds[KIND_COMPUTE], NULL,
                   blog_sum_primes_below(site->compute_limit), out);
        break;
    default:
        *out = site->not_found;
        break;
    }
}

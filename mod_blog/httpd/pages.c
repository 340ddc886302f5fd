/* SPDX-License-Identifier: Apache-2.0 */
/* pages.c - the rows live as long as r->pool: the page points into them. */
#include "httpd/pages.h"
#include "httpd/store_call.h"
#include "core/logno.h"

#include "core/compute.h"
#include "store/db.h"
#include "store/ratelog.h"

#include "http_log.h"

#include "apr_atomic.h"
#include "apr_thread_mutex.h"

APLOG_USE_MODULE(blog);

/* blog.index_page's one argument, the contract's (below 128: one byte). */
#define INDEX_LIMIT 20

void *
blog_pool_alloc(void *ctx, size_t size)
{
    return apr_palloc(ctx, size);
}

/* One allocator per child for pages, not the connection's (each keeps
 * MaxMemFree): at most PAGES_KEEP idle, room for the pages a child builds
 * at once (a tag page takes 56 KiB), or APR maps and unmaps the blocks of
 * every page (docs/DECISIONS.md, "A page allocator per child, keeping
 * 1 MiB"). */
#define PAGES_KEEP (1024 * 1024)

static apr_allocator_t *pages_allocator;

void
blog_pages_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_allocator_t *a;
    apr_thread_mutex_t *m;
    apr_pool_t *owner;
    apr_status_t rv;

    rv = apr_allocator_create(&a);
    if (rv == APR_SUCCESS
        && (rv = apr_pool_create_ex(&owner, pchild, NULL, a)) != APR_SUCCESS)
        apr_allocator_destroy(a);
    else if (rv == APR_SUCCESS) {
        apr_allocator_owner_set(a, owner);
        apr_pool_tag(owner, "blog_pages");
        rv = apr_thread_mutex_create(&m, APR_THREAD_MUTEX_DEFAULT, owner);
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s, BLOGLOGNO(00037)
                     "no shared allocator for pages; building them "
                     "in each request's pool");
        return;
    }
    apr_allocator_mutex_set(a, m);
    apr_allocator_max_free_set(a, PAGES_KEEP);
    pages_allocator = a;
}

/* A child of r->pool: it lasts until the request's EOR bucket, after the
 * page's last byte is written, however slow the client. */
static apr_pool_t *
pages_pool(request_rec *r)
{
    apr_pool_t *p;

    if (pages_allocator == NULL
        || apr_pool_create_ex(&p, r->pool, NULL, pages_allocator)
        != APR_SUCCESS)
        return r->pool;
    apr_pool_tag(p, "blog_page");
    return p;
}

static void
build_init(apr_pool_t *p, const blog_site *site, blog_build *b)
{
    *b = (blog_build) {.pages = site->pages, .alloc = blog_pool_alloc,
        .alloc_ctx = p, .base = site->base, .base_len = site->base_len,
        .not_found = &site->not_found, .unavailable = &site->unavailable};
}

int
blog_pages_site(apr_pool_t *p, blog_site *site)
{
    blog_build  b;

    build_init(p, site, &b);
    return blog_build_static(&b, &site->not_found, &site->unavailable);
}

/* Each kind of page's size hint (build.h): db.h's three statements'. */
static apr_uint32_t pages_size_hint[BLOG_STMT_TAG + 1];
static apr_uint32_t pages_compute_hint;

typedef void (*build_fn) (blog_build *b, const blog_rows *rs, blog_page *out);

static void
page_start(request_rec *r, const blog_site *site, apr_uint32_t *hint,
           blog_build *b)
{
    build_init(pages_pool(r), site, b);
    b->size_hint = apr_atomic_read32(hint);
}

/* A schema that does not match fails every page alike: one line per 5 s
 * per child, as a failing back end's. */
static blog_ratelog pages_log;

/*
 * A page built by what: its kind's hint raised (without a lock: a lost
 * raise costs one page a second pass), what made it a 503 logged.
 */
static void
page_done(request_rec *r, const blog_build *b, apr_uint32_t *hint,
          const char *what)
{
    if (b->size_hint > (size_t) apr_atomic_read32(hint))
        apr_atomic_set32(hint, (apr_uint32_t) b->size_hint);
    if (b->bad_column == NULL)
        return;
    if (b->bad_row == BLOG_BAD_RENDER)
        blog_log_limited(&pages_log, APLOG_ERR, APR_ENOMEM, r->server,
                         BLOGLOGNO(00062) "%s: no memory to render the page",
                         what);
    else if (b->bad_row < 0)
        blog_log_limited(&pages_log, APLOG_ERR, 0, r->server,
                         BLOGLOGNO(00038) "%s returned no column %s", what,
                         b->bad_column);
    else
        blog_log_limited(&pages_log, APLOG_ERR, 0, r->server,
                         BLOGLOGNO(00039) "%s returned a malformed %s in "
                         "row %d", what, b->bad_column, b->bad_row);
}

/* stmt's page, or 503. */
static void
page_query(request_rec *r, const blog_site *site, blog_stmt stmt,
           const char *param, apr_size_t param_len, blog_page *out)
{
    static const char *const fn[] = {
        "blog.index_page", "blog.post_page", "blog.tag_page"
    };
    static const build_fn build[] = {
        blog_build_index, blog_build_post, blog_build_tag
    };
    blog_build  b;
    blog_rows   rs;
    blog_call   call = blog_call_of(r);

    if (blog_db_rows(&call, stmt, param, param_len, &rs) != APR_SUCCESS) {
        *out = site->unavailable;
        return;
    }
    page_start(r, site, &pages_size_hint[stmt], &b);
    build[stmt](&b, &rs, out);
    page_done(r, &b, &pages_size_hint[stmt], fn[stmt]);
}

static void
page_compute(request_rec *r, const blog_site *site, blog_page *out)
{
    blog_build  b;

    page_start(r, site, &pages_compute_hint, &b);
    blog_build_compute(&b, site->compute_limit,
                       blog_sum_primes_below(site->compute_limit), out);
    page_done(r, &b, &pages_compute_hint, "/compute");
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
        page_compute(r, site, out);
        break;
    default:
        *out = site->not_found;
        break;
    }
}

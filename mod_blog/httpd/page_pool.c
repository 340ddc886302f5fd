/* SPDX-License-Identifier: Apache-2.0 */
/*
 * page_pool.c - one allocator per child for pages, not the connection's
 * (each keeps MaxMemFree): at most PAGES_KEEP idle, room for the pages a
 * child builds at once (a tag page takes 56 KiB), or APR maps and unmaps
 * the blocks of every page (docs/DECISIONS.md, "A page allocator per
 * child, keeping 1 MiB").
 */
#include "httpd/page_pool.h"
#include "core/logno.h"

#include "http_log.h"

#include "apr_thread_mutex.h"

APLOG_USE_MODULE(blog);

#define PAGES_KEEP (1024 * 1024)

static apr_allocator_t *pages_allocator;

void *
blog_pool_alloc(void *ctx, size_t size)
{
    return apr_palloc(ctx, size);
}

void
blog_page_pool_child_init(apr_pool_t *pchild, server_rec *s)
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
apr_pool_t *
blog_page_pool(request_rec *r)
{
    apr_pool_t *p;

    if (pages_allocator == NULL
        || apr_pool_create_ex(&p, r->pool, NULL, pages_allocator)
        != APR_SUCCESS)
        return r->pool;
    apr_pool_tag(p, "blog_page");
    return p;
}

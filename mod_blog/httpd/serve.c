/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve.c - the six routes of docs/CONTRACT.md section 2 and the cache of
 * section 3.
 *
 * Nothing untrusted reaches a header: X-Cache, Allow and Retry-After are
 * constants.  A malformed path never reaches PostgreSQL or Redis: the
 * router rejects it before either is touched.
 */
#include "httpd/serve.h"

#include "store/cache.h"
#include "httpd/hold.h"
#include "httpd/pages.h"
#include "httpd/response.h"
#include "httpd/store_call.h"
#include "core/router.h"
#include "store/counters.h"

#include "http_protocol.h"

static int
serve_cached(request_rec *r, const blog_site *site, const blog_route *rt)
{
    apr_size_t  cap = BLOG_CACHE_PREFIX_LEN + site->base_len
        + rt->page_path_len + 1;
    char       *key = apr_palloc(r->pool, cap);
    apr_size_t  key_len = blog_cache_key(key, cap, site->base,
                                         site->base_len, rt->page_path,
                                         rt->page_path_len);
    blog_cache_status st;
    const char *xcache;
    blog_page   page;
    blog_call   call = blog_call_of(r);

    st = blog_cache_get(&call, key, key_len, &page.body, &page.len);
    blog_call_notes(r, &call);
    if (st == BLOG_CACHE_HIT) {
        blog_stat_inc(BLOG_STAT_CACHE_HITS);
        return blog_respond(r, HTTP_OK, page.body, page.len, "HIT");
    }
    blog_page_for(r, site, rt, &page);
    xcache = st == BLOG_CACHE_MISS ? "MISS" : "BYPASS";
    if (st == BLOG_CACHE_MISS && page.status == HTTP_OK
        && blog_cache_set(&call, key, key_len, page.body, page.len) != 0)
        xcache = "BYPASS";
    blog_call_notes(r, &call);
    blog_stat_inc(xcache[0] == 'M' ? BLOG_STAT_CACHE_MISSES
                  : BLOG_STAT_CACHE_BYPASSES);
    return blog_respond(r, page.status, page.body, page.len, xcache);
}

int
blog_serve(request_rec *r, const blog_site *site, const char *path,
           apr_size_t len)
{
    blog_route  rt;
    blog_page   page;
    int         rv;

    /*
     * No page takes a body (docs/CONTRACT.md section 2.1): none is read, the
     * connection closes after the answer instead (core then reads none), so
     * a client trickling a body holds no worker.
     */
    if (ap_request_has_body(r))
        r->connection->keepalive = AP_CONN_CLOSE;
    rv = ap_discard_request_body(r);
    if (rv != OK)
        return rv;
    if (r->method_number != M_GET)     /* OPTIONS: 200, Allow as a 405's */
        return blog_respond(r, r->method_number == M_OPTIONS ? HTTP_OK
                            : HTTP_METHOD_NOT_ALLOWED, "", 0, NULL);
    blog_hold_arm(r, site->hold);

    blog_route_match(path, len, &rt);
    if (rt.kind == BLOG_ROUTE_CACHED_INDEX || rt.kind == BLOG_ROUTE_CACHED_POST)
        return serve_cached(r, site, &rt);
    blog_page_for(r, site, &rt, &page);
    return blog_respond(r, page.status, page.body, page.len, NULL);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_errors.c - error paths of the request's own code, through
 * httpd_stubs.c's faults: a page whose rendering runs out of memory
 * (pages.c), a response whose write fails (response.c), a template file
 * read short (tplfiles.c), and the rate limit of the log, which must not
 * let a warning hold back an error (ratelog.c).
 */
#include <string.h>

#include "httpd.h"
#include "http_log.h"
#include "apr_buckets.h"

#include "httpd/pages.h"
#include "httpd/page_pool.h"
#include "store/ratelog.h"
#include "httpd/response.h"
#include "httpd/tplfiles.h"
#include "core/router.h"

#include "backends.h"
#include "harness.h"

/* A site as post_config makes one, at "/", from the templates. */
static int
te_site(apr_pool_t *p, blog_site *site)
{
    blog_tpl_files files = {TEMPLATES_DIR, blog_pool_alloc, p};
    char        err[512];

    memset(site, 0, sizeof(*site));
    site->pages = blog_pageset_load(blog_tpl_file_source, &files,
                                    blog_pool_alloc, p, err, sizeof(err));
    site->compute_limit = 20000;
    site->base = "";
    site->mounted = 1;
    return site->pages != NULL ? blog_pages_site(p, site) : -1;
}

/* /compute rendered without memory: the 503 page, the reason logged,
 * once per 5 s. */
static void
test_compute_out_of_memory(void)
{
    apr_pool_t *p;
    blog_site   site;
    blog_route  rt;
    blog_page   page;
    request_rec *r;
    unsigned    n = t_log_count();

    apr_pool_create(&p, t_root());
    CHECK(te_site(p, &site) == 0);
    blog_route_match("/compute", 8, &rt);
    r = t_request(p);
    blog_page_for(r, &site, &rt, &page);
    CHECK(page.status == 200 && page.len > 0);
    t_palloc_fail = r->pool;
    blog_page_for(r, &site, &rt, &page);
    t_palloc_fail = NULL;
    CHECK(page.status == 503 && page.body == site.unavailable.body);
    CHECK(t_log_since(n, "/compute: no memory to render the page"));
    /* every page failing alike: one line, not one per page */
    n = t_log_count();
    t_palloc_fail = r->pool;
    blog_page_for(r, &site, &rt, &page);
    blog_page_for(r, &site, &rt, &page);
    t_palloc_fail = NULL;
    CHECK(page.status == 503);
    CHECK(t_log_count() == n);
    apr_pool_destroy(p);
}

/* A request to answer, with the connection's bucket allocator. */
static request_rec *
te_request(apr_pool_t *p, int method)
{
    request_rec *r = t_request(p);

    r->connection = apr_pcalloc(r->pool, sizeof(*r->connection));
    r->connection->bucket_alloc = apr_bucket_alloc_create(r->pool);
    r->headers_in = apr_table_make(r->pool, 4);
    r->headers_out = apr_table_make(r->pool, 4);
    r->err_headers_out = apr_table_make(r->pool, 4);
    /* core's, one slot per module: the blog's is 0 here */
    r->request_config = apr_pcalloc(r->pool, sizeof(void *));
    r->method_number = method;
    return r;
}

/*
 * The client gone before the write (core's output filter fails): not OK,
 * as core's own handler answers; a filter's error stays one; a write that
 * went out is OK.
 */
static void
test_write_fails(void)
{
    static const struct
    {
        apr_status_t pass;
        int         want;
    } cases[] = {
        {APR_ECONNABORTED, HTTP_INTERNAL_SERVER_ERROR},
        {APR_TIMEUP, HTTP_INTERNAL_SERVER_ERROR},
        {AP_FILTER_ERROR, AP_FILTER_ERROR},
        {APR_SUCCESS, OK}
    };
    apr_pool_t *p;
    size_t      i;

    apr_pool_create(&p, t_root());
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        request_rec *r = te_request(p, M_GET);
        int         rc;

        t_pass_rv = cases[i].pass;
        t_passed = 0;
        rc = blog_respond(r, HTTP_OK, "<p>page</p>", 11, "MISS");
        CHECK(rc == cases[i].want);
        CHECK(t_passed == 11 && r->status == HTTP_OK);
        if (rc != cases[i].want)
            fprintf(stderr, "  (ap_pass_brigade %d: %d)\n", cases[i].pass,
                    rc);
    }
    t_pass_rv = APR_SUCCESS;
    apr_pool_destroy(p);
}

/*
 * One service's warnings and errors: a warning written does not hold
 * back the error that follows, and each class is limited on its own.
 */
static void
test_ratelog_classes(void)
{
    blog_ratelog rl;
    server_rec  s;
    unsigned    n = t_log_count();

    memset(&rl, 0, sizeof(rl));
    memset(&s, 0, sizeof(s));
    blog_log_limited(&rl, APLOG_WARNING, 0, &s, "BLOG99999: warning one");
    blog_log_limited(&rl, APLOG_ERR, 0, &s, "BLOG99999: error one");
    CHECK(t_log_since(n, "warning one") && t_log_since(n, "error one"));
    n = t_log_count();
    blog_log_limited(&rl, APLOG_WARNING, 0, &s, "BLOG99999: warning two");
    blog_log_limited(&rl, APLOG_CRIT, 0, &s, "BLOG99999: error two");
    CHECK(t_log_count() == n);
}

/*
 * A call's lines name its client when it lends a connection (as
 * ap_log_rerror's did), and only then: the rate-limited ones, an outage's
 * end, and the plain ones.
 */
static void
test_call_log_client(void)
{
    apr_pool_t *p;
    blog_ratelog rl;
    server_rec  s;
    conn_rec    c;
    blog_call   call, none;
    unsigned    n = t_log_count();

    apr_pool_create(&p, t_root());
    memset(&rl, 0, sizeof(rl));
    memset(&s, 0, sizeof(s));
    memset(&c, 0, sizeof(c));
    s.log.level = APLOG_DEBUG;
    c.base_server = &s;
    c.client_ip = "192.0.2.7";
    CHECK(apr_sockaddr_info_get(&c.client_addr, c.client_ip, APR_INET, 40000,
                                0, p) == APR_SUCCESS);
    call = (blog_call) {.pool = p, .s = &s, .c = &c};
    none = (blog_call) {.pool = p, .s = &s};
    blog_call_log_limited(&rl, APLOG_WARNING, 0, &call,
                          "BLOG99999: a call's warning");
    CHECK(t_log_since(n, "[client 192.0.2.7:40000] BLOG99999: a call's "
                      "warning"));
    blog_outage_begin(&rl);
    blog_call_outage_end(&rl, &call, "BLOG99999: the service");
    CHECK(t_log_since(n, "[client 192.0.2.7:40000] BLOG99999: the service "
                      "again"));
    blog_call_log(&call, APLOG_INFO, 0, "BLOG99999: a call's line");
    CHECK(t_log_since(n, "[client 192.0.2.7:40000] BLOG99999: a call's "
                      "line"));
    n = t_log_count();
    blog_call_log_limited(&rl, APLOG_ERR, 0, &none,
                          "BLOG99999: no request's error");
    blog_call_log(&none, APLOG_INFO, 0, "BLOG99999: no request's line");
    CHECK(t_log_since(n, "no request's error")
          && t_log_since(n, "no request's line") && !t_log_since(n, "[client"));
    apr_pool_destroy(p);
}

/* A template file that shrinks while it is read: refused, not compiled
 * half (a start-up error naming the file). */
static void
test_template_read_short(void)
{
    apr_pool_t *p;
    blog_tpl_files files;
    const char *src = NULL, *srcname = NULL;
    size_t      len = 0;
    char        why[512] = "";

    apr_pool_create(&p, t_root());
    files = (blog_tpl_files) {TEMPLATES_DIR, blog_pool_alloc, p};
    CHECK(blog_tpl_file_source(&files, "layout", &src, &len, &srcname, why,
                               sizeof(why)) == 0 && len > 100);
    t_fread_short = 1;
    CHECK(blog_tpl_file_source(&files, "layout", &src, &len, &srcname, why,
                               sizeof(why)) == -1);
    t_fread_short = 0;
    CHECK(strstr(why, "/layout.html: it changed while it was read") != NULL);
    apr_pool_destroy(p);
}

/*
 * A Range that misses one of the blog's pages: httpd's byterange filter
 * answers 416, and the blog's insert_error_filter hook gives that answer
 * Content-Range: bytes *\/length (RFC 9110 15.5.17); another handler's
 * 416 is left as it is.
 */
static void
test_range_not_satisfiable(void)
{
    apr_pool_t *p;
    request_rec *r;

    apr_pool_create(&p, t_root());
    blog_response_register_hooks();
    CHECK(t_hook.insert_error_filter != NULL);
    if (t_hook.insert_error_filter == NULL) {
        apr_pool_destroy(p);
        return;
    }
    t_pass_rv = APR_SUCCESS;
    r = te_request(p, M_GET);
    CHECK(blog_respond(r, HTTP_OK, "<p>page</p>", 11, NULL) == OK);
    r->status = HTTP_RANGE_NOT_SATISFIABLE;     /* as ap_die sets it */
    t_hook.insert_error_filter(r);
    CHECK(apr_table_get(r->err_headers_out, "Content-Range") != NULL
          && strcmp(apr_table_get(r->err_headers_out, "Content-Range"),
                    "bytes */11") == 0);
    /* another error of the same request, or another handler's 416 */
    r = te_request(p, M_GET);
    CHECK(blog_respond(r, HTTP_OK, "<p>page</p>", 11, NULL) == OK);
    r->status = HTTP_INTERNAL_SERVER_ERROR;
    t_hook.insert_error_filter(r);
    CHECK(apr_table_get(r->err_headers_out, "Content-Range") == NULL);
    r = te_request(p, M_GET);
    apr_table_setn(r->headers_out, "Content-Length", "11");
    r->status = HTTP_RANGE_NOT_SATISFIABLE;
    t_hook.insert_error_filter(r);
    CHECK(apr_table_get(r->err_headers_out, "Content-Range") == NULL);
    /* a page encoded by a filter (mod_deflate): another length missed */
    r = te_request(p, M_GET);
    CHECK(blog_respond(r, HTTP_OK, "<p>page</p>", 11, NULL) == OK);
    apr_table_setn(r->headers_out, "Content-Encoding", "gzip");
    r->status = HTTP_RANGE_NOT_SATISFIABLE;
    t_hook.insert_error_filter(r);
    CHECK(apr_table_get(r->err_headers_out, "Content-Range") == NULL);
    apr_pool_destroy(p);
}

const t_case t_errors_cases[] = {
    {"errors: /compute rendered out of memory is the 503",
     test_compute_out_of_memory},
    {"errors: a write that fails is not OK", test_write_fails},
    {"errors: a warning never holds back an error", test_ratelog_classes},
    {"errors: a call's lines name its client", test_call_log_client},
    {"errors: a template read short is refused", test_template_read_short},
    {"errors: a 416 of a page says its length (Content-Range)",
     test_range_not_satisfiable},
    {NULL, NULL}
};

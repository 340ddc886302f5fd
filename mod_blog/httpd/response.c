/* SPDX-License-Identifier: Apache-2.0 */
/*
 * response.c - one brigade per response (one bucket and EOS: the filters
 * see the whole page, core writes it with one writev).  A 200's strong
 * ETag is XXH3-64 of its bytes: the page has no modification time.
 */
#include "httpd/response.h"
#include "core/logno.h"

#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "util_filter.h"
#include "apr_strings.h"

#include <xxhash.h>

APLOG_USE_MODULE(blog);

/* A page this size fits a socket's send buffer. */
#define BLOG_FLUSH_MAX 8192

int
blog_respond(request_rec *r, int status, const char *body, apr_size_t len,
             const char *xcache)
{
    conn_rec   *c = r->connection;
    apr_bucket_brigade *bb;

    r->status = status;
    /* every answer, 404, 405 and 503 too (docs/CONTRACT.md section 2) */
    ap_set_content_type(r, "text/html; charset=utf-8");
    ap_set_content_length(r, (apr_off_t) len);
    if (xcache != NULL)
        apr_table_setn(r->headers_out, "X-Cache", xcache);
    if (status == HTTP_SERVICE_UNAVAILABLE)
        apr_table_setn(r->headers_out, "Retry-After", "1");
    else if (status == HTTP_METHOD_NOT_ALLOWED
             || r->method_number == M_OPTIONS)
        apr_table_setn(r->headers_out, "Allow", "GET, HEAD");

    /*
     * GET and HEAD: an OPTIONS answer describes no representation.  No
     * Last-Modified, so If-Modified-Since and If-Unmodified-Since are
     * ignored (RFC 9110 13.1.3, 13.1.4); ap_meets_conditions would weigh
     * them against now, and answer 304 for a page that changed.
     */
    if (status == HTTP_OK && r->method_number == M_GET) {
        /* its length, should a Range miss it (below): in the slot itself,
         * plus one, so that no request pays an allocation for it */
        ap_set_module_config(r->request_config, &blog_module,
                             (void *) (apr_uintptr_t) (len + 1));
        apr_table_setn(r->headers_out, "ETag",
                       apr_psprintf(r->pool, "\"%016" APR_UINT64_T_HEX_FMT
                                    "\"",
                                    (apr_uint64_t) XXH3_64bits(body, len)));
        if (ap_condition_if_match(r, r->headers_out) == AP_CONDITION_NOMATCH)
            return HTTP_PRECONDITION_FAILED;
        if (ap_condition_if_none_match(r, r->headers_out)
            > AP_CONDITION_NOMATCH)
            return HTTP_NOT_MODIFIED;
    }

    bb = apr_brigade_create(r->pool, c->bucket_alloc);
    /*
     * Immortal: r->pool outlives every bucket before the request's EOR, even
     * when the event MPM writes asynchronously.  HEAD sends no body.
     */
    if (!r->header_only && len > 0)
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_immortal_create(
                                        body, len, c->bucket_alloc));
    /*
     * Core keeps a response under 4 KiB until it has looked for a pipelined
     * request, so that look never finds the client's next one and the
     * connection goes back to the listener; flushed, the page leaves first.
     * Only a page that fits a socket buffer: the write never waits on a slow
     * reader (docs/DECISIONS.md, "Small pages flushed before the pipeline
     * check").
     */
    if (len <= BLOG_FLUSH_MAX)
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(c->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(c->bucket_alloc));
    /* as core's handler: a write that failed is no OK (logged at DEBUG) */
    return ap_pass_brigade_fchk(r, bb, BLOGLOGNO(00040)
                                "writing the response failed");
}

/*
 * The 416 that httpd's byterange filter makes of one of the blog's pages
 * says the length the range missed, as RFC 9110 15.5.17 asks (core sends
 * none).  Run as the error response starts, before its headers are
 * swapped in: err_headers_out are the ones sent.  The page's length is
 * the one blog_respond noted (core's content-length filter has set
 * Content-Length to the 416's 0 by then), unless a filter encoded the
 * page (mod_deflate): the range then missed another length.
 */
static void
response_insert_error_filter(request_rec *r)
{
    apr_uintptr_t len1;

    if (r->status != HTTP_RANGE_NOT_SATISFIABLE
        || (len1 = (apr_uintptr_t) ap_get_module_config(r->request_config,
                                                         &blog_module)) == 0
        || apr_table_get(r->headers_out, "Content-Encoding") != NULL)
        return;
    apr_table_setn(r->err_headers_out, "Content-Range",
                   apr_psprintf(r->pool, "bytes */%" APR_SIZE_T_FMT,
                                (apr_size_t) (len1 - 1)));
}

void
blog_response_register_hooks(void)
{
    ap_hook_insert_error_filter(response_insert_error_filter, NULL, NULL,
                                APR_HOOK_MIDDLE);
}

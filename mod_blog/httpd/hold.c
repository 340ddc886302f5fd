/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hold.c - BlogConnectionHold.  Under the event MPM a kept-alive connection
 * goes back to the listener thread after each response, and its next
 * request comes to a worker through the queue: a hand-over per request.
 * Once the blog has answered, core's non-blocking look for a pipelined
 * request (ap_check_pipeline) here waits up to the hold for the client's
 * next one; if it comes, the same worker reads it at once
 * (docs/DECISIONS.md, "The connection hold").
 *
 * Only that one look, after a response the blog wrote and core has sent,
 * on a plain HTTP/1.1 connection under an asynchronous MPM: never TLS, an
 * HTTP/2 stream, an Upgrade, a subrequest or a later request; any other
 * read of the connection disarms it, and core's timeouts are never
 * touched.
 */
#include "httpd/hold.h"

#include "http_config.h"
#include "http_core.h"
#include "http_ssl.h"           /* httpd 2.4.47 on; urls.c needs 2.4.51 */
#include "util_filter.h"
#include "apr_poll.h"

APLOG_USE_MODULE(blog);

static ap_filter_rec_t *hold_filter;

/* The connection's, in its pool: a filter added per request would grow it. */
typedef struct blog_hold
{
    int         able;           /* plain HTTP/1.x under an async MPM */
    apr_interval_time_t wait;   /* 0: disarmed */
} blog_hold;

/*
 * What the wait brought: the next request's bytes, or the client's close
 * (an empty read, or a reset).  A close is left to the MPM as if the hold
 * had not waited: the listener hands it to a worker that reads it and
 * closes, as it does every idle connection's.  Closed here, it would run
 * event's lingering close on this worker, whose 32 KiB drain buffer
 * touches a stack page that no request of the blog reaches, in every
 * worker that ever held a connection (docs/DECISIONS.md, "A close during
 * the hold goes to the listener").
 */
static int
next_request_came(ap_filter_t *f, apr_bucket_brigade *bb,
                  ap_input_mode_t mode, apr_read_type_e block, apr_off_t bytes)
{
    apr_off_t   len = 0;

    if (ap_get_brigade(f->next, bb, mode, block, bytes) == APR_SUCCESS
        && (apr_brigade_length(bb, 0, &len) != APR_SUCCESS || len != 0))
        return 1;
    apr_brigade_cleanup(bb);
    return 0;
}

static apr_status_t
hold_input(ap_filter_t *f, apr_bucket_brigade *bb, ap_input_mode_t mode,
           apr_read_type_e block, apr_off_t bytes)
{
    blog_hold  *h = f->ctx;
    apr_interval_time_t wait = h->wait;
    apr_status_t rv = ap_get_brigade(f->next, bb, mode, block, bytes);
    apr_pollfd_t pfd = {.desc_type = APR_POLL_SOCKET, .reqevents = APR_POLLIN};
    apr_int32_t n;

    h->wait = 0;
    if (wait == 0 || mode != AP_MODE_SPECULATIVE || block != APR_NONBLOCK_READ
        || (rv != APR_SUCCESS && !APR_STATUS_IS_EAGAIN(rv))
        || !APR_BRIGADE_EMPTY(bb) || f->c->keepalive != AP_CONN_KEEPALIVE
        || f->c->aborted || f->c->data_in_output_filters)
        return rv;
    pfd.desc.s = ap_get_conn_socket(f->c);
    if (apr_poll(&pfd, 1, &n, wait) != APR_SUCCESS)
        return rv;
    if (next_request_came(f, bb, mode, block, bytes))
        return APR_SUCCESS;
    return rv;
}

void
blog_hold_arm(request_rec *r, apr_interval_time_t hold)
{
    conn_rec   *c = r->connection;
    blog_hold  *h = ap_get_module_config(c->conn_config, &blog_module);

    /* a subrequest's answer is part of another handler's response */
    if (hold == 0 || r->main != NULL || r->proto_num < HTTP_VERSION(1, 1)
        || apr_table_get(r->headers_in, "Upgrade") != NULL)
        return;
    /* TLS, HTTP/2 and the MPM are the connection's: asked at its first. */
    if (h == NULL) {
        h = apr_pcalloc(c->pool, sizeof(*h));
        ap_set_module_config(c->conn_config, &blog_module, h);
        h->able = c->cs != NULL && c->master == NULL
            && !ap_ssl_conn_is_ssl(c);
        if (h->able)
            ap_add_input_filter_handle(hold_filter, h, NULL, c);
    }
    if (h->able)
        h->wait = hold;
}

void
blog_hold_register_hooks(void)
{
    hold_filter = ap_register_input_filter("BLOG_HOLD", hold_input, NULL,
                                           AP_FTYPE_CONNECTION);
}

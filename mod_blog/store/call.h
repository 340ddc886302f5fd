/* SPDX-License-Identifier: Apache-2.0 */
/*
 * call.h - what a request lends the store for one call of the pool or the
 * cache, and what the store says back: the store never sees the request.
 * The call's log lines name its client, as ap_log_rerror's would.
 */
#ifndef BLOG_CALL_H
#define BLOG_CALL_H

#include "httpd.h"
#include "http_log.h"

typedef struct blog_call
{
    apr_pool_t *pool;           /* owns what the call returns */
    server_rec *s;              /* names the server in the call's log lines */
    conn_rec   *c;              /* the client's; NULL: no request (start-up,
                                 * the opener or the listener thread) */
    const char *cache_why;      /* the cache's last failure, NULL: none */
} blog_call;

/*
 * One log line of a call: with a connection ap_log_cserror, so that httpd
 * prints "[client ip:port]" as for ap_log_rerror, else ap_log_error.  Not
 * all of ap_log_rerror: the address is c->client_ip, the TCP peer's, not
 * r->useragent_ip (which mod_remoteip may set to the address a proxy
 * forwards), and ErrorLogFormat's %L is the connection's log id, not the
 * request's.  A macro, for the caller's APLOG_MARK; fmt starts with its
 * BLOGLOGNO tag.
 */
#define blog_call_log(call, level, status, ...) \
    do { \
        const blog_call *call__ = (call); \
        if (call__->c != NULL) \
            ap_log_cserror(APLOG_MARK, level, status, call__->c, call__->s, \
                           __VA_ARGS__); \
        else \
            ap_log_error(APLOG_MARK, level, status, call__->s, __VA_ARGS__); \
    } while (0)

#endif

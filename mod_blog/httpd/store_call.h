/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_call.h - a request's store/call.h: its pool, server and connection
 * lent to the store, and what the store said back put in the request's
 * notes (the cache's failure as "blog-cache-why", for a LogFormat's
 * %{...}n).
 */
#ifndef BLOG_STORE_CALL_H
#define BLOG_STORE_CALL_H

#include "httpd.h"
#include "apr_tables.h"

#include "store/call.h"

#define BLOG_CACHE_WHY_NOTE "blog-cache-why"

static inline blog_call
blog_call_of(request_rec *r)
{
    return (blog_call) {.pool = r->pool, .s = r->server, .c = r->connection};
}

static inline void
blog_call_notes(request_rec *r, const blog_call *call)
{
    if (call->cache_why != NULL)
        apr_table_setn(r->notes, BLOG_CACHE_WHY_NOTE, call->cache_why);
}

#endif

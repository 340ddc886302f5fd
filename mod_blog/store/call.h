/* SPDX-License-Identifier: Apache-2.0 */
/*
 * call.h - what a request lends the store for one call of the pool or the
 * cache, and what the store says back: the store never sees the request.
 */
#ifndef BLOG_CALL_H
#define BLOG_CALL_H

#include "httpd.h"

typedef struct blog_call
{
    apr_pool_t *pool;           /* owns what the call returns */
    server_rec *s;              /* names the server in the call's log lines */
    const char *cache_why;      /* the cache's last failure, NULL: none */
} blog_call;

#endif

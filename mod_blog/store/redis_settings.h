/* SPDX-License-Identifier: Apache-2.0 */
/* redis_settings.h - BlogRedis's settings and their start-up load
 * (redis.c), without hiredis: what httpd/'s configuration sees of the
 * Redis client (redis.h, the client itself, is the store's). */
#ifndef BLOG_REDIS_SETTINGS_H
#define BLOG_REDIS_SETTINGS_H

#include "apr_pools.h"
#include "apr_time.h"

/* BlogRedis (parsed once, at start-up) and the options of its connection. */
typedef struct blog_redis_settings
{
    int         on;
    const char *host;           /* host name, or a unix socket path */
    int         port;           /* 0 with a unix socket */
    apr_interval_time_t connect_timeout;
    apr_interval_time_t timeout;
    const char *auth_file;      /* BlogRedisAuth, read at start-up into: */
    const char *user;           /* NULL: the default user */
    const char *pass;           /* NULL: no AUTH */
    int         tls;            /* BlogRedis rediss://host:port */
    const char *tls_ca;         /* BlogRedisTLSCA; NULL: the system's CAs */
    const char *tls_cert;       /* BlogRedisTLSCert: certificate and key */
    void       *tls_ctx;        /* SSL_CTX, made at start-up */
} blog_redis_settings;

/* BlogRedisAuth's file read into g, the TLS context of rediss:// made, in
 * the parent, as root: 0, or -1 with err saying why. */
int blog_redis_load(apr_pool_t *p, blog_redis_settings *g, char *err,
                    apr_size_t err_len);

#endif

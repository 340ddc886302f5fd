/* SPDX-License-Identifier: Apache-2.0 */
/* redis_tls.h - the TLS context of rediss:// (redis_tls.c). */
#ifndef BLOG_REDIS_TLS_H
#define BLOG_REDIS_TLS_H

#include "store/redis.h"

/* g's SSL_CTX made into g->tls_ctx (freed with p), its CA and client
 * certificate loaded: 0, or -1 with err saying why. */
int blog_redis_tls_context(apr_pool_t *p, blog_redis_settings *g, char *err,
                           apr_size_t err_len);

/* OpenSSL's last error, or what is given. */
const char *blog_redis_tls_error(const char *or);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * redis_tls.c - the TLS context of rediss://, made once in the parent: it
 * reads the CA and the client's certificate and key while still root, so
 * that the children only hand it to each connection's handshake (redis.c).
 */
#include "store/redis_tls.h"

#include "store/secret.h"

#include "apr_strings.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

static apr_status_t
redis_tls_free(void *ctx)
{
    SSL_CTX_free(ctx);
    return APR_SUCCESS;
}

const char *
blog_redis_tls_error(const char *or)
{
    unsigned long e = ERR_peek_last_error();
    const char *reason = e ? ERR_reason_error_string(e) : NULL;

    return reason ? reason : or;
}

int
blog_redis_tls_context(apr_pool_t *p, blog_redis_settings *g, char *err,
                       apr_size_t err_len)
{
    SSL_CTX    *ctx = SSL_CTX_new(TLS_client_method());
    char        key[8];
    apr_size_t  len;

    if (ctx == NULL) {
        apr_snprintf(err, err_len, "TLS: %s",
                     blog_redis_tls_error("no context"));
        return -1;
    }
    apr_pool_cleanup_register(p, ctx, redis_tls_free, apr_pool_cleanup_null);
    g->tls_ctx = ctx;
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
        apr_snprintf(err, err_len, "TLS: %s",
                     blog_redis_tls_error("cannot require TLS 1.2 or later"));
        return -1;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    ERR_clear_error();
    if ((g->tls_ca ? SSL_CTX_load_verify_locations(ctx, g->tls_ca, NULL)
         : SSL_CTX_set_default_verify_paths(ctx)) != 1) {
        apr_snprintf(err, err_len, "BlogRedisTLSCA %s: %s",
                     g->tls_ca ? g->tls_ca : "(the system's)",
                     blog_redis_tls_error("cannot load it"));
        return -1;
    }
    if (g->tls_cert == NULL)
        return 0;
    /* its key is a secret: the owner-only check of the others */
    if (blog_secret_read(g->tls_cert, key, sizeof(key), &len, err,
                         err_len) != 0)
        return -1;
    if (SSL_CTX_use_certificate_chain_file(ctx, g->tls_cert) == 1
        && SSL_CTX_use_PrivateKey_file(ctx, g->tls_cert, SSL_FILETYPE_PEM) == 1
        && SSL_CTX_check_private_key(ctx) == 1)
        return 0;
    apr_snprintf(err, err_len, "BlogRedisTLSCert %s: %s", g->tls_cert,
                 blog_redis_tls_error("no certificate and key"));
    return -1;
}

/* cache.h - the Redis page cache of docs/CONTRACT.md section 3. */
#ifndef BLOG_CACHE_H
#define BLOG_CACHE_H

#include "store/seal.h"

#include "httpd.h"
#include "apr_time.h"

/* The prefix of every page key (docs/CONTRACT.md section 3). */
#define BLOG_CACHE_PREFIX       "blog:page:"
#define BLOG_CACHE_PREFIX_LEN   (sizeof(BLOG_CACHE_PREFIX) - 1)

/* BlogRedis (parsed once, at start-up), its timeouts and BlogCacheTTL. */
typedef struct blog_cache_settings
{
    int         redis_on;
    const char *redis_host;     /* host name, or a unix socket path */
    int         redis_port;     /* 0 with a unix socket */
    apr_interval_time_t redis_connect_timeout;
    apr_interval_time_t redis_timeout;
    int         cache_ttl;      /* seconds */
    const char *auth_file;      /* BlogRedisAuth, read at start-up into: */
    const char *redis_user;     /* NULL: the default user */
    const char *redis_pass;     /* NULL: no AUTH */
    const char *key_file;       /* BlogCacheKey, read at start-up into: */
    blog_seal   seal;
    int         redis_tls;      /* BlogRedis rediss://host:port */
    const char *tls_ca;         /* BlogRedisTLSCA; NULL: the system's CAs */
    const char *tls_cert;       /* BlogRedisTLSCert: certificate and key */
    void       *tls_ctx;        /* SSL_CTX, made at start-up */
} blog_cache_settings;

typedef enum blog_cache_status
{
    BLOG_CACHE_HIT,
    BLOG_CACHE_MISS,
    BLOG_CACHE_DOWN             /* unreachable, slow or failing: BYPASS */
} blog_cache_status;

void blog_cache_child_init(apr_pool_t *pchild, server_rec *s,
                           const blog_cache_settings *g);

/* On a hit, *body points into the reply, which r->pool frees. */
blog_cache_status blog_cache_get(request_rec *r, const char *key,
                                 apr_size_t key_len, const char **body,
                                 apr_size_t *len);

/* SET key body EX ttl; 0 when stored, -1 when Redis failed. */
int blog_cache_set(request_rec *r, const char *key, apr_size_t key_len,
                   const char *body, apr_size_t len);

/* A GET answered (BlogRedis Off: no cache to ask): 0, or -1 with why. */
int blog_cache_ping(request_rec *r, char *why, apr_size_t why_len);

#endif

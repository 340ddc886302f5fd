/* SPDX-License-Identifier: Apache-2.0 */
/* cache.h - the Redis page cache of docs/CONTRACT.md section 3. */
#ifndef BLOG_CACHE_H
#define BLOG_CACHE_H

#include "store/call.h"
#include "store/redis_settings.h"
#include "store/seal.h"
#include "store/sentinel.h"

#include "httpd.h"
#include "apr_time.h"

/* The prefix of every page key (docs/CONTRACT.md section 3). */
#define BLOG_CACHE_PREFIX       "blog:page:"
#define BLOG_CACHE_PREFIX_LEN   (sizeof(BLOG_CACHE_PREFIX) - 1)

/*
 * The key of the page at path under the mount base (docs/CONTRACT.md section
 * 3): the prefix, the mount ("" at "/"; its pages link to it) and the path,
 * NUL-terminated in buf: its length, or 0 when cap is too small.
 */
apr_size_t blog_cache_key(char *buf, apr_size_t cap, const char *base,
                          apr_size_t base_len, const char *path,
                          apr_size_t path_len);

/* The Redis it is kept in, BlogCacheTTL and the key of its seals. */
typedef struct blog_cache_settings
{
    blog_redis_settings redis;
    blog_sentinel_settings sentinel;    /* list.n 0: redis is the cache */
    int         cache_ttl;      /* seconds */
    const char *key_file;       /* BlogCacheKey, read at start-up into: */
    blog_seal   seal;
} blog_cache_settings;

typedef enum blog_cache_status
{
    BLOG_CACHE_HIT,
    BLOG_CACHE_MISS,
    BLOG_CACHE_DOWN             /* unreachable, slow or failing: BYPASS */
} blog_cache_status;

/* The secrets of Redis and BlogCacheKey's file read, in the parent, as root
 * (redis.h): 0, or -1 with err saying why. */
int blog_cache_load(apr_pool_t *p, blog_cache_settings *g, char *err,
                    apr_size_t err_len);

void blog_cache_child_init(apr_pool_t *pchild, server_rec *s,
                           const blog_cache_settings *g);

/* On a hit, *body points into the reply, which call->pool frees; on a
 * failure call->cache_why says what failed. */
blog_cache_status blog_cache_get(blog_call *call, const char *key,
                                 apr_size_t key_len, const char **body,
                                 apr_size_t *len);

/* SET key body EX ttl; 0 when stored, -1 when Redis failed. */
int blog_cache_set(blog_call *call, const char *key, apr_size_t key_len,
                   const char *body, apr_size_t len);

/* A GET answered (BlogRedis Off: no cache to ask): 0, or -1 with why. */
int blog_cache_ping(blog_call *call, char *why, apr_size_t why_len);

#endif

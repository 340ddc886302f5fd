/*
 * cache.c - one hiredis context per thread, reused across requests.
 *
 * A context is used by one thread only, so it needs no lock and no pool:
 * a request runs its handler on one thread from start to end under every
 * MPM.  After any I/O error or timeout a context is dead (hiredis leaves it
 * in an undefined state): it is freed.  A failed connect or a timeout
 * starts a shared, capped backoff during which no thread connects, so that
 * a Redis outage costs one connect attempt per backoff period, not one per
 * request; a connection found closed is replaced at once.
 */
#include "cache.h"

#include "http_log.h"

#include <hiredis/hiredis.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/time.h>

APLOG_USE_MODULE(blog);

/* hiredis 0.14 has no reply-size cap: anything bigger is not ours. */
#define CACHE_MAX_VALUE     (8 * 1024 * 1024)
#define CACHE_BACKOFF_FIRST apr_time_from_msec(50)
#define CACHE_BACKOFF_MAX   apr_time_from_sec(1)

static const blog_settings *cache_g;
static __thread redisContext *cache_ctx;
/* Only for its destructor: a worker thread that exits closes its context. */
static pthread_key_t cache_key;
static apr_time_t cache_next_try;
static apr_interval_time_t cache_backoff;

static void
cache_thread_exit(void *ctx)
{
    redisFree(ctx);
}

void
blog_cache_child_init(apr_pool_t *pchild, server_rec *s,
                      const blog_settings *g)
{
    (void) pchild;
    (void) s;
    cache_g = g;
    pthread_key_create(&cache_key, cache_thread_exit);
}

static struct timeval
cache_tv(apr_interval_time_t t)
{
    struct timeval tv;

    tv.tv_sec = (long) apr_time_sec(t);
    tv.tv_usec = (long) apr_time_usec(t);
    return tv;
}

/* Benign races: the worst case is one extra connect attempt. */
static void
cache_note_failure(void)
{
    apr_interval_time_t b = __atomic_load_n(&cache_backoff, __ATOMIC_RELAXED);

    b = b ? b * 2 : CACHE_BACKOFF_FIRST;
    if (b > CACHE_BACKOFF_MAX)
        b = CACHE_BACKOFF_MAX;
    __atomic_store_n(&cache_backoff, b, __ATOMIC_RELAXED);
    __atomic_store_n(&cache_next_try, apr_time_now() + b, __ATOMIC_RELAXED);
}

/* A timeout or failed connect means Redis is slow or down: back off. */
static void
cache_drop(request_rec *r, const char *what, int back_off)
{
    ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                  "blog: Redis %s failed: %s; %s", what, cache_ctx->errstr,
                  back_off ? "bypassing the cache" : "reconnecting");
    redisFree(cache_ctx);
    cache_ctx = NULL;
    pthread_setspecific(cache_key, NULL);
    if (back_off)
        cache_note_failure();
}

static redisContext *
cache_context(request_rec *r)
{
    redisContext *c;

    if (cache_ctx != NULL)
        return cache_ctx;
    if (!cache_g->redis_on
        || apr_time_now() < __atomic_load_n(&cache_next_try,
                                            __ATOMIC_RELAXED))
        return NULL;
    if (cache_g->redis_port == 0)
        c = redisConnectUnixWithTimeout(cache_g->redis_host,
                                        cache_tv(cache_g->redis_connect_timeout));
    else
        c = redisConnectWithTimeout(cache_g->redis_host, cache_g->redis_port,
                                    cache_tv(cache_g->redis_connect_timeout));
    /* Without this the connect timeout silently becomes the command timeout. */
    if (c != NULL && !c->err
        && redisSetTimeout(c, cache_tv(cache_g->redis_timeout)) == REDIS_OK
        && (cache_g->redis_port == 0 || redisEnableKeepAlive(c) == REDIS_OK)) {
        __atomic_store_n(&cache_backoff, 0, __ATOMIC_RELAXED);
        cache_ctx = c;
        pthread_setspecific(cache_key, c);
        return c;
    }
    ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                  "blog: cannot connect to Redis at %s:%d: %s",
                  cache_g->redis_host, cache_g->redis_port,
                  c ? c->errstr : "out of memory");
    if (c != NULL)
        redisFree(c);
    cache_note_failure();
    return NULL;
}

static apr_status_t
cache_free_reply(void *data)
{
    freeReplyObject(data);
    return APR_SUCCESS;
}

/*
 * One command, retried once on a new connection when a context that had
 * worked finds its connection closed (Redis restarted): every thread holds
 * such a context after a restart, and none of them means Redis is down.
 */
static redisReply *
cache_run(request_rec *r, const char *what, const char *fmt, ...)
{
    int         attempt;

    for (attempt = 0; attempt < 2; attempt++) {
        int         reused = cache_ctx != NULL;
        redisContext *c = cache_context(r);
        redisReply *reply;
        int         closed;
        va_list     ap;

        if (c == NULL)
            return NULL;
        va_start(ap, fmt);
        reply = redisvCommand(c, fmt, ap);
        va_end(ap);
        if (reply != NULL)
            return reply;
        closed = reused && (c->err == REDIS_ERR_EOF
                            || (c->err == REDIS_ERR_IO && errno != EAGAIN
                                && errno != EWOULDBLOCK));
        cache_drop(r, what, !closed);
        if (!closed)
            return NULL;
    }
    return NULL;
}

blog_cache_status
blog_cache_get(request_rec *r, const char *key, apr_size_t key_len,
               const char **body, apr_size_t *len)
{
    redisReply *reply = cache_run(r, "GET", "GET %b", key, (size_t) key_len);

    if (reply == NULL)
        return BLOG_CACHE_DOWN;
    if (reply->type == REDIS_REPLY_NIL) {
        freeReplyObject(reply);
        return BLOG_CACHE_MISS;
    }
    if (reply->type != REDIS_REPLY_STRING || reply->len > CACHE_MAX_VALUE) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      "blog: unexpected Redis reply to GET (type %d, %lu "
                      "bytes); bypassing the cache", reply->type,
                      (unsigned long) reply->len);
        freeReplyObject(reply);
        return BLOG_CACHE_DOWN;
    }
    apr_pool_cleanup_register(r->pool, reply, cache_free_reply,
                              apr_pool_cleanup_null);
    *body = reply->str;
    *len = reply->len;
    return BLOG_CACHE_HIT;
}

int
blog_cache_set(request_rec *r, const char *key, apr_size_t key_len,
               const char *body, apr_size_t len)
{
    redisReply *reply = cache_run(r, "SET", "SET %b %b EX %d", key,
                                  (size_t) key_len, body, (size_t) len,
                                  cache_g->cache_ttl);
    int         ok;

    if (reply == NULL)
        return -1;
    ok = reply->type == REDIS_REPLY_STATUS;
    if (!ok)
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      "blog: Redis refused SET: %.*s",
                      reply->type == REDIS_REPLY_ERROR ? (int) reply->len : 0,
                      reply->type == REDIS_REPLY_ERROR ? reply->str : "");
    freeReplyObject(reply);
    return ok ? 0 : -1;
}

/*
 * cache.c - the page cache's Redis connections: one per thread, made on the
 * thread's first cache command and kept under an APR thread key, so that a
 * request waits on Redis and on nothing else (no lock, no other thread to
 * wake).  Each request sends its own GET (or SET) and reads its reply.
 *
 * After any I/O error, timeout or bad reply a connection is dead (replies
 * can no longer be matched to commands): it is closed and the command
 * fails, which its request turns into BYPASS.  A failed connect or a
 * timeout starts a backoff shared by the child's threads, during which
 * nobody connects, so that a Redis outage costs one connect attempt per
 * backoff period, not one per request; a connection that had answered and
 * is found closed (Redis restarted) is replaced at once, and its command
 * tried once more on the new one.
 *
 * The connection is redis.c's: every wait is against the command's
 * deadline, and no reply may declare more than CACHE_MAX_VALUE bytes.
 */
#include "cache.h"

#include "ratelog.h"
#include "redis.h"
#include "stats.h"
#include "wait.h"

#include "http_log.h"
#include "apr_strings.h"
#include "apr_thread_proc.h"

#include <stdlib.h>
#include <string.h>

APLOG_USE_MODULE(blog);

/*
 * The largest value a GET may return: a cached page of this blog is a few
 * KiB, so anything near this is not ours, and pages above it are not
 * stored.  It bounds what one request can make a child allocate.
 */
#define CACHE_MAX_VALUE     (1024 * 1024)

static const blog_cache_settings *cache_g;
static blog_backoff cache_backoff;
static apr_threadkey_t *cache_key;

/* A thread's connection. */
typedef struct cache_conn
{
    int         answered;       /* it has answered a command */
    blog_redis  redis;
} cache_conn;

/* At a thread's exit (the key's destructor), and the child's own thread's. */
static void
cache_conn_free(void *data)
{
    cache_conn *cc = data;

    blog_redis_close(&cc->redis);
    free(cc);
}

static apr_status_t
cache_child_exit(void *data)
{
    void       *cc = NULL;

    (void) data;
    if (apr_threadkey_private_get(&cc, cache_key) == APR_SUCCESS
        && cc != NULL) {
        apr_threadkey_private_set(NULL, cache_key);
        cache_conn_free(cc);
    }
    return APR_SUCCESS;
}

int
blog_cache_enabled(void)
{
    return cache_g != NULL && cache_g->redis_on;
}

void
blog_cache_child_init(apr_pool_t *pchild, server_rec *s,
                      const blog_cache_settings *g)
{
    apr_status_t rv = apr_threadkey_private_create(&cache_key,
                                                   cache_conn_free, pchild);

    cache_g = g;
    if (rv != APR_SUCCESS) {
        /* no key, no connection: every request bypasses the cache */
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, BLOGLOGNO(00042)
                     "cannot create the cache's thread key");
        cache_key = NULL;
        return;
    }
    apr_pool_cleanup_register(pchild, NULL, cache_child_exit,
                              apr_pool_cleanup_null);
}

/* This thread's connection, NULL when there is no key. */
static cache_conn *
cache_conn_get(void)
{
    void       *p = NULL;
    cache_conn *cc;

    if (cache_key == NULL
        || apr_threadkey_private_get(&p, cache_key) != APR_SUCCESS)
        return NULL;
    if (p != NULL)
        return p;
    if ((cc = calloc(1, sizeof(*cc))) == NULL)
        return NULL;
    cc->redis.max_bulk = CACHE_MAX_VALUE;
    if (apr_threadkey_private_set(cc, cache_key) != APR_SUCCESS) {
        free(cc);
        return NULL;
    }
    return cc;
}

/* One budget for every warning about Redis: a failing Redis fails alike. */
static blog_ratelog cache_log;
static blog_outage cache_outage;
/* Redis up but refusing SET (read-only replica, out of memory, ...). */
static blog_outage cache_write_outage;

/* This thread's last Redis failure: the health check's reason. */
#define CACHE_WHY_MAX 160
static __thread char cache_why[CACHE_WHY_MAX];

static void
cache_note_failure(void)
{
    blog_backoff_fail(&cache_backoff);
    blog_outage_begin(&cache_outage);
}

/*
 * Connect cc (0), or -1 during the backoff or when Redis refuses; then why
 * says what the attempt met ("" when none was made).
 */
static int
cache_connect(request_rec *r, cache_conn *cc, char *why)
{
    char        err[CACHE_WHY_MAX - 20];

    cc->answered = 0;
    if (!blog_backoff_ready(&cache_backoff))
        return -1;
    if (blog_redis_connect(&cc->redis, cache_g, err, sizeof(err)) == 0) {
        blog_backoff_reset(&cache_backoff);
        return 0;
    }
    apr_snprintf(why, CACHE_WHY_MAX, "connect failed: %s", err);
    blog_log_limited(&cache_log, APLOG_WARNING, 0, r->server,
                 BLOGLOGNO(00007) "cannot connect to Redis at %s%s%.0d: %s",
                 cache_g->redis_host, cache_g->redis_port ? ":" : "",
                 cache_g->redis_port, err);
    cache_note_failure();
    return -1;
}

static apr_status_t
cache_free_reply(void *data)
{
    freeReplyObject(data);
    return APR_SUCCESS;
}

/*
 * The connection failed: it is closed.  A connection that had worked,
 * found closed, is Redis restarted or its idle clients closed: nothing has
 * failed yet, the caller tries once more on a new one.  Anything else
 * leaves Redis alone for the backoff.
 */
static void
cache_fail(request_rec *r, cache_conn *cc, blog_redis_io io,
           const char *what, char *why)
{
    if (cc->answered && io == BLOG_REDIS_CLOSED)
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, r->server, BLOGLOGNO(00009)
                     "Redis closed the connection; reconnecting");
    else {
        blog_log_limited(&cache_log, APLOG_WARNING, 0, r->server,
                         BLOGLOGNO(00008)
                         "Redis %s failed: %s; bypassing the cache",
                         what, blog_redis_why[io]);
        cache_note_failure();
    }
    apr_snprintf(why, CACHE_WHY_MAX, "%s failed: %s", what,
                 blog_redis_why[io]);
    blog_redis_close(&cc->redis);
}

/*
 * One command, tried once more on a new connection when the one it went
 * out on had worked and is found closed (Redis restarted): none of the
 * commands on it means Redis is down.
 */
static redisReply *
cache_run(request_rec *r, const char *what, int argc, const char **argv,
          const size_t *lens)
{
    cache_conn *cc;
    apr_time_t  deadline;
    int         attempt;

    if (!cache_g->redis_on || (cc = cache_conn_get()) == NULL)
        return NULL;
    deadline = apr_time_now() + cache_g->redis_timeout;
    for (attempt = 0; attempt < 2; attempt++) {
        redisReply *reply = NULL, *extra = NULL;
        char        why[CACHE_WHY_MAX] = "";
        int         reused = cc->answered && cc->redis.ctx != NULL;
        blog_redis_io io = BLOG_REDIS_DOWN;

        if (cc->redis.ctx != NULL || cache_connect(r, cc, why) == 0)
            io = blog_redis_command(&cc->redis, argc, argv, lens, deadline,
                                    &reply);
        if (io == BLOG_REDIS_OK) {
            cc->answered = 1;
            /* Redis never speaks unasked: the connection is out of step. */
            if (blog_redis_next(&cc->redis, &extra) != BLOG_REDIS_OK
                || extra != NULL)
                cache_fail(r, cc, BLOG_REDIS_BAD, what, why);
            else
                blog_outage_end(&cache_outage, r->server, BLOGLOGNO(00010)
                                "Redis reachable");
            if (extra != NULL)
                freeReplyObject(extra);
            return reply;
        }
        if (io != BLOG_REDIS_DOWN)
            cache_fail(r, cc, io, what, why);
        /* Nothing tried (the backoff) is no new error. */
        if (why[0] != '\0') {
            blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
            apr_cpystrn(cache_why, why, sizeof(cache_why));
        }
        if (!(reused && io == BLOG_REDIS_CLOSED))
            break;
    }
    return NULL;
}

blog_cache_status
blog_cache_get(request_rec *r, const char *key, apr_size_t key_len,
               const char **body, apr_size_t *len)
{
    const char *argv[] = {"GET", key};
    const size_t lens[] = {3, key_len};
    redisReply *reply = cache_run(r, "GET", 2, argv, lens);

    if (reply == NULL)
        return BLOG_CACHE_DOWN;
    if (reply->type == REDIS_REPLY_NIL) {
        freeReplyObject(reply);
        return BLOG_CACHE_MISS;
    }
    if (reply->type != REDIS_REPLY_STRING) {
        blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
        blog_log_limited(&cache_log, APLOG_WARNING, 0, r->server,
                     BLOGLOGNO(00011)
                     "unexpected Redis reply to GET (type %d); "
                     "bypassing the cache", reply->type);
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
    const char *ttl = apr_itoa(r->pool, cache_g->cache_ttl);
    const char *argv[] = {"SET", key, body, "EX", ttl};
    const size_t lens[] = {3, key_len, len, 2, strlen(ttl)};
    redisReply *reply;
    int         ok;

    /* What a GET would refuse is not stored. */
    if (len > CACHE_MAX_VALUE)
        return -1;
    reply = cache_run(r, "SET", 5, argv, lens);
    if (reply == NULL)
        return -1;
    ok = reply->type == REDIS_REPLY_STATUS;
    if (ok)
        blog_outage_end(&cache_write_outage, r->server,
                        BLOGLOGNO(00012) "Redis accepting writes");
    else {
        blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
        blog_outage_begin(&cache_write_outage);
    }
    if (!ok)
        blog_log_limited(&cache_log, APLOG_WARNING, 0, r->server,
                     BLOGLOGNO(00013) "Redis refused SET: %.*s",
                     reply->type == REDIS_REPLY_ERROR ? (int) reply->len : 0,
                     reply->type == REDIS_REPLY_ERROR ? reply->str : "");
    freeReplyObject(reply);
    return ok ? 0 : -1;
}

const char *
blog_cache_why(void)
{
    return cache_why;
}

void
blog_cache_why_reset(void)
{
    cache_why[0] = '\0';
}

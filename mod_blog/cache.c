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
 *
 * hiredis formats the commands and parses the replies, but the socket is
 * driven here, non-blocking, against one deadline for the whole command:
 * hiredis 0.14 bounds each read (SO_RCVTIMEO), not the command, so a Redis
 * that trickles its answer could hold a request for ever; and it buffers a
 * bulk reply whole, whatever length it declares, so the declared length is
 * judged here before the body is read.
 */
#include "cache.h"

#include "ratelog.h"
#include "stats.h"
#include "wait.h"

#include "http_log.h"
#include "apr_strings.h"

#include <hiredis/hiredis.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

APLOG_USE_MODULE(blog);

/*
 * The largest value a GET may return: a cached page of this blog is a few
 * KiB, so anything near this is not ours, and pages above it are not
 * stored.  It bounds what one request can make a child allocate.
 */
#define CACHE_MAX_VALUE     (1024 * 1024)
/* A bulk header ("$1048576\r\n") is short; a longer first line is garbage. */
#define CACHE_MAX_HEADER    32
/* Redis's status and error lines are a sentence, not a stream. */
#define CACHE_MAX_LINE      1024
#define CACHE_BACKOFF_FIRST apr_time_from_msec(50)
#define CACHE_BACKOFF_MAX   apr_time_from_sec(1)

static const blog_cache_settings *cache_g;
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

int
blog_cache_enabled(void)
{
    return cache_g != NULL && cache_g->redis_on;
}

void
blog_cache_child_init(apr_pool_t *pchild, server_rec *s,
                      const blog_cache_settings *g)
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

/* One budget for every warning about Redis: a failing Redis fails alike. */
static blog_ratelog cache_log;
static blog_outage cache_outage;
/* Redis up but refusing SET (read-only replica, out of memory, ...). */
static blog_outage cache_write_outage;

/* This thread's last Redis failure: the health check's reason. */
static __thread char cache_why[160];

static void
cache_note_why(const char *what, const char *why)
{
    apr_snprintf(cache_why, sizeof(cache_why), "%s failed: %s", what, why);
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
    blog_outage_begin(&cache_outage);
}

/* A timeout or failed connect means Redis is slow or down: back off. */
static void
cache_drop(request_rec *r, const char *what, const char *why, int back_off)
{
    blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
    cache_note_why(what, why);
    blog_log_limited(&cache_log, APLOG_WARNING, 0, r->server,
                 "blog: Redis %s failed: %s; %s", what, why,
                 back_off ? "bypassing the cache" : "reconnecting");
    redisFree(cache_ctx);
    cache_ctx = NULL;
    pthread_setspecific(cache_key, NULL);
    if (back_off)
        cache_note_failure();
}

/*
 * The socket goes non-blocking and hiredis is told so (REDIS_BLOCK off):
 * its buffer functions then take EAGAIN as "try again", and the waiting is
 * done here, against the command's deadline.
 */
static int
cache_make_nonblocking(redisContext *c)
{
    int         fl = fcntl(c->fd, F_GETFL);

    if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -1;
    c->flags &= ~REDIS_BLOCK;
    return 0;
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
    if (c != NULL && !c->err && cache_make_nonblocking(c) == 0
        && (cache_g->redis_port == 0 || redisEnableKeepAlive(c) == REDIS_OK)) {
        __atomic_store_n(&cache_backoff, 0, __ATOMIC_RELAXED);
        cache_ctx = c;
        pthread_setspecific(cache_key, c);
        return c;
    }
    blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
    cache_note_why("connect", c ? c->errstr : "out of memory");
    blog_log_limited(&cache_log, APLOG_WARNING, 0, r->server,
                 "blog: cannot connect to Redis at %s%s%.0d: %s",
                 cache_g->redis_host, cache_g->redis_port ? ":" : "",
                 cache_g->redis_port, c ? c->errstr : "out of memory");
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

typedef enum cache_io
{
    CACHE_IO_OK,
    CACHE_IO_TIMEOUT,           /* Redis slow: back off */
    CACHE_IO_CLOSED,            /* connection closed: reconnect at once */
    CACHE_IO_BAD                /* error, garbage or an oversized reply */
} cache_io;

/*
 * Judge a reply by its first line, before its body is read: a bulk reply
 * may not declare more than CACHE_MAX_VALUE bytes, a status or error line
 * may not run on past CACHE_MAX_LINE, and any other first byte is not Redis
 * speaking.  1: fine, or complete enough to judge; 0: read more; -1: refuse.
 */
static int
cache_reply_head_ok(const redisReader *rd)
{
    const char *p = rd->buf + rd->pos;
    size_t      n = rd->len - rd->pos;
    size_t      max = n > 0 && p[0] == '$' ? CACHE_MAX_HEADER : CACHE_MAX_LINE;
    const char *eol = memchr(p, '\r', n < max ? n : max);
    long long   len;
    char       *end;

    if (n > 0 && p[0] != '$' && p[0] != '+' && p[0] != '-' && p[0] != ':')
        return -1;
    if (eol == NULL)
        return n < max ? 0 : -1;
    if (p[0] != '$')
        return 1;
    len = strtoll(p + 1, &end, 10);
    if (end != eol || len < -1 || len > CACHE_MAX_VALUE)
        return -1;
    return 1;
}

static cache_io
cache_io_error(redisContext *c)
{
    if (c->err == REDIS_ERR_EOF
        || (c->err == REDIS_ERR_IO && errno != EAGAIN
            && errno != EWOULDBLOCK))
        return CACHE_IO_CLOSED;
    return CACHE_IO_BAD;
}

/* Send the command formatted in c's buffer and read its one reply. */
static cache_io
cache_roundtrip(redisContext *c, apr_time_t deadline, redisReply **out)
{
    void       *reply = NULL;
    int         done = 0;
    int         head = 0;

    while (!done) {
        if (redisBufferWrite(c, &done) != REDIS_OK)
            return cache_io_error(c);
        if (!done && blog_wait_fd(c->fd, POLLOUT, deadline) != 0)
            return CACHE_IO_TIMEOUT;
    }
    for (;;) {
        if (blog_wait_fd(c->fd, POLLIN, deadline) != 0)
            return CACHE_IO_TIMEOUT;
        if (redisBufferRead(c) != REDIS_OK)
            return cache_io_error(c);
        if (head == 0 && (head = cache_reply_head_ok(c->reader)) < 0)
            return CACHE_IO_BAD;
        if (head == 0)
            continue;
        if (redisGetReplyFromReader(c, &reply) != REDIS_OK)
            return CACHE_IO_BAD;
        if (reply != NULL) {
            *out = reply;
            return CACHE_IO_OK;
        }
    }
}

/*
 * One command, retried once on a new connection when a context that had
 * worked finds its connection closed (Redis restarted): every thread holds
 * such a context after a restart, and none of them means Redis is down.
 */
static redisReply *
cache_run(request_rec *r, const char *what, const char *fmt, ...)
{
    apr_time_t  deadline = apr_time_now() + cache_g->redis_timeout;
    static const char *const why[] = {
        "", "timed out", "connection closed", "bad or oversized reply"
    };
    int         attempt;

    for (attempt = 0; attempt < 2; attempt++) {
        int         reused = cache_ctx != NULL;
        redisContext *c = cache_context(r);
        redisReply *reply = NULL;
        cache_io    io;
        va_list     ap;

        if (c == NULL)
            return NULL;
        va_start(ap, fmt);
        io = redisvAppendCommand(c, fmt, ap) == REDIS_OK
            ? cache_roundtrip(c, deadline, &reply) : CACHE_IO_BAD;
        va_end(ap);
        if (io == CACHE_IO_OK) {
            blog_outage_end(&cache_outage, r->server, "Redis reachable");
            return reply;
        }
        cache_drop(r, what, why[io], !(reused && io == CACHE_IO_CLOSED));
        if (!(reused && io == CACHE_IO_CLOSED))
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
    if (reply->type != REDIS_REPLY_STRING) {
        blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
        blog_log_limited(&cache_log, APLOG_WARNING, 0, r->server,
                     "blog: unexpected Redis reply to GET (type %d); "
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
    redisReply *reply;
    int         ok;

    /* What a GET would refuse is not stored. */
    if (len > CACHE_MAX_VALUE)
        return -1;
    reply = cache_run(r, "SET", "SET %b %b EX %d", key, (size_t) key_len,
                      body, (size_t) len, cache_g->cache_ttl);
    if (reply == NULL)
        return -1;
    ok = reply->type == REDIS_REPLY_STATUS;
    if (ok)
        blog_outage_end(&cache_write_outage, r->server,
                        "Redis accepting writes");
    else {
        blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
        blog_outage_begin(&cache_write_outage);
    }
    if (!ok)
        blog_log_limited(&cache_log, APLOG_WARNING, 0, r->server,
                     "blog: Redis refused SET: %.*s",
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

/*
 * cache.c - one Redis connection per child, shared by its threads, which
 * pipeline their commands on it.
 *
 * Unpipelined, each GET costs Redis a wake-up, a read and a write (some
 * 8 us of its CPU here) and the asking thread a write, a poll and a read.
 * Here the threads of a child queue their commands on one connection; one
 * of them at a time, the leader, writes every queued command in one
 * writev, reads the replies as they come and hands each to the thread that
 * asked, in the order sent (Redis answers in order).  Once its own reply is
 * in, the leader passes the role to the oldest thread still waiting and
 * goes on with its request, so no thread exists only to drive the
 * connection and nobody waits for a reply behind a request being written.
 * Redis then reads, runs and answers a batch per wake-up.  Each request
 * still sends its own GET (or SET): nothing is merged or kept.
 *
 * After any I/O error, timeout or bad reply the connection is dead
 * (replies can no longer be matched to commands): it is closed, and every
 * command on it or queued for it fails, which its request turns into
 * BYPASS.  A failed connect or a timeout starts a shared, capped backoff
 * during which nobody connects, so that a Redis outage costs one connect
 * attempt per backoff period, not one per request; a connection that had
 * answered and is found closed (Redis restarted) is replaced at once, and
 * its commands are tried once more on the new one.
 *
 * The connection is redis.c's: every wait is against the deadline of the
 * oldest command in flight, and no reply may declare more than
 * CACHE_MAX_VALUE bytes.
 */
#include "cache.h"

#include "ratelog.h"
#include "redis.h"
#include "stats.h"
#include "wait.h"

#include "http_log.h"
#include "apr_strings.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
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

/*
 * A command of one request, on the asking thread's stack until it is done.
 * Its thread sleeps on "wake" until the leader has set the result (or made
 * it the leader) and posted; after the post nobody else touches it.
 */
typedef struct cache_cmd
{
    struct cache_cmd *next;
    const char *buf;
    size_t      len;
    apr_time_t  deadline;
    redisReply *reply;
    blog_redis_io io;
    int         done;
    int         lead;           /* the leader handed it the connection */
    int         reused;         /* sent on a connection that had answered */
    char       *why;            /* CACHE_WHY_MAX bytes: what failed, and why */
    sem_t       wake;
} cache_cmd;

/*
 * The child's connection.  The lock guards the queue of commands not yet
 * written and the leader flag; the connection and the queue of commands
 * sent belong to the leader alone.
 */
typedef struct cache_link
{
    pthread_mutex_t lock;
    cache_cmd  *queued, **queued_tail;  /* not yet written */
    int         leader;
    /* the leader's */
    cache_cmd  *sent, **sent_tail;      /* written, replies due in order */
    int         answered;       /* the connection has answered a command */
    blog_redis  redis;
} cache_link;

static cache_link cache_l = {
    PTHREAD_MUTEX_INITIALIZER, NULL, &cache_l.queued, 0,
    NULL, &cache_l.sent, 0, {.max_bulk = CACHE_MAX_VALUE}
};
/* Commands written with one writev, at most. */
#define CACHE_BATCH         64

static apr_status_t
cache_child_exit(void *data)
{
    (void) data;
    blog_redis_close(&cache_l.redis);
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
    (void) s;
    cache_g = g;
    apr_pool_cleanup_register(pchild, NULL, cache_child_exit,
                              apr_pool_cleanup_null);
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
 * A new connection (0), or -1 during the backoff or when Redis refuses;
 * then why says what the attempt met ("" when none was made).
 */
static int
cache_connect(request_rec *r, char *why)
{
    char        err[CACHE_WHY_MAX - 20];

    if (!blog_backoff_ready(&cache_backoff))
        return -1;
    if (blog_redis_connect(&cache_l.redis, cache_g, err, sizeof(err)) == 0) {
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

/* Set a command's result and wake its thread; cmd is not ours after. */
static void
cache_finish(cache_cmd *cmd, blog_redis_io io, redisReply *reply)
{
    cmd->io = io;
    cmd->reply = reply;
    cmd->done = 1;
    sem_post(&cmd->wake);
}

/* A whole queue of commands fails alike, for the same reason. */
static void
cache_finish_all(cache_cmd *cmd, blog_redis_io io, const char *why)
{
    while (cmd != NULL) {
        cache_cmd  *next = cmd->next;

        apr_cpystrn(cmd->why, why, CACHE_WHY_MAX);
        cache_finish(cmd, io, NULL);
        cmd = next;
    }
}

/*
 * The connection is dead, or could not be made: every command sent on it
 * fails, the leader's own among them.  Commands not yet sent fail too when
 * Redis is to be left alone for a while (a timeout, a bad reply, a failed
 * connect); when a connection that had worked is found closed they wait
 * for the next one, made at once.
 */
static void
cache_fail_all(request_rec *r, blog_redis_io io, const char *what,
               const char *connect_why)
{
    const char *const *why = blog_redis_why;
    char        reason[CACHE_WHY_MAX];
    int         back_off = !(cache_l.redis.ctx != NULL && cache_l.answered
                             && io == BLOG_REDIS_CLOSED);
    cache_cmd  *queued = NULL;

    if (cache_l.redis.ctx != NULL) {
        /*
         * A connection that had worked, found closed, is Redis restarted
         * or its idle clients closed: its commands are tried again on a
         * new one, and nothing has failed yet.
         */
        if (back_off)
            blog_log_limited(&cache_log, APLOG_WARNING, 0, r->server,
                             BLOGLOGNO(00008)
                             "Redis %s failed: %s; bypassing the cache",
                             what, why[io]);
        else
            ap_log_error(APLOG_MARK, APLOG_INFO, 0, r->server,
                         BLOGLOGNO(00009)
                         "Redis closed the connection; reconnecting");
        blog_redis_close(&cache_l.redis);
        if (back_off)
            cache_note_failure();
    }
    if (io == BLOG_REDIS_DOWN)
        apr_cpystrn(reason, connect_why, sizeof(reason));
    else
        apr_snprintf(reason, sizeof(reason), "%s failed: %s", what, why[io]);
    cache_l.answered = 0;
    cache_finish_all(cache_l.sent, io, reason);
    cache_l.sent = NULL;
    cache_l.sent_tail = &cache_l.sent;
    if (!back_off)
        return;
    pthread_mutex_lock(&cache_l.lock);
    queued = cache_l.queued;
    cache_l.queued = NULL;
    cache_l.queued_tail = &cache_l.queued;
    pthread_mutex_unlock(&cache_l.lock);
    cache_finish_all(queued, io, reason);
}

/*
 * Take the queued commands (CACHE_BATCH at most) and write them in one
 * writev as far as the socket takes them; they join the sent queue first,
 * so that their replies are matched in order.  0 when none was queued.
 */
static blog_redis_io
cache_write_queued(int *wrote)
{
    struct iovec iov[CACHE_BATCH];
    cache_cmd  *cmd;
    int         n = 0;

    pthread_mutex_lock(&cache_l.lock);
    while ((cmd = cache_l.queued) != NULL && n < CACHE_BATCH) {
        cache_l.queued = cmd->next;
        cmd->next = NULL;
        cmd->reused = cache_l.answered;
        iov[n].iov_base = (void *) cmd->buf;
        iov[n].iov_len = cmd->len;
        n++;
        *cache_l.sent_tail = cmd;
        cache_l.sent_tail = &cmd->next;
    }
    if (cache_l.queued == NULL)
        cache_l.queued_tail = &cache_l.queued;
    pthread_mutex_unlock(&cache_l.lock);
    *wrote = n;
    if (n == 0)
        return BLOG_REDIS_OK;
    return blog_redis_send(&cache_l.redis, iov, n, cache_l.sent->deadline);
}

/*
 * Wait for replies against the oldest command's deadline, read what has
 * come and hand out every complete reply, in order.
 */
static blog_redis_io
cache_read_replies(void)
{
    blog_redis_io io = blog_redis_fill(&cache_l.redis,
                                       cache_l.sent->deadline);
    redisReply *reply = NULL;

    while (io == BLOG_REDIS_OK && cache_l.sent != NULL
           && (io = blog_redis_next(&cache_l.redis, &reply)) == BLOG_REDIS_OK
           && reply != NULL) {
        cache_cmd  *cmd = cache_l.sent;

        cache_l.sent = cmd->next;
        if (cache_l.sent == NULL)
            cache_l.sent_tail = &cache_l.sent;
        cache_l.answered = 1;
        cache_finish(cmd, BLOG_REDIS_OK, reply);
    }
    /* Redis never speaks unasked. */
    if (io == BLOG_REDIS_OK && cache_l.sent == NULL
        && (io = blog_redis_next(&cache_l.redis, &reply)) == BLOG_REDIS_OK
        && reply != NULL) {
        freeReplyObject(reply);
        io = BLOG_REDIS_BAD;
    }
    return io;
}

/*
 * Drive the connection until this thread's command is done, then pass it
 * on to the oldest command still waiting.
 */
static void
cache_lead(request_rec *r, cache_cmd *me, const char *what)
{
    cache_cmd  *next;
    char        connect_why[CACHE_WHY_MAX] = "";

    for (;;) {
        blog_redis_io io = BLOG_REDIS_OK;
        int         wrote = 0;

        if (cache_l.redis.ctx == NULL) {
            cache_l.answered = 0;
            if (cache_connect(r, connect_why) != 0)
                io = BLOG_REDIS_DOWN;
        }
        if (io == BLOG_REDIS_OK)
            io = cache_write_queued(&wrote);
        /* Its own reply in, the leader goes back to its request. */
        if (io == BLOG_REDIS_OK && me->done)
            break;
        if (io == BLOG_REDIS_OK && cache_l.sent != NULL)
            io = cache_read_replies();
        if (io != BLOG_REDIS_OK)
            cache_fail_all(r, io, what, connect_why);
        if (me->done)
            break;
    }
    pthread_mutex_lock(&cache_l.lock);
    next = cache_l.sent != NULL ? cache_l.sent : cache_l.queued;
    if (next != NULL)
        next->lead = 1;
    else
        cache_l.leader = 0;
    pthread_mutex_unlock(&cache_l.lock);
    if (next != NULL)
        sem_post(&next->wake);
}

/* Queue one formatted command and wait for its reply. */
static blog_redis_io
cache_exec(request_rec *r, const char *what, const char *buf, size_t len,
           apr_time_t deadline, redisReply **out, int *reused, char *why)
{
    cache_cmd   cmd;
    int         lead = 0;

    memset(&cmd, 0, sizeof(cmd));
    cmd.why = why;
    cmd.buf = buf;
    cmd.len = len;
    cmd.deadline = deadline;
    sem_init(&cmd.wake, 0, 0);
    pthread_mutex_lock(&cache_l.lock);
    *cache_l.queued_tail = &cmd;
    cache_l.queued_tail = &cmd.next;
    if (!cache_l.leader)
        cache_l.leader = lead = 1;
    pthread_mutex_unlock(&cache_l.lock);
    if (!lead) {
        while (sem_wait(&cmd.wake) != 0 && errno == EINTR)
            ;
        lead = cmd.lead;
    }
    if (lead)
        cache_lead(r, &cmd, what);
    sem_destroy(&cmd.wake);
    *out = cmd.reply;
    *reused = cmd.reused;
    return cmd.io;
}

/*
 * One command, tried once more on a new connection when the one it went
 * out on had worked and is found closed (Redis restarted): none of the
 * commands on it means Redis is down.
 */
static redisReply *
cache_run(request_rec *r, const char *what, const char *fmt, ...)
{
    apr_time_t  deadline;
    char       *buf = NULL;
    int         len, attempt;
    va_list     ap;

    if (!cache_g->redis_on)
        return NULL;
    va_start(ap, fmt);
    len = redisvFormatCommand(&buf, fmt, ap);
    va_end(ap);
    if (len < 0)
        return NULL;
    deadline = apr_time_now() + cache_g->redis_timeout;
    for (attempt = 0; attempt < 2; attempt++) {
        redisReply *reply = NULL;
        int         reused = 0;
        char        why[CACHE_WHY_MAX] = "";
        blog_redis_io io = cache_exec(r, what, buf, (size_t) len, deadline,
                                    &reply, &reused, why);

        if (io == BLOG_REDIS_OK) {
            redisFreeCommand(buf);
            blog_outage_end(&cache_outage, r->server, BLOGLOGNO(00010)
                                                      "Redis reachable");
            return reply;
        }
        /* Nothing tried (the backoff) is no new error. */
        if (why[0] != '\0') {
            blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
            apr_cpystrn(cache_why, why, sizeof(cache_why));
        }
        if (!(reused && io == BLOG_REDIS_CLOSED))
            break;
    }
    redisFreeCommand(buf);
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cache.c - the page cache on one Redis connection per child (redis.c), on
 * which its threads pipeline their GETs and SETs: one thread at a time, the
 * leader, writes every queued command in one writev, hands each reply, in
 * order, to the thread that asked and, its own reply in, passes the role on.
 *
 * After an I/O error, a timeout or a bad reply the connection is closed and
 * its commands fail (BYPASS); a failed connect or a timeout starts a shared
 * backoff.  A connection that had answered, found closed (Redis restarted),
 * is replaced at once and its commands are tried once more.
 *
 * A waiting thread sleeps on a sem_t of its own: APR has no semaphore, and
 * the apr_thread_cond forms measured slower (docs/DECISIONS.md, "A
 * semaphore per waiting thread").
 */
#include "store/cache.h"

#include "store/ratelog.h"
#include "store/redis.h"
#include "store/secret.h"
#include "store/stale.h"
#include "store/counters.h"
#include "store/backoff.h"

#include "http_log.h"
#include "apr_strings.h"
#include "apr_thread_mutex.h"

#include <errno.h>
#include <semaphore.h>
#include <string.h>
#include <time.h>

APLOG_USE_MODULE(blog);

/* Far above a page of this blog; it bounds what a reply can make us hold. */
#define CACHE_MAX_VALUE     (1024 * 1024)
/* Commands written with one writev, at most. */
#define CACHE_BATCH         64
#define CACHE_WHY_MAX       160
/* Under the page prefix, for an ACL that allows only it; no page's path. */
#define CACHE_PING_KEY      BLOG_CACHE_PREFIX "health"

/* A command of one request, on its thread's stack until it is done. */
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
    char        why[CACHE_WHY_MAX];     /* what failed, "" if nothing tried */
    sem_t       wake;
} cache_cmd;

/* The child's connection, from child_init: the leader's alone, but for
 * the first three. */
typedef struct cache_child
{
    apr_thread_mutex_t *lock;   /* guards the next two */
    cache_cmd  *queued, **queued_tail;  /* not yet written */
    int         leader;
    cache_cmd  *sent, **sent_tail;      /* replies due in this order */
    int         answered;       /* the connection has answered a command */
    apr_uint32_t gen;           /* the Sentinel generation it was made in */
    blog_redis  redis;
    const blog_cache_settings *g;
    const char *ttl;            /* g->cache_ttl as SET's EX argument */
    apr_size_t  ttl_len;
    blog_backoff backoff;
    /* One budget for every warning about Redis: a failing Redis fails
     * alike. */
    blog_ratelog log;
    blog_ratelog seal_log;
    /* Redis up but refusing SET (read-only replica, out of memory, ...). */
    blog_ratelog write;
} cache_child;
static cache_child *cache;

apr_size_t
blog_cache_key(char *buf, apr_size_t cap, const char *base,
               apr_size_t base_len, const char *path, apr_size_t path_len)
{
    apr_size_t  len = BLOG_CACHE_PREFIX_LEN + base_len + path_len;

    if (len >= cap)
        return 0;
    memcpy(buf, BLOG_CACHE_PREFIX, BLOG_CACHE_PREFIX_LEN);
    memcpy(buf + BLOG_CACHE_PREFIX_LEN, base, base_len);
    memcpy(buf + BLOG_CACHE_PREFIX_LEN + base_len, path, path_len);
    buf[len] = '\0';
    return len;
}

/* BlogCacheKey's file made the key that seals the pages. */
static int
cache_seal_key(apr_pool_t *p, blog_cache_settings *g, char *err,
               apr_size_t err_len)
{
    char        buf[1024];
    apr_size_t  len;
    int         rc;

    if (blog_secret_read(g->key_file, buf, sizeof(buf), &len, err,
                         err_len) != 0)
        return -1;
    rc = blog_seal_init(&g->seal, p, buf, len);
    memset(buf, 0, sizeof(buf));
    if (rc != 0)
        apr_snprintf(err, err_len, "%s: a key needs 32 bytes or more "
                     "(head -c 32 /dev/urandom), or libcrypto failed",
                     g->key_file);
    return rc;
}

int
blog_cache_load(apr_pool_t *p, blog_cache_settings *g, char *err,
                apr_size_t err_len)
{
    g->seal.on = 0;
    if (blog_redis_load(p, &g->redis, err, err_len) != 0
        || (g->key_file != NULL && cache_seal_key(p, g, err, err_len) != 0))
        return -1;
    return 0;
}

static apr_status_t
cache_child_exit(void *redis)
{
    blog_redis_close(redis);
    return APR_SUCCESS;
}

void
blog_cache_child_init(apr_pool_t *pchild, server_rec *s,
                      const blog_cache_settings *g)
{
    apr_status_t rv;

    cache = apr_pcalloc(pchild, sizeof(*cache));
    *cache = (cache_child) {.queued_tail = &cache->queued,
        .sent_tail = &cache->sent, .redis.max_bulk = CACHE_MAX_VALUE, .g = g,
        .ttl = apr_itoa(pchild, g->cache_ttl)};
    cache->ttl_len = strlen(cache->ttl);
    /* a lock not made stays NULL */
    rv = apr_thread_mutex_create(&cache->lock, APR_THREAD_MUTEX_DEFAULT,
                                 pchild);
    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, BLOGLOGNO(00064)
                     "no lock for the Redis connection: this child "
                     "bypasses the cache");
    apr_pool_cleanup_register(pchild, &cache->redis, cache_child_exit,
                              apr_pool_cleanup_null);
}

/* 0, or -1 with why: "" during the backoff, else what failed. */
static int
cache_connect(char *why)
{
    char        err[CACHE_WHY_MAX];
    char        port[16] = "";

    why[0] = '\0';
    /* a new master (Sentinel) is tried at once, whatever failed before */
    if (apr_time_now() < blog_backoff_next(&cache->backoff)
        && blog_sentinel_generation() == cache->gen)
        return -1;
    if (blog_sentinel_connect(&cache->redis, &cache->g->redis,
                              &cache->g->sentinel, &cache->gen, err,
                              sizeof(err)) == 0) {
        blog_backoff_reset(&cache->backoff);
        return 0;
    }
    /* apr_snprintf prints 0 for "%.0d": a socket's path gets no port */
    if (cache->g->redis.port != 0)
        apr_snprintf(port, sizeof(port), ":%d", cache->g->redis.port);
    apr_snprintf(why, CACHE_WHY_MAX, "connect failed (%s%s): %s",
                 cache->g->redis.host, port, err);
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

/*
 * The connection is dead or was not made (why: the connect's failure, ""
 * in the backoff): the commands sent fail, and so do those queued but when
 * it had answered and was found closed.
 */
static void
cache_fail_all(blog_call *call, blog_redis_io io, const char *what, char *why)
{
    int         back_off = !(cache->answered && io == BLOG_REDIS_CLOSED);
    cache_cmd  *cmd;

    if (io != BLOG_REDIS_DOWN) {
        apr_snprintf(why, CACHE_WHY_MAX, "%s failed: %s", what,
                     blog_redis_why[io]);
        blog_redis_close(&cache->redis);
        cache->answered = 0;
    }
    if (cache->g->sentinel.list.n > 0)
        blog_sentinel_failing();
    if (!back_off)
        blog_call_log(call, APLOG_INFO, 0, BLOGLOGNO(00009)
                      "Redis closed the connection; reconnecting");
    else if (why[0] != '\0') {
        blog_call_log_limited(&cache->log, APLOG_WARNING, 0, call,
                              BLOGLOGNO(00008) "Redis %s; bypassing the cache",
                              why);
        blog_backoff_fail(&cache->backoff);
        blog_outage_begin(&cache->log);
    }
    if (back_off) {
        apr_thread_mutex_lock(cache->lock);
        *cache->sent_tail = cache->queued;
        cache->queued = NULL;
        cache->queued_tail = &cache->queued;
        apr_thread_mutex_unlock(cache->lock);
    }
    while ((cmd = cache->sent) != NULL) {
        cache->sent = cmd->next;
        apr_cpystrn(cmd->why, why, CACHE_WHY_MAX);
        cache_finish(cmd, io, NULL);
    }
    cache->sent_tail = &cache->sent;
}

/* Move up to CACHE_BATCH queued commands to sent, write them in a writev. */
static blog_redis_io
cache_write_queued(void)
{
    struct iovec iov[CACHE_BATCH];
    cache_cmd  *cmd;
    int         n = 0;

    apr_thread_mutex_lock(cache->lock);
    while ((cmd = cache->queued) != NULL && n < CACHE_BATCH) {
        cache->queued = cmd->next;
        cmd->next = NULL;
        cmd->reused = cache->answered;
        iov[n++] = (struct iovec) {(void *) cmd->buf, cmd->len};
        *cache->sent_tail = cmd;
        cache->sent_tail = &cmd->next;
    }
    if (cache->queued == NULL)
        cache->queued_tail = &cache->queued;
    apr_thread_mutex_unlock(cache->lock);
    if (n == 0)
        return BLOG_REDIS_OK;
    return blog_redis_send(&cache->redis, iov, n, cache->sent->deadline);
}

/*
 * With sentinels, whether the connection is to a master they replaced: one
 * with no reply due is closed (the next command goes to the new master),
 * one with replies due takes no new command until they are in.
 */
static int
cache_master_moved(void)
{
    if (cache->g->sentinel.list.n == 0 || cache->redis.ctx == NULL
        || blog_sentinel_generation() == cache->gen)
        return 0;
    if (cache->sent != NULL)
        return 1;
    blog_redis_close(&cache->redis);
    cache->answered = 0;
    return 0;
}

/*
 * Drive the connection until this thread's command is done, then pass it
 * on to the oldest command still waiting.  Until then that command is in
 * one of the queues, so the sent one is never empty after a write.
 */
static void
cache_lead(blog_call *call, cache_cmd *me, const char *what)
{
    char        why[CACHE_WHY_MAX];
    cache_cmd  *cmd;
    redisReply *reply;

    do {
        blog_redis_io io = BLOG_REDIS_OK;
        int         moved = cache_master_moved();

        if (cache->redis.ctx == NULL && cache_connect(why) != 0)
            io = BLOG_REDIS_DOWN;
        /* nothing more for a master the sentinels replaced */
        if (io == BLOG_REDIS_OK && !moved)
            io = cache_write_queued();
        if (io == BLOG_REDIS_OK)
            io = blog_redis_fill(&cache->redis, cache->sent->deadline);
        while (io == BLOG_REDIS_OK
               && (io = blog_redis_next(&cache->redis, &reply))
               == BLOG_REDIS_OK && reply != NULL) {
            /* Redis never speaks unasked. */
            if ((cmd = cache->sent) == NULL) {
                freeReplyObject(reply);
                io = BLOG_REDIS_BAD;
                break;
            }
            cache->sent = cmd->next;
            if (cache->sent == NULL)
                cache->sent_tail = &cache->sent;
            cache->answered = 1;
            cache_finish(cmd, BLOG_REDIS_OK, reply);
        }
        if (io != BLOG_REDIS_OK)
            cache_fail_all(call, io, what, why);
    } while (!me->done);
    apr_thread_mutex_lock(cache->lock);
    cmd = cache->sent != NULL ? cache->sent : cache->queued;
    cache->leader = cmd != NULL;
    if (cmd != NULL)
        cmd->lead = 1;          /* under the lock: cache_wait reads it */
    apr_thread_mutex_unlock(cache->lock);
    if (cmd != NULL)
        sem_post(&cmd->wake);
}

/*
 * A thread's wait for its reply, or to lead, by its command's deadline:
 * past it a command still queued (the leader busy connecting) leaves the
 * queue and fails, said once.  One already written, or chosen to lead, is
 * the leader's, whose every wait has a deadline: it waits for it.
 */
static void
cache_wait(blog_call *call, cache_cmd *cmd)
{
    struct timespec until = {(time_t) apr_time_sec(cmd->deadline),
                             (long) apr_time_usec(cmd->deadline) * 1000};
    cache_cmd **pp;
    int         gone = 0;

    while (sem_timedwait(&cmd->wake, &until) != 0) {
        if (errno == EINTR)
            continue;
        apr_thread_mutex_lock(cache->lock);
        for (pp = &cache->queued; *pp != NULL && *pp != cmd; pp = &(*pp)->next)
            ;
        if ((gone = *pp == cmd && !cmd->lead)) {
            *pp = cmd->next;
            if (cache->queued_tail == &cmd->next)
                cache->queued_tail = pp;
        }
        apr_thread_mutex_unlock(cache->lock);
        if (gone)
            break;
        while (sem_wait(&cmd->wake) != 0 && errno == EINTR)
            ;
        return;
    }
    if (!gone)
        return;
    cmd->io = BLOG_REDIS_TIMEOUT;
    apr_cpystrn(cmd->why, "no turn on the connection by BlogRedisTimeout",
                CACHE_WHY_MAX);
    blog_call_log_limited(&cache->log, APLOG_WARNING, APR_TIMEUP, call,
                          BLOGLOGNO(00069) "Redis: %s (the connection's "
                          "leader still busy); bypassing the cache",
                          cmd->why);
}

/* No semaphore to wait on (none on Linux fails so): bypassed, said. */
static void
cache_no_wait(blog_call *call, int err)
{
    blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
    call->cache_why = "no semaphore to wait on";
    blog_call_log_limited(&cache->log, APLOG_ERR, APR_FROM_OS_ERROR(err),
                          call, BLOGLOGNO(00067) "no semaphore to wait for "
                          "Redis on; bypassing the cache");
}

/*
 * Queue one command and wait for its reply (or to lead); tried once more
 * when the connection it went out on had answered and is found closed.
 * Formatted by hiredis' sds formatter: its printf-based ones run glibc's
 * vfprintf, whose work area took every worker's stack a page deeper
 * (docs/DECISIONS.md, "No printf on the request path").
 */
static redisReply *
cache_run(blog_call *call, const char *what, int argc, const char **argv,
          const size_t *lens)
{
    apr_time_t  deadline;
    sds         buf = NULL;
    long long   len;
    int         attempt;

    if (cache == NULL || !cache->g->redis.on || cache->lock == NULL)
        return NULL;
    len = redisFormatSdsCommandArgv(&buf, argc, argv, lens);
    if (len < 0)
        return NULL;
    deadline = apr_time_now() + cache->g->redis.timeout;
    for (attempt = 0; attempt < 2; attempt++) {
        cache_cmd   cmd = {.buf = buf, .len = (size_t) len,
                           .deadline = deadline};
        int         lead;

        if (sem_init(&cmd.wake, 0, 0) != 0) {
            cache_no_wait(call, errno);
            break;
        }
        apr_thread_mutex_lock(cache->lock);
        *cache->queued_tail = &cmd;
        cache->queued_tail = &cmd.next;
        lead = !cache->leader;
        cache->leader = 1;
        apr_thread_mutex_unlock(cache->lock);
        if (!lead)
            cache_wait(call, &cmd);
        if (lead || cmd.lead)
            cache_lead(call, &cmd, what);
        sem_destroy(&cmd.wake);
        if (cmd.io == BLOG_REDIS_OK) {
            redisFreeSdsCommand(buf);
            blog_call_outage_end(&cache->log, call, BLOGLOGNO(00010)
                                 "Redis reachable");
            return cmd.reply;
        }
        if (cmd.why[0] != '\0') {
            blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
            call->cache_why = apr_pstrdup(call->pool, cmd.why);
        }
        if (!(cmd.reused && cmd.io == BLOG_REDIS_CLOSED))
            break;
    }
    redisFreeSdsCommand(buf);
    return NULL;
}

/* Not the reply the command wants: -NOAUTH, -NOPERM, -OOM, -READONLY... */
static void
cache_refused(blog_call *call, const char *what, redisReply *reply)
{
    int         err = reply->type == REDIS_REPLY_ERROR;
    const char *why = apr_psprintf(call->pool, "%s refused: %.*s", what,
                                   err ? (int) reply->len : 16,
                                   err ? reply->str : "unexpected reply");

    blog_stat_inc(BLOG_STAT_CACHE_ERRORS);
    call->cache_why = why;
    blog_call_log_limited(&cache->log, APLOG_WARNING, 0, call,
                          BLOGLOGNO(00011) "Redis: %s; bypassing the cache",
                          why);
    /* the master demoted under us: the sentinels are asked again */
    if (err && cache->g->sentinel.list.n > 0
        && strncmp(reply->str, "READONLY", 8) == 0)
        blog_sentinel_suspect();
    freeReplyObject(reply);
}

blog_cache_status
blog_cache_get(blog_call *call, const char *key, apr_size_t key_len,
               const char **body, apr_size_t *len)
{
    const char *argv[] = {"GET", key};
    size_t      lens[] = {3, key_len};
    redisReply *reply = cache_run(call, "GET", 2, argv, lens);
    int64_t     sealed = 0;

    if (reply == NULL)
        return BLOG_CACHE_DOWN;
    if (reply->type == REDIS_REPLY_NIL) {
        freeReplyObject(reply);
        return BLOG_CACHE_MISS;
    }
    if (reply->type != REDIS_REPLY_STRING) {
        cache_refused(call, "GET", reply);
        return BLOG_CACHE_DOWN;
    }
    *body = reply->str;
    *len = reply->len;
    /* sealed before the listener last heard its page made stale: a copy
     * written back into Redis, the page before a write */
    if (cache->g->seal.on
        && (blog_seal_open(&cache->g->seal, key, key_len, reply->str,
                           reply->len, apr_time_now(), cache->g->cache_ttl,
                           body, len, &sealed) != 0
            || sealed < blog_stale_since(key, key_len))) {
        blog_call_log_limited(&cache->seal_log, APLOG_WARNING, 0, call,
                              BLOGLOGNO(00061) "the cached %.*s fails its "
                              "BlogCacheKey MAC, is older than BlogCacheTTL "
                              "or than its page's last invalidation: rebuilt "
                              "as a miss", (int) key_len, key);
        freeReplyObject(reply);
        return BLOG_CACHE_MISS;
    }
    apr_pool_cleanup_register(call->pool, reply, cache_free_reply,
                              apr_pool_cleanup_null);
    return BLOG_CACHE_HIT;
}

int
blog_cache_set(blog_call *call, const char *key, apr_size_t key_len,
               const char *body, apr_size_t len)
{
    redisReply *reply;
    unsigned char head[BLOG_SEAL_HEAD];
    size_t      hlen = cache->g->seal.on ? sizeof(head) : 0;
    const char *argv[] = {"SET", NULL, NULL, "EX", NULL};
    size_t      lens[] = {3, 0, 0, 2, 0};

    /* What a GET would refuse is not stored. */
    if (len + hlen > CACHE_MAX_VALUE
        || (hlen && blog_seal_make(&cache->g->seal, key, key_len, body, len,
                                   apr_time_now(), head) != 0))
        return -1;
    if (hlen) {
        char       *sealed = apr_palloc(call->pool, hlen + len);

        memcpy(sealed, head, hlen);
        memcpy(sealed + hlen, body, len);
        body = sealed;
    }
    argv[1] = key;
    argv[2] = body;
    argv[4] = cache->ttl;
    lens[1] = key_len;
    lens[2] = hlen + len;
    lens[4] = cache->ttl_len;
    reply = cache_run(call, "SET", 5, argv, lens);
    if (reply == NULL)
        return -1;
    if (reply->type == REDIS_REPLY_STATUS) {
        freeReplyObject(reply);
        blog_call_outage_end(&cache->write, call,
                             BLOGLOGNO(00012) "Redis accepting writes");
        return 0;
    }
    blog_outage_begin(&cache->write);
    cache_refused(call, "SET", reply);
    return -1;
}

int
blog_cache_ping(blog_call *call, char *why, apr_size_t why_len)
{
    const char *body, *failed;
    apr_size_t  len;

    if (cache == NULL || !cache->g->redis.on)
        return 0;
    call->cache_why = NULL;
    if (blog_cache_get(call, CACHE_PING_KEY, sizeof(CACHE_PING_KEY) - 1, &body,
                       &len) != BLOG_CACHE_DOWN)
        return 0;
    failed = call->cache_why;
    /* nothing tried: another thread's failure started the backoff */
    apr_snprintf(why, why_len, "Redis: %s", failed ? failed
                 : "unreachable (backing off after a failure, or no lock "
                 "in this child; see the error log)");
    return -1;
}

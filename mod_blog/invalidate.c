/*
 * invalidate.c - cached pages dropped the moment the data changes.
 *
 * pg_blog's triggers NOTIFY blog_cache, at commit, with the Redis keys of
 * the pages a change made stale; this listener deletes exactly those keys.
 * The keys are shared by every child, so one listener per Apache instance
 * is enough: every child starts a thread, and the one whose thread holds a
 * process mutex (Mutex blog-invalidate) listens while the others try the
 * mutex every 100 ms.  mod_watchdog's singleton does the same election,
 * but after winning a mutex that another child held it sleeps 10 x 1 s
 * (wd_worker: "probed"), so the death of the listening child, or the MPM
 * reaping it as idle, left the pages unwatched for 10 s; here the next
 * child takes over within 100 ms (the default mutex is a robust pthread
 * mutex: its owner's death releases it).  A graceful restart makes a new
 * mutex for the new generation, whose listener starts at once while the
 * old one runs until its child stops: both delete the same keys.
 *
 * What the listener cannot see, it assumes changed: whenever it starts
 * listening (at start-up, after PostgreSQL restarted or the connection was
 * lost, after another child's listener ended) and whenever Redis failed
 * while a delete was due, it drops every page key (SCAN + DEL by the key
 * prefix) once Redis answers, so that nothing stale outlives the gap.  Not
 * before: while PostgreSQL is down nothing commits, and the cached pages
 * are all a reader can get.
 *
 * A page miss that read PostgreSQL just before a commit can store the old
 * page just after the listener deleted it.  Each delete is repeated twice:
 * INV_REDELETE later, after such a miss has stored its page (a page call
 * and its SET take a few milliseconds), and once more when the slowest
 * possible one must be done (BlogQueryTimeout bounds a page call, then
 * BlogRedisTimeout its SET).
 *
 * Redis is redis.c's client, as in cache.c: one deadline
 * (BlogRedisTimeout) for a whole command, the connection dropped after any
 * error, reconnects with the capped backoff; PostgreSQL as in db.c: a
 * non-blocking connect bounded by BlogQueryTimeout.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1          /* pipe2 */
#endif
#include "invalidate.h"

#include "pq.h"
#include "ratelog.h"
#include "redis.h"
#include "wait.h"

#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "mpm_common.h"
#include "util_mutex.h"
#include "apr_atomic.h"
#include "apr_strings.h"
#include "apr_proc_mutex.h"
#include "apr_thread_proc.h"

#include <libpq-fe.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

APLOG_USE_MODULE(blog);

/* A payload names paths of this blog; anything longer is not a key of ours. */
#define INV_MAX_KEY         256
/* Keys deleted by one DEL; SCAN's batch when every key is dropped. */
#define INV_BATCH           256
#define INV_SCAN_COUNT      "1000"
/* A reply larger than this is not Redis answering DEL or SCAN. */
#define INV_MAX_REPLY       (1024 * 1024)
#define INV_REDELETE        apr_time_from_msec(50)
/* At most this many deletes wait to be repeated; past it, drop every key. */
#define INV_MAX_PENDING     4096
/* The repeats: after INV_REDELETE, and after the slowest page call. */
#define INV_QUEUES          2
/* How often a child that does not listen tries to take over. */
#define INV_ELECT_POLL      apr_time_from_msec(100)
#define INV_MUTEX_TYPE      "blog-invalidate"

/* A delete to repeat: its keys, as sent (one string, space-separated). */
typedef struct inv_pending
{
    struct inv_pending *next;
    apr_time_t  due;
    char        keys[];
} inv_pending;

typedef struct inv_state
{
    server_rec *s;
    int         on;             /* a listener runs in this generation */
    const blog_db_settings *db;
    const char *conninfo;       /* the listener's; see blog_invalidate_configure */
    const blog_cache_settings *cache;
    /* the mounts of the sites that serve the blog ("" for "/") */
    const char **bases;
    int         nbases;

    apr_proc_mutex_t *mutex;    /* held by the child that listens */
    int         holding;
    apr_pool_t *pchild;
    apr_thread_t *thread;
    int         wake[2];        /* inv_stop writes to wake[1] */
    apr_uint32_t stop;          /* apr_atomic: set by inv_stop */

    PGconn     *pg;
    blog_redis  redis;
    blog_backoff pg_backoff;
    blog_backoff redis_backoff;
    int         flush_due;      /* a gap: every page key must go */
    /* one queue per delay, so each is in due order */
    inv_pending *head[INV_QUEUES], *tail[INV_QUEUES];
    int         npending;
} inv_state;

static inv_state inv;
static blog_ratelog inv_pg_log;
static blog_ratelog inv_redis_log;
static blog_outage inv_pg_outage;
static blog_outage inv_redis_outage;

/*
 * Every loop of the thread looks at this between steps, each of which is
 * bounded (BlogQueryTimeout, BlogRedisTimeout): a stop waits for one step.
 */
static int
inv_stopping(void)
{
    return apr_atomic_read32(&inv.stop) != 0;
}


/* ---- Redis ---- */

static void
inv_redis_drop(const char *what, const char *why)
{
    blog_log_limited(&inv_redis_log, APLOG_WARNING, 0, inv.s,
                     BLOGLOGNO(00026)
                     "invalidation: Redis %s failed: %s; every "
                     "cached page will be dropped once Redis answers",
                     what, why);
    blog_redis_close(&inv.redis);
    inv.flush_due = 1;
    blog_outage_begin(&inv_redis_outage);
    blog_backoff_fail(&inv.redis_backoff);
}

/* Connected to Redis: 0, or -1 (in the backoff, or the connect failed). */
static int
inv_redis(void)
{
    const blog_cache_settings *g = inv.cache;
    char        why[200];

    if (inv.redis.ctx != NULL)
        return 0;
    if (!blog_backoff_ready(&inv.redis_backoff))
        return -1;
    if (blog_redis_connect(&inv.redis, g, why, sizeof(why)) == 0)
        return 0;
    blog_log_limited(&inv_redis_log, APLOG_WARNING, 0, inv.s,
                     BLOGLOGNO(00027)
                     "invalidation: cannot connect to Redis at "
                     "%s%s%.0d: %s", g->redis_host, g->redis_port ? ":" : "",
                     g->redis_port, why);
    inv.flush_due = 1;
    blog_outage_begin(&inv_redis_outage);
    blog_backoff_fail(&inv.redis_backoff);
    return -1;
}

/*
 * One command (argv), sent and its reply read against one deadline.  NULL
 * after any failure, which drops the connection; an error reply is
 * returned.  A connection that had worked and is found closed (Redis
 * restarted) is replaced and the command sent once more.
 */
static redisReply *
inv_redis_run(const char *what, int argc, const char **argv,
              const size_t *lens)
{
    apr_time_t  deadline = apr_time_now() + inv.cache->redis_timeout;
    int         attempt;

    for (attempt = 0; attempt < 2; attempt++) {
        int         reused = inv.redis.ctx != NULL;
        redisReply *reply = NULL;
        blog_redis_io io;

        if (inv_redis() != 0)
            return NULL;
        io = blog_redis_command(&inv.redis, argc, argv, lens, deadline,
                                &reply);
        if (io == BLOG_REDIS_OK) {
            blog_outage_end(&inv_redis_outage, inv.s,
                            BLOGLOGNO(00028) "invalidation: Redis reachable");
            return reply;
        }
        if (io == BLOG_REDIS_CLOSED && reused && attempt == 0) {
            blog_redis_close(&inv.redis);
            continue;
        }
        inv_redis_drop(what, blog_redis_why[io]);
        return NULL;
    }
    return NULL;
}

/* DEL of n keys: 0 when Redis answered with a count. */
static int
inv_del(int n, const char **keys, const size_t *lens)
{
    const char *argv[INV_BATCH + 1];
    size_t      argl[INV_BATCH + 1];
    redisReply *reply;
    int         ok;

    if (n == 0)
        return 0;
    argv[0] = "DEL";
    argl[0] = 3;
    memcpy(argv + 1, keys, (size_t) n * sizeof(*keys));
    memcpy(argl + 1, lens, (size_t) n * sizeof(*lens));
    reply = inv_redis_run("DEL", n + 1, argv, argl);
    if (reply == NULL)
        return -1;
    ok = reply->type == REDIS_REPLY_INTEGER;
    if (!ok)
        blog_log_limited(&inv_redis_log, APLOG_WARNING, 0, inv.s,
                         BLOGLOGNO(00029)
                         "invalidation: Redis refused DEL: %.*s",
                         reply->type == REDIS_REPLY_ERROR
                         ? (int) reply->len : 0,
                         reply->type == REDIS_REPLY_ERROR ? reply->str : "");
    freeReplyObject(reply);
    if (ok)
        blog_backoff_reset(&inv.redis_backoff); /* it answers: not down */
    if (!ok) {
        /* a Redis that refuses writes is asked again after a backoff */
        inv.flush_due = 1;
        blog_backoff_fail(&inv.redis_backoff);
    }
    return ok ? 0 : -1;
}

/* Every page key of every mount: SCAN by the prefix, DEL what it finds. */
static int
inv_flush(void)
{
    char        cursor[32] = "0";
    unsigned long total = 0;

    do {
        const char *argv[] = {
            "SCAN", cursor, "MATCH", BLOG_CACHE_PREFIX "*",
            "COUNT", INV_SCAN_COUNT
        };
        size_t      argl[6];
        const char *keys[INV_BATCH];
        size_t      lens[INV_BATCH];
        redisReply *reply;
        size_t      i;
        int         n = 0, failed = 0;

        for (i = 0; i < 6; i++)
            argl[i] = strlen(argv[i]);
        reply = inv_redis_run("SCAN", 6, argv, argl);
        if (reply == NULL)
            return -1;
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2
            || reply->element[0]->type != REDIS_REPLY_STRING
            || reply->element[0]->len >= sizeof(cursor)
            || reply->element[1]->type != REDIS_REPLY_ARRAY) {
            freeReplyObject(reply);
            inv_redis_drop("SCAN", "unexpected reply");
            return -1;
        }
        memcpy(cursor, reply->element[0]->str, reply->element[0]->len);
        cursor[reply->element[0]->len] = '\0';
        for (i = 0; i < reply->element[1]->elements && !failed; i++) {
            redisReply *k = reply->element[1]->element[i];

            if (k->type != REDIS_REPLY_STRING)
                continue;
            keys[n] = k->str;
            lens[n++] = k->len;
            if (n == INV_BATCH) {
                failed = inv_del(n, keys, lens) != 0;
                total += (unsigned long) n;
                n = 0;
            }
        }
        if (!failed && n > 0)
            failed = inv_del(n, keys, lens) != 0;
        total += (unsigned long) n;
        freeReplyObject(reply);
        if (failed)
            return -1;
    } while (strcmp(cursor, "0") != 0 && !inv_stopping());
    if (inv_stopping())
        return -1;
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, inv.s,
                 BLOGLOGNO(00030)
                 "invalidation: dropped every cached page (%lu keys)",
                 total);
    return 0;
}

/*
 * Delete the keys a payload names ("*": every page), under every mount:
 * a site mounted at /blog keeps "/post/x" as "blog:page:/blog/post/x".
 * Keys that are not pages of this blog are ignored: any database role may
 * NOTIFY on any channel.  0 when done (or nothing to do).
 */
static int
inv_delete_payload(const char *payload)
{
    /* static: one listener thread per process */
    static const char *keys[INV_BATCH];
    static size_t lens[INV_BATCH];
    static char buf[INV_BATCH][BLOG_CACHE_PREFIX_LEN + 2 * INV_MAX_KEY];
    const char *p = payload;
    int         n = 0;

    if (strcmp(payload, "*") == 0) {
        inv.flush_due = 1;
        return 0;
    }
    while (*p) {
        size_t      len = strcspn(p, " ");
        int         b;

        if (len > BLOG_CACHE_PREFIX_LEN && len <= INV_MAX_KEY
            && memcmp(p, BLOG_CACHE_PREFIX "/",
                      BLOG_CACHE_PREFIX_LEN + 1) == 0) {
            for (b = 0; b < inv.nbases; b++) {
                size_t      bl = strlen(inv.bases[b]);

                if (bl > INV_MAX_KEY)
                    continue;

                memcpy(buf[n], BLOG_CACHE_PREFIX, BLOG_CACHE_PREFIX_LEN);
                memcpy(buf[n] + BLOG_CACHE_PREFIX_LEN, inv.bases[b], bl);
                memcpy(buf[n] + BLOG_CACHE_PREFIX_LEN + bl,
                       p + BLOG_CACHE_PREFIX_LEN,
                       len - BLOG_CACHE_PREFIX_LEN);
                keys[n] = buf[n];
                lens[n] = len + bl;
                if (++n == INV_BATCH) {
                    if (inv_del(n, keys, lens) != 0)
                        return -1;
                    n = 0;
                }
            }
        }
        p += len;
        while (*p == ' ')
            p++;
    }
    return inv_del(n, keys, lens);
}

/* ---- The deletes repeated (see the comment at the top) ---- */

static void
inv_pending_clear(void)
{
    int         q;

    for (q = 0; q < INV_QUEUES; q++) {
        while (inv.head[q] != NULL) {
            inv_pending *next = inv.head[q]->next;

            free(inv.head[q]);
            inv.head[q] = next;
        }
        inv.tail[q] = NULL;
    }
    inv.npending = 0;
}

static void
inv_pending_add(const char *payload)
{
    size_t      len = strlen(payload);
    apr_time_t  now = apr_time_now();
    int         q;

    for (q = 0; q < INV_QUEUES; q++) {
        inv_pending *e;

        if (inv.npending >= INV_MAX_PENDING
            || (e = malloc(sizeof(*e) + len + 1)) == NULL) {
            inv.flush_due = 1;
            return;
        }
        e->next = NULL;
        e->due = now + (q == 0 ? INV_REDELETE
                        : inv.db->query_timeout + inv.cache->redis_timeout);
        memcpy(e->keys, payload, len + 1);
        if (inv.tail[q])
            inv.tail[q]->next = e;
        else
            inv.head[q] = e;
        inv.tail[q] = e;
        inv.npending++;
    }
}

/* Repeat the deletes that are due. */
static void
inv_pending_run(void)
{
    apr_time_t  now = apr_time_now();
    int         q;

    for (q = 0; q < INV_QUEUES; q++)
        while (inv.head[q] != NULL && inv.head[q]->due <= now
               && !inv.flush_due && !inv_stopping()) {
            inv_pending *e = inv.head[q];

            if (inv_delete_payload(e->keys) != 0)
                return;         /* flush_due is set: the flush covers it */
            inv.head[q] = e->next;
            if (inv.head[q] == NULL)
                inv.tail[q] = NULL;
            inv.npending--;
            free(e);
        }
}

/* When the next repeat is due (now + 1 s when none is). */
static apr_time_t
inv_pending_next(apr_time_t now)
{
    apr_time_t  t = now + apr_time_from_sec(1);
    int         q;

    for (q = 0; q < INV_QUEUES; q++)
        if (inv.head[q] != NULL && inv.head[q]->due < t)
            t = inv.head[q]->due;
    return t;
}

/* ---- PostgreSQL ---- */

/*
 * Not listening any more.  A lost connection is not logged: the reconnect
 * that follows says whether PostgreSQL is down, in the pool's phrasing
 * ("cannot connect to PostgreSQL: <libpq's message>"), so an outage reads
 * the same whoever meets it.  why == NULL: the connection was lost.
 */
static void
inv_pg_drop(const char *why, int connecting)
{
    if (why != NULL)
        blog_log_limited(&inv_pg_log, APLOG_WARNING, 0, inv.s,
                         connecting
                         ? BLOGLOGNO(00031) "cannot connect to PostgreSQL: %s "
                         "(invalidation listener)"
                         : BLOGLOGNO(00032)
                           "invalidation: not listening: %s", why);
    if (inv.pg != NULL)
        PQfinish(inv.pg);
    inv.pg = NULL;
    blog_outage_begin(&inv_pg_outage);
    blog_backoff_fail(&inv.pg_backoff);
}

/*
 * libpq prints notices to stderr (the error log), among them the FATAL a
 * terminated session gets; losing the connection is logged as such.
 */
static void
inv_pg_notice(void *arg, const char *message)
{
    (void) arg;
    (void) message;
}

/*
 * Connect and LISTEN, without blocking past BlogQueryTimeout.  The
 * conninfo is BlogInvalidateDatabase's, else BlogDatabase's; what comes
 * after it in keys wins over it: the listener names itself (the pool's connections are counted by their
 * application_name), and it needs the primary, since a standby delivers
 * no notifications.
 */
static int
inv_pg_open(void)
{
    static const char *const keys[] = {
        "client_encoding", "dbname", "application_name",
        "target_session_attrs", "keepalives", "keepalives_idle",
        "keepalives_interval", "keepalives_count", NULL
    };
    const char *vals[9];
    apr_time_t  deadline = apr_time_now() + inv.db->query_timeout;
    PGresult   *res;
    char        why[BLOG_PQ_MSG_MAX];
    char        msg[BLOG_PQ_MSG_MAX];
    int         timed_out;

    vals[0] = "UTF8";
    vals[1] = inv.conninfo;
    vals[2] = "mod_blog listener";
    vals[3] = "read-write";
    vals[4] = "1";
    vals[5] = "5";
    vals[6] = "2";
    vals[7] = "3";
    vals[8] = NULL;
    inv.pg = blog_pq_connect(keys, vals, 1, deadline, why, &timed_out);
    if (inv.pg == NULL) {
        inv_pg_drop(why, 1);
        return -1;
    }
    PQsetNoticeProcessor(inv.pg, inv_pg_notice, NULL);
    if (PQsetnonblocking(inv.pg, 1) != 0
        || !PQsendQuery(inv.pg, "LISTEN " BLOG_INVALIDATE_CHANNEL)) {
        inv_pg_drop(blog_pq_msg(why, PQerrorMessage(inv.pg)), 1);
        return -1;
    }
    res = blog_pq_results(inv.pg, deadline, &timed_out);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        if (timed_out)
            apr_cpystrn(why, "no answer to LISTEN in time", sizeof(why));
        else
            apr_snprintf(why, sizeof(why), "LISTEN failed: %s",
                         blog_pq_msg(msg, res ? PQresultErrorMessage(res)
                                     : PQerrorMessage(inv.pg)));
        PQclear(res);
        /* a connection lost: the reconnect says why */
        inv_pg_drop(res == NULL && !timed_out ? NULL : why, 0);
        return -1;
    }
    PQclear(res);
    blog_backoff_reset(&inv.pg_backoff);
    /* Whatever committed before now was not heard: it all goes. */
    inv.flush_due = 1;
    blog_outage_end(&inv_pg_outage, inv.s,
                    BLOGLOGNO(00033)
                    "invalidation listener: database reachable");
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, inv.s,
                 BLOGLOGNO(00034)
                 "invalidation: listening on " BLOG_INVALIDATE_CHANNEL
                 " (pid %d)", PQbackendPID(inv.pg));
    return 0;
}

/* Read what arrived; delete the keys of each notification. */
static void
inv_pg_read(void)
{
    PGnotify   *n;

    if (!PQconsumeInput(inv.pg)) {
        inv_pg_drop(NULL, 0);
        return;
    }
    while ((n = PQnotifies(inv.pg)) != NULL) {
        if (!inv.flush_due && inv_delete_payload(n->extra) == 0
            && !inv.flush_due)
            inv_pending_add(n->extra);
        PQfreemem(n);
    }
    /* Nothing else is sent on this connection: a result is a server error. */
    if (!PQisBusy(inv.pg)) {
        PGresult   *res;

        while ((res = PQgetResult(inv.pg)) != NULL)
            PQclear(res);
    }
    if (PQstatus(inv.pg) == CONNECTION_BAD)
        inv_pg_drop(NULL, 0);
}

/* ---- The thread ---- */

static apr_time_t
inv_min(apr_time_t a, apr_time_t b)
{
    return a < b ? a : b;
}

static void *APR_THREAD_FUNC
inv_main(apr_thread_t *thread, void *data)
{
    (void) data;
    while (!inv_stopping()) {
        struct pollfd pfd[2];
        apr_time_t  now, wake_at;
        int         n = 1;

        if (!inv.holding) {
            if (apr_proc_mutex_trylock(inv.mutex) == APR_SUCCESS)
                inv.holding = 1;
            else {
                pfd[0].fd = inv.wake[0];
                pfd[0].events = POLLIN;
                pfd[0].revents = 0;
                poll(pfd, 1, (int) apr_time_as_msec(INV_ELECT_POLL));
                continue;
            }
        }
        if (inv.pg == NULL && blog_backoff_ready(&inv.pg_backoff))
            inv_pg_open();
        if (inv_stopping())
            break;
        if (inv.flush_due && inv_redis() == 0 && inv_flush() == 0) {
            inv.flush_due = 0;
            blog_backoff_reset(&inv.redis_backoff);
            inv_pending_clear();
        }
        if (inv.flush_due)
            inv_pending_clear();        /* the coming flush covers them */
        else
            inv_pending_run();

        now = apr_time_now();
        wake_at = inv_pending_next(now);
        if (inv.pg == NULL)
            wake_at = inv_min(wake_at, blog_backoff_next(&inv.pg_backoff));
        if (inv.flush_due)
            wake_at = inv_min(wake_at, blog_backoff_next(&inv.redis_backoff));
        pfd[0].fd = inv.wake[0];
        pfd[0].events = POLLIN;
        if (inv.pg != NULL) {
            pfd[1].fd = PQsocket(inv.pg);
            pfd[1].events = POLLIN;
            n = 2;
        }
        pfd[0].revents = pfd[1].revents = 0;
        if (poll(pfd, (nfds_t) n, wake_at > now
                 ? (int) ((wake_at - now + 999) / 1000) : 0) < 0
            && errno != EINTR)
            apr_sleep(apr_time_from_msec(10));
        if (n == 2 && pfd[1].revents != 0)
            inv_pg_read();
    }
    if (inv.pg != NULL)
        PQfinish(inv.pg);
    inv.pg = NULL;
    blog_redis_close(&inv.redis);
    inv_pending_clear();
    if (inv.holding)
        apr_proc_mutex_unlock(inv.mutex);
    inv.holding = 0;
    apr_thread_exit(thread, APR_SUCCESS);
    return NULL;
}

/* ---- Hooks ---- */

static int
inv_pre_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
    (void) plog;
    (void) ptemp;
    return ap_mutex_register(pconf, INV_MUTEX_TYPE, NULL, APR_LOCK_DEFAULT, 0);
}

void
blog_invalidate_configure(apr_pool_t *pconf, server_rec *s, int on,
                          const char *conninfo,
                          const blog_db_settings *db,
                          const blog_cache_settings *cache,
                          const char *const *bases, int nbases)
{
    int         i, b;

    memset(&inv, 0, sizeof(inv));
    inv.redis.max_bulk = INV_MAX_REPLY;
    inv.s = s;
    inv.db = db;
    inv.conninfo = conninfo != NULL ? conninfo : db->conninfo;
    inv.cache = cache;
    inv.on = on && cache->redis_on && nbases > 0;
    inv.bases = apr_palloc(pconf, sizeof(*inv.bases)
                           * (apr_size_t) (nbases > 0 ? nbases : 1));
    for (i = 0; i < nbases; i++) {
        for (b = 0; b < inv.nbases; b++)
            if (strcmp(inv.bases[b], bases[i]) == 0)
                break;
        if (b == inv.nbases)
            inv.bases[inv.nbases++] = bases[i];
    }
}

static int
inv_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                server_rec *s)
{
    apr_status_t rv;

    (void) plog;
    (void) ptemp;
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG
        || !inv.on)
        return OK;
    rv = ap_proc_mutex_create(&inv.mutex, NULL, INV_MUTEX_TYPE, NULL, s,
                              pconf, 0);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, s,
                     BLOGLOGNO(00035)
                     "cannot create the invalidation listener's mutex");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

static void
inv_stop(void)
{
    apr_status_t rv;

    if (inv.thread == NULL)
        return;
    apr_atomic_set32(&inv.stop, 1);
    if (write(inv.wake[1], "x", 1) < 0) {
        /* the thread's polls end within a second anyway */
    }
    apr_thread_join(&rv, inv.thread);
    inv.thread = NULL;
    close(inv.wake[0]);
    close(inv.wake[1]);
}

static apr_status_t
inv_child_exit(void *data)
{
    (void) data;
    inv_stop();
    return APR_SUCCESS;
}

static void
inv_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_status_t rv;

    if (!inv.on || inv.mutex == NULL)
        return;
    rv = apr_proc_mutex_child_init(&inv.mutex,
                                   apr_proc_mutex_lockfile(inv.mutex), pchild);
    if (rv == APR_SUCCESS && pipe2(inv.wake, O_CLOEXEC) != 0)
        rv = APR_FROM_OS_ERROR(errno);
    if (rv == APR_SUCCESS) {
        inv.pchild = pchild;
        rv = apr_thread_create(&inv.thread, NULL, inv_main, NULL, pchild);
        if (rv != APR_SUCCESS) {
            inv.thread = NULL;
            close(inv.wake[0]);
            close(inv.wake[1]);
        }
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     BLOGLOGNO(00036)
                     "cannot start the invalidation listener in this "
                     "child");
        return;
    }
    /* before the pool's other cleanups: the thread uses inv's settings */
    apr_pool_pre_cleanup_register(pchild, NULL, inv_child_exit);
}

/*
 * A child that stops (graceful or not) hands the listening over now, not
 * when its last connection ends.
 */
static void
inv_child_stopping(apr_pool_t *pchild, int graceful)
{
    (void) pchild;
    (void) graceful;
    inv_stop();
}

void
blog_invalidate_register_hooks(void)
{
    ap_hook_pre_config(inv_pre_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(inv_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(inv_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_stopping(inv_child_stopping, NULL, NULL, APR_HOOK_MIDDLE);
}

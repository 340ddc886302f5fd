/* SPDX-License-Identifier: Apache-2.0 */
/*
 * invalidate.c - docs/ARCHITECTURE.md, "Cache invalidation".  pg_blog's
 * triggers NOTIFY blog_cache at commit with the keys a change made stale;
 * one listener per Apache
 * instance deletes them: the child whose thread holds the process mutex
 * (robust: a dead owner releases it) listens, the others try it every
 * INV_ELECT_POLL.  Whatever it could not hear (a new LISTEN, Redis down while
 * a delete was due) it drops whole, as a "*" asks.  Each delete, and each
 * drop, is repeated after INV_REDELETE and after the slowest page call, for
 * a miss that read PostgreSQL just before the commit.  A drop takes only
 * the keys of the instance's mounts: another blog may share the Redis.
 *
 * Not mod_watchdog's singleton: its thread, once it won the mutex from
 * another child, sleeps ten AP_WD_TM_INTERVALs (10 s) before the first
 * callback and then calls back between 100 ms sleeps, so a hand-over would
 * leave pages stale for 10 s and every NOTIFY would wait for its slice.
 */
#include "store/invalidate.h"

#include "store/pq.h"
#include "store/ratelog.h"
#include "store/redis.h"
#include "store/stale.h"
#include "core/router.h"
#include "store/backoff.h"

#include "http_log.h"
#include "apr_atomic.h"
#include "apr_proc_mutex.h"
#include "apr_strings.h"
#include "apr_poll.h"
#include "apr_portable.h"
#include "apr_thread_proc.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

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
#define INV_REPEATS         2
#define INV_ELECT_POLL      apr_time_from_msec(100)
/* The channel pg_blog's triggers NOTIFY (pg_blog--1.1--1.2.sql). */
#define INV_CHANNEL         "blog_cache"

/* A delete to repeat: its keys, as sent (one string, space-separated). */
typedef struct inv_pending
{
    struct inv_pending *next;
    apr_time_t  due;
    char        keys[];
} inv_pending;

/* The settings, from blog_invalidate_configure. */
static struct inv_settings
{
    server_rec *s;
    int         on;
    const blog_db_settings *db;
    const char *conninfo;
    const blog_cache_settings *cache;
    const char **bases;         /* each mount, once: "/b", "" at "/" */
    int         nbases;
    apr_proc_mutex_t *mutex;    /* held by the child that listens */
} inv;

/*
 * The child's listener, from child_init: its thread, whether it holds the
 * election's mutex, each back end (only the thread touches these) and what
 * is due.
 */
typedef struct inv_child
{
    int         holding;
    apr_thread_t *thread;
    apr_file_t *wake_in, *wake_out;     /* inv_stop writes to wake_out */
    apr_socket_t *pq_sock;      /* the connection's socket, for apr_poll */
    apr_uint32_t stop;          /* apr_atomic */
    struct
    {
        PGconn     *conn;
        blog_backoff backoff;
        blog_ratelog log;
    }           pq;
    struct
    {
        blog_redis  conn;
        blog_backoff backoff;
        blog_ratelog log;
        apr_uint32_t gen;       /* Sentinel's, when conn was made */
        apr_uint32_t seen_gen;  /* the last master the drops covered */
    }           rd;
    /* Every page key must go: INV_FLUSH (a gap, a "*") then twice again,
     * or INV_FLUSH_ONCE (one of those repeats). */
    int         flush_due;
    struct
    {
        inv_pending *head;      /* the repeats, in due order */
        int         n;
    }           q;
} inv_child;
static inv_child *inv_c;
#define INV_FLUSH           1
#define INV_FLUSH_ONCE      2

/* Every loop looks between its bounded steps: a stop waits for one step. */
static int
inv_stopping(void)
{
    return apr_atomic_read32(&inv_c->stop) != 0;
}

/* ---- Redis ---- */

/* Redis failed: every key goes once it answers again, after a backoff. */
static void
inv_redis_drop(const char *what, const char *why)
{
    const blog_cache_settings *g = inv.cache;
    char        port[16] = "";

    /* apr_snprintf prints 0 for "%.0d": a socket's path gets no port */
    if (g->redis.port != 0)
        apr_snprintf(port, sizeof(port), ":%d", g->redis.port);
    blog_log_limited(&inv_c->rd.log, APLOG_WARNING, 0, inv.s,
                     BLOGLOGNO(00026) "invalidation: Redis %s failed "
                     "(%s%s): %s; every cached page will be dropped "
                     "once Redis answers", what, g->redis.host, port, why);
    blog_redis_close(&inv_c->rd.conn);
    inv_c->flush_due = INV_FLUSH;
    blog_outage_begin(&inv_c->rd.log);
    blog_backoff_fail(&inv_c->rd.backoff);
}

/*
 * With sentinels, a new master: deletes sent to the old one may not have
 * reached its replica before the switch, so every page key of the mounts
 * goes from the new one.  A connection to the old one is closed, and the
 * command under way fails, to be covered by that drop.
 */
static int
inv_master_moved(void)
{
    apr_uint32_t gen = blog_sentinel_generation();

    if (inv.cache->sentinel.list.n == 0 || gen == inv_c->rd.seen_gen)
        return 0;
    inv_c->rd.seen_gen = gen;
    inv_c->flush_due = INV_FLUSH;
    blog_redis_close(&inv_c->rd.conn);
    /* what failed on the old master does not delay the new one */
    blog_backoff_reset(&inv_c->rd.backoff);
    return 1;
}

/*
 * One command against one deadline (lens NULL: strings), connecting first
 * unless backing off: its reply (an error reply too), or NULL after a
 * failure, which drops the connection.  One found closed after it had
 * worked (Redis restarted) is replaced and the command sent again.
 */
static redisReply *
inv_redis_run(const char *what, int argc, const char **argv,
              const size_t *lens)
{
    apr_time_t  deadline = apr_time_now() + inv.cache->redis.timeout;
    int         attempt;

    for (attempt = 0;; attempt++) {
        int         reused;
        redisReply *reply = NULL;
        blog_redis_io io;
        char        why[200];

        if (inv_master_moved())
            return NULL;
        reused = inv_c->rd.conn.ctx != NULL;
        if (!reused && apr_time_now() < blog_backoff_next(&inv_c->rd.backoff)
            && blog_sentinel_generation() == inv_c->rd.gen)
            return NULL;
        if (!reused && blog_sentinel_connect(&inv_c->rd.conn,
                                             &inv.cache->redis,
                                             &inv.cache->sentinel,
                                             &inv_c->rd.gen, why,
                                             sizeof(why)) != 0) {
            inv_redis_drop("connect", why);
            return NULL;
        }
        io = blog_redis_command(&inv_c->rd.conn, argc, argv, lens, deadline,
                                &reply);
        if (io == BLOG_REDIS_OK) {
            blog_outage_end(&inv_c->rd.log, inv.s,
                            BLOGLOGNO(00028) "invalidation: Redis reachable");
            return reply;
        }
        if (io == BLOG_REDIS_CLOSED && reused && attempt == 0) {
            blog_redis_close(&inv_c->rd.conn);
            continue;
        }
        inv_redis_drop(what, blog_redis_why[io]);
        return NULL;
    }
}

/* Keys for one DEL, sent when full and at the end. */
typedef struct inv_batch
{
    const char *argv[INV_BATCH + 1];    /* "DEL", the keys */
    size_t      argl[INV_BATCH + 1];
    int         n;
} inv_batch;

/* DEL of the batch's keys: 0 when Redis answered with a count. */
static int
inv_del(inv_batch *b)
{
    redisReply *reply;
    int         n = b->n;

    b->n = 0;
    if (n == 0)
        return 0;
    b->argv[0] = "DEL";
    b->argl[0] = 3;
    if ((reply = inv_redis_run("DEL", n + 1, b->argv, b->argl)) == NULL)
        return -1;
    if (reply->type == REDIS_REPLY_INTEGER) {
        freeReplyObject(reply);
        blog_backoff_reset(&inv_c->rd.backoff); /* it answers: not down */
        return 0;
    }
    blog_log_limited(&inv_c->rd.log, APLOG_WARNING, 0, inv.s,
                     BLOGLOGNO(00029) "invalidation: Redis refused DEL: %s",
                     reply->type == REDIS_REPLY_ERROR ? reply->str
                     : "unexpected reply");
    /* the master demoted under us: the sentinels are asked again */
    if (reply->type == REDIS_REPLY_ERROR && inv.cache->sentinel.list.n > 0
        && strncmp(reply->str, "READONLY", 8) == 0)
        blog_sentinel_suspect();
    freeReplyObject(reply);
    /* a Redis that refuses writes is asked again after a backoff */
    inv_c->flush_due = INV_FLUSH;
    blog_backoff_fail(&inv_c->rd.backoff);
    return -1;
}

static int
inv_batch_add(inv_batch *b, const char *key, size_t len)
{
    b->argv[b->n + 1] = key;
    b->argl[b->n + 1] = len;
    return ++b->n == INV_BATCH ? inv_del(b) : 0;
}

/*
 * Whether SCAN's key is a page this instance stores: a mount's, then "/"
 * or "/post/{slug}" (serve.c).  As the slug has no '/', a key names one
 * mount only: another mount's pages, on another server, stay.
 */
static int
inv_key_ours(const redisReply *k)
{
    size_t      len = k->type == REDIS_REPLY_STRING ? k->len : 0;
    int         b;

    for (b = 0; b < inv.nbases; b++) {
        size_t      at = BLOG_CACHE_PREFIX_LEN + strlen(inv.bases[b]);
        blog_route  rt;

        if (len < at
            || memcmp(k->str, BLOG_CACHE_PREFIX, BLOG_CACHE_PREFIX_LEN) != 0
            || memcmp(k->str + BLOG_CACHE_PREFIX_LEN, inv.bases[b],
                      at - BLOG_CACHE_PREFIX_LEN) != 0)
            continue;
        blog_route_match(k->str + at, len - at, &rt);
        if (rt.kind == BLOG_ROUTE_INDEX || rt.kind == BLOG_ROUTE_POST)
            return 1;
    }
    return 0;
}

/* Every page key of every mount: SCAN by the prefix, DEL ours of it. */
static int
inv_flush(void)
{
    char        cursor[32] = "0";
    unsigned long total = 0;
    inv_batch   b = {.n = 0};

    do {
        const char *argv[] = {
            "SCAN", cursor, "MATCH", BLOG_CACHE_PREFIX "*",
            "COUNT", INV_SCAN_COUNT
        };
        redisReply *reply = inv_redis_run("SCAN", 6, argv, NULL);
        size_t      i;
        int         failed = 0;

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

            if (inv_key_ours(k)) {
                failed = inv_batch_add(&b, k->str, k->len) != 0;
                total++;
            }
        }
        /* the keys point into this reply */
        failed = failed || inv_del(&b) != 0;
        freeReplyObject(reply);
        if (failed)
            return -1;
    } while (strcmp(cursor, "0") != 0 && !inv_stopping());
    if (inv_stopping())
        return -1;
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, inv.s, BLOGLOGNO(00030)
                 "invalidation: dropped every cached page (%lu keys)", total);
    return 0;
}

/* Whether a payload's word names a page key ("blog:page:/..."). */
static int
inv_names_page(const char *p, size_t len)
{
    return len > BLOG_CACHE_PREFIX_LEN && len <= INV_MAX_KEY
        && memcmp(p, BLOG_CACHE_PREFIX "/", BLOG_CACHE_PREFIX_LEN + 1) == 0;
}

/*
 * Delete the keys a payload names under every mount ("/post/x" at /blog is
 * "blog:page:/blog/post/x"); others are ignored: any role may NOTIFY.  0
 * when done.
 */
static int
inv_delete_payload(const char *payload)
{
    /* static: one listener thread per process */
    static char buf[INV_BATCH][BLOG_CACHE_PREFIX_LEN + 2 * INV_MAX_KEY];
    static inv_batch batch;
    const char *p = payload;

    batch.n = 0;
    for (; *p; p += strspn(p, " ")) {
        size_t      len = strcspn(p, " ");
        int         b;

        for (b = 0; b < inv.nbases && inv_names_page(p, len); b++) {
            char       *k = buf[batch.n];
            size_t      kl = blog_cache_key(k, sizeof(buf[0]), inv.bases[b],
                                            strlen(inv.bases[b]),
                                            p + BLOG_CACHE_PREFIX_LEN,
                                            len - BLOG_CACHE_PREFIX_LEN);

            if (kl > 0 && inv_batch_add(&batch, k, kl))
                return -1;
        }
        p += len;
    }
    return inv_del(&batch);
}

/* The keys a payload names, under every mount, made stale at t. */
static void
inv_stale_payload(const char *payload, apr_time_t t)
{
    char        k[BLOG_CACHE_PREFIX_LEN + 2 * INV_MAX_KEY];
    const char *p = payload;

    for (; *p; p += strspn(p, " ")) {
        size_t      len = strcspn(p, " ");
        int         b;

        for (b = 0; b < inv.nbases && inv_names_page(p, len); b++) {
            size_t      kl = blog_cache_key(k, sizeof(k), inv.bases[b],
                                            strlen(inv.bases[b]),
                                            p + BLOG_CACHE_PREFIX_LEN,
                                            len - BLOG_CACHE_PREFIX_LEN);

            if (kl > 0)
                blog_stale_mark(k, kl, t);
        }
        p += len;
    }
}

/* ---- The deletes repeated (see the comment at the top) ---- */

static void
inv_pending_clear(void)
{
    while (inv_c->q.head != NULL) {
        inv_pending *next = inv_c->q.head->next;

        free(inv_c->q.head);
        inv_c->q.head = next;
    }
    inv_c->q.n = 0;
}

static void
inv_pending_add(const char *payload)
{
    size_t      len = strlen(payload);
    apr_time_t  now = apr_time_now();
    int         q;

    for (q = 0; q < INV_REPEATS; q++) {
        inv_pending *e, **pp;

        if (inv_c->q.n >= INV_MAX_PENDING
            || (e = malloc(sizeof(*e) + len + 1)) == NULL) {
            inv_c->flush_due = INV_FLUSH;
            return;
        }
        e->due = now + (q == 0 ? INV_REDELETE
                        : inv.db->query_timeout + inv.cache->redis.timeout);
        memcpy(e->keys, payload, len + 1);
        for (pp = &inv_c->q.head; *pp != NULL && (*pp)->due <= e->due;
             pp = &(*pp)->next)
            ;
        e->next = *pp;
        *pp = e;
        inv_c->q.n++;
    }
}

static void
inv_pending_run(void)
{
    apr_time_t  now = apr_time_now();

    while (inv_c->q.head != NULL && inv_c->q.head->due <= now
           && !inv_c->flush_due && !inv_stopping()) {
        inv_pending *e = inv_c->q.head;

        if (strcmp(e->keys, "*") == 0)
            inv_c->flush_due = INV_FLUSH_ONCE;
        else if (inv_delete_payload(e->keys) != 0)
            return;             /* flush_due is set: the flush covers it */
        inv_c->q.head = e->next;
        inv_c->q.n--;
        free(e);
    }
}

/* ---- PostgreSQL ---- */

/*
 * Not listening any more.  why == NULL, a lost connection, is not logged:
 * the reconnect says whether PostgreSQL is down, in the pool's words.
 */
static void
inv_pg_drop(const char *why, int connecting)
{
    if (why != NULL)
        blog_log_limited(&inv_c->pq.log, APLOG_WARNING, 0, inv.s,
                         connecting
                         ? BLOGLOGNO(00031) "cannot connect to PostgreSQL: %s "
                         "(invalidation listener)"
                         : BLOGLOGNO(00032)
                           "invalidation: LISTEN failed: %s", why);
    PQfinish(inv_c->pq.conn);
    inv_c->pq.conn = NULL;
    blog_outage_begin(&inv_c->pq.log);
    blog_backoff_fail(&inv_c->pq.backoff);
}

/* Not to stderr (the error log): a lost connection is logged as such. */
static void
inv_pg_notice(void *arg, const char *message)
{
    (void) arg;
    (void) message;
}

/*
 * Connect and LISTEN by BlogQueryTimeout.  The keywords after the conninfo
 * win: the listener names itself, and needs the primary (a standby
 * delivers no notifications).
 */
static int
inv_pg_open(void)
{
    static const char *const keys[] = {
        "client_encoding", "dbname", "application_name",
        "target_session_attrs", "keepalives", "keepalives_idle",
        "keepalives_interval", "keepalives_count", NULL
    };
    const char *const vals[] = {
        "UTF8", inv.conninfo, "mod_blog listener", "read-write", "1", "5",
        "2", "3", NULL
    };
    apr_time_t  deadline = apr_time_now() + inv.db->query_timeout;
    char        why[BLOG_PQ_MSG_MAX];
    int         timed_out;

    inv_c->pq.conn = blog_pq_connect(keys, vals, deadline, why, &timed_out);
    if (inv_c->pq.conn == NULL) {
        inv_pg_drop(why, 1);
        return -1;
    }
    PQsetNoticeProcessor(inv_c->pq.conn, inv_pg_notice, NULL);
    if (blog_pq_command(inv_c->pq.conn, "LISTEN " INV_CHANNEL, deadline,
                        why) != 0) {
        /* a connection lost: the reconnect says why */
        inv_pg_drop(PQstatus(inv_c->pq.conn) == CONNECTION_BAD ? NULL : why,
                    0);
        return -1;
    }
    blog_backoff_reset(&inv_c->pq.backoff);
    /* Whatever committed before now was not heard: it all goes. */
    inv_c->flush_due = INV_FLUSH;
    blog_stale_mark_all(apr_time_now());
    blog_outage_end(&inv_c->pq.log, inv.s, BLOGLOGNO(00033)
                    "invalidation listener: database reachable");
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, inv.s, BLOGLOGNO(00034)
                 "invalidation: listening on " INV_CHANNEL " (pid %d)",
                 PQbackendPID(inv_c->pq.conn));
    return 0;
}

/*
 * Read what arrived; delete the keys of each notification, now (unless a
 * drop due covers them) and later; "*" (pg_blog's "every page") drops all.
 */
static void
inv_pg_read(void)
{
    PGnotify   *n;
    int         ok = PQconsumeInput(inv_c->pq.conn);

    while (ok && (n = PQnotifies(inv_c->pq.conn)) != NULL) {
        /* marked before the deletes: a copy written back after them is
         * refused */
        if (strcmp(n->extra, "*") == 0) {
            blog_stale_mark_all(apr_time_now());
            inv_c->flush_due = INV_FLUSH;
        }
        else {
            inv_stale_payload(n->extra, apr_time_now());
            if (!inv_c->flush_due)
                inv_delete_payload(n->extra);
            inv_pending_add(n->extra);
        }
        PQfreemem(n);
    }
    /* Nothing else is sent on this connection: a result is a server error. */
    if (ok && !PQisBusy(inv_c->pq.conn)) {
        PGresult   *res;

        while ((res = PQgetResult(inv_c->pq.conn)) != NULL)
            PQclear(res);
    }
    if (!ok || PQstatus(inv_c->pq.conn) == CONNECTION_BAD)
        inv_pg_drop(NULL, 0);
}

/* ---- The thread ---- */

/* The listener's work, in the child that holds the mutex: when next due. */
static apr_time_t
inv_step(void)
{
    apr_time_t  wake_at;

    /* a new master is dropped from at once, not at the next write */
    inv_master_moved();
    if (inv_c->pq.conn == NULL
        && apr_time_now() >= blog_backoff_next(&inv_c->pq.backoff))
        inv_pg_open();
    if (inv_c->flush_due) {
        int         repeated = inv_c->flush_due == INV_FLUSH;

        if (repeated)
            inv_pending_clear();    /* the flush and its repeats cover them */
        if (!inv_stopping() && inv_flush() == 0) {
            inv_c->flush_due = 0;
            blog_backoff_reset(&inv_c->rd.backoff);
            if (repeated)
                inv_pending_add("*");
        }
    }
    /* not in a gap: the pages are all a reader has, the next LISTEN's
     * drop covers what was due */
    else if (inv_c->pq.conn != NULL)
        inv_pending_run();
    wake_at = apr_time_now() + apr_time_from_sec(1);
    if (inv_c->pq.conn != NULL && inv_c->q.head != NULL
        && inv_c->q.head->due < wake_at)
        wake_at = inv_c->q.head->due;
    if (inv_c->pq.conn == NULL
        && blog_backoff_next(&inv_c->pq.backoff) < wake_at)
        wake_at = blog_backoff_next(&inv_c->pq.backoff);
    if (inv_c->flush_due && blog_backoff_next(&inv_c->rd.backoff) < wake_at)
        wake_at = blog_backoff_next(&inv_c->rd.backoff);
    return wake_at;
}

/* Until stopped: listen while holding the mutex, else try for it. */
static void *APR_THREAD_FUNC
inv_main(apr_thread_t *thread, void *data)
{
    apr_pollfd_t pfd[2] = {
        {.desc_type = APR_POLL_FILE, .reqevents = APR_POLLIN,
         .desc.f = inv_c->wake_in},
        {.desc_type = APR_POLL_SOCKET, .reqevents = APR_POLLIN,
         .desc.s = inv_c->pq_sock}
    };
    apr_os_sock_t fd;
    apr_int32_t n;

    (void) data;
    while (!inv_stopping()) {
        apr_time_t  wake_at = apr_time_now() + INV_ELECT_POLL;
        apr_time_t  now;
        apr_status_t rv;

        pfd[1].rtnevents = 0;
        if (!inv_c->holding
            && apr_proc_mutex_trylock(inv.mutex) == APR_SUCCESS)
            inv_c->holding = 1;
        if (inv_c->holding)
            wake_at = inv_step();
        if (inv_c->pq.conn != NULL) {
            fd = PQsocket(inv_c->pq.conn);
            apr_os_sock_put(&inv_c->pq_sock, &fd, NULL);
        }
        now = apr_time_now();
        /* in whole ms, rounded up, as apr_poll waits */
        rv = apr_poll(pfd, inv_c->pq.conn != NULL ? 2 : 1, &n, wake_at > now
                      ? (wake_at - now + 999) / 1000 * 1000 : 0);
        if (rv != APR_SUCCESS && !APR_STATUS_IS_TIMEUP(rv)
            && !APR_STATUS_IS_EINTR(rv))
            apr_sleep(apr_time_from_msec(10));
        if (rv == APR_SUCCESS && pfd[1].rtnevents != 0)
            inv_pg_read();
    }
    PQfinish(inv_c->pq.conn);
    inv_c->pq.conn = NULL;
    blog_redis_close(&inv_c->rd.conn);
    inv_pending_clear();
    if (inv_c->holding)
        apr_proc_mutex_unlock(inv.mutex);
    inv_c->holding = 0;
    /* returned, not apr_thread_exit: pthread_exit leaves the stack's
     * ASan poisoning behind */
    (void) thread;
    return NULL;
}

/* ---- Its life, driven by httpd/invalidate_hooks.c ---- */

void
blog_invalidate_configure(apr_pool_t *pconf, server_rec *s, int on,
                          const char *conninfo, const blog_db_settings *db,
                          const blog_cache_settings *cache,
                          const char *const *bases, int nbases)
{
    int         i, b;

    inv = (struct inv_settings) {.s = s, .db = db, .cache = cache,
        .on = on && cache->redis.on && nbases > 0,
        .conninfo = conninfo != NULL ? conninfo : db->conninfo,
        .bases = apr_palloc(pconf, sizeof(char *)
                            * (apr_size_t) (nbases > 0 ? nbases : 1))};
    for (i = 0; i < nbases; i++) {
        for (b = 0; b < inv.nbases && strcmp(inv.bases[b], bases[i]) != 0; b++)
            ;
        if (b == inv.nbases)
            inv.bases[inv.nbases++] = bases[i];
    }
}

int
blog_invalidate_wanted(void)
{
    return inv.on;
}

apr_status_t
blog_invalidate_prepare(apr_pool_t *pconf, apr_proc_mutex_t *mutex)
{
    inv.mutex = mutex;
    /* what the listener hears, for the cache to refuse sealed replays */
    return inv.cache->seal.on ? blog_stale_create(pconf) : APR_SUCCESS;
}

void
blog_invalidate_stop_soon(void)
{
    if (inv_c == NULL || inv_c->thread == NULL
        || apr_atomic_xchg32(&inv_c->stop, 1) != 0)
        return;
    /* failing, the thread's polls end within a second anyway */
    apr_file_putc('x', inv_c->wake_out);
}

/*
 * The child's pool cleanup, in its main thread once the MPM's threads are
 * gone (as mod_watchdog and mod_http2 join theirs): the thread joined.
 */
static apr_status_t
inv_stop(void *data)
{
    apr_status_t rv;

    (void) data;
    if (inv_c == NULL || inv_c->thread == NULL)
        return APR_SUCCESS;
    blog_invalidate_stop_soon();
    apr_thread_join(&rv, inv_c->thread);
    inv_c->thread = NULL;
    return APR_SUCCESS;
}

apr_status_t
blog_invalidate_start(apr_pool_t *pchild)
{
    apr_status_t rv;
    apr_os_sock_t none = -1;

    if (!inv.on || inv.mutex == NULL)
        return APR_SUCCESS;
    inv_c = apr_pcalloc(pchild, sizeof(*inv_c));
    inv_c->rd.conn.max_bulk = INV_MAX_REPLY;
    rv = apr_proc_mutex_child_init(&inv.mutex, apr_proc_mutex_lockfile(
                                       inv.mutex), pchild);
    if (rv == APR_SUCCESS)
        rv = apr_file_pipe_create(&inv_c->wake_in, &inv_c->wake_out, pchild);
    if (rv == APR_SUCCESS)
        rv = apr_os_sock_put(&inv_c->pq_sock, &none, pchild);
    if (rv == APR_SUCCESS
        && (rv = apr_thread_create(&inv_c->thread, NULL, inv_main, NULL,
                                   pchild)) != APR_SUCCESS)
        inv_c->thread = NULL;
    /* before the pool's other cleanups: the thread uses the settings */
    if (rv == APR_SUCCESS)
        apr_pool_pre_cleanup_register(pchild, NULL, inv_stop);
    return rv;
}

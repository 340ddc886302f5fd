/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db.c - not an apr_reslist (mod_dbd's): a reslist connects under its lock, so
 * one PostgreSQL that does not answer would stall every thread of the child.
 * Here a request reserves a slot under the lock and waits in the queue; the
 * child's opener thread connects without the lock, and the new connection
 * goes to the first waiter, like one released: a request takes whichever
 * comes first, and a connect slower than BlogPoolAcquireTimeout still serves
 * the requests after it (HikariCP's way).  Every wait has BlogQueryTimeout's
 * deadline; a query past it is dropped, not PQcancel'led (libpq 15's cancel
 * waits on the postmaster unbounded), and the server ends the statement
 * (client_connection_check_interval).  A read that fails on a lost
 * connection is retried once on a new one.
 */
#include "store/db_result.h"
#include "store/pq.h"
#include "store/db_hosts.h"

#include "store/ratelog.h"
#include "store/counters.h"
#include "store/backoff.h"

#include "http_log.h"
#include "apr_atomic.h"
#include "apr_strings.h"
#include "apr_thread_cond.h"
#include "apr_thread_mutex.h"
#include "apr_thread_proc.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

APLOG_USE_MODULE(blog);

/* How often the server looks for a client that went away mid-statement. */
#define DB_CLIENT_CHECK_MS  1000
/* blog_db_ping's statement, in place of a page's */
#define DB_PING (-1)

typedef struct db_conn
{
    PGconn     *pg;
    apr_uint32_t gen;           /* db->gen when it was opened */
    apr_time_t  idle_since;
    struct db_conn *next;       /* in the idle list */
} db_conn;

typedef enum db_outcome
{
    DB_OK, DB_NO_CONN, DB_TIMED_OUT, DB_FAILED, DB_CONN_LOST
} db_outcome;

/*
 * A release goes to the oldest waiter: with one shared condition variable
 * some waited out BlogPoolAcquireTimeout while later ones were served.
 */
typedef struct db_waiter
{
    apr_thread_cond_t *cv;
    db_conn    *given;          /* handed over by db_release */
    int         woken;          /* given, or a slot freed: look again */
    struct db_waiter *next;
} db_waiter;

/* In blog_stmt order. */
static const char *const db_stmt_names[] = {
    "blog_index", "blog_post", "blog_tag"
};
static const char *const db_stmt_sql[] = {
    "SELECT * FROM blog.index_page($1::integer)",
    "SELECT * FROM blog.post_page($1::text)",
    "SELECT * FROM blog.tag_page($1::text)"
};

/* The child's pool, from child_init. */
typedef struct db_pool
{
    const blog_db_settings *g;
    server_rec *s;
    apr_thread_mutex_t *lock;   /* everything below but gen */
    db_waiter  *waiters;
    db_conn    *idle;           /* most recently used first */
    int         nopen;          /* idle + in use + reserved to open */
    int         to_open;        /* reserved, for the opener */
    int         stopping;
    apr_thread_cond_t *opener_cv;
    apr_thread_t *opener;
    blog_backoff backoff;
    char        err[BLOG_PQ_MSG_MAX];   /* the last connect's, or "" */
    apr_uint32_t gen;           /* bumped on a lost connection */
    blog_ratelog log;
} db_pool;
static db_pool *db;

static PGconn *
db_connect(const blog_call *call, apr_time_t deadline, char *msg)
{
    /* BlogDatabase's keywords last: they win over ours. */
    const char *keys[BLOG_DB_MAX_PARAMS + 1] = {
        "client_encoding", "fallback_application_name"
    };
    const char *vals[BLOG_DB_MAX_PARAMS + 1] = {"UTF8", "mod_blog"};
    PGconn     *pg;
    int         timed_out, n;

    n = 2 + blog_db_hosts_params(call->pool, db->g->conninfo, keys + 2,
                                 vals + 2);
    keys[n] = vals[n] = NULL;
    pg = blog_pq_connect(keys, vals, deadline, msg, &timed_out);
    if (pg == NULL)
        blog_call_log_limited(&db->log, APLOG_ERR,
                              timed_out ? APR_TIMEUP : 0, call,
                              BLOGLOGNO(00014)
                              "cannot connect to PostgreSQL: %s", msg);
    return pg;
}

/*
 * A new connection, its timeouts and page statements set in one round trip;
 * err: why the connect failed, if it did.
 */
static PGconn *
db_open(const blog_call *call, apr_time_t deadline, char *err)
{
    char        setup[640];
    char        msg[BLOG_PQ_MSG_MAX];
    PGconn     *pg = db_connect(call, deadline, err);

    /* libpq 15 gives up on a list when one host closes before answering */
    if (pg == NULL && blog_db_hosts_several())
        pg = db_connect(call, deadline, err);   /* the hosts reordered */
    /* nothing a transaction pooler would lose: each page sets its own */
    if (pg == NULL || !db->g->prepare)
        return pg;
    apr_snprintf(setup, sizeof(setup),
                 "SET statement_timeout = %" APR_INT64_T_FMT ";"
                 "SET client_connection_check_interval = %d;"
                 /* a function call's plan never depends on its argument */
                 "SET plan_cache_mode = force_generic_plan;"
                 "PREPARE %s AS %s;PREPARE %s AS %s;PREPARE %s AS %s",
                 (apr_int64_t) apr_time_as_msec(db->g->query_timeout),
                 DB_CLIENT_CHECK_MS, db_stmt_names[0], db_stmt_sql[0],
                 db_stmt_names[1], db_stmt_sql[1], db_stmt_names[2],
                 db_stmt_sql[2]);
    if (blog_pq_command(pg, setup, deadline, msg) != 0) {
        blog_call_log_limited(&db->log, APLOG_ERR, 0, call, BLOGLOGNO(00016)
                              "cannot prepare the page statements: %s", msg);
        PQfinish(pg);
        return NULL;
    }
    return pg;
}

/*
 * Under db->lock: c to the first waiter, or with c NULL a slot freed, which
 * it may open.  0 when nobody waits.
 */
static int
db_hand_over(db_conn *c)
{
    db_waiter  *w = db->waiters;

    if (w == NULL)
        return 0;
    db->waiters = w->next;
    w->given = c;
    w->woken = 1;
    apr_thread_cond_signal(w->cv);
    return 1;
}

/*
 * Under db->lock: a reserved slot given up.  With none left open every
 * waiter looks again (and, while the backoff runs, fails at once), else
 * the first.
 */
static void
db_slot_freed(void)
{
    db->nopen--;
    while (db_hand_over(NULL) && db->nopen == 0)
        ;
}

/* Open a connection for a slot reserved in db->nopen, from call->pool (a
 * call without a connection from the opener or child_init); NULL on
 * failure. */
static db_conn *
db_open_slot(const blog_call *call, apr_time_t deadline)
{
    char        err[BLOG_PQ_MSG_MAX] = "";
    PGconn     *pg = db_open(call, deadline, err);
    db_conn    *c = pg ? malloc(sizeof(*c)) : NULL;

    if (pg != NULL && c == NULL)
        PQfinish(pg);
    blog_stat_inc(c ? BLOG_STAT_POOL_CONNECTS
                  : BLOG_STAT_POOL_CONNECT_FAILURES);
    apr_thread_mutex_lock(db->lock);
    if (c != NULL || err[0] != '\0')
        apr_cpystrn(db->err, c != NULL ? "" : err, sizeof(db->err));
    if (c != NULL)
        blog_backoff_reset(&db->backoff);
    else {
        blog_backoff_fail(&db->backoff);
        db_slot_freed();
    }
    apr_thread_mutex_unlock(db->lock);
    if (c == NULL)
        return NULL;
    blog_stat_inc(BLOG_STAT_POOL_OPEN);
    *c = (db_conn) {pg, apr_atomic_read32(&db->gen), 0, NULL};
    return c;
}

static void
db_close(db_conn *c)
{
    while (c != NULL) {
        db_conn    *next = c->next;

        blog_stat_add(BLOG_STAT_POOL_OPEN, -1);
        PQfinish(c->pg);
        free(c);
        c = next;
    }
}

/* Under db->lock: move c to the list *to, its slot freed. */
static void
db_discard(db_conn *c, db_conn **to)
{
    c->next = *to;
    *to = c;
    db->nopen--;
}

static void
db_release(db_conn *c, int reusable)
{
    apr_time_t  now = apr_time_now();
    db_conn    *expired = NULL;
    db_conn   **pp = &db->idle;
    int         kept = 0;

    apr_thread_mutex_lock(db->lock);
    if (!reusable) {
        db_discard(c, &expired);
        db_hand_over(NULL);
    }
    else if (!db_hand_over(c)) {
        c->idle_since = now;
        c->next = db->idle;
        db->idle = c;
    }
    /* the idle connections above Keep that expired */
    while (*pp != NULL) {
        c = *pp;
        if (++kept > db->g->pool_keep
            && now - c->idle_since > db->g->pool_exptime) {
            *pp = c->next;
            db_discard(c, &expired);
        }
        else
            pp = &c->next;
    }
    apr_thread_mutex_unlock(db->lock);
    db_close(expired);
}

/* A checked-out connection back; ok: its statement left it usable. */
static void
db_checkin(db_conn *c, int ok)
{
    blog_stat_add(BLOG_STAT_POOL_BUSY, -1);
    db_release(c, ok && PQstatus(c->pg) == CONNECTION_OK
               && PQtransactionStatus(c->pg) == PQTRANS_IDLE
               && PQpipelineStatus(c->pg) == PQ_PIPELINE_OFF
               && !blog_db_hosts_retire(c->pg));
}

/*
 * Under db->lock: queue up and wait until a connection is handed over, a
 * slot frees, or wait_until.  The connection handed over, or NULL.
 */
static db_conn *
db_wait_turn(blog_call *call, apr_time_t wait_until)
{
    db_waiter   w = {NULL, NULL, 0, NULL};
    db_waiter **pp;
    apr_time_t  now;

    if (apr_thread_cond_create(&w.cv, call->pool) != APR_SUCCESS)
        return NULL;
    for (pp = &db->waiters; *pp != NULL; pp = &(*pp)->next)
        ;
    *pp = &w;
    while (!w.woken && (now = apr_time_now()) < wait_until
           && apr_thread_cond_timedwait(w.cv, db->lock, wait_until - now)
           != APR_TIMEUP)
        ;
    /* Timed out: still in the queue, unless handed something just now. */
    if (!w.woken) {
        for (pp = &db->waiters; *pp != NULL; pp = &(*pp)->next) {
            if (*pp == &w) {
                *pp = w.next;
                break;
            }
        }
    }
    apr_thread_cond_destroy(w.cv);
    return w.given;
}

/*
 * A connection for one call: an idle one (dropping those opened before the
 * last lost one), else a new one when a slot is free and no backoff runs,
 * else one handed over by a release, in turn.  NULL after the deadline, or
 * at once while backing off with nothing to wait for.
 */
static db_conn *
db_checkout(blog_call *call, apr_time_t deadline)
{
    apr_time_t  wait_until = apr_time_now() + db->g->acquire_timeout;
    db_conn    *stale = NULL;
    db_conn    *c = NULL;
    int         timed_out = 0;

    if (wait_until > deadline)
        wait_until = deadline;
    apr_thread_mutex_lock(db->lock);
    for (;;) {
        apr_time_t  now;

        if (c == NULL && db->idle != NULL) {
            c = db->idle;
            db->idle = c->next;
        }
        if (c != NULL && c->gen != apr_atomic_read32(&db->gen)) {
            db_discard(c, &stale);
            c = NULL;
            continue;
        }
        if (c != NULL)
            break;
        now = apr_time_now();
        if (db->nopen < db->g->pool_max
            && now >= blog_backoff_next(&db->backoff)) {
            db->nopen++;
            if (db->opener == NULL) {
                /* no BlogMount: blog-health's connects, in its thread */
                apr_thread_mutex_unlock(db->lock);
                c = db_open_slot(call, wait_until);
                goto done;
            }
            db->to_open++;
            apr_thread_cond_signal(db->opener_cv);
        }
        if (db->nopen == 0)
            break;
        timed_out = now >= wait_until;
        if (timed_out)
            break;
        blog_stat_inc(BLOG_STAT_POOL_WAITS);
        c = db_wait_turn(call, wait_until);
    }
    apr_thread_mutex_unlock(db->lock);
    if (timed_out) {
        blog_stat_inc(BLOG_STAT_POOL_ACQUIRE_TIMEOUTS);
        blog_call_log_limited(&db->log, APLOG_ERR, APR_TIMEUP, call,
                              BLOGLOGNO(00017) "no free PostgreSQL connection "
                              "within BlogPoolAcquireTimeout");
    }
  done:
    db_close(stale);
    if (c != NULL)
        blog_stat_inc(BLOG_STAT_POOL_BUSY);
    return c;
}

static int
db_is_conn_error(PGconn *pg, const PGresult *res)
{
    const char *state;

    if (PQstatus(pg) == CONNECTION_BAD)
        return 1;
    state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return state != NULL && ((state[0] == '0' && state[1] == '8')
                             || strcmp(state, "57P01") == 0
                             || strcmp(state, "57P02") == 0
                             || strcmp(state, "57P03") == 0);
}

/*
 * BlogPrepare Off (a transaction pooler, where a session's SET would stay
 * on a server connection that other clients share, and be missing from
 * the next one): the page's SQL, after its timeouts set for its own
 * transaction only, in one pipeline with one Sync, so still one write,
 * one round trip and one transaction.
 */
static int
db_send_unprepared(PGconn *pg, int stmt, const char *const *values,
                   const int *lengths, const int *formats)
{
    char        set[160];

    apr_snprintf(set, sizeof(set),
                 "SELECT set_config('statement_timeout', '%" APR_INT64_T_FMT
                 "', true), set_config('client_connection_check_interval', "
                 "'%d', true)",
                 (apr_int64_t) apr_time_as_msec(db->g->query_timeout),
                 DB_CLIENT_CHECK_MS);
    return PQenterPipelineMode(pg)
        && PQsendQueryParams(pg, set, 0, NULL, NULL, NULL, NULL, 0)
        && PQsendQueryParams(pg, db_stmt_sql[stmt], 1, NULL, values,
                             lengths, formats, 1)
        && PQpipelineSync(pg);
}

/* One send and its results on pg; msg gets libpq's message on a failure. */
static db_outcome
db_run(PGconn *pg, int stmt, const char *param, apr_size_t param_len,
       apr_time_t deadline, PGresult **out, char *msg)
{
    static const int formats[1] = {1};
    const char *values[1] = {param};
    int         lengths[1] = {(int) param_len};
    PGresult   *res = NULL;
    int         sent, timed_out = 0;
    db_outcome  outcome = DB_FAILED;

    if (stmt == DB_PING)
        sent = PQsendQuery(pg, "SELECT 1");
    else if (db->g->prepare)
        sent = PQsendQueryPrepared(pg, db_stmt_names[stmt], 1, values,
                                   lengths, formats, 1);
    else
        sent = db_send_unprepared(pg, stmt, values, lengths, formats);
    if (sent)
        res = blog_pq_results(pg, deadline, &timed_out);
    if (PQresultStatus(res) == PGRES_TUPLES_OK) {
        *out = res;
        return DB_OK;
    }
    if (timed_out)
        return DB_TIMED_OUT;
    if (res == NULL || db_is_conn_error(pg, res)) {
        outcome = DB_CONN_LOST;
        apr_atomic_inc32(&db->gen);
    }
    blog_pq_msg(msg, res ? PQresultErrorMessage(res) : PQerrorMessage(pg));
    PQclear(res);
    return outcome;
}

/*
 * A statement on a pooled connection, retried once on a new one after a
 * lost one: *retried says so, msg holds libpq's message on a failure.
 */
static db_outcome
db_call(blog_call *call, int stmt, const char *param, apr_size_t param_len,
        PGresult **res, char *msg, int *retried)
{
    apr_time_t  deadline;
    db_outcome  outcome = DB_CONN_LOST;
    int         attempt;

    if (db->g == NULL)           /* the child's pool did not start: logged */
        return DB_NO_CONN;
    deadline = apr_time_now() + db->g->query_timeout;
    for (attempt = 0; attempt < 2 && outcome == DB_CONN_LOST; attempt++) {
        db_conn    *c = db_checkout(call, deadline);

        if (c == NULL)
            return DB_NO_CONN;
        if (stmt != DB_PING)
            blog_stat_inc(BLOG_STAT_POOL_QUERIES);
        outcome = db_run(c->pg, stmt, param, param_len, deadline, res, msg);
        if (stmt != DB_PING && outcome >= DB_TIMED_OUT)
            blog_stat_inc(outcome == DB_CONN_LOST ? BLOG_STAT_POOL_RECONNECTS
                          : outcome == DB_FAILED ? BLOG_STAT_POOL_QUERY_ERRORS
                          : BLOG_STAT_POOL_QUERY_TIMEOUTS);
        /* an SQL error leaves the connection usable; the rows outlive it */
        db_checkin(c, outcome == DB_OK || outcome == DB_FAILED);
        *retried = attempt;
    }
    return outcome;
}

/*
 * The child's connects, one at a time, for the slots requests reserved;
 * each new connection released to the first waiter.  Reservations taken
 * while the backoff runs are given up.  p: for each connect's keywords.
 */
static void *APR_THREAD_FUNC
db_opener(apr_thread_t *thread, void *p)
{
    apr_thread_mutex_lock(db->lock);
    for (;;) {
        db_conn    *c;

        while (db->to_open == 0 && !db->stopping)
            apr_thread_cond_wait(db->opener_cv, db->lock);
        if (db->stopping)
            break;
        db->to_open--;
        if (apr_time_now() < blog_backoff_next(&db->backoff)) {
            db_slot_freed();
            continue;
        }
        apr_thread_mutex_unlock(db->lock);
        c = db_open_slot(&(blog_call) {.pool = p, .s = db->s},
                         apr_time_now() + db->g->query_timeout);
        if (c != NULL)
            db_release(c, 1);
        apr_pool_clear(p);
        apr_thread_mutex_lock(db->lock);
    }
    db->nopen -= db->to_open;
    db->to_open = 0;
    apr_thread_mutex_unlock(db->lock);
    /* returned, not apr_thread_exit: see inv_main */
    (void) thread;
    return NULL;
}

/* Before the child pool's subpools go: the opener's is one. */
static apr_status_t
db_opener_stop(void *data)
{
    apr_status_t rv;

    (void) data;
    apr_thread_mutex_lock(db->lock);
    db->stopping = 1;
    apr_thread_cond_signal(db->opener_cv);
    apr_thread_mutex_unlock(db->lock);
    apr_thread_join(&rv, db->opener);
    return APR_SUCCESS;
}

static apr_status_t
db_child_exit(void *data)
{
    (void) data;
    db_close(db->idle);
    db->idle = NULL;
    db->g = NULL;
    return APR_SUCCESS;
}

/* The opener thread, its condition and its pool; a status on failure. */
static apr_status_t
db_opener_start(apr_pool_t *pchild)
{
    apr_pool_t *p;
    apr_status_t rv;

    rv = apr_thread_cond_create(&db->opener_cv, pchild);
    if (rv == APR_SUCCESS)
        rv = apr_pool_create(&p, pchild);
    if (rv == APR_SUCCESS)
        rv = apr_thread_create(&db->opener, NULL, db_opener, p, pchild);
    if (rv == APR_SUCCESS)
        apr_pool_pre_cleanup_register(pchild, NULL, db_opener_stop);
    return rv;
}

void
blog_db_child_init(apr_pool_t *pchild, server_rec *s,
                   const blog_db_settings *g, int eager)
{
    apr_time_t  deadline = apr_time_now() + g->query_timeout;
    apr_status_t rv;
    int         i;

    blog_db_hosts_child_init(pchild, s, g->conninfo);
    db = apr_pcalloc(pchild, sizeof(*db));
    rv = apr_thread_mutex_create(&db->lock, APR_THREAD_MUTEX_DEFAULT, pchild);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, BLOGLOGNO(00063)
                     "no lock for the PostgreSQL pool: this child answers "
                     "its pages 503");
        return;
    }
    db->g = g;
    db->s = s;
    apr_pool_cleanup_register(pchild, NULL, db_child_exit,
                              apr_pool_cleanup_null);
    /* BlogPoolMin now; a database that is down is retried on demand. */
    for (i = 0; eager && i < g->pool_min; i++) {
        db_conn    *c;

        db->nopen++;
        if ((c = db_open_slot(&(blog_call) {.pool = pchild, .s = s},
                              deadline)) == NULL)
            break;
        db_release(c, 1);
    }
    rv = eager ? db_opener_start(pchild) : APR_SUCCESS;
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, BLOGLOGNO(00065)
                     "no thread to open PostgreSQL connections: this child "
                     "answers its pages 503");
        db->g = NULL;
    }
}

static apr_status_t
db_clear_result(void *data)
{
    PQclear(data);
    return APR_SUCCESS;
}

apr_status_t
blog_db_page(blog_call *call, blog_stmt stmt, const char *param,
             apr_size_t param_len, PGresult **res)
{
    const char *name = db_stmt_names[stmt];
    char        msg[BLOG_PQ_MSG_MAX];
    int         retried = 0;
    apr_status_t rv = APR_EGENERAL;

    switch (db_call(call, (int) stmt, param, param_len, res, msg, &retried)) {
    case DB_OK:
        if (retried)
            blog_call_log_limited(&db->log, APLOG_WARNING, 0, call,
                                  BLOGLOGNO(00020) "%s: a pooled connection "
                                  "was lost, the page retried on a new one: "
                                  "%s", name, msg);
        blog_call_outage_end(&db->log, call,
                             BLOGLOGNO(00021) "PostgreSQL reachable");
        apr_pool_cleanup_register(call->pool, *res, db_clear_result,
                                  apr_pool_cleanup_null);
        return APR_SUCCESS;
    case DB_TIMED_OUT:
        /* dropped, not cancelled: see the top of this file */
        blog_call_log_limited(&db->log, APLOG_ERR, APR_TIMEUP, call,
                              BLOGLOGNO(00018) "%s timed out after "
                              "BlogQueryTimeout; dropping its connection",
                              name);
        break;
    case DB_FAILED:
        blog_call_log_limited(&db->log, APLOG_ERR, 0, call,
                              BLOGLOGNO(00019) "%s failed: %s", name, msg);
        /* PostgreSQL answered: no outage, and no "reachable again" */
        return rv;
    case DB_CONN_LOST:
        /* lost on the retry's new connection too: a first loss is retried,
         * and a retry that cannot connect is DB_NO_CONN */
        blog_call_log_limited(&db->log, APLOG_ERR, 0, call,
                              BLOGLOGNO(00022) "%s failed: connection lost, "
                              "on a new connection too: %s", name, msg);
        rv = APR_ECONNRESET;
        break;
    case DB_NO_CONN:
        rv = APR_EAGAIN;
        break;
    }
    blog_outage_begin(&db->log);
    return rv;
}

int
blog_db_ping(blog_call *call, char *why, apr_size_t why_len)
{
    PGresult   *res = NULL;
    char        msg[BLOG_PQ_MSG_MAX];
    int         retried;

    if (db->g == NULL) {
        apr_cpystrn(why, "PostgreSQL: the pool is not set up", why_len);
        return -1;
    }
    switch (db_call(call, DB_PING, NULL, 0, &res, msg, &retried)) {
    case DB_OK:
        PQclear(res);
        return 0;
    case DB_NO_CONN:
        apr_thread_mutex_lock(db->lock);
        apr_snprintf(why, why_len, "PostgreSQL: %s%s", db->err[0]
                     ? "cannot connect: " : "no free connection within "
                     "BlogPoolAcquireTimeout", db->err);
        apr_thread_mutex_unlock(db->lock);
        return -1;
    case DB_TIMED_OUT:
        apr_cpystrn(msg, "no answer within BlogQueryTimeout", sizeof(msg));
        break;
    default:
        break;
    }
    apr_snprintf(why, why_len, "PostgreSQL: %s", msg);
    return -1;
}

const char *
blog_db_conninfo_error(apr_pool_t *p, const char *conninfo)
{
    char       *msg = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &msg);
    char        buf[BLOG_PQ_MSG_MAX];

    if (opts != NULL) {
        PQconninfoFree(opts);
        return NULL;
    }
    blog_pq_msg(buf, msg);
    PQfreemem(msg);
    return apr_pstrdup(p, buf);
}

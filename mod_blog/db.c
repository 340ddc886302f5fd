/*
 * db.c - per-child libpq pool and the single round trip of a page.
 *
 * A pool per child, created in child_init (never in the parent, so no
 * connection crosses a fork), with mod_dbd's four knobs (min, keep, max,
 * exptime).  It is not an apr_reslist, as mod_dbd's is, because a reslist
 * runs its constructor with the list's lock held: one connect to a
 * PostgreSQL that does not answer would stall every thread of the child
 * that acquires or releases a connection.  Here a thread that needs a new
 * connection reserves a slot under the lock and connects without it.
 *
 * Nothing waits without a deadline.  Each page call has one, from
 * BlogQueryTimeout, and everything on its way obeys it: the wait for a free
 * connection (also bounded by BlogPoolAcquireTimeout), the connect and the
 * set-up of a new connection (libpq's non-blocking API, since connect_timeout
 * only bounds libpq's blocking connect), and the query.  A query past its
 * deadline is not cancelled with PQcancel, which in libpq 15 connects to the
 * postmaster and waits for its answer with no timeout (a frozen postmaster
 * holds the caller for as long as it is frozen); the connection is dropped
 * instead, and the server ends the statement by itself:
 * client_connection_check_interval notices the closed socket within a
 * second, and statement_timeout bounds it anyway.
 *
 * A checkout costs no round trip: dead connections are found by the query
 * itself, and a read that failed on one is retried once on a connection
 * opened after the failure.  Reconnects back off per child, so that while
 * PostgreSQL is down requests get their 503 at once instead of each waiting
 * for a connect.
 */
#include "db.h"
#include "dbscale.h"
#include "pq.h"

#include "ratelog.h"
#include "stats.h"
#include "wait.h"

#include "http_log.h"
#include "apr_atomic.h"
#include "apr_strings.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

APLOG_USE_MODULE(blog);

/* How often the server looks for a client that went away mid-statement. */
#define DB_CLIENT_CHECK_MS  1000

typedef struct db_conn
{
    PGconn     *pg;
    apr_uint32_t gen;           /* db_gen when it was opened */
    apr_time_t  idle_since;
    struct db_conn *next;       /* in the idle list */
} db_conn;

typedef struct db_handle
{
    db_conn    *c;
    int         bad;            /* must not go back to the pool */
} db_handle;

typedef enum db_outcome
{
    DB_OK,
    DB_CONN_LOST,               /* connection-class failure: retry once */
    DB_FAILED                   /* any other failure: no retry */
} db_outcome;

/* The page statements, in blog_stmt order: their names and their SQL. */
static const char *const db_stmt_names[] = {
    "blog_index", "blog_post", "blog_tag"
};
static const char *const db_stmt_sql[] = {
    "SELECT * FROM blog.index_page($1::integer)",
    "SELECT * FROM blog.post_page($1::text)",
    "SELECT * FROM blog.tag_page($1::text)"
};
/* Keywords a connection may carry: ours and BlogDatabase's. */
#define DB_MAX_PARAMS 64

static const blog_db_settings *db_g;
static server_rec *db_server;

/*
 * A thread waiting for a connection.  Waiters queue in arrival order and a
 * released connection goes straight to the one that waited longest: with a
 * condition variable any waiter woke, and under load some waited out the
 * whole BlogPoolAcquireTimeout while later ones were served (the p99).
 */
typedef struct db_waiter
{
    pthread_cond_t cv;
    db_conn    *given;          /* handed over by db_release */
    int         woken;          /* a slot freed: look again */
    struct db_waiter *next;
} db_waiter;

/* The pool: idle connections most recently used first. */
static pthread_mutex_t db_lock = PTHREAD_MUTEX_INITIALIZER;
static db_waiter *db_waiters;
static db_conn *db_idle;
static int  db_nidle;
static int  db_nopen;           /* idle + in use + being opened */

static blog_backoff db_backoff;
/* Bumped on every lost connection: older pooled connections are suspect. */
static apr_uint32_t db_gen;

/* One budget for every warning about PostgreSQL. */
static blog_ratelog db_log;
static blog_outage db_outage;

/* Why the last connect failed, for the health check; "" after a success. */
static pthread_mutex_t db_err_lock = PTHREAD_MUTEX_INITIALIZER;
static char db_err[BLOG_PQ_MSG_MAX];

static void
db_note_error(const char *msg)
{
    pthread_mutex_lock(&db_err_lock);
    apr_cpystrn(db_err, msg ? msg : "", sizeof(db_err));
    pthread_mutex_unlock(&db_err_lock);
}

/* Under db_lock. */
static void
db_note_connect(int succeeded)
{
    if (succeeded)
        blog_backoff_reset(&db_backoff);
    else
        blog_backoff_fail(&db_backoff);
}

/* Connect without blocking past the deadline. */
static PGconn *
db_connect(apr_time_t deadline)
{
    const char *keys[DB_MAX_PARAMS + 1];
    const char *vals[DB_MAX_PARAMS + 1];
    char        hosts[1024];
    PGconn     *pg;
    char        msg[BLOG_PQ_MSG_MAX];
    int         timed_out, n;

    /* BlogDatabase's keywords last: they win over ours. */
    keys[0] = "client_encoding";
    vals[0] = "UTF8";
    keys[1] = "fallback_application_name";
    vals[1] = "mod_blog";
    n = 2 + blog_dbscale_params(keys + 2, vals + 2, DB_MAX_PARAMS - 2,
                                hosts, sizeof(hosts));
    keys[n] = vals[n] = NULL;
    pg = blog_pq_connect(keys, vals, 1, deadline, msg, &timed_out);
    if (pg == NULL) {
        blog_log_limited(&db_log, APLOG_ERR, timed_out ? APR_TIMEUP : 0,
                         db_server, timed_out
                         ? BLOGLOGNO(00014) "cannot connect to PostgreSQL: %s"
                         : BLOGLOGNO(00015) "cannot connect to PostgreSQL: %s",
                         msg);
        db_note_error(msg);
    }
    return pg;
}

/*
 * A new connection, set up in one round trip: the session's timeouts and
 * the page statements (SQL-level PREPARE makes statements that the
 * extended protocol can execute by name).
 */
static PGconn *
db_open(apr_time_t deadline)
{
    char        setup[640];
    PGconn     *pg = db_connect(deadline);
    PGresult   *res;
    int         timed_out;
    char        msg[BLOG_PQ_MSG_MAX];

    if (pg == NULL && blog_dbscale_several())
        pg = db_connect(deadline);      /* the hosts in another order */
    if (pg == NULL)
        return NULL;
    if (!db_g->prepare)
        return pg;              /* nothing a transaction pooler would lose */
    apr_snprintf(setup, sizeof(setup),
                 "SET statement_timeout = %" APR_INT64_T_FMT ";"
                 "SET client_connection_check_interval = %d;"
                 /* a function call's plan never depends on its argument */
                 "SET plan_cache_mode = force_generic_plan;"
                 /* each parameter's type is its cast in the SQL */
                 "PREPARE %s AS %s;PREPARE %s AS %s;PREPARE %s AS %s",
                 (apr_int64_t) apr_time_as_msec(db_g->query_timeout),
                 DB_CLIENT_CHECK_MS, db_stmt_names[0], db_stmt_sql[0],
                 db_stmt_names[1], db_stmt_sql[1], db_stmt_names[2],
                 db_stmt_sql[2]);
    if (!PQsendQuery(pg, setup)) {
        res = NULL;
        timed_out = 0;
    }
    else
        res = blog_pq_results(pg, deadline, &timed_out);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        blog_log_limited(&db_log, APLOG_ERR, 0, db_server,
                         BLOGLOGNO(00016)
                         "cannot prepare the page statements: %s",
                         timed_out ? "no answer in time"
                         : blog_pq_msg(msg, res ? PQresultErrorMessage(res)
                                  : PQerrorMessage(pg)));
        PQclear(res);
        PQfinish(pg);
        return NULL;
    }
    PQclear(res);
    return pg;
}

/* Under db_lock: the first waiter, taken off the queue, or NULL. */
static db_waiter *
db_first_waiter(void)
{
    db_waiter  *w = db_waiters;

    if (w != NULL)
        db_waiters = w->next;
    return w;
}

/* Under db_lock: a slot freed; the first waiter may open a connection. */
static void
db_slot_freed(void)
{
    db_waiter  *w;

    db_nopen--;
    w = db_first_waiter();
    if (w != NULL) {
        w->woken = 1;
        pthread_cond_signal(&w->cv);
    }
}

/* Open a connection for a slot reserved in db_nopen; NULL on failure. */
static db_conn *
db_open_slot(apr_time_t deadline)
{
    PGconn     *pg = db_open(deadline);
    db_conn    *c = pg ? malloc(sizeof(*c)) : NULL;

    if (pg != NULL && c == NULL)
        PQfinish(pg);
    pthread_mutex_lock(&db_lock);
    db_note_connect(c != NULL);
    if (c == NULL)
        db_slot_freed();
    pthread_mutex_unlock(&db_lock);
    blog_stat_inc(c ? BLOG_STAT_POOL_CONNECTS : BLOG_STAT_POOL_CONNECT_FAILURES);
    if (c == NULL)
        return NULL;
    blog_stat_inc(BLOG_STAT_POOL_OPEN);
    db_note_error(NULL);
    c->pg = pg;
    c->gen = apr_atomic_read32(&db_gen);
    c->next = NULL;
    return c;
}

static void
db_close(db_conn *c)
{
    blog_stat_add(BLOG_STAT_POOL_OPEN, -1);
    PQfinish(c->pg);
    free(c);
}

/* Under db_lock: take the idle connections above Keep that expired. */
static db_conn *
db_take_expired(apr_time_t now)
{
    db_conn   **pp = &db_idle;
    db_conn    *expired = NULL;
    int         kept = 0;

    while (*pp != NULL) {
        db_conn    *c = *pp;

        if (++kept > db_g->pool_keep
            && now - c->idle_since > db_g->pool_exptime) {
            *pp = c->next;
            c->next = expired;
            expired = c;
            db_nidle--;
            db_nopen--;
        }
        else
            pp = &c->next;
    }
    return expired;
}

static void
db_release(db_conn *c, int reusable)
{
    db_conn    *expired;
    db_waiter  *w;

    pthread_mutex_lock(&db_lock);
    if (!reusable)
        db_slot_freed();
    else if ((w = db_first_waiter()) != NULL) {
        w->given = c;
        pthread_cond_signal(&w->cv);
    }
    else {
        c->idle_since = apr_time_now();
        c->next = db_idle;
        db_idle = c;
        db_nidle++;
    }
    expired = db_take_expired(apr_time_now());
    pthread_mutex_unlock(&db_lock);
    if (!reusable)
        db_close(c);
    while (expired != NULL) {
        db_conn    *next = expired->next;

        db_close(expired);
        expired = next;
    }
}

static apr_status_t
db_release_handle(void *data)
{
    db_handle  *h = data;

    if (h->c == NULL)
        return APR_SUCCESS;
    blog_stat_add(BLOG_STAT_POOL_BUSY, -1);
    db_release(h->c, !h->bad && PQstatus(h->c->pg) == CONNECTION_OK
               && PQtransactionStatus(h->c->pg) == PQTRANS_IDLE
               && !blog_dbscale_retire(h->c->pg));
    h->c = NULL;
    return APR_SUCCESS;
}

/*
 * A connection for one page call: an idle one (dropping those opened
 * before the last lost one), else a new one when a slot is free and no
 * backoff runs, else wait for one to be released.  NULL after the
 * deadline, or at once while backing off with nothing to wait for.
 */
/* Under db_lock: take the newest idle connection that is not stale. */
static db_conn *
db_take_idle(db_conn **stale)
{
    while (db_idle != NULL) {
        db_conn    *c = db_idle;

        db_idle = c->next;
        db_nidle--;
        if (c->gen == apr_atomic_read32(&db_gen))
            return c;
        c->next = *stale;
        *stale = c;
        db_nopen--;
    }
    return NULL;
}

/*
 * Under db_lock: queue up and wait until a connection is handed over, a
 * slot frees, or wait_until.  The connection handed over, or NULL.
 */
static db_conn *
db_wait_turn(apr_time_t wait_until)
{
    db_waiter   w;
    db_waiter **pp;
    struct timespec ts;

    pthread_cond_init(&w.cv, NULL);
    w.given = NULL;
    w.woken = 0;
    w.next = NULL;
    for (pp = &db_waiters; *pp != NULL; pp = &(*pp)->next)
        ;
    *pp = &w;
    ts.tv_sec = (time_t) apr_time_sec(wait_until);
    ts.tv_nsec = (long) apr_time_usec(wait_until) * 1000;
    while (w.given == NULL && !w.woken
           && pthread_cond_timedwait(&w.cv, &db_lock, &ts) != ETIMEDOUT)
        ;
    /* Timed out: still in the queue, unless handed something just now. */
    if (w.given == NULL && !w.woken)
        for (pp = &db_waiters; *pp != NULL; pp = &(*pp)->next)
            if (*pp == &w) {
                *pp = w.next;
                break;
            }
    pthread_cond_destroy(&w.cv);
    return w.given;
}

/*
 * A connection for one page call: an idle one (dropping those opened
 * before the last lost one), else a new one when a slot is free and no
 * backoff runs, else one handed over by a release, in turn.  NULL after
 * the deadline, or at once while backing off with nothing to wait for.
 */
static db_conn *
db_checkout(request_rec *r, apr_time_t deadline)
{
    apr_time_t  wait_until = apr_time_now() + db_g->acquire_timeout;
    db_conn    *stale = NULL;
    db_conn    *c = NULL;
    int         timed_out = 0;

    if (wait_until > deadline)
        wait_until = deadline;
    pthread_mutex_lock(&db_lock);
    while (c == NULL && !timed_out) {
        apr_time_t  now;

        if ((c = db_take_idle(&stale)) != NULL)
            break;
        now = apr_time_now();
        /* Opening one is part of acquiring it: the same bound. */
        if (db_nopen < db_g->pool_max && now >= blog_backoff_next(&db_backoff)) {
            db_nopen++;
            pthread_mutex_unlock(&db_lock);
            c = db_open_slot(wait_until);
            goto done;
        }
        if (db_nopen == 0)
            break;
        timed_out = now >= wait_until;
        if (!timed_out)
            blog_stat_inc(BLOG_STAT_POOL_WAITS);
        if (!timed_out && (c = db_wait_turn(wait_until)) != NULL
            && c->gen != apr_atomic_read32(&db_gen)) {
            c->next = stale;
            stale = c;
            db_nopen--;
            c = NULL;
        }
    }
    pthread_mutex_unlock(&db_lock);
    if (c == NULL && timed_out)
        blog_stat_inc(BLOG_STAT_POOL_ACQUIRE_TIMEOUTS);
    if (c == NULL && timed_out)
        blog_log_limited(&db_log, APLOG_ERR, APR_TIMEUP, r->server,
                         BLOGLOGNO(00017)
                         "no free PostgreSQL connection within "
                         "BlogPoolAcquireTimeout");
  done:
    while (stale != NULL) {
        db_conn    *next = stale->next;

        db_close(stale);
        stale = next;
    }
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
    if (state == NULL)
        return 0;
    return (state[0] == '0' && state[1] == '8')
        || strcmp(state, "57P01") == 0
        || strcmp(state, "57P02") == 0
        || strcmp(state, "57P03") == 0;
}

/*
 * A lost connection is not logged here but by the caller, which knows
 * whether the retry served the page (a connection lost, not an outage) or
 * could not connect either (the outage, logged once, by db_connect, in its
 * own words): *lost gets libpq's message.
 */
static db_outcome
db_run(request_rec *r, db_handle *h, blog_stmt stmt, const char *param,
       apr_size_t param_len, apr_time_t deadline, PGresult **out,
       char *lost)
{
    PGconn     *pg = h->c->pg;
    const char *values[1];
    int         lengths[1];
    static const int formats[1] = {1};
    PGresult   *res = NULL;
    int         timed_out = 0;
    db_outcome  outcome;
    char        msg[BLOG_PQ_MSG_MAX];

    values[0] = param;
    lengths[0] = (int) param_len;
    blog_stat_inc(BLOG_STAT_POOL_QUERIES);
    if (blog_dbscale_send(pg, db_stmt_names[stmt], db_stmt_sql[stmt], values,
                          lengths, formats))
        res = blog_pq_results(pg, deadline, &timed_out);
    if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK) {
        *out = res;
        return DB_OK;
    }
    /* Dropped, not cancelled: see the top of this file. */
    if (timed_out) {
        blog_stat_inc(BLOG_STAT_POOL_QUERY_TIMEOUTS);
        blog_log_limited(&db_log, APLOG_ERR, APR_TIMEUP, r->server,
                         BLOGLOGNO(00018)
                         "%s timed out after BlogQueryTimeout; "
                         "dropping its connection", db_stmt_names[stmt]);
        h->bad = 1;
        return DB_FAILED;
    }
    outcome = res == NULL || db_is_conn_error(pg, res) ? DB_CONN_LOST
        : DB_FAILED;
    blog_stat_inc(outcome == DB_CONN_LOST ? BLOG_STAT_POOL_RECONNECTS
                  : BLOG_STAT_POOL_QUERY_ERRORS);
    blog_pq_msg(msg, res ? PQresultErrorMessage(res) : PQerrorMessage(pg));
    if (outcome == DB_CONN_LOST) {
        apr_cpystrn(lost, msg, BLOG_PQ_MSG_MAX);
        h->bad = 1;
    }
    else
        blog_log_limited(&db_log, APLOG_ERR, 0, r->server,
                         BLOGLOGNO(00019)
                         "%s failed: %s", db_stmt_names[stmt], msg);
    PQclear(res);
    return outcome;
}

static apr_status_t
db_clear_result(void *data)
{
    PQclear(data);
    return APR_SUCCESS;
}

static apr_status_t
db_child_exit(void *data)
{
    (void) data;
    while (db_idle != NULL) {
        db_conn    *next = db_idle->next;

        db_close(db_idle);
        db_idle = next;
    }
    return APR_SUCCESS;
}

void
blog_db_child_init(apr_pool_t *pchild, server_rec *s, const blog_db_settings *g,
                   int eager)
{
    apr_time_t  deadline;
    int         i;

    db_g = g;
    db_server = s;
    apr_pool_cleanup_register(pchild, NULL, db_child_exit,
                              apr_pool_cleanup_null);
    if (!eager)
        return;
    /* BlogPoolMin now; a database that is down is retried on demand. */
    deadline = apr_time_now() + g->query_timeout;
    for (i = 0; i < g->pool_min; i++) {
        db_conn    *c;

        db_nopen++;
        c = db_open_slot(deadline);
        if (c == NULL)
            break;
        db_release(c, 1);
    }
}

/* A request that gets no page starts an outage, if none runs yet. */
static apr_status_t
db_fail(apr_status_t rv)
{
    blog_outage_begin(&db_outage);
    return rv;
}

apr_status_t
blog_db_page(request_rec *r, blog_stmt stmt, const char *param,
             apr_size_t param_len, PGresult **res)
{
    apr_time_t  deadline = apr_time_now() + db_g->query_timeout;
    int         attempt;
    char        lost[BLOG_PQ_MSG_MAX];

    for (attempt = 0; attempt < 2; attempt++) {
        db_handle  *h = apr_palloc(r->pool, sizeof(*h));
        db_outcome  outcome;

        h->bad = 0;
        h->c = db_checkout(r, deadline);
        if (h->c == NULL)
            return db_fail(APR_EAGAIN);
        apr_pool_cleanup_register(r->pool, h, db_release_handle,
                                  apr_pool_cleanup_null);
        outcome = db_run(r, h, stmt, param, param_len, deadline, res, lost);
        if (outcome == DB_CONN_LOST)
            apr_atomic_inc32(&db_gen);
        /* The rows outlive the connection: give it back before rendering. */
        apr_pool_cleanup_run(r->pool, h, db_release_handle);
        if (outcome == DB_OK) {
            if (attempt > 0)
                blog_log_limited(&db_log, APLOG_WARNING, 0, r->server,
                                 BLOGLOGNO(00020)
                                 "%s: a pooled connection was lost, "
                                 "the page retried on a new one: %s",
                                 db_stmt_names[stmt], lost);
            blog_outage_end(&db_outage, r->server, BLOGLOGNO(00021)
                                                   "PostgreSQL reachable");
            apr_pool_cleanup_register(r->pool, *res, db_clear_result,
                                      apr_pool_cleanup_null);
            return APR_SUCCESS;
        }
        if (outcome != DB_CONN_LOST)
            return db_fail(APR_EGENERAL);
    }
    blog_log_limited(&db_log, APLOG_ERR, 0, r->server,
                     BLOGLOGNO(00022)
                     "%s failed: connection lost, on a new connection "
                     "too: %s", db_stmt_names[stmt], lost);
    return db_fail(APR_ECONNRESET);
}

/*
 * For the health check (health.c): a pooled connection answers a trivial
 * statement within the page deadline, retried once on a fresh connection
 * after a lost one, as a page is.  0, or -1 with the reason in why.
 */
int
blog_db_ping(request_rec *r, char *why, apr_size_t why_len)
{
    apr_time_t  deadline;
    int         attempt;
    char        msg[BLOG_PQ_MSG_MAX];

    if (db_g == NULL) {
        apr_cpystrn(why, "PostgreSQL: the pool is not set up", why_len);
        return -1;
    }
    deadline = apr_time_now() + db_g->query_timeout;
    for (attempt = 0; attempt < 2; attempt++) {
        db_handle  *h = apr_palloc(r->pool, sizeof(*h));
        PGresult   *res = NULL;
        int         timed_out = 0;
        int         lost;

        h->bad = 0;
        h->c = db_checkout(r, deadline);
        if (h->c == NULL) {
            pthread_mutex_lock(&db_err_lock);
            apr_snprintf(why, why_len, "PostgreSQL: %s%s", db_err[0]
                         ? "cannot connect: " : "no free connection within "
                         "BlogPoolAcquireTimeout", db_err);
            pthread_mutex_unlock(&db_err_lock);
            return -1;
        }
        apr_pool_cleanup_register(r->pool, h, db_release_handle,
                                  apr_pool_cleanup_null);
        if (PQsendQuery(h->c->pg, "SELECT 1"))
            res = blog_pq_results(h->c->pg, deadline, &timed_out);
        if (PQresultStatus(res) == PGRES_TUPLES_OK) {
            PQclear(res);
            apr_pool_cleanup_run(r->pool, h, db_release_handle);
            return 0;
        }
        lost = !timed_out && (res == NULL || db_is_conn_error(h->c->pg, res));
        if (timed_out)
            apr_cpystrn(why, "PostgreSQL: no answer within BlogQueryTimeout",
                        why_len);
        else
            apr_snprintf(why, why_len, "PostgreSQL: %s",
                         blog_pq_msg(msg, res ? PQresultErrorMessage(res)
                                : PQerrorMessage(h->c->pg)));
        PQclear(res);
        h->bad = 1;
        apr_pool_cleanup_run(r->pool, h, db_release_handle);
        if (!lost)
            return -1;
        apr_atomic_inc32(&db_gen);
    }
    return -1;
}

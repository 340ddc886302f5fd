/*
 * db.c - per-child libpq pool and the single round trip of a page.
 *
 * One apr_reslist per child, as mod_dbd keeps one: created in child_init
 * (never in the parent, so no connection crosses a fork), or lazily by the
 * first request after a start with PostgreSQL down.  A checkout costs no
 * round trip: dead connections are found by the query itself, and a read
 * that failed on one is retried once on a connection opened after the
 * failure.  Reconnects back off per child, so that while PostgreSQL is down
 * requests get their 503 at once instead of each waiting for a connect.
 */
#include "db.h"

#include "http_log.h"
#include "apr_atomic.h"
#include "apr_reslist.h"
#include "apr_strings.h"
#include "apr_thread_mutex.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

APLOG_USE_MODULE(blog);

#define DB_BACKOFF_FIRST    apr_time_from_msec(50)
#define DB_BACKOFF_MAX      apr_time_from_sec(1)

typedef struct db_conn
{
    PGconn     *pg;
    apr_uint32_t gen;           /* db_gen when it was opened */
} db_conn;

typedef struct db_handle
{
    apr_reslist_t *rl;
    db_conn    *c;
    int         bad;            /* must not go back to the pool */
} db_handle;

typedef enum db_outcome
{
    DB_OK,
    DB_CONN_LOST,               /* connection-class failure: retry once */
    DB_FAILED                   /* any other failure: no retry */
} db_outcome;

static const char *const db_stmt_names[] = {
    "blog_index", "blog_post", "blog_tag"
};

static const blog_settings *db_g;
static server_rec *db_server;
static apr_pool_t *db_setup_pool;
static apr_thread_mutex_t *db_setup_lock;
static apr_thread_mutex_t *db_backoff_lock;
static apr_reslist_t *db_pool;
static apr_time_t db_next_try;
static apr_interval_time_t db_backoff;
/* Bumped on every lost connection: older pooled connections are suspect. */
static apr_uint32_t db_gen;

static int
db_may_try(void)
{
    int         ok;

    apr_thread_mutex_lock(db_backoff_lock);
    ok = apr_time_now() >= db_next_try;
    apr_thread_mutex_unlock(db_backoff_lock);
    return ok;
}

static void
db_note_connect(int succeeded)
{
    apr_thread_mutex_lock(db_backoff_lock);
    if (succeeded) {
        db_backoff = 0;
        db_next_try = 0;
    }
    else {
        db_backoff = db_backoff ? db_backoff * 2 : DB_BACKOFF_FIRST;
        if (db_backoff > DB_BACKOFF_MAX)
            db_backoff = DB_BACKOFF_MAX;
        db_next_try = apr_time_now() + db_backoff;
    }
    apr_thread_mutex_unlock(db_backoff_lock);
}

/* libpq messages end with a newline, which log lines must not carry. */
static int
db_msg_len(const char *msg)
{
    size_t      n = strlen(msg);

    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        n--;
    return (int) n;
}

static PGconn *
db_open(void)
{
    static const char *const keys[] = {
        "connect_timeout", "client_encoding", "fallback_application_name",
        "dbname", NULL
    };
    const char *vals[5];
    char        setup[512];
    PGconn     *pg;
    PGresult   *res;

    /* dbname last: the user's conninfo is expanded there and wins. */
    vals[0] = "2";
    vals[1] = "UTF8";
    vals[2] = "mod_blog";
    vals[3] = db_g->conninfo;
    vals[4] = NULL;
    pg = PQconnectdbParams(keys, vals, 1);
    if (pg == NULL)
        return NULL;
    if (PQstatus(pg) != CONNECTION_OK) {
        const char *msg = PQerrorMessage(pg);

        ap_log_error(APLOG_MARK, APLOG_ERR, 0, db_server,
                     "blog: cannot connect to PostgreSQL: %.*s",
                     db_msg_len(msg), msg);
        PQfinish(pg);
        return NULL;
    }

    /*
     * One round trip per connection: SQL-level PREPARE makes statements
     * that the extended protocol can execute by name.
     */
    apr_snprintf(setup, sizeof(setup),
                 "SET statement_timeout = %" APR_INT64_T_FMT ";"
                 /* a function call's plan never depends on its argument */
                 "SET plan_cache_mode = force_generic_plan;"
                 "PREPARE blog_index(integer) AS"
                 " SELECT * FROM blog.index_page($1);"
                 "PREPARE blog_post(text) AS"
                 " SELECT * FROM blog.post_page($1);"
                 "PREPARE blog_tag(text) AS"
                 " SELECT * FROM blog.tag_page($1)",
                 (apr_int64_t) apr_time_as_msec(db_g->query_timeout));
    res = PQexec(pg, setup);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        const char *msg = PQerrorMessage(pg);

        ap_log_error(APLOG_MARK, APLOG_ERR, 0, db_server,
                     "blog: cannot prepare the page statements: %.*s",
                     db_msg_len(msg), msg);
        PQclear(res);
        PQfinish(pg);
        return NULL;
    }
    PQclear(res);
    return pg;
}

static apr_status_t
db_construct(void **resource, void *params, apr_pool_t *pool)
{
    db_conn    *c;
    PGconn     *pg;

    (void) params;
    (void) pool;
    /* Backing off: the failed connect was logged already. */
    if (!db_may_try())
        return APR_ECONNABORTED;
    pg = db_open();
    db_note_connect(pg != NULL);
    if (pg == NULL)
        return APR_ECONNREFUSED;
    /* malloc, not the reslist's pool, which would grow with every reconnect */
    c = malloc(sizeof(*c));
    if (c == NULL) {
        PQfinish(pg);
        return APR_ENOMEM;
    }
    c->pg = pg;
    c->gen = apr_atomic_read32(&db_gen);
    *resource = c;
    return APR_SUCCESS;
}

static apr_status_t
db_destruct(void *resource, void *params, apr_pool_t *pool)
{
    db_conn    *c = resource;

    (void) params;
    (void) pool;
    PQfinish(c->pg);
    free(c);
    return APR_SUCCESS;
}

static apr_status_t
db_create_pool(apr_reslist_t **out)
{
    apr_reslist_t *rl;
    apr_status_t rv;

    rv = apr_reslist_create(&rl, db_g->pool_min, db_g->pool_keep,
                            db_g->pool_max, db_g->pool_exptime,
                            db_construct, db_destruct, NULL, db_setup_pool);
    if (rv != APR_SUCCESS)
        return rv;
    apr_reslist_timeout_set(rl, db_g->acquire_timeout);
    apr_reslist_cleanup_order_set(rl, APR_RESLIST_CLEANUP_FIRST);
    *out = rl;
    return APR_SUCCESS;
}

void
blog_db_child_init(apr_pool_t *pchild, server_rec *s, const blog_settings *g,
                   int eager)
{
    apr_reslist_t *rl = NULL;
    apr_status_t rv;

    db_g = g;
    db_server = s;
    apr_pool_create(&db_setup_pool, pchild);
    apr_thread_mutex_create(&db_setup_lock, APR_THREAD_MUTEX_DEFAULT, pchild);
    apr_thread_mutex_create(&db_backoff_lock, APR_THREAD_MUTEX_DEFAULT,
                            pchild);
    if (!eager)
        return;
    rv = db_create_pool(&rl);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s,
                     "blog: PostgreSQL pool not ready at child start; "
                     "retrying on demand");
        return;
    }
    __atomic_store_n(&db_pool, rl, __ATOMIC_RELEASE);
}

static apr_reslist_t *
db_get_pool(request_rec *r)
{
    apr_reslist_t *rl = __atomic_load_n(&db_pool, __ATOMIC_ACQUIRE);
    apr_status_t rv = APR_SUCCESS;

    if (rl != NULL)
        return rl;
    if (!db_may_try())
        return NULL;
    apr_thread_mutex_lock(db_setup_lock);
    rl = db_pool;
    if (rl == NULL) {
        rv = db_create_pool(&rl);
        if (rv == APR_SUCCESS)
            __atomic_store_n(&db_pool, rl, __ATOMIC_RELEASE);
    }
    apr_thread_mutex_unlock(db_setup_lock);
    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                      "blog: PostgreSQL pool unavailable");
        return NULL;
    }
    return rl;
}

static apr_status_t
db_release(void *data)
{
    db_handle  *h = data;

    if (h->c == NULL)
        return APR_SUCCESS;
    if (h->bad || PQstatus(h->c->pg) != CONNECTION_OK
        || PQtransactionStatus(h->c->pg) != PQTRANS_IDLE)
        apr_reslist_invalidate(h->rl, h->c);
    else
        apr_reslist_release(h->rl, h->c);
    h->c = NULL;
    return APR_SUCCESS;
}

static apr_status_t
db_clear_result(void *data)
{
    PQclear(data);
    return APR_SUCCESS;
}

/* A pooled connection opened before the last lost one is dropped unused. */
static db_handle *
db_acquire(request_rec *r, apr_reslist_t *rl)
{
    db_handle  *h = apr_palloc(r->pool, sizeof(*h));
    apr_status_t rv;
    void       *res;
    int         i;

    h->rl = rl;
    h->c = NULL;
    h->bad = 0;
    for (i = 0; i <= db_g->pool_max; i++) {
        rv = apr_reslist_acquire(rl, &res);
        if (rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, rv == APR_ECONNABORTED ? APLOG_DEBUG
                          : APLOG_ERR, rv, r,
                          "blog: no PostgreSQL connection available");
            return NULL;
        }
        if (((db_conn *) res)->gen == apr_atomic_read32(&db_gen)) {
            h->c = res;
            apr_pool_cleanup_register(r->pool, h, db_release,
                                      apr_pool_cleanup_null);
            return h;
        }
        apr_reslist_invalidate(rl, res);
    }
    return NULL;
}

static void
db_cancel(PGconn *pg)
{
    PGcancel   *cn = PQgetCancel(pg);
    char        buf[256];

    if (cn != NULL) {
        PQcancel(cn, buf, sizeof(buf));
        PQfreeCancel(cn);
    }
}

/* Wait for the socket to be readable; -1 once the deadline has passed. */
static int
db_wait(PGconn *pg, apr_time_t deadline)
{
    struct pollfd pfd;

    pfd.fd = PQsocket(pg);
    pfd.events = POLLIN;
    for (;;) {
        apr_time_t  now = apr_time_now();
        int         n;

        if (now >= deadline)
            return -1;
        pfd.revents = 0;
        n = poll(&pfd, 1, (int) ((deadline - now + 999) / 1000));
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
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

static db_outcome
db_run(request_rec *r, db_handle *h, blog_stmt stmt, const char *param,
       apr_size_t param_len, apr_time_t deadline, PGresult **out)
{
    PGconn     *pg = h->c->pg;
    const char *values[1];
    int         lengths[1];
    static const int formats[1] = {1};
    PGresult   *res = NULL;
    PGresult   *next;
    db_outcome  outcome;

    values[0] = param;
    lengths[0] = (int) param_len;
    if (!PQsendQueryPrepared(pg, db_stmt_names[stmt], 1, values, lengths,
                             formats, 1)) {
        const char *msg = PQerrorMessage(pg);

        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      "blog: cannot send %s: %.*s", db_stmt_names[stmt],
                      db_msg_len(msg), msg);
        h->bad = 1;
        return DB_CONN_LOST;
    }
    for (;;) {
        while (PQisBusy(pg)) {
            if (db_wait(pg, deadline) != 0) {
                ap_log_rerror(APLOG_MARK, APLOG_ERR, APR_TIMEUP, r,
                              "blog: %s timed out; cancelling",
                              db_stmt_names[stmt]);
                db_cancel(pg);
                h->bad = 1;
                PQclear(res);
                return DB_FAILED;
            }
            if (!PQconsumeInput(pg)) {
                h->bad = 1;
                break;
            }
        }
        if (h->bad)
            break;
        next = PQgetResult(pg);
        if (next == NULL)
            break;
        if (res == NULL)
            res = next;
        else
            PQclear(next);
    }

    if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK && !h->bad) {
        *out = res;
        return DB_OK;
    }
    outcome = db_is_conn_error(pg, res) || h->bad ? DB_CONN_LOST : DB_FAILED;
    {
        const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(pg);

        ap_log_rerror(APLOG_MARK, outcome == DB_CONN_LOST ? APLOG_WARNING
                      : APLOG_ERR, 0, r, "blog: %s failed%s: %.*s",
                      db_stmt_names[stmt], outcome == DB_CONN_LOST
                      ? " (connection lost)" : "", db_msg_len(msg), msg);
    }
    if (outcome == DB_CONN_LOST)
        h->bad = 1;
    PQclear(res);
    return outcome;
}

apr_status_t
blog_db_page(request_rec *r, blog_stmt stmt, const char *param,
             apr_size_t param_len, PGresult **res)
{
    apr_time_t  deadline = apr_time_now() + db_g->query_timeout;
    apr_reslist_t *rl;
    int         attempt;

    for (attempt = 0; attempt < 2; attempt++) {
        db_handle  *h;
        db_outcome  outcome;

        rl = db_get_pool(r);
        if (rl == NULL)
            return APR_ECONNREFUSED;
        h = db_acquire(r, rl);
        if (h == NULL)
            return APR_EAGAIN;
        outcome = db_run(r, h, stmt, param, param_len, deadline, res);
        if (outcome == DB_CONN_LOST)
            apr_atomic_inc32(&db_gen);
        /* The rows outlive the connection: give it back before rendering. */
        apr_pool_cleanup_run(r->pool, h, db_release);
        if (outcome == DB_OK) {
            apr_pool_cleanup_register(r->pool, *res, db_clear_result,
                                      apr_pool_cleanup_null);
            return APR_SUCCESS;
        }
        if (outcome != DB_CONN_LOST)
            return APR_EGENERAL;
    }
    return APR_ECONNRESET;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_db.c - the pool (db.c), with the host spreading (db_hosts.c), against
 * fake_pg.c: pages, the health check, deadlines on a server that stalls
 * in the startup or in a reply, half replies, garbage, a disconnect in the
 * middle of a reply (retried once on a new connection), SQL errors (not
 * retried), the reconnect backoff, the wait for a free connection, and
 * BlogPrepare Off.
 *
 * The pool is per process and keeps its state from one case to the next,
 * as in a child: the cases run in order against one fake server.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apr_general.h"
#include "apr_strings.h"

#include "store/db_result.h"
#include "store/counters.h"
#include "httpd/pages.h"
#include "httpd/page_pool.h"
#include "httpd/tplfiles.h"

#include "backends.h"
#include "fake.h"
#include "harness.h"

static apr_pool_t *tdb_root;    /* the process */
static apr_pool_t *tdb_child;   /* the child: the pool's cleanup */
static const char *tdb_dir;
static fake_server *tdb_pg;
static blog_db_settings tdb_g;

/*
 * Deadlines: long where the call must succeed on a loaded machine under
 * valgrind, short where the case waits for it to pass.
 */
#define TDB_LONG  apr_time_from_sec(10)
#define TDB_SHORT apr_time_from_msec(300)

/* The fake behaving: every reply whole. */
static void
tdb_fake(fake_mode query, int times, const char *sqlstate)
{
    fake_pg_conf c = {0};

    c.query = query;
    c.query_times = times;
    c.sqlstate = sqlstate;
    fake_pg_set(&c);
}

/* One page: its status, the row checked when it succeeded. */
static apr_status_t
tdb_page(long *ms)
{
    request_rec *r = t_request(tdb_root);
    PGresult   *res = NULL;
    apr_time_t  t0 = apr_time_now();
    apr_status_t rv = blog_db_page(T_CALL(r), BLOG_STMT_POST, "hello", 5, &res);

    if (ms)
        *ms = t_ms_since(t0);
    if (rv == APR_SUCCESS) {
        CHECK(res != NULL && PQntuples(res) == 1);
        if (res != NULL && PQntuples(res) == 1)
            CHECK_STR(PQgetvalue(res, 0, 0), (size_t) PQgetlength(res, 0, 0),
                      FAKE_PG_ROW);
    }
    apr_pool_destroy(r->pool);
    return rv;
}

/* Until a page succeeds: past any backoff a case before started. */
static int
tdb_settle(void)
{
    apr_time_t  t0 = apr_time_now();

    tdb_fake(FAKE_OK, 0, NULL);
    while (t_ms_since(t0) < 3000 + T_MARGIN_MS) {
        request_rec *r = t_request(tdb_root);
        PGresult   *res = NULL;
        apr_status_t rv = blog_db_page(T_CALL(r), BLOG_STMT_INDEX, "\0\0\0\1", 4,
                                       &res);

        apr_pool_destroy(r->pool);
        if (rv == APR_SUCCESS)
            return 0;
        usleep(20000);
    }
    return -1;
}

/* Every connection of the pool closed: two lost in a row. */
static void
tdb_lose_all(void)
{
    tdb_fake(FAKE_CLOSE, 2, NULL);
    CHECK(tdb_page(NULL) != APR_SUCCESS);
    tdb_fake(FAKE_OK, 0, NULL);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == 0);
}

static void
test_db_ping_before_init(void)
{
    request_rec *r;
    char        why[200];

    tdb_root = t_root();
    r = t_request(tdb_root);
    CHECK(blog_db_ping(T_CALL(r), why, sizeof(why)) == -1);
    CHECK(strstr(why, "not set up") != NULL);
    apr_pool_destroy(r->pool);
}

/* A child whose pool lock could not be made: said once, every page 503. */
static void
test_db_no_lock(void)
{
    blog_db_settings g = {.conninfo = "dbname=blog", .pool_max = 1};
    unsigned    n = t_log_count();
    apr_pool_t *child;
    request_rec *r;
    PGresult   *res = NULL;
    char        why[200];

    tdb_root = t_root();
    apr_pool_create(&child, tdb_root);
    t_mutex_create_fail = 1;
    blog_db_child_init(child, NULL, &g, 1);
    t_mutex_create_fail = 0;
    CHECK(t_log_since(n, "no lock for the PostgreSQL pool"));
    r = t_request(tdb_root);
    CHECK(blog_db_page(T_CALL(r), BLOG_STMT_INDEX, "\0\0\0\1", 4, &res) != APR_SUCCESS);
    CHECK(res == NULL);
    CHECK(blog_db_ping(T_CALL(r), why, sizeof(why)) == -1
          && strstr(why, "not set up") != NULL);
    apr_pool_destroy(r->pool);
    apr_pool_destroy(child);
}

static void
test_db_child_init_eager(void)
{
    server_rec *s;

    tdb_root = t_root();
    apr_pool_create(&tdb_child, tdb_root);
    s = apr_pcalloc(tdb_child, sizeof(*s));
    tdb_dir = t_sockdir(tdb_root);
    tdb_pg = fake_pg_start(tdb_dir);
    tdb_g.conninfo = apr_psprintf(tdb_root, "host=%s port=5432 user=blog "
                                  "dbname=blog sslmode=disable "
                                  "gssencmode=disable", tdb_dir);
    tdb_g.pool_min = 2;
    tdb_g.pool_keep = 2;
    tdb_g.pool_max = 4;
    tdb_g.pool_exptime = apr_time_from_sec(60);
    tdb_g.acquire_timeout = TDB_LONG;
    tdb_g.query_timeout = TDB_LONG;
    tdb_g.prepare = 1;
    blog_db_child_init(tdb_child, s, &tdb_g, 1);
    CHECK(fake_accepts(tdb_pg) == 2);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == 2);
    /* each connection was set up in one simple query */
    CHECK(fake_pg_simple() == 2);
}

static void
test_db_page_reuses(void)
{
    unsigned    q = fake_pg_queries();

    CHECK(tdb_page(NULL) == APR_SUCCESS);
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    CHECK(fake_pg_queries() == q + 2);
    CHECK(fake_accepts(tdb_pg) == 2);   /* no connect: the pool's */
    CHECK(t_stat(BLOG_STAT_POOL_BUSY) == 0);
}

/*
 * An SQL error is PostgreSQL answering: no outage, so the next page logs
 * no "PostgreSQL reachable again"; a connection lost twice is one, and
 * its end is logged.  (First after the pool starts: no end logged yet,
 * whose 5 s quiet would hide one.)
 */
static void
test_db_sql_error_no_outage(void)
{
    unsigned    n = t_log_count();

    tdb_fake(FAKE_ERROR, 1, "42P01");
    CHECK(tdb_page(NULL) == APR_EGENERAL);
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    CHECK(t_log_since(n, "fake failure"));
    CHECK(!t_log_since(n, "PostgreSQL reachable again"));
    tdb_fake(FAKE_GARBAGE, 2, NULL);
    CHECK(tdb_page(NULL) == APR_ECONNRESET);
    CHECK(tdb_settle() == 0);
    CHECK(t_log_since(n, "PostgreSQL reachable again"));
}

static void
test_db_ping(void)
{
    request_rec *r = t_request(tdb_root);
    char        why[200] = "";

    CHECK(blog_db_ping(T_CALL(r), why, sizeof(why)) == 0);
    tdb_fake(FAKE_ERROR, 1, "42P01");
    CHECK(blog_db_ping(T_CALL(r), why, sizeof(why)) == -1);
    CHECK(strstr(why, "fake failure") != NULL);
    tdb_fake(FAKE_STALL, 1, NULL);
    tdb_g.query_timeout = TDB_SHORT;
    CHECK(blog_db_ping(T_CALL(r), why, sizeof(why)) == -1);
    tdb_g.query_timeout = TDB_LONG;
    CHECK(strstr(why, "no answer within BlogQueryTimeout") != NULL);
    /* a lost connection is retried on a new one, as a page is */
    tdb_fake(FAKE_CLOSE, 1, NULL);
    CHECK(blog_db_ping(T_CALL(r), why, sizeof(why)) == 0);
    apr_pool_destroy(r->pool);
    CHECK(tdb_settle() == 0);
}

/* A reply that does not come: 503 by the deadline, the connection gone. */
static void
tdb_deadline(int mode)
{
    long        ms;
    apr_uint64_t timeouts = t_stat(BLOG_STAT_POOL_QUERY_TIMEOUTS);
    apr_uint64_t open = t_stat(BLOG_STAT_POOL_OPEN);
    long        limit = (long) apr_time_as_msec(TDB_SHORT);

    tdb_fake(mode, 1, NULL);
    tdb_g.query_timeout = TDB_SHORT;
    CHECK(tdb_page(&ms) != APR_SUCCESS);
    tdb_g.query_timeout = TDB_LONG;
    CHECK(ms >= limit - 1);
    CHECK(ms < limit + T_MARGIN_MS);
    CHECK(t_stat(BLOG_STAT_POOL_QUERY_TIMEOUTS) == timeouts + 1);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == open - 1);
    CHECK(tdb_settle() == 0);
}

/* A connection lost under a page: retried once, on a new connection. */
static void
tdb_retried(int mode)
{
    unsigned    a = fake_accepts(tdb_pg);
    unsigned    q = fake_pg_queries();
    apr_uint64_t lost = t_stat(BLOG_STAT_POOL_RECONNECTS);

    tdb_fake(mode, 1, mode == FAKE_ERROR ? "57P01" : NULL);
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    CHECK(fake_pg_queries() == q + 2);
    /* the other pooled connection is older than the loss: not trusted */
    CHECK(fake_accepts(tdb_pg) == a + 1);
    CHECK(t_stat(BLOG_STAT_POOL_RECONNECTS) == lost + 1);
}

/* Lost on the new connection too: a failure, not a third try. */
static void
test_db_lost_twice(void)
{
    unsigned    q = fake_pg_queries();

    tdb_fake(FAKE_GARBAGE, -1, NULL);
    CHECK(tdb_page(NULL) == APR_ECONNRESET);
    CHECK(fake_pg_queries() == q + 2);
    CHECK(tdb_settle() == 0);
}

/* An error of the statement: no retry, the connection stays pooled. */
static void
test_db_sql_error(void)
{
    unsigned    q = fake_pg_queries();
    apr_uint64_t open = t_stat(BLOG_STAT_POOL_OPEN);
    apr_uint64_t errs = t_stat(BLOG_STAT_POOL_QUERY_ERRORS);

    tdb_fake(FAKE_ERROR, 1, "42P01");
    CHECK(tdb_page(NULL) == APR_EGENERAL);
    CHECK(fake_pg_queries() == q + 1);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == open);
    CHECK(t_stat(BLOG_STAT_POOL_QUERY_ERRORS) == errs + 1);
}

/* Until the counter reaches n: a connect the opener thread ends. */
static void
tdb_wait_stat(int id, apr_uint64_t n)
{
    apr_time_t  t0 = apr_time_now();

    while (t_stat(id) < n && t_ms_since(t0) < T_MARGIN_MS)
        usleep(1000);
}

/*
 * A server that accepts and never answers the startup: the page fails by
 * its deadline, the opener's connect by the same bound.
 */
static void
test_db_connect_stall(void)
{
    fake_pg_conf c = {0};
    long        ms;
    long        limit = (long) apr_time_as_msec(TDB_SHORT);
    apr_uint64_t fails = t_stat(BLOG_STAT_POOL_CONNECT_FAILURES);

    tdb_lose_all();
    c.startup = FAKE_STALL;
    fake_pg_set(&c);
    tdb_g.query_timeout = TDB_SHORT;
    CHECK(tdb_page(&ms) == APR_EAGAIN);
    tdb_g.query_timeout = TDB_LONG;
    CHECK(ms < limit + T_MARGIN_MS);
    tdb_wait_stat(BLOG_STAT_POOL_CONNECT_FAILURES, fails + 1);
    CHECK(t_stat(BLOG_STAT_POOL_CONNECT_FAILURES) == fails + 1);
    CHECK(tdb_settle() == 0);
}

/*
 * While the server refuses, connects back off: 50 ms after the first
 * failure, then twice as long each time.  Requests meanwhile fail at once,
 * without a connect.  The bound follows from the backoff alone: the k-th
 * retry cannot come before 50 (2^k - 1) ms, however slow the machine.
 */
static void
test_db_backoff(void)
{
    fake_pg_conf c = {0};
    apr_time_t  t0;
    unsigned    a, attempts;
    long        ms;
    int         calls = 0;

    tdb_lose_all();
    c.startup = FAKE_CLOSE;
    fake_pg_set(&c);
    a = fake_accepts(tdb_pg);
    t0 = apr_time_now();
    /* 400 ms, longer on a machine so slow that no retry came in them */
    while (t_ms_since(t0) < 400 || (fake_accepts(tdb_pg) - a < 2
                                    && t_ms_since(t0) < 400 + T_MARGIN_MS)) {
        CHECK(tdb_page(NULL) != APR_SUCCESS);
        calls++;
        usleep(2000);
    }
    ms = t_ms_since(t0);
    attempts = fake_accepts(tdb_pg) - a;
    CHECK(attempts >= 2);       /* it does try again */
    CHECK(attempts <= 1 + (unsigned) floor(log2(ms / 50.0 + 1)));
    CHECK((unsigned) calls > attempts);
    /* the server back: served again once the backoff (1 s at most) ends */
    CHECK(tdb_settle() == 0);
}

static void
test_db_setup_error(void)
{
    fake_pg_conf c = {0};
    apr_uint64_t fails = t_stat(BLOG_STAT_POOL_CONNECT_FAILURES);

    tdb_lose_all();
    c.setup = FAKE_ERROR;
    fake_pg_set(&c);
    CHECK(tdb_page(NULL) == APR_EAGAIN);
    CHECK(t_stat(BLOG_STAT_POOL_CONNECT_FAILURES) == fails + 1);
    c.setup = FAKE_STALL;
    fake_pg_set(&c);
    usleep(100000);             /* past the backoff: 50 ms */
    tdb_g.query_timeout = TDB_SHORT;
    CHECK(tdb_page(NULL) == APR_EAGAIN);
    tdb_g.query_timeout = TDB_LONG;
    CHECK(tdb_settle() == 0);
}

static void
test_db_ping_cannot_connect(void)
{
    fake_pg_conf c = {0};
    request_rec *r;
    char        why[300] = "";

    tdb_lose_all();
    c.startup = FAKE_ERROR;
    fake_pg_set(&c);
    r = t_request(tdb_root);
    CHECK(blog_db_ping(T_CALL(r), why, sizeof(why)) == -1);
    CHECK(strstr(why, "cannot connect") != NULL);
    CHECK(strstr(why, "password authentication failed") != NULL);
    apr_pool_destroy(r->pool);
    CHECK(tdb_settle() == 0);
}

/*
 * Rows that do not match the templates (an extension of another version):
 * the 503 page, the reason logged, once per 5 s however many pages.
 */
static void
test_db_malformed_rows(void)
{
    apr_pool_t *p;
    blog_tpl_files files;
    blog_site   site;
    blog_route  rt;
    blog_page   page;
    char        err[512];
    unsigned    n = t_log_count();
    int         i;

    apr_pool_create(&p, tdb_root);
    files = (blog_tpl_files) {TEMPLATES_DIR, blog_pool_alloc, p};
    memset(&site, 0, sizeof(site));
    site.pages = blog_pageset_load(blog_tpl_file_source, &files,
                                   blog_pool_alloc, p, err, sizeof(err));
    site.base = "";
    CHECK(site.pages != NULL && blog_pages_site(p, &site) == 0);
    blog_route_match("/post/hello", 11, &rt);
    for (i = 0; i < 5 && site.pages != NULL; i++) {
        request_rec *r = t_request(p);

        blog_page_for(r, &site, &rt, &page);
        CHECK(page.status == 503 && page.body == site.unavailable.body);
        apr_pool_destroy(r->pool);
    }
    CHECK(t_log_since(n, "blog.post_page returned no column"));
    CHECK(t_log_count() == n + 1);
    apr_pool_destroy(p);
}

/* A thread that runs one page, for the cases with two at once. */
static void *
tdb_page_thread(void *arg)
{
    apr_status_t *rv = arg;

    *rv = tdb_page(NULL);
    return NULL;
}

static void
tdb_wait_queries(unsigned n)
{
    apr_time_t  t0 = apr_time_now();

    while (fake_pg_queries() < n && t_ms_since(t0) < T_MARGIN_MS)
        usleep(1000);
}

/*
 * The only connection busy: the next page waits BlogPoolAcquireTimeout
 * for it, then fails; a connection released goes to the one waiting.
 */
static void
test_db_acquire_timeout(void)
{
    pthread_t   th;
    apr_status_t rv_a = APR_SUCCESS;
    long        ms;
    unsigned    q;
    apr_uint64_t to = t_stat(BLOG_STAT_POOL_ACQUIRE_TIMEOUTS);

    tdb_lose_all();
    tdb_g.pool_max = 1;
    tdb_g.acquire_timeout = apr_time_from_msec(200);
    CHECK(tdb_settle() == 0);
    /* the page that holds the connection gives it up after 3 s */
    tdb_g.query_timeout = apr_time_from_sec(3);
    q = fake_pg_queries();
    tdb_fake(FAKE_STALL, 1, NULL);
    pthread_create(&th, NULL, tdb_page_thread, &rv_a);
    tdb_wait_queries(q + 1);
    CHECK(tdb_page(&ms) == APR_EAGAIN);
    CHECK(ms >= 199);
    CHECK(ms < 200 + T_MARGIN_MS);
    CHECK(t_stat(BLOG_STAT_POOL_ACQUIRE_TIMEOUTS) == to + 1);
    pthread_join(th, NULL);
    CHECK(rv_a != APR_SUCCESS);
    tdb_g.query_timeout = TDB_LONG;

    /* handed over: a slow page, and one waiting for its connection */
    tdb_g.acquire_timeout = TDB_LONG;
    CHECK(tdb_settle() == 0);
    q = fake_pg_queries();
    tdb_fake(FAKE_SLOW, 1, NULL);
    pthread_create(&th, NULL, tdb_page_thread, &rv_a);
    tdb_wait_queries(q + 1);
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    pthread_join(th, NULL);
    CHECK(rv_a == APR_SUCCESS);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == 1);

    /* a slot freed by a dropped connection wakes the one waiting */
    q = fake_pg_queries();
    tdb_g.query_timeout = TDB_SHORT;
    tdb_fake(FAKE_STALL, 1, NULL);
    pthread_create(&th, NULL, tdb_page_thread, &rv_a);
    tdb_wait_queries(q + 1);
    tdb_g.query_timeout = TDB_LONG;
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    pthread_join(th, NULL);
    CHECK(rv_a != APR_SUCCESS);

    tdb_g.pool_max = 4;
}

/*
 * New connects hang while the pool's one connection is busy: the page
 * waiting for a connection takes that one when it is released, instead
 * of failing with the connect (the opener's connect ends by its own
 * deadline, costing no page).
 */
static void
test_db_connect_hangs_release_serves(void)
{
    fake_pg_conf c = {0};
    pthread_t   th;
    apr_status_t rv_a = APR_EGENERAL;
    apr_uint64_t fails = t_stat(BLOG_STAT_POOL_CONNECT_FAILURES);
    unsigned    q;

    tdb_lose_all();
    tdb_g.pool_max = 2;
    CHECK(tdb_settle() == 0);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == 1);
    tdb_g.query_timeout = apr_time_from_msec(3 * FAKE_SLOW_MS);
    q = fake_pg_queries();
    c.query = FAKE_SLOW;
    c.query_times = 1;
    c.startup = FAKE_STALL;
    fake_pg_set(&c);
    pthread_create(&th, NULL, tdb_page_thread, &rv_a);
    tdb_wait_queries(q + 1);
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    pthread_join(th, NULL);
    CHECK(rv_a == APR_SUCCESS);
    tdb_wait_stat(BLOG_STAT_POOL_CONNECT_FAILURES, fails + 1);
    CHECK(t_stat(BLOG_STAT_POOL_CONNECT_FAILURES) == fails + 1);
    tdb_g.query_timeout = TDB_LONG;
    tdb_g.pool_max = 4;
    CHECK(tdb_settle() == 0);
}

/* Idle connections above BlogPoolKeep close once BlogPoolExptime passed. */
static void
test_db_expiry(void)
{
    pthread_t   th[3];
    apr_status_t rv[3];
    unsigned    q = fake_pg_queries();
    int         i;

    tdb_g.pool_keep = 1;
    tdb_g.pool_exptime = apr_time_from_msec(10);
    tdb_fake(FAKE_SLOW, 3, NULL);
    for (i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, tdb_page_thread, &rv[i]);
    tdb_wait_queries(q + 3);
    for (i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        CHECK(rv[i] == APR_SUCCESS);
    }
    usleep(20000);
    CHECK(tdb_page(NULL) == APR_SUCCESS);       /* its release expires them */
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == 1);
    tdb_g.pool_keep = 2;
    tdb_g.pool_exptime = apr_time_from_sec(60);
}

/*
 * BlogPrepare Off: no session state (no SET, no PREPARE); each page's SQL
 * text parsed with the page, its statement_timeout (BlogQueryTimeout) and
 * client_connection_check_interval set for its own transaction, in the
 * same pipeline and Sync.  An error leaves the connection usable; a stall
 * ends by the deadline.
 */
static void
test_db_prepare_off(void)
{
    unsigned    p = fake_pg_parses();
    unsigned    s, set, a;
    char        sql[256];
    int         with_page = 0;

    tdb_lose_all();
    tdb_g.prepare = 0;
    s = fake_pg_simple();
    CHECK(tdb_settle() == 0);
    set = fake_pg_setups();
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    CHECK(fake_pg_parses() >= p + 2);
    CHECK(fake_pg_simple() == s);       /* no SET, no PREPARE */
    CHECK(fake_pg_setups() == set + 1);
    fake_pg_last_setup(sql, sizeof(sql), &with_page);
    CHECK(with_page);
    CHECK(strstr(sql, "set_config('statement_timeout', '10000', true)")
          != NULL);
    CHECK(strstr(sql, "set_config('client_connection_check_interval', "
                 "'1000', true)") != NULL);
    a = fake_accepts(tdb_pg);
    tdb_fake(FAKE_ERROR, 1, "42P01");
    CHECK(tdb_page(NULL) == APR_EGENERAL);
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    CHECK(fake_accepts(tdb_pg) == a);
    tdb_fake(FAKE_STALL, 1, NULL);
    tdb_g.query_timeout = TDB_SHORT;
    CHECK(tdb_page(NULL) != APR_SUCCESS);
    tdb_g.query_timeout = TDB_LONG;
    CHECK(tdb_settle() == 0);
    tdb_g.prepare = 1;
}

static void
test_db_child_exit(void)
{
    apr_pool_destroy(tdb_child);
    tdb_child = NULL;
    fake_stop(tdb_pg);
    t_sockdir_remove(tdb_dir);
}

T_WITH(tdb_deadline, FAKE_STALL)
T_WITH(tdb_deadline, FAKE_PARTIAL_STALL)
T_WITH(tdb_retried, FAKE_PARTIAL_CLOSE)
T_WITH(tdb_retried, FAKE_CLOSE)
T_WITH(tdb_retried, FAKE_GARBAGE)
T_WITH(tdb_retried, FAKE_ERROR)

const t_case t_db_cases[] = {
    {"db: ping before the pool is set up", test_db_ping_before_init},
    {"db: no lock in the child: every page 503", test_db_no_lock},
    {"db: BlogPoolMin connections at child start", test_db_child_init_eager},
    {"db: pages reuse pooled connections", test_db_page_reuses},
    {"db: an SQL error is no outage", test_db_sql_error_no_outage},
    {"db: rows that do not match: 503, logged once", test_db_malformed_rows},
    {"db: health ping, error, deadline, lost", test_db_ping},
    {"db: a stalled reply ends at BlogQueryTimeout", tdb_deadline_FAKE_STALL},
    {"db: half a reply ends at BlogQueryTimeout", tdb_deadline_FAKE_PARTIAL_STALL},
    {"db: disconnect mid-reply retried on a new connection", tdb_retried_FAKE_PARTIAL_CLOSE},
    {"db: disconnect before the reply retried", tdb_retried_FAKE_CLOSE},
    {"db: garbage from the server retried", tdb_retried_FAKE_GARBAGE},
    {"db: 57P01 admin shutdown retried", tdb_retried_FAKE_ERROR},
    {"db: lost twice fails", test_db_lost_twice},
    {"db: SQL error not retried", test_db_sql_error},
    {"db: startup that stalls ends at the deadline", test_db_connect_stall},
    {"db: reconnect backoff", test_db_backoff},
    {"db: set-up error and stall", test_db_setup_error},
    {"db: ping says why it cannot connect", test_db_ping_cannot_connect},
    {"db: BlogPoolAcquireTimeout and hand-over", test_db_acquire_timeout},
    {"db: a hung connect: the waiting page takes a released connection",
     test_db_connect_hangs_release_serves},
    {"db: BlogPoolKeep and BlogPoolExptime", test_db_expiry},
    {"db: BlogPrepare Off", test_db_prepare_off},
    {"db: child exit closes the pool", test_db_child_exit},
    {NULL, NULL}
};

/* ---- several hosts: the order each new connection tries them in ---- */

static fake_server *tds_pg[2];
static const char *tds_dir[3];  /* the first two served, the third not */

/* A child of a BlogDatabase of several hosts, n connections opened. */
static void
tds_child(const char *conninfo, int n)
{
    server_rec *s;

    apr_pool_create(&tdb_child, tdb_root);
    s = apr_pcalloc(tdb_child, sizeof(*s));
    tdb_g.conninfo = conninfo;
    tdb_g.pool_min = tdb_g.pool_keep = tdb_g.pool_max = n > 0 ? n : 1;
    tdb_g.pool_exptime = apr_time_from_sec(60);
    tdb_g.acquire_timeout = tdb_g.query_timeout = TDB_LONG;
    tdb_g.prepare = 1;
    blog_db_child_init(tdb_child, s, &tdb_g, n > 0);
}

/* The accepts of each fake since the last call. */
static void
tds_accepts(unsigned *a)
{
    static unsigned seen[2];
    int         i;

    for (i = 0; i < 2; i++) {
        unsigned    now = fake_accepts(tds_pg[i]);

        a[i] = now - seen[i];
        seen[i] = now;
    }
}

static void
test_hosts_start(void)
{
    int         i;

    tdb_root = t_root();
    for (i = 0; i < 3; i++)
        tds_dir[i] = t_sockdir(tdb_root);
    for (i = 0; i < 2; i++)
        tds_pg[i] = fake_pg_start(tds_dir[i]);
    tdb_fake(FAKE_OK, 0, NULL);
}

/* Three hosts: each comes first in two of the six orders, ports along. */
static void
test_hosts_spread(void)
{
    unsigned    a[2];

    tds_accepts(a);
    tds_child(apr_psprintf(tdb_root, "host=%s,%s,%s port=5432,5432,1 "
                           "dbname='x y' sslmode=disable gssencmode=disable "
                           "options='-c x=\\'y\\''", tds_dir[0],
                           tds_dir[1], tds_dir[2]), 6);
    tds_accepts(a);
    /* the third (port 1, nothing there) first twice: on to the next */
    CHECK(a[0] + a[1] == 6 && a[0] >= 2 && a[1] >= 2);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == 6);
    apr_pool_destroy(tdb_child);
    /* one port for every host */
    tds_child(apr_psprintf(tdb_root, "host=%s,%s port=5432 "
                           "sslmode=disable", tds_dir[0], tds_dir[1]), 4);
    tds_accepts(a);
    CHECK(a[0] == 2 && a[1] == 2);
    apr_pool_destroy(tdb_child);
}

static void
test_hosts_as_written(void)
{
    request_rec *r = t_request(tdb_root);
    unsigned    a[2];
    char        why[300];

    /* lists of different lengths: libpq refuses them */
    tds_child(apr_psprintf(tdb_root, "host=%s,%s port=1,2,3", tds_dir[0],
                           tds_dir[1]), 1);
    CHECK(blog_db_ping(T_CALL(r), why, sizeof(why)) == -1);
    CHECK(strstr(why, "could not match") != NULL);
    apr_pool_destroy(tdb_child);
    /* more than eight hosts: in the order written, the first one */
    tds_accepts(a);
    tds_child(apr_psprintf(tdb_root, "host=%s,%s,%s,%s,%s,%s,%s,%s,%s "
                           "port=5432 sslmode=disable", tds_dir[0],
                           tds_dir[1], tds_dir[1], tds_dir[1], tds_dir[1],
                           tds_dir[1], tds_dir[1], tds_dir[1], tds_dir[1]),
              4);
    tds_accepts(a);
    CHECK(a[0] == 4 && a[1] == 0);
    apr_pool_destroy(tdb_child);
    apr_pool_destroy(r->pool);
}

/* Connections closed on their release: prefer-standby on a primary. */
static void
test_hosts_retire(void)
{
    apr_uint64_t open = t_stat(BLOG_STAT_POOL_OPEN);

    /* every 500 ms at most: the first page's, not the second's */
    tds_child(apr_psprintf(tdb_root, "host=%s,%s port=5432 sslmode=disable "
                           "target_session_attrs=prefer-standby",
                           tds_dir[0], tds_dir[1]), 0);
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == open);
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == open + 1);
    apr_pool_destroy(tdb_child);
    /* otherwise every 5 s: none within 5 s of the start */
    tds_child(apr_psprintf(tdb_root, "host=%s,%s port=5432 sslmode=disable",
                           tds_dir[0], tds_dir[1]), 0);
    CHECK(tdb_page(NULL) == APR_SUCCESS);
    CHECK(t_stat(BLOG_STAT_POOL_OPEN) == open + 1);
    apr_pool_destroy(tdb_child);
    tdb_child = NULL;
}

static void
test_hosts_stop(void)
{
    int         i;

    for (i = 0; i < 2; i++)
        fake_stop(tds_pg[i]);
    for (i = 0; i < 3; i++)
        t_sockdir_remove(tds_dir[i]);
}

/* Before the pool's own cases: each ends with its child's pool closed. */
const t_case t_dbscale_cases[] = {
    {"db hosts: start two fakes", test_hosts_start},
    {"db hosts: every order in turn, ports along", test_hosts_spread},
    {"db hosts: lists it does not spread", test_hosts_as_written},
    {"db hosts: connections retired from a primary", test_hosts_retire},
    {"db hosts: stop the fakes", test_hosts_stop},
    {NULL, NULL}
};

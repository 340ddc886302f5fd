/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cache.c - the Redis client (cache.c) against fake_redis.c: hits,
 * misses and stores; deadlines on a Redis that stalls or stops in the
 * middle of a reply; garbage, oversized and unexpected replies; the
 * reconnect of a connection Redis closed; the backoff while Redis is
 * down; many threads pipelining on the one connection.
 *
 * The client is per process: the cases run in order on one connection
 * while nothing breaks it, as a child's threads do.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apr_general.h"
#include "apr_strings.h"

#include "store/cache.h"
#include "store/counters.h"

#include "backends.h"
#include "fake.h"
#include "harness.h"

static apr_pool_t *tc_root;
static apr_pool_t *tc_child;
static const char *tc_dir;
static const char *tc_path;
static fake_server *tc_redis;
static blog_cache_settings tc_g;

/* As in test_db.c: long where a call must succeed, short where it fails. */
#define TC_LONG  apr_time_from_sec(10)
#define TC_SHORT apr_time_from_msec(200)

#define TC_KEY "blog:page:/post/hello"
#define TC_BODY "<p>hello</p>"

/* blog_cache_ping: 0, or -1 with its reason in tc_why. */
static char tc_why[600];

static int
tc_ping(long *ms)
{
    request_rec *r = t_request(tc_root);
    apr_time_t  t0 = apr_time_now();
    int         rc = blog_cache_ping(T_CALL(r), tc_why, sizeof(tc_why));

    if (ms)
        *ms = t_ms_since(t0);
    apr_pool_destroy(r->pool);
    return rc;
}

/* One GET of key: its status; the body compared when want is not NULL. */
static blog_cache_status
tc_get(const char *key, const char *want, long *ms)
{
    request_rec *r = t_request(tc_root);
    const char *body = NULL;
    apr_size_t  len = 0;
    apr_time_t  t0 = apr_time_now();
    blog_cache_status st = blog_cache_get(T_CALL(r), key, strlen(key), &body, &len);

    if (ms)
        *ms = t_ms_since(t0);
    if (st == BLOG_CACHE_HIT && want != NULL)
        CHECK_STR(body, len, want);
    apr_pool_destroy(r->pool);
    return st;
}

static int
tc_set(const char *key, const char *body, apr_size_t len)
{
    request_rec *r = t_request(tc_root);
    int         rc = blog_cache_set(T_CALL(r), key, strlen(key), body, len);

    apr_pool_destroy(r->pool);
    return rc;
}

/* Until a GET hits again: past any backoff a case started. */
static int
tc_settle(void)
{
    apr_time_t  t0 = apr_time_now();

    fake_redis_set(FAKE_OK, 0);
    fake_redis_put(TC_KEY, TC_BODY);
    while (t_ms_since(t0) < 3000 + T_MARGIN_MS) {
        if (tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_HIT)
            return 0;
        usleep(20000);
    }
    return -1;
}

/*
 * A child whose lock could not be made (as a fresh process: the first
 * case): said once, every command bypasses the cache, the health check
 * says why, nothing is sent.
 */
static void
test_cache_no_lock(void)
{
    unsigned    n = t_log_count();
    apr_pool_t *child;

    tc_root = t_root();
    CHECK(tc_ping(NULL) == 0);  /* no cache set up: nothing to ask */
    apr_pool_create(&child, tc_root);
    tc_g.redis.on = 1;
    tc_g.redis.host = "/nonexistent/redis.sock";
    tc_g.redis.connect_timeout = TC_SHORT;
    tc_g.redis.timeout = TC_SHORT;
    t_mutex_create_fail = 1;
    blog_cache_child_init(child, NULL, &tc_g);
    t_mutex_create_fail = 0;
    CHECK(t_log_since(n, "no lock for the Redis connection"));
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    CHECK(tc_set(TC_KEY, "x", 1) == -1);
    CHECK(tc_ping(NULL) == -1 && strstr(tc_why, "no lock in this child"));
    apr_pool_destroy(child);
}

/* The one key of a page, for the handler and the invalidation alike. */
static void
test_cache_key(void)
{
    char        k[32];

    CHECK(blog_cache_key(k, sizeof(k), "", 0, "/post/a", 7) == 17
          && strcmp(k, "blog:page:/post/a") == 0);
    CHECK(blog_cache_key(k, sizeof(k), "/blog", 5, "/", 1) == 16
          && strcmp(k, "blog:page:/blog/") == 0);
    CHECK(blog_cache_key(k, 17, "", 0, "/post/a", 7) == 0);
}

static void
test_cache_off(void)
{
    apr_pool_create(&tc_child, tc_root);
    tc_dir = t_sockdir(tc_root);
    tc_path = apr_pstrcat(tc_root, tc_dir, "/redis.sock",
                          (char *) NULL);
    tc_redis = fake_redis_start(tc_path);
    tc_g.redis.on = 0;
    tc_g.redis.host = tc_path;
    tc_g.redis.port = 0;
    tc_g.redis.connect_timeout = TC_LONG;
    tc_g.redis.timeout = TC_LONG;
    tc_g.cache_ttl = 60;
    blog_cache_child_init(tc_child, NULL, &tc_g);
    CHECK(tc_ping(NULL) == 0);
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    CHECK(tc_set(TC_KEY, "x", 1) == -1);
    CHECK(fake_accepts(tc_redis) == 0);
    tc_g.redis.on = 1;
    CHECK(tc_ping(NULL) == 0);  /* a miss: Redis answers */
}

static void
test_cache_set_get(void)
{
    unsigned    n = fake_redis_ncmds();

    CHECK(tc_set(TC_KEY, TC_BODY, strlen(TC_BODY)) == 0);
    CHECK(fake_redis_wait_cmd(n, "SET " TC_KEY " " TC_BODY " EX 60", 0) > 0);
    CHECK(tc_get(TC_KEY, TC_BODY, NULL) == BLOG_CACHE_HIT);
    CHECK(tc_get("blog:page:/none", NULL, NULL) == BLOG_CACHE_MISS);
    CHECK(fake_accepts(tc_redis) == 1);
    /* what a GET would refuse is not even sent */
    {
        apr_size_t  big = 1024 * 1024 + 1;
        char       *b = calloc(1, big);

        n = fake_redis_ncmds();
        CHECK(tc_set(TC_KEY, b, big) == -1);
        CHECK(fake_redis_ncmds() == n);
        free(b);
    }
}

/* A reply that does not come (or not whole): DOWN by BlogRedisTimeout. */
static void
tc_deadline(int mode)
{
    long        ms;
    long        limit = (long) apr_time_as_msec(TC_SHORT);
    apr_uint64_t errs = t_stat(BLOG_STAT_CACHE_ERRORS);

    fake_redis_set(mode, 1);
    tc_g.redis.timeout = TC_SHORT;
    CHECK(tc_ping(&ms) == -1);
    tc_g.redis.timeout = TC_LONG;
    CHECK(ms >= limit - 1);
    CHECK(ms < limit + T_MARGIN_MS);
    CHECK(strstr(tc_why, "Redis: GET failed: timed out") != NULL);
    CHECK(t_stat(BLOG_STAT_CACHE_ERRORS) == errs + 1);
    CHECK(tc_settle() == 0);
}

/* A reply Redis would never send: DOWN at once, the connection dropped. */
static void
tc_bad(int mode)
{
    unsigned    a = fake_accepts(tc_redis);

    fake_redis_set(mode, 1);
    CHECK(tc_ping(NULL) == -1);
    CHECK(strstr(tc_why, "bad or oversized reply") != NULL);
    CHECK(tc_settle() == 0);
    CHECK(fake_accepts(tc_redis) == a + 1);     /* a new connection */
}

/* On a connection that never answered: no retry, a backoff. */
static void
test_cache_disconnect_mid_reply(void)
{
    unsigned    a;

    /* a fresh connection: drop the one in use */
    fake_redis_set(FAKE_GARBAGE, 1);
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    usleep(60000);
    a = fake_accepts(tc_redis);
    fake_redis_set(FAKE_PARTIAL_CLOSE, 1);
    CHECK(tc_ping(NULL) == -1);
    CHECK(fake_accepts(tc_redis) == a + 1);
    CHECK(strstr(tc_why, "connection closed") != NULL);
    CHECK(tc_settle() == 0);
}

/* Redis restarted: the connection had answered; the GET is sent again. */
static void
test_cache_reconnect_after_close(void)
{
    static const fake_mode closes[] = {FAKE_CLOSE, FAKE_PARTIAL_CLOSE};
    unsigned    a = fake_accepts(tc_redis);
    unsigned    i;

    for (i = 0; i < 2; i++) {
        fake_redis_set(closes[i], 1);
        CHECK(tc_get(TC_KEY, TC_BODY, NULL) == BLOG_CACHE_HIT);
        CHECK(fake_accepts(tc_redis) == a + i + 1);
    }
}

/* No semaphore for a command: bypassed and said, nothing sent; the next
 * command is served. */
static void
test_cache_no_semaphore(void)
{
    unsigned    n = t_log_count();
    unsigned    c = fake_redis_ncmds();

    t_sem_init_fail = 1;
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    CHECK(tc_ping(NULL) == -1 && strstr(tc_why, "no semaphore") != NULL);
    t_sem_init_fail = 0;
    CHECK(fake_redis_ncmds() == c);
    CHECK(t_log_since(n, "no semaphore to wait for Redis on"));
    CHECK(tc_get(TC_KEY, TC_BODY, NULL) == BLOG_CACHE_HIT);
}

static void
test_cache_wrong_type(void)
{
    apr_uint64_t errs = t_stat(BLOG_STAT_CACHE_ERRORS);

    fake_redis_set(FAKE_WRONG_TYPE, 1);
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    CHECK(t_stat(BLOG_STAT_CACHE_ERRORS) == errs + 1);
    /* the connection is still in step: the next GET hits */
    CHECK(tc_get(TC_KEY, TC_BODY, NULL) == BLOG_CACHE_HIT);
}

/* A reply nobody asked for: the connection is out of step, dropped. */
static void
test_cache_unasked(void)
{
    unsigned    a = fake_accepts(tc_redis);

    fake_redis_set(FAKE_UNASKED, 1);
    CHECK(tc_get(TC_KEY, TC_BODY, NULL) == BLOG_CACHE_HIT);
    CHECK(tc_settle() == 0);
    CHECK(fake_accepts(tc_redis) == a + 1);
}

static void
test_cache_set_refused(void)
{
    fake_redis_set(FAKE_ERROR, 1);
    CHECK(tc_set(TC_KEY, TC_BODY, strlen(TC_BODY)) == -1);
    CHECK(tc_set(TC_KEY, TC_BODY, strlen(TC_BODY)) == 0);
    fake_redis_set(FAKE_SLOW, 1);
    tc_g.redis.timeout = TC_SHORT;
    CHECK(tc_set(TC_KEY, TC_BODY, strlen(TC_BODY)) == -1);     /* 300 > 200 ms */
    tc_g.redis.timeout = TC_LONG;
    CHECK(tc_settle() == 0);
}

/*
 * Redis down (nothing listens): one connect per backoff period, 50 ms
 * doubling to 1 s; the k-th retry cannot come before 50 (2^k - 1) ms,
 * however slow the machine.  Each attempt counts a cache error; a GET
 * during the backoff tries nothing and counts none.
 */
static void
test_cache_backoff(void)
{
    const char *good = tc_g.redis.host;
    apr_time_t  t0;
    apr_uint64_t e0;
    unsigned    attempts;
    long        ms;
    int         calls = 0;

    fake_redis_set(FAKE_GARBAGE, 1);
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    tc_g.redis.host = apr_pstrcat(tc_root, tc_dir, "/none.sock",
                                  (char *) NULL);
    usleep(60000);
    e0 = t_stat(BLOG_STAT_CACHE_ERRORS);
    t0 = apr_time_now();
    /* 400 ms, longer on a machine so slow that no retry came in them */
    while (t_ms_since(t0) < 400
           || (t_stat(BLOG_STAT_CACHE_ERRORS) - e0 < 2
               && t_ms_since(t0) < 400 + T_MARGIN_MS)) {
        CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
        calls++;
        usleep(2000);
    }
    ms = t_ms_since(t0);
    attempts = (unsigned) (t_stat(BLOG_STAT_CACHE_ERRORS) - e0);
    CHECK(attempts >= 2);
    CHECK(attempts <= 1 + (unsigned) floor(log2(ms / 50.0 + 1)));
    CHECK((unsigned) calls > attempts);
    tc_g.redis.host = good;
    CHECK(tc_settle() == 0);
}

/*
 * Redis accepts and closes: one connection per 50 ms at most.  (The
 * backoff starts again from 50 ms after each connect that succeeded, so
 * it does not double here.)
 */
static void
test_cache_backoff_closing(void)
{
    apr_time_t  t0;
    unsigned    a, attempts;
    long        ms;
    int         calls = 0;

    fake_redis_set(FAKE_GARBAGE, 1);
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    usleep(60000);
    fake_redis_set(FAKE_CLOSE, -1);
    a = fake_accepts(tc_redis);
    t0 = apr_time_now();
    while (t_ms_since(t0) < 400 || (fake_accepts(tc_redis) - a < 2
                                    && t_ms_since(t0) < 400 + T_MARGIN_MS)) {
        CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
        calls++;
        usleep(2000);
    }
    ms = t_ms_since(t0);
    attempts = fake_accepts(tc_redis) - a;
    CHECK(attempts >= 2);
    CHECK(attempts <= 1 + (unsigned) (ms / 50));
    CHECK((unsigned) calls > attempts);
    CHECK(tc_settle() == 0);
}

static void
test_cache_connect_refused(void)
{
    const char *good = tc_g.redis.host;

    fake_redis_set(FAKE_GARBAGE, 1);
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    tc_g.redis.host = apr_pstrcat(tc_root, tc_dir, "/none.sock",
                                  (char *) NULL);
    usleep(60000);
    CHECK(tc_ping(NULL) == -1);
    CHECK(strstr(tc_why, "connect failed") != NULL);
    /* a socket's path as it is, no port after it */
    CHECK(strstr(tc_why, "none.sock): ") != NULL);
    /* at once: inside the backoff that failure started, nothing tried */
    CHECK(tc_ping(NULL) == -1);
    CHECK(strstr(tc_why, "backing off") != NULL);
    tc_g.redis.host = good;
    CHECK(tc_settle() == 0);
}

/* Many threads on the one connection: every reply to its own asker. */
#define TC_THREADS 8
#define TC_GETS 50

static void *
tc_thread(void *arg)
{
    int         t = (int) (long) arg;
    int         i, bad = 0;

    for (i = 0; i < TC_GETS; i++) {
        char        key[64], want[64];
        request_rec *r = t_request(tc_root);
        const char *body = NULL;
        apr_size_t  len = 0;
        int         k = (t + i) % TC_THREADS;

        snprintf(key, sizeof(key), "blog:page:/t/%d", k);
        snprintf(want, sizeof(want), "body of %d", k);
        if (blog_cache_get(T_CALL(r), key, strlen(key), &body, &len) != BLOG_CACHE_HIT
            || len != strlen(want) || memcmp(body, want, len) != 0)
            bad++;
        apr_pool_destroy(r->pool);
    }
    return (void *) (long) bad;
}

static void
test_cache_threads(void)
{
    pthread_t   th[TC_THREADS];
    int         t;
    unsigned    a = fake_accepts(tc_redis);

    for (t = 0; t < TC_THREADS; t++) {
        char        key[64], val[64];

        snprintf(key, sizeof(key), "blog:page:/t/%d", t);
        snprintf(val, sizeof(val), "body of %d", t);
        fake_redis_put(key, val);
    }
    for (t = 0; t < TC_THREADS; t++)
        pthread_create(&th[t], NULL, tc_thread, (void *) (long) t);
    for (t = 0; t < TC_THREADS; t++) {
        void       *bad;

        pthread_join(th[t], &bad);
        CHECK(bad == NULL);
    }
    CHECK(fake_accepts(tc_redis) == a);
}

/*
 * BlogRedis names a host the resolver does not answer: the thread that
 * leads the connection and every one queued behind it, and the health
 * check, are a BYPASS by the connect's deadline.  The answer, once it
 * comes, serves the next connect (here a refused port).
 */
static void *
tc_hang_thread(void *arg)
{
    long       *ms = arg;

    return (void *) (long) tc_get(TC_KEY, NULL, ms);
}

static void
test_cache_resolver_hangs(void)
{
    const char *path = tc_g.redis.host;
    long        bound = (long) apr_time_as_msec(TC_SHORT) + T_MARGIN_MS;
    pthread_t   th[TC_THREADS];
    long        ms[TC_THREADS], pms = 0;
    apr_time_t  t0;
    int         t;

    fake_redis_set(FAKE_GARBAGE, 1);    /* the connection in use dropped */
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    usleep(60000);                      /* past the backoff */
    tc_g.redis.host = "redis" FAKE_HANG_DOMAIN;
    tc_g.redis.port = 1;
    tc_g.redis.connect_timeout = TC_SHORT;
    for (t = 0; t < TC_THREADS; t++)
        pthread_create(&th[t], NULL, tc_hang_thread, &ms[t]);
    CHECK(tc_ping(&pms) == -1);
    CHECK(pms < bound);
    for (t = 0; t < TC_THREADS; t++) {
        void       *st;

        pthread_join(th[t], &st);
        CHECK((long) st == BLOG_CACHE_DOWN);
        CHECK(ms[t] < bound);
    }
    fake_resolver_release();
    t0 = apr_time_now();
    while ((tc_ping(NULL) == 0 || strstr(tc_why, "refused") == NULL)
           && t_ms_since(t0) < 3000 + T_MARGIN_MS)
        usleep(20000);
    CHECK(strstr(tc_why, "Connection refused") != NULL);
    tc_g.redis.host = path;
    tc_g.redis.port = 0;
    tc_g.redis.connect_timeout = TC_LONG;
    CHECK(tc_settle() == 0);
}

/*
 * A leader that connects for longer than the commands' deadline (a
 * resolver that does not answer, BlogRedisConnectTimeout long): the
 * threads queued behind it leave the queue at their own deadline
 * (BlogRedisTimeout) with a BYPASS, said once, not at the leader's.
 */
static void *
tc_lead_thread(void *arg)
{
    long       *ms = arg;

    return (void *) (long) tc_get(TC_KEY, NULL, ms);
}

static void
test_cache_queued_deadline(void)
{
    const char *path = tc_g.redis.host;
    long        bound = (long) apr_time_as_msec(TC_SHORT) + T_MARGIN_MS;
    pthread_t   leader, th[TC_THREADS];
    long        lms = 0, ms[TC_THREADS];
    unsigned    asked = fake_resolver_asked();
    apr_uint64_t errs;
    apr_time_t  t0;
    void       *st;
    int         t;

    fake_redis_set(FAKE_GARBAGE, 1);    /* the connection in use dropped */
    CHECK(tc_get(TC_KEY, NULL, NULL) == BLOG_CACHE_DOWN);
    usleep(60000);                      /* past the backoff */
    errs = t_stat(BLOG_STAT_CACHE_ERRORS);
    tc_g.redis.host = "queue" FAKE_HANG_DOMAIN;
    tc_g.redis.port = 1;
    tc_g.redis.connect_timeout = apr_time_from_msec(T_MARGIN_MS + 2000);
    tc_g.redis.timeout = TC_SHORT;
    pthread_create(&leader, NULL, tc_lead_thread, &lms);
    t0 = apr_time_now();
    while (fake_resolver_asked() == asked && t_ms_since(t0) < T_MARGIN_MS)
        usleep(1000);
    for (t = 0; t < TC_THREADS; t++)
        pthread_create(&th[t], NULL, tc_hang_thread, &ms[t]);
    for (t = 0; t < TC_THREADS; t++) {
        pthread_join(th[t], &st);
        CHECK((long) st == BLOG_CACHE_DOWN);
        CHECK(ms[t] < bound);
    }
    /* each counted a cache error (the log says so once per 5 s) */
    CHECK(t_stat(BLOG_STAT_CACHE_ERRORS) >= errs + TC_THREADS);
    pthread_join(leader, &st);
    CHECK((long) st == BLOG_CACHE_DOWN);
    /* the look-up's answer taken by a later connect (a refused port) */
    fake_resolver_release();
    tc_g.redis.timeout = TC_LONG;
    tc_g.redis.connect_timeout = TC_SHORT;
    t0 = apr_time_now();
    while ((tc_ping(NULL) == 0 || strstr(tc_why, "refused") == NULL)
           && t_ms_since(t0) < 3000 + T_MARGIN_MS)
        usleep(20000);
    CHECK(strstr(tc_why, "Connection refused") != NULL);
    tc_g.redis.host = path;
    tc_g.redis.port = 0;
    tc_g.redis.connect_timeout = TC_LONG;
    CHECK(tc_settle() == 0);
}

/* Redis stalls under many threads: every one of them DOWN by its deadline. */
static void *
tc_stall_thread(void *arg)
{
    long       *ms = arg;

    return (void *) (long) tc_get(TC_KEY, NULL, ms);
}

static void
test_cache_threads_stall(void)
{
    pthread_t   th[TC_THREADS];
    long        ms[TC_THREADS];
    long        limit = (long) apr_time_as_msec(TC_SHORT);
    int         t;

    tc_g.redis.timeout = TC_SHORT;
    fake_redis_set(FAKE_STALL, -1);
    for (t = 0; t < TC_THREADS; t++)
        pthread_create(&th[t], NULL, tc_stall_thread, &ms[t]);
    for (t = 0; t < TC_THREADS; t++) {
        void       *st;

        pthread_join(th[t], &st);
        CHECK((long) st == BLOG_CACHE_DOWN);
        CHECK(ms[t] < limit + T_MARGIN_MS);
    }
    tc_g.redis.timeout = TC_LONG;
    CHECK(tc_settle() == 0);
}

static void
test_cache_child_exit(void)
{
    apr_pool_destroy(tc_child);
    tc_child = NULL;
    fake_stop(tc_redis);
    t_sockdir_remove(tc_dir);
}

T_WITH(tc_deadline, FAKE_STALL)
T_WITH(tc_deadline, FAKE_PARTIAL_STALL)
T_WITH(tc_bad, FAKE_GARBAGE)
T_WITH(tc_bad, FAKE_OVERSIZE)
T_WITH(tc_bad, FAKE_LONG_LINE)
T_WITH(tc_bad, FAKE_HUGE_ARRAY)

const t_case t_cache_cases[] = {
    {"cache: no lock in the child: every command bypasses",
     test_cache_no_lock},
    {"cache: a page's key", test_cache_key},
    {"cache: BlogRedis Off", test_cache_off},
    {"cache: SET, then GET hits and misses", test_cache_set_get},
    {"cache: a stalled reply ends at BlogRedisTimeout", tc_deadline_FAKE_STALL},
    {"cache: half a reply ends at BlogRedisTimeout", tc_deadline_FAKE_PARTIAL_STALL},
    {"cache: garbage", tc_bad_FAKE_GARBAGE},
    {"cache: a bulk reply declaring 2 MB", tc_bad_FAKE_OVERSIZE},
    {"cache: a status line that never ends", tc_bad_FAKE_LONG_LINE},
    {"cache: an array of 10^6 elements", tc_bad_FAKE_HUGE_ARRAY},
    {"cache: disconnect mid-reply on a new connection",
     test_cache_disconnect_mid_reply},
    {"cache: Redis closed a connection that had answered",
     test_cache_reconnect_after_close},
    {"cache: no semaphore for a command", test_cache_no_semaphore},
    {"cache: GET answered with an integer", test_cache_wrong_type},
    {"cache: a reply nobody asked for", test_cache_unasked},
    {"cache: SET refused or too slow", test_cache_set_refused},
    {"cache: reconnect backoff", test_cache_backoff},
    {"cache: Redis that accepts and closes", test_cache_backoff_closing},
    {"cache: connect refused", test_cache_connect_refused},
    {"cache: a resolver that does not answer", test_cache_resolver_hangs},
    {"cache: queued behind a leader still connecting, by their deadline",
     test_cache_queued_deadline},
    {"cache: threads pipelining on one connection", test_cache_threads},
    {"cache: threads on a stalled Redis", test_cache_threads_stall},
    {"cache: child exit", test_cache_child_exit},
    {NULL, NULL}
};

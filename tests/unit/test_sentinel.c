/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_sentinel.c - the cache's Redis found through Redis Sentinel
 * (sentinel.c, and cache.c on it) against three fake sentinels and two
 * fake Redis servers over TCP (fake_sentinel.c, fake_redis.c): A, the
 * master, and B, its replica, on one store.  Each case starts a child of
 * its own (the watcher, the cache), as httpd's child_init does, and ends
 * it: a sentinel that is unreachable, stalls, sends garbage or too large a
 * reply is passed over for the next; one that names a replica, or that the
 * others contradict, too; none reachable is BYPASS, never an error; a
 * +switch-master event, a failed ROLE check and a -READONLY reply each
 * move the cache to the new master, and nothing more goes to the old one.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apr_strings.h"

#include "store/cache.h"
#include "store/redis.h"
#include "store/sentinel.h"
#include "http_log.h"

#include "backends.h"
#include "fake.h"
#include "harness.h"

#define TS_N        3
#define TS_MASTER   "mymaster"
#define TS_KEY      "blog:page:/post/sentinel"
#define TS_BODY     "<p>sentinel</p>"
/* The watcher acts within a second or two; this is the bound of a wait. */
#define TS_WAIT_MS  (3000 + T_MARGIN_MS)

static apr_pool_t *ts_root;
static apr_pool_t *ts_child;
static server_rec *ts_s;
static fake_server *ts_a, *ts_b, *ts_sn[TS_N];
static int  ts_pa, ts_pb, ts_psn[TS_N];
static blog_sentinel_node ts_nodes[TS_N];
static blog_cache_settings ts_g;
static char ts_why[600];

/* Sentinel i: how it answers and which port it names for TS_MASTER. */
static void
ts_sentinel(int i, fake_mode mode, int port)
{
    fake_sentinel_conf c = {mode, TS_MASTER, "127.0.0.1", port, NULL, NULL};

    fake_sentinel_set(ts_sn[i], &c);
}

static void
ts_all(fake_mode mode, int port)
{
    int         i;

    for (i = 0; i < TS_N; i++)
        ts_sentinel(i, mode, port);
}

static void
ts_child_start(void)
{
    apr_pool_create(&ts_child, ts_root);
    blog_sentinel_child_init(ts_child, ts_s, &ts_g.redis, &ts_g.sentinel);
    blog_cache_child_init(ts_child, ts_s, &ts_g);
}

static void
ts_child_end(void)
{
    apr_pool_destroy(ts_child);
    ts_child = NULL;
    fake_redis_role(ts_a, "master");
    fake_redis_role(ts_b, "slave");
    fake_redis_set(FAKE_OK, 0);
}

static blog_cache_status
ts_get(void)
{
    request_rec *r = t_request(ts_root);
    const char *body = NULL;
    apr_size_t  len = 0;
    blog_cache_status st = blog_cache_get(T_CALL(r), TS_KEY, strlen(TS_KEY), &body,
                                          &len);

    if (st == BLOG_CACHE_HIT)
        CHECK_STR(body, len, TS_BODY);
    apr_pool_destroy(r->pool);
    return st;
}

static int
ts_set(void)
{
    request_rec *r = t_request(ts_root);
    int         rc = blog_cache_set(T_CALL(r), TS_KEY, strlen(TS_KEY), TS_BODY,
                                    strlen(TS_BODY));

    apr_pool_destroy(r->pool);
    return rc;
}

static int
ts_ping(void)
{
    request_rec *r = t_request(ts_root);
    int         rc = blog_cache_ping(T_CALL(r), ts_why, sizeof(ts_why));

    apr_pool_destroy(r->pool);
    return rc;
}

/* Until a GET hits, within TS_WAIT_MS: 0, or -1. */
static int
ts_wait_hit(void)
{
    apr_time_t  t0 = apr_time_now();

    fake_redis_put(TS_KEY, TS_BODY);
    while (t_ms_since(t0) < TS_WAIT_MS) {
        if (ts_get() == BLOG_CACHE_HIT)
            return 0;
        usleep(20000);
    }
    return -1;
}

/* Whether this child's master is 127.0.0.1:port (0: none) within the wait. */
static int
ts_wait_master(int port)
{
    apr_time_t  t0 = apr_time_now();
    char        want[64] = "";
    blog_sentinel_view v;

    if (port != 0)
        snprintf(want, sizeof(want), "127.0.0.1:%d", port);
    while (t_ms_since(t0) < TS_WAIT_MS) {
        if (blog_sentinel_status(&v) == 0 && strcmp(v.master, want) == 0)
            return 1;
        usleep(10000);
    }
    return 0;
}

static int
ts_wait_subscribed(int i)
{
    apr_time_t  t0 = apr_time_now();

    while (fake_sentinel_subscribers(ts_sn[i]) == 0
           && t_ms_since(t0) < TS_WAIT_MS)
        usleep(10000);
    return fake_sentinel_subscribers(ts_sn[i]) > 0;
}

/*
 * The fakes; settings as post_config leaves them (blog_sentinel_load).
 * Without sentinels configured nothing starts, and connects go to BlogRedis.
 */
static void
test_sentinel_setup(void)
{
    char        err[256];
    int         i;
    apr_uint32_t gen = 7;
    blog_redis  r;

    ts_root = t_root();
    ts_s = apr_pcalloc(ts_root, sizeof(*ts_s));
    ts_s->log.level = APLOG_DEBUG;
    fake_redis_clear();
    ts_a = fake_redis_start_tcp("master", &ts_pa);
    ts_b = fake_redis_start_tcp("slave", &ts_pb);
    for (i = 0; i < TS_N; i++) {
        ts_sn[i] = fake_sentinel_start(&ts_psn[i]);
        ts_nodes[i] = (blog_sentinel_node) {"127.0.0.1", ts_psn[i]};
    }
    ts_g.redis.on = 1;
    ts_g.redis.host = "127.0.0.1";
    ts_g.redis.port = ts_pb;
    ts_g.redis.connect_timeout = apr_time_from_msec(500);
    ts_g.redis.timeout = apr_time_from_msec(500);
    ts_g.cache_ttl = 60;
    /* no sentinels: no watcher, BlogRedis's address, generation 0 */
    CHECK(blog_sentinel_load(ts_root, &ts_g.sentinel, &ts_g.redis, err,
                             sizeof(err)) == 0);
    ts_child_start();
    CHECK(blog_sentinel_generation() == 0);
    CHECK(blog_sentinel_status(&(blog_sentinel_view) {0}) == -1);
    memset(&r, 0, sizeof(r));
    r.max_bulk = 1024;
    CHECK(blog_sentinel_connect(&r, &ts_g.redis, &ts_g.sentinel, &gen, err,
                                sizeof(err)) == 0 && gen == 0);
    CHECK(fake_redis_node_roles(ts_b) == 0);    /* no ROLE asked */
    blog_redis_close(&r);
    ts_child_end();
    ts_g.sentinel.list = (blog_sentinel_list) {TS_N, 0, ts_nodes};
    ts_g.sentinel.master = TS_MASTER;
    CHECK(blog_sentinel_load(ts_root, &ts_g.sentinel, &ts_g.redis, err,
                             sizeof(err)) == 0);
    CHECK(ts_g.redis.port == 0 && strstr(ts_g.redis.host, TS_MASTER));
}

/* The first sentinel names the master: ROLE checked, pages cached there,
 * the sentinel subscribed to, nothing to the replica. */
static void
test_sentinel_found(void)
{
    unsigned    n = t_log_count();
    unsigned    roles = fake_redis_node_roles(ts_a);
    unsigned    b = fake_redis_node_cmds(ts_b);
    blog_sentinel_view v;

    ts_all(FAKE_OK, ts_pa);
    ts_child_start();
    CHECK(ts_wait_master(ts_pa));
    CHECK(t_log_since(n, "the master of " TS_MASTER " is 127.0.0.1:"));
    CHECK(ts_set() == 0);
    CHECK(ts_wait_hit() == 0);
    /* the watcher's check, then the cache's own on its new connection */
    CHECK(fake_redis_node_roles(ts_a) >= roles + 2);
    CHECK(fake_redis_node_cmds(ts_b) == b);
    CHECK(ts_wait_subscribed(0));
    CHECK(fake_sentinel_asks(ts_sn[1]) == 0 && fake_sentinel_asks(ts_sn[2]) == 0);
    CHECK(blog_sentinel_status(&v) == 0 && v.changes == 0
          && strcmp(v.name, TS_MASTER) == 0 && v.switched == 0);
    ts_child_end();
}

/* Sentinels that close, stall, send garbage or a 2 MB reply: the next. */
static void
ts_passed_over(fake_mode first, fake_mode second)
{
    unsigned    n = t_log_count();
    apr_time_t  t0 = apr_time_now();

    ts_sentinel(0, first, ts_pa);
    ts_sentinel(1, second, ts_pa);
    ts_sentinel(2, FAKE_OK, ts_pa);
    ts_child_start();
    CHECK(ts_wait_master(ts_pa));
    CHECK(t_ms_since(t0) < 2 * 1000 + T_MARGIN_MS);
    CHECK(ts_wait_hit() == 0);
    CHECK(t_log_since(n, "asking the next"));
    CHECK(fake_sentinel_asks(ts_sn[2]) > 0);
    ts_child_end();
}

static void
test_sentinel_unreachable(void)
{
    ts_passed_over(FAKE_CLOSE, FAKE_STALL);
}

static void
test_sentinel_bad_replies(void)
{
    ts_passed_over(FAKE_OVERSIZE, FAKE_GARBAGE);
}

/* One names the replica: it answers ROLE as a slave, and gets nothing
 * else; the next sentinel names the master. */
static void
test_sentinel_names_replica(void)
{
    unsigned    n = t_log_count();
    unsigned    b = fake_redis_node_cmds(ts_b);
    unsigned    broles = fake_redis_node_roles(ts_b);

    ts_sentinel(0, FAKE_OK, ts_pb);
    ts_sentinel(1, FAKE_OK, ts_pa);
    ts_sentinel(2, FAKE_OK, ts_pb);
    ts_child_start();
    CHECK(ts_wait_master(ts_pa));
    CHECK(ts_wait_hit() == 0);
    CHECK(ts_set() == 0);
    CHECK(t_log_since(n, "ROLE says slave"));
    CHECK(fake_redis_node_roles(ts_b) > broles);
    CHECK(fake_redis_node_cmds(ts_b) == b);
    ts_child_end();
}

/*
 * The sentinels contradict each other, and the master they disagree on is
 * demoted without an event: the SET it refuses (-READONLY) has the watcher
 * ask again, check each answer's ROLE, and move to the other.
 */
static void
test_sentinel_contradict_readonly(void)
{
    unsigned    n = t_log_count();
    unsigned    a;

    ts_sentinel(0, FAKE_OK, ts_pa);
    ts_sentinel(1, FAKE_OK, ts_pb);
    ts_sentinel(2, FAKE_OK, ts_pb);
    ts_child_start();
    CHECK(ts_wait_master(ts_pa));
    CHECK(ts_wait_hit() == 0);
    fake_redis_role(ts_a, "slave");
    fake_redis_role(ts_b, "master");
    CHECK(ts_set() == -1);      /* -READONLY: not stored, BYPASS's way */
    CHECK(ts_wait_master(ts_pb));
    a = fake_redis_node_cmds(ts_a);
    CHECK(ts_wait_hit() == 0);
    CHECK(ts_set() == 0);
    CHECK(fake_redis_node_cmds(ts_a) == a);
    CHECK(t_log_since(n, "(was 127.0.0.1:"));
    ts_child_end();
}

/*
 * Every sentinel names a Redis that answers ROLE as a replica: no master,
 * pages BYPASS without an error and nothing is sent to the replica but
 * ROLE; the master named again, the cache is back within the watcher's
 * next ask.
 */
static void
test_sentinel_role_fails(void)
{
    unsigned    n = t_log_count();
    unsigned    a;

    fake_redis_role(ts_a, "slave");
    ts_all(FAKE_OK, ts_pa);
    ts_child_start();
    a = fake_redis_node_cmds(ts_a);
    CHECK(ts_ping() == -1 && strstr(ts_why, "no master known") != NULL);
    CHECK(strstr(ts_why, "(the master of " TS_MASTER "): ") != NULL);
    CHECK(ts_get() == BLOG_CACHE_DOWN);
    CHECK(ts_set() == -1);
    CHECK(fake_redis_node_cmds(ts_a) == a);
    CHECK(t_log_since(n, "no master of " TS_MASTER " known"));
    fake_redis_role(ts_a, "master");
    CHECK(ts_wait_hit() == 0);
    ts_child_end();
}

/*
 * A master demoted while the cache's connection is closed: the new
 * connection's ROLE check fails (BYPASS, logged), the watcher asks again,
 * and the cache follows the master the sentinels name now.
 */
static void
test_sentinel_role_check_on_connect(void)
{
    unsigned    n;
    blog_sentinel_view v;

    ts_all(FAKE_OK, ts_pa);
    ts_child_start();
    CHECK(ts_wait_hit() == 0);
    fake_redis_role(ts_a, "slave");
    fake_redis_set(FAKE_CLOSE, 1);      /* Sentinel's CLIENT KILL */
    n = t_log_count();
    CHECK(ts_get() == BLOG_CACHE_DOWN);
    CHECK(t_log_since(n, "is not the master of " TS_MASTER));
    usleep(200000);
    fake_redis_role(ts_b, "master");
    ts_all(FAKE_OK, ts_pb);
    CHECK(ts_wait_master(ts_pb));
    CHECK(ts_wait_hit() == 0);
    /* from the failed check to the new master learnt */
    CHECK(blog_sentinel_status(&v) == 0 && v.changes == 1
          && v.without >= 0.2 && v.without < 0.2 + TS_WAIT_MS / 1000.0);
    ts_child_end();
}

/*
 * +switch-master on the subscribed sentinel: the address follows at once
 * (the sentinels are not asked), the open connection to the old master is
 * closed before the next command, and the switch is in the log and the
 * status with the time the cache went without a master.
 */
static void
test_sentinel_switch_event(void)
{
    char        ev[128];
    unsigned    n = t_log_count();
    unsigned    a, asks;
    blog_sentinel_view v;

    ts_all(FAKE_OK, ts_pa);
    ts_child_start();
    CHECK(ts_wait_hit() == 0);
    CHECK(ts_wait_subscribed(0));
    /* another master's switch changes nothing */
    CHECK(fake_sentinel_publish(ts_sn[0], "+switch-master",
                                "other 127.0.0.1 1 127.0.0.1 2") == 1);
    fake_redis_role(ts_a, "slave");
    fake_redis_role(ts_b, "master");
    asks = fake_sentinel_asks(ts_sn[0]);
    snprintf(ev, sizeof(ev), TS_MASTER " 127.0.0.1 %d 127.0.0.1 %d", ts_pa,
             ts_pb);
    CHECK(fake_sentinel_publish(ts_sn[0], "+switch-master", ev) == 1);
    CHECK(ts_wait_master(ts_pb));
    CHECK(fake_sentinel_asks(ts_sn[0]) == asks);
    /* a while with nothing asked of the cache: not a time without a master */
    usleep(300000);
    a = fake_redis_node_cmds(ts_a);
    CHECK(ts_wait_hit() == 0);
    CHECK(fake_redis_node_cmds(ts_a) == a);
    CHECK(t_log_since(n, "+switch-master from sentinel 127.0.0.1:"));
    CHECK(t_log_since(n, "the cache ran without a master for"));
    CHECK(blog_sentinel_status(&v) == 0 && v.changes == 1 && v.switched != 0
          && strstr(v.next, apr_itoa(ts_root, ts_pb))
          && strstr(v.previous, apr_itoa(ts_root, ts_pa)));
    CHECK(v.without == 0);
    ts_child_end();
}

/*
 * A master that answers ROLE as one is not given up for a replica the
 * sentinels name (a sentinel's mistake): while a timeout has the watcher
 * ask again, the cache stays on it.
 */
static void
test_sentinel_keeps_master(void)
{
    blog_sentinel_view v;
    apr_time_t  t0;

    ts_all(FAKE_OK, ts_pa);
    ts_child_start();
    CHECK(ts_wait_hit() == 0);
    ts_all(FAKE_OK, ts_pb);
    fake_redis_set(FAKE_STALL, 1);
    CHECK(ts_get() == BLOG_CACHE_DOWN);     /* a timeout: the watcher asks */
    t0 = apr_time_now();
    while (fake_sentinel_asks(ts_sn[0]) < 3 && t_ms_since(t0) < TS_WAIT_MS)
        usleep(20000);
    usleep(200000);
    CHECK(blog_sentinel_status(&v) == 0
          && strstr(v.master, apr_itoa(ts_root, ts_pa)) != NULL);
    CHECK(ts_wait_hit() == 0);
    ts_child_end();
}

/* No sentinel answers: BYPASS, never an error, said in the health check's
 * reason; one answers again, and the cache comes back. */
static void
test_sentinel_none_reachable(void)
{
    unsigned    n = t_log_count();
    apr_time_t  t0;
    long        ms;

    ts_all(FAKE_CLOSE, ts_pa);
    ts_child_start();
    t0 = apr_time_now();
    CHECK(ts_ping() == -1 && strstr(ts_why, "no master known") != NULL
          && strstr(ts_why, "no sentinel answered") != NULL);
    CHECK(ts_get() == BLOG_CACHE_DOWN);
    ms = t_ms_since(t0);
    CHECK(ms < 500);            /* no connect tried: nowhere to go */
    CHECK(t_log_since(n, "no master of " TS_MASTER " known"));
    ts_sentinel(1, FAKE_OK, ts_pa);
    CHECK(ts_wait_hit() == 0);
    ts_child_end();
}

/* BlogRedisSentinelAuth: a sentinel that refuses it is passed over. */
static void
test_sentinel_auth(void)
{
    fake_sentinel_conf good = {FAKE_OK, TS_MASTER, "127.0.0.1", 0, "blog",
        "secret"};
    fake_sentinel_conf other = good;
    unsigned    n = t_log_count();

    good.port = other.port = ts_pa;
    other.pass = "another";
    fake_sentinel_set(ts_sn[0], &other);
    fake_sentinel_set(ts_sn[1], &good);
    fake_sentinel_set(ts_sn[2], &good);
    ts_g.sentinel.user = "blog";
    ts_g.sentinel.pass = "secret";
    ts_child_start();
    CHECK(ts_wait_hit() == 0);
    CHECK(t_log_since(n, "WRONGPASS"));
    CHECK(ts_wait_subscribed(1));
    ts_child_end();
    ts_g.sentinel.user = ts_g.sentinel.pass = NULL;
}

/* The subscribed sentinel stops answering: its PING goes unanswered, and
 * the watcher subscribes to the next one. */
static void
test_sentinel_stalled_subscription(void)
{
    ts_all(FAKE_OK, ts_pa);
    ts_child_start();
    CHECK(ts_wait_subscribed(0));
    ts_sentinel(0, FAKE_STALL, ts_pa);
    CHECK(ts_wait_subscribed(1));
    CHECK(ts_wait_hit() == 0);
    ts_child_end();
}

static void
test_sentinel_teardown(void)
{
    int         i;

    for (i = 0; i < TS_N; i++)
        fake_sentinel_stop(ts_sn[i]);
    fake_redis_stop_tcp(ts_a);
    fake_redis_stop_tcp(ts_b);
    fake_redis_clear();
    memset(&ts_g, 0, sizeof(ts_g));
}

const t_case t_sentinel_cases[] = {
    {"sentinel: none configured: BlogRedis, no watcher, no ROLE",
     test_sentinel_setup},
    {"sentinel: the master found, its ROLE checked, subscribed",
     test_sentinel_found},
    {"sentinel: one closes, one stalls: the next is asked",
     test_sentinel_unreachable},
    {"sentinel: a 2 MB reply, garbage: the next is asked",
     test_sentinel_bad_replies},
    {"sentinel: one names the replica: passed over, the replica gets nothing",
     test_sentinel_names_replica},
    {"sentinel: they contradict, -READONLY: the other checked and taken",
     test_sentinel_contradict_readonly},
    {"sentinel: every one names a replica: BYPASS, nothing sent to it",
     test_sentinel_role_fails},
    {"sentinel: a failed ROLE check on a new connection: the next master",
     test_sentinel_role_check_on_connect},
    {"sentinel: +switch-master moves the cache, logged with its time",
     test_sentinel_switch_event},
    {"sentinel: a master is kept when the sentinels name a replica",
     test_sentinel_keeps_master},
    {"sentinel: none reachable: BYPASS, never an error, then back",
     test_sentinel_none_reachable},
    {"sentinel: BlogRedisSentinelAuth, a sentinel that refuses it",
     test_sentinel_auth},
    {"sentinel: a subscription that stalls: the next sentinel",
     test_sentinel_stalled_subscription},
    {"sentinel: teardown", test_sentinel_teardown},
    {NULL, NULL}
};

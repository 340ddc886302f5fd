/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_invalidate.c - the invalidation listener (invalidate.c) against
 * fake_pg.c and fake_redis.c, driven through the hooks it registers, as
 * httpd calls them: the listener's thread LISTENs, drops every page key
 * of its mounts when it starts (another mount's stay), deletes the keys a
 * notification names under every mount, and after a lost PostgreSQL
 * connection, a LISTEN refused or a Redis that failed while a delete was
 * due, drops every page key again once it can; each delete and each drop
 * is done again twice later (50 ms, BlogQueryTimeout + BlogRedisTimeout).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apr_general.h"
#include "apr_strings.h"
#include "http_core.h"
#include "http_log.h"

#include "store/cache.h"
#include "store/db.h"
#include "store/invalidate.h"
#include "httpd/invalidate_hooks.h"

#include "backends.h"
#include "fake.h"
#include "harness.h"

static apr_pool_t *ti_root;
static apr_pool_t *ti_conf;
static apr_pool_t *ti_child;
static server_rec *ti_s;
static const char *ti_dir;
static fake_server *ti_pg, *ti_redis;
static blog_db_settings ti_db;
static blog_cache_settings ti_cache;

/* Generous: the listener's steps take milliseconds, its backoff 1 s. */
#define TI_WAIT_MS (5000 + T_MARGIN_MS)

static const char *const ti_bases[] = {"", "/blog", ""};

static void
ti_configure(int on)
{
    if (ti_conf != NULL)
        apr_pool_destroy(ti_conf);
    apr_pool_create(&ti_conf, ti_root);
    blog_invalidate_configure(ti_conf, ti_s, on, NULL, &ti_db, &ti_cache,
                              ti_bases, 3);
    blog_invalidate_register_hooks();
    CHECK(t_hook.pre_config(ti_conf, ti_conf, ti_conf) == OK);
    CHECK(t_hook.post_config(ti_conf, ti_conf, ti_conf, ti_s) == OK);
}

static void
ti_child_start(void)
{
    apr_pool_create(&ti_child, ti_root);
    t_hook.child_init(ti_child, ti_s);
}

static int
ti_wait_listeners(int n)
{
    apr_time_t  t0 = apr_time_now();

    while (fake_pg_listeners() != n && t_ms_since(t0) < TI_WAIT_MS)
        usleep(5000);
    return fake_pg_listeners() == n;
}

/*
 * The fake PostgreSQL's LISTEN and startup behaving so from now on, its
 * listener killed: the connections accepted before.
 */
static unsigned
ti_kill_listener(fake_mode listen, fake_mode startup)
{
    fake_pg_conf c = {0};
    unsigned    a = fake_accepts(ti_pg);

    c.listen = listen;
    c.startup = startup;
    fake_pg_set(&c);
    fake_pg_kill_listeners();
    CHECK(ti_wait_listeners(0));
    return a;
}

/* Whether the fake PostgreSQL accepted at least n connections in time. */
static int
ti_wait_accepts(unsigned n)
{
    apr_time_t  t0 = apr_time_now();

    while (fake_accepts(ti_pg) < n && t_ms_since(t0) < TI_WAIT_MS)
        usleep(5000);
    return fake_accepts(ti_pg) >= n;
}

/* A drop's two repeats: the SCANs after command index at (50 ms, 4 s). */
static void
ti_wait_repeats(int at)
{
    CHECK(at > 0);
    at = at > 0 ? fake_redis_wait_cmd((unsigned) at, "SCAN", TI_WAIT_MS) : -1;
    CHECK(at > 0);
    at = at > 0 ? fake_redis_wait_cmd((unsigned) at, "SCAN", TI_WAIT_MS) : -1;
    CHECK(at > 0);
}

static int
ti_wait_gone(const char *key)
{
    apr_time_t  t0 = apr_time_now();

    while (fake_redis_has(key) && t_ms_since(t0) < TI_WAIT_MS)
        usleep(5000);
    return !fake_redis_has(key);
}

static void
test_inv_not_configured(void)
{
    server_rec *s;

    ti_root = t_root();
    s = apr_pcalloc(ti_root, sizeof(*s));
    s->log.level = APLOG_DEBUG;
    ti_s = s;
    ti_dir = t_sockdir(ti_root);
    ti_pg = fake_pg_start(ti_dir);
    ti_redis = fake_redis_start(apr_pstrcat(ti_root, ti_dir, "/redis.sock",
                                            (char *) NULL));
    ti_db.conninfo = apr_psprintf(ti_root, "host=%s port=5432 "
                                  "sslmode=disable gssencmode=disable",
                                  ti_dir);
    /*
     * Long enough for a loaded machine under valgrind (LISTEN alone took
     * a good part of 300 ms there); the last repeat of a delete comes
     * after both (4 s), within TI_WAIT_MS.
     */
    ti_db.query_timeout = apr_time_from_sec(2);
    ti_cache.redis.on = 1;
    ti_cache.redis.host = apr_pstrcat(ti_root, ti_dir, "/redis.sock",
                                      (char *) NULL);
    ti_cache.redis.port = 0;
    ti_cache.redis.connect_timeout = apr_time_from_msec(300);
    ti_cache.redis.timeout = apr_time_from_sec(2);
    /* BlogCacheKey: the listener keeps the pages' last invalidations */
    ti_cache.cache_ttl = 60;
    CHECK(blog_seal_init(&ti_cache.seal, ti_root,
                         "0123456789abcdef0123456789abcdef", 32) == 0);
    /* BlogInvalidate Off: no thread, no connection */
    ti_configure(0);
    ti_child_start();
    usleep(50000);
    CHECK(fake_accepts(ti_pg) == 0);
    apr_pool_destroy(ti_child);
    /* no mutex, no listener: said once, the server refuses to start */
    apr_pool_destroy(ti_conf);
    apr_pool_create(&ti_conf, ti_root);
    blog_invalidate_configure(ti_conf, ti_s, 1, NULL, &ti_db, &ti_cache,
                              ti_bases, 3);
    t_mutex_fail = 1;
    CHECK(t_hook.post_config(ti_conf, ti_conf, ti_conf, ti_s)
          == HTTP_INTERNAL_SERVER_ERROR);
    t_mutex_fail = 0;
    /* the first pass over the configuration makes no mutex */
    t_main_state = AP_SQ_MS_CREATE_PRE_CONFIG;
    CHECK(t_hook.post_config(ti_conf, ti_conf, ti_conf, ti_s) == OK);
    t_main_state = AP_SQ_MS_RUN_MPM;
}

/*
 * At start: LISTEN, then every page key of its mounts ("/" and "/blog")
 * goes, three times; another mount's pages, and what is no page a mount
 * stores, stay.
 */
static void
test_inv_start_flushes(void)
{
    static const char *const gone[] = {
        "blog:page:/", "blog:page:/post/a", "blog:page:/blog/",
        "blog:page:/blog/post/b"
    };
    static const char *const kept[] = {
        "blog:page:/elsewhere/", "blog:page:/elsewhere/post/a",
        "blog:page:/blog/tag/b", "blog:page:/post/a/cached",
        "blog:page:/blog/post/", "blog:page:health", "other:key"
    };
    size_t      i;
    int         at;

    for (i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        fake_redis_put(gone[i], "x");
    for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        fake_redis_put(kept[i], "x");
    ti_configure(1);
    ti_child_start();
    CHECK(ti_wait_listeners(1));
    at = fake_redis_wait_cmd(0, "SCAN 0 MATCH blog:page:* COUNT 1000",
                             TI_WAIT_MS);
    for (i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        CHECK(ti_wait_gone(gone[i]));
    ti_wait_repeats(at);
    for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        CHECK(fake_redis_has(kept[i]));
    fake_redis_clear();
}

/*
 * A notification: its keys under every mount (each mount once), deleted
 * at once and again twice (after 50 ms, after BlogQueryTimeout +
 * BlogRedisTimeout); what is not a page key of ours is ignored.
 */
static void
test_inv_notify_deletes(void)
{
    static const char want[] = "DEL blog:page:/post/x blog:page:/blog/post/x "
        "blog:page:/ blog:page:/blog/";
    unsigned    n = fake_redis_ncmds();
    int         at;

    fake_redis_put("blog:page:/post/x", "x");
    fake_redis_put("blog:page:/blog/post/x", "x");
    fake_pg_notify("blog:page:/post/x other:page:/y blog:page:/ blog:page:");
    CHECK(ti_wait_gone("blog:page:/post/x"));
    CHECK(ti_wait_gone("blog:page:/blog/post/x"));
    at = fake_redis_wait_cmd(n, want, TI_WAIT_MS);
    CHECK(at > 0);
    at = fake_redis_wait_cmd((unsigned) at, want, TI_WAIT_MS);
    CHECK(at > 0);
    at = fake_redis_wait_cmd((unsigned) at, want, TI_WAIT_MS);
    CHECK(at > 0);
    /* a key that names nothing of ours: nothing sent */
    n = fake_redis_ncmds();
    fake_pg_notify("other:page:/z");
    usleep(100000);
    CHECK(fake_redis_wait_cmd(n, "DEL", 0) < 0);
}

/*
 * "*" (pg_blog's "more than 200 pages"): every page, and again twice, so
 * that a miss whose SET lands after the SCAN passed its key (it read
 * PostgreSQL before the commit) goes by the bound too.
 */
static void
test_inv_notify_all(void)
{
    unsigned    n = fake_redis_ncmds();
    int         at;

    fake_redis_put("blog:page:/post/y", "y");
    fake_pg_notify("*");
    at = fake_redis_wait_cmd(n, "SCAN", TI_WAIT_MS);
    CHECK(at > 0);
    CHECK(ti_wait_gone("blog:page:/post/y"));
    at = fake_redis_wait_cmd((unsigned) at, "SCAN", TI_WAIT_MS);
    CHECK(at > 0);
    /* the late SET, after the second drop: the third takes it */
    fake_redis_put("blog:page:/post/late", "old");
    CHECK(ti_wait_gone("blog:page:/post/late"));
    at = at > 0 ? fake_redis_wait_cmd((unsigned) at, "SCAN", 0) : -1;
    CHECK(at > 0);
    usleep(500000);
    CHECK(at > 0 && fake_redis_wait_cmd((unsigned) at, "SCAN", 0) < 0);
}

/* One GET through the cache: its status, the body compared if want. */
static blog_cache_status
ti_get(const char *key, const char *want)
{
    request_rec *r = t_request(ti_root);
    const char *body = NULL;
    apr_size_t  len = 0;
    blog_cache_status st = blog_cache_get(T_CALL(r), key, strlen(key), &body, &len);

    if (st == BLOG_CACHE_HIT && want != NULL)
        CHECK_STR(body, len, want);
    apr_pool_destroy(r->pool);
    return st;
}

static int
ti_set(const char *key, const char *body)
{
    request_rec *r = t_request(ti_root);
    int         rc = blog_cache_set(T_CALL(r), key, strlen(key), body, strlen(body));

    apr_pool_destroy(r->pool);
    return rc;
}

/*
 * BlogCacheKey: a page sealed before the listener heard its key made
 * stale (a write's NOTIFY, under every mount; a "*"), then written back
 * into Redis, is a miss; one sealed after, or a page not named, is a hit.
 */
static void
test_inv_replay_refused(void)
{
    static const char *const keys[] = {
        "blog:page:/post/r", "blog:page:/blog/post/r", "blog:page:/post/s"
    };
    char       *old[3];
    size_t      len[3];
    unsigned    n;
    int         i, at;

    /* the seal on since the configuration: the listener keeps the table */
    CHECK(ti_cache.seal.on);
    blog_cache_child_init(ti_child, ti_s, &ti_cache);
    for (i = 0; i < 3; i++) {
        CHECK(ti_set(keys[i], "the page before") == 0);
        old[i] = fake_redis_get(keys[i], &len[i]);
        CHECK(old[i] != NULL && ti_get(keys[i], "the page before")
              == BLOG_CACHE_HIT);
    }
    fake_pg_notify("blog:page:/post/r");
    CHECK(ti_wait_gone(keys[0]) && ti_wait_gone(keys[1]));
    for (i = 0; i < 3 && old[0] && old[1] && old[2]; i++)
        fake_redis_put_bytes(keys[i], old[i], len[i]);
    CHECK(ti_get(keys[0], NULL) == BLOG_CACHE_MISS);
    CHECK(ti_get(keys[1], NULL) == BLOG_CACHE_MISS);
    CHECK(ti_get(keys[2], "the page before") == BLOG_CACHE_HIT);
    CHECK(ti_set(keys[0], "the page after") == 0);
    CHECK(ti_get(keys[0], "the page after") == BLOG_CACHE_HIT);
    /* "*": every page; the copies written back once it deleted them */
    n = fake_redis_ncmds();
    fake_pg_notify("*");
    at = fake_redis_wait_cmd(n, "SCAN", TI_WAIT_MS);
    CHECK(at > 0 && ti_wait_gone(keys[2]));
    fake_redis_put_bytes(keys[2], old[2], len[2]);
    CHECK(ti_get(keys[2], NULL) == BLOG_CACHE_MISS);
    for (i = 0; i < 3; i++)
        free(old[i]);
    fake_redis_clear();
}

/*
 * Redis fails while a delete is due: every page goes once it answers.  A
 * connection that had worked and is found closed is Redis restarted: the
 * DEL is sent again on a new one, and nothing else goes.
 */
static void
test_inv_redis_fails(void)
{
    static const struct
    {
        fake_mode   mode;
        int         flush;
    } cases[] = {
        {FAKE_STALL, 1}, {FAKE_GARBAGE, 1}, {FAKE_OVERSIZE, 1},
        {FAKE_ERROR, 1}, {FAKE_PARTIAL_CLOSE, 0}, {FAKE_CLOSE, 0}
    };
    size_t      i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned    n = fake_redis_ncmds();
        int         at;

        fake_redis_put("blog:page:/post/z", "z");
        fake_redis_set(cases[i].mode, 1);
        fake_pg_notify("blog:page:/post/q");
        at = fake_redis_wait_cmd(n, "DEL blog:page:/post/q", TI_WAIT_MS);
        CHECK(at > 0);
        if (cases[i].flush) {
            at = fake_redis_wait_cmd(n, "SCAN", TI_WAIT_MS);
            CHECK(ti_wait_gone("blog:page:/post/z"));
            ti_wait_repeats(at);
        }
        else {
            CHECK(at > 0 && fake_redis_wait_cmd((unsigned) at,
                                                "DEL blog:page:/post/q",
                                                TI_WAIT_MS) > 0);
            /* no flush: nothing failed */
            usleep(700000);
            CHECK(fake_redis_wait_cmd(n, "SCAN", 0) < 0);
            CHECK(fake_redis_has("blog:page:/post/z"));
        }
        if (t_case_failures) {
            fprintf(stderr, "  (mode %d)\n", (int) cases[i].mode);
            break;
        }
    }
}

/* The PostgreSQL connection lost: it listens again, and flushes. */
static void
test_inv_pg_lost(void)
{
    unsigned    n = fake_redis_ncmds();
    unsigned    a;
    int         at;

    fake_redis_put("blog:page:/post/w", "w");
    a = ti_kill_listener(FAKE_OK, FAKE_OK);
    CHECK(ti_wait_listeners(1));
    CHECK(fake_accepts(ti_pg) > a);
    at = fake_redis_wait_cmd(n, "SCAN", TI_WAIT_MS);
    CHECK(ti_wait_gone("blog:page:/post/w"));
    /* a miss that read before the gap: the drop is repeated too */
    ti_wait_repeats(at);
}

/*
 * A gap in listening (PostgreSQL gone) stops the repeats due: the pages
 * are all a reader has then; the next LISTEN's drop covers them.
 */
static void
test_inv_gap_holds_repeats(void)
{
    unsigned    n = fake_redis_ncmds();
    int         at;

    fake_pg_notify("blog:page:/post/g");
    at = fake_redis_wait_cmd(n, "DEL blog:page:/post/g", TI_WAIT_MS);
    CHECK(at > 0);
    ti_kill_listener(FAKE_OK, FAKE_CLOSE);
    fake_redis_put("blog:page:/post/g", "cached in the gap");
    usleep((useconds_t) apr_time_as_msec(ti_db.query_timeout
                                         + ti_cache.redis.timeout) * 1000
           + 500000);
    CHECK(fake_redis_has("blog:page:/post/g"));
    CHECK(at > 0 && fake_redis_wait_cmd((unsigned) at, "DEL", 0) < 0);
    fake_pg_set(&(fake_pg_conf) {0});
    CHECK(ti_wait_listeners(1));
    CHECK(ti_wait_gone("blog:page:/post/g"));
}

/* LISTEN refused, then the startup stalled: retried until it works. */
static void
test_inv_listen_refused(void)
{
    fake_pg_conf c = {0};

    CHECK(ti_wait_accepts(ti_kill_listener(FAKE_ERROR, FAKE_OK) + 3));
    CHECK(fake_pg_listeners() == 0);
    /* still refused: a connection under way when this changes fails */
    c.listen = FAKE_ERROR;
    c.startup = FAKE_STALL;
    fake_pg_set(&c);
    CHECK(ti_wait_accepts(fake_accepts(ti_pg) + 2));
    fake_pg_set(&(fake_pg_conf) {0});
    CHECK(ti_wait_listeners(1));
}

/* Redis unreachable at the start: the flush waits for it. */
static void
test_inv_redis_down_at_start(void)
{
    const char *good = ti_cache.redis.host;
    unsigned    n;

    t_hook.child_stopping(ti_child, 1);
    CHECK(ti_wait_listeners(0));
    apr_pool_destroy(ti_child);
    ti_cache.redis.host = apr_pstrcat(ti_root, ti_dir, "/none.sock",
                                      (char *) NULL);
    fake_redis_put("blog:page:/post/v", "v");
    /* a new child: the listener's state as the fork gives it */
    ti_configure(1);
    ti_child_start();
    CHECK(ti_wait_listeners(1));
    usleep(200000);
    CHECK(fake_redis_has("blog:page:/post/v"));
    n = fake_redis_ncmds();
    ti_cache.redis.host = good;
    CHECK(fake_redis_wait_cmd(n, "SCAN", TI_WAIT_MS) > 0);
    CHECK(ti_wait_gone("blog:page:/post/v"));
}

/*
 * PostgreSQL frozen (its startup never answers) under a connect whose
 * deadline is far: child_stopping, graceful then ungraceful (the event
 * MPM's listener thread, then its main thread), returns at once, each
 * time; the child's exit (its pool cleanup) waits for the thread, which
 * ends with the connect.
 */
static void
test_inv_stop_frozen_pg(void)
{
    apr_interval_time_t timeout = ti_db.query_timeout;
    apr_time_t  t0;
    long        ms;

    ti_db.query_timeout = apr_time_from_msec(T_MARGIN_MS + 3000);
    /* a connect under way */
    CHECK(ti_wait_accepts(ti_kill_listener(FAKE_OK, FAKE_STALL) + 1));
    t0 = apr_time_now();
    t_hook.child_stopping(ti_child, 1);
    t_hook.child_stopping(ti_child, 0);
    ms = t_ms_since(t0);
    CHECK(ms < T_MARGIN_MS);
    /* the connect ends (the server gives up): the thread with it */
    fake_release(ti_pg);
    t0 = apr_time_now();
    apr_pool_destroy(ti_child);
    CHECK(t_ms_since(t0) < T_MARGIN_MS);
    CHECK(ti_wait_listeners(0));
    ti_db.query_timeout = timeout;
    fake_pg_set(&(fake_pg_conf) {0});
    ti_configure(1);
    ti_child_start();
    CHECK(ti_wait_listeners(1));
}

/* The listener's child stopped and gone. */
static void
ti_child_end(void)
{
    t_hook.child_stopping(ti_child, 1);
    CHECK(ti_wait_listeners(0));
    apr_pool_destroy(ti_child);
}

/*
 * With sentinels: a new master (+switch-master) has every page key of the
 * mounts dropped from it at once, as deletes sent to the old one may not
 * have reached it before the switch; the next notification's DEL goes to
 * the new one, nothing to the old.  A and B: fake Redis servers over TCP
 * on the one store, the replica refusing writes.
 */
static void
test_inv_sentinel_switch(void)
{
    blog_redis_settings plain = ti_cache.redis;
    blog_sentinel_node node;
    fake_server *sn, *a, *b;
    int         ps, pa, pb;
    char        ev[128], err[128];
    unsigned    na, nb;
    apr_time_t  t0;

    ti_child_end();
    a = fake_redis_start_tcp("master", &pa);
    b = fake_redis_start_tcp("slave", &pb);
    sn = fake_sentinel_start(&ps);
    fake_sentinel_set(sn, &(fake_sentinel_conf) {FAKE_OK, "m", "127.0.0.1",
                      pa, NULL, NULL});
    node = (blog_sentinel_node) {"127.0.0.1", ps};
    ti_cache.sentinel.list = (blog_sentinel_list) {1, 0, &node};
    ti_cache.sentinel.master = "m";
    CHECK(blog_sentinel_load(ti_root, &ti_cache.sentinel, &ti_cache.redis,
                             err, sizeof(err)) == 0);
    ti_configure(1);
    apr_pool_create(&ti_child, ti_root);
    blog_sentinel_child_init(ti_child, ti_s, &ti_cache.redis,
                             &ti_cache.sentinel);
    t_hook.child_init(ti_child, ti_s);
    CHECK(ti_wait_listeners(1));
    /* the start's drop, on A; the watcher subscribed */
    t0 = apr_time_now();
    while ((fake_redis_node_cmds(a) == 0 || fake_sentinel_subscribers(sn) == 0)
           && t_ms_since(t0) < TI_WAIT_MS)
        usleep(5000);
    CHECK(fake_redis_node_cmds(a) > 0 && fake_sentinel_subscribers(sn) == 1);
    nb = fake_redis_node_cmds(b);
    fake_redis_role(a, "slave");
    fake_redis_role(b, "master");
    fake_redis_put("blog:page:/post/s", "s");
    snprintf(ev, sizeof(ev), "m 127.0.0.1 %d 127.0.0.1 %d", pa, pb);
    CHECK(fake_sentinel_publish(sn, "+switch-master", ev) == 1);
    CHECK(ti_wait_gone("blog:page:/post/s"));
    CHECK(fake_redis_node_cmds(b) > nb);
    na = fake_redis_node_cmds(a);
    fake_redis_put("blog:page:/post/t", "t");
    fake_pg_notify("blog:page:/post/t");
    CHECK(ti_wait_gone("blog:page:/post/t"));
    CHECK(fake_redis_node_cmds(a) == na);
    /* the unix-socket Redis again, for the cases after */
    ti_child_end();
    fake_sentinel_stop(sn);
    fake_redis_stop_tcp(a);
    fake_redis_stop_tcp(b);
    memset(&ti_cache.sentinel, 0, sizeof(ti_cache.sentinel));
    ti_cache.redis = plain;
    ti_configure(1);
    ti_child_start();
    CHECK(ti_wait_listeners(1));
}

/* The child stops: the thread ends, the connection closes. */
static void
test_inv_child_stops(void)
{
    t_hook.child_stopping(ti_child, 0);
    CHECK(ti_wait_listeners(0));
    /* the pool's own cleanup after it finds nothing to do */
    apr_pool_destroy(ti_child);
    /* a child that ends without child_stopping: the pool's cleanup */
    ti_configure(1);
    ti_child_start();
    CHECK(ti_wait_listeners(1));
    apr_pool_destroy(ti_child);
    CHECK(ti_wait_listeners(0));
    apr_pool_destroy(ti_conf);
    ti_conf = NULL;
    fake_stop(ti_pg);
    fake_stop(ti_redis);
    t_sockdir_remove(ti_dir);
}

const t_case t_invalidate_cases[] = {
    {"invalidate: Off, no mutex, the first pass", test_inv_not_configured},
    {"invalidate: LISTEN, then every page key of its mounts goes, thrice",
     test_inv_start_flushes},
    {"invalidate: a notification's keys under every mount, three times",
     test_inv_notify_deletes},
    {"invalidate: \"*\" drops every page, and again twice",
     test_inv_notify_all},
    {"invalidate: a sealed page written back after its invalidation is a miss",
     test_inv_replay_refused},
    {"invalidate: Redis fails while a delete is due", test_inv_redis_fails},
    {"invalidate: PostgreSQL connection lost", test_inv_pg_lost},
    {"invalidate: no repeat while PostgreSQL is gone",
     test_inv_gap_holds_repeats},
    {"invalidate: LISTEN refused, startup stalled", test_inv_listen_refused},
    {"invalidate: Redis down when it starts", test_inv_redis_down_at_start},
    {"invalidate: child_stopping never waits, even with PostgreSQL frozen",
     test_inv_stop_frozen_pg},
    {"invalidate: a new master (Sentinel): every page key dropped from it",
     test_inv_sentinel_switch},
    {"invalidate: the child stops", test_inv_child_stops},
    {NULL, NULL}
};

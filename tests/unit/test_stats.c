/*
 * test_stats.c - the per-child counters in shared memory (stats.c),
 * through the hooks it registers: the segment sized from the MPM's limit,
 * the slot of this process found in the scoreboard (then, or at a later
 * connection), counts made before carried over, the second slot when an
 * old child still holds the first, the slot freed at exit.  Runs after the
 * other back ends' cases: from here on their counters live in the slot.
 */
#include <string.h>
#include <unistd.h>

#include "apr_general.h"

#include "stats.h"
#include "status.h"
#include "mod_status.h"
#include "http_log.h"

#include "backends.h"
#include "harness.h"

static apr_pool_t *ts_proc;     /* the process pool: the segment's */
static server_rec *ts_s;

static void
ts_post_config(void)
{
    apr_pool_t *pconf;

    apr_pool_create(&pconf, ts_proc);
    blog_stats_register_hooks();
    CHECK(t_hook.post_config(pconf, pconf, pconf, ts_s) == OK);
    apr_pool_destroy(pconf);
}

static void
test_stats_segment(void)
{
    pid_t       pid;
    int         slot;
    apr_uint64_t v[BLOG_STAT_N];

    apr_initialize();
    apr_pool_create(&ts_proc, NULL);
    ts_s = apr_pcalloc(ts_proc, sizeof(*ts_s));
    ts_s->process = apr_pcalloc(ts_proc, sizeof(*ts_s->process));
    ts_s->process->pool = ts_proc;
    ts_s->log.level = APLOG_DEBUG;
    CHECK(blog_stats_nslots() == 0);
    CHECK(blog_stats_read(0, &pid, &slot, v) == -1);
    t_mpm_limit = 4;
    ts_post_config();
    CHECK(blog_stats_nslots() == 8);
    CHECK(blog_stats_read(8, &pid, &slot, v) == -1);
    CHECK(blog_stats_read(5, &pid, &slot, v) == 0 && pid == 0 && slot == 1);
    /* a second pass over the configuration keeps the segment */
    ts_post_config();
    CHECK(blog_stats_nslots() == 8);
    /* no limit from the MPM: one */
    t_mpm_limit = 0;
    ts_post_config();
    CHECK(blog_stats_nslots() == 2);
    t_mpm_limit = 4;
    ts_post_config();
    CHECK(blog_stats_nslots() == 8);
}

/* A child starting in scoreboard slot sb (-1: not in it yet). */
static apr_pool_t *
ts_child(int sb)
{
    apr_pool_t *pchild;

    memset(t_procs, 0, sizeof(t_procs));
    if (sb >= 0)
        t_procs[sb].pid = getpid();
    apr_pool_create(&pchild, ts_proc);
    t_hook.child_init(pchild, ts_s);
    return pchild;
}

/* The child's slot: scoreboard slot 2, its counts carried over. */
static void
test_stats_child_slot(void)
{
    apr_pool_t *pchild = ts_child(2);
    apr_uint64_t v[BLOG_STAT_N];
    pid_t       pid;
    int         slot;

    CHECK(blog_stats_read(2, &pid, &slot, v) == 0);
    CHECK(pid == getpid() && slot == 2);
    /* a fresh slot (this process's counts stayed in the one before) */
    CHECK(v[BLOG_STAT_CACHE_HITS] == 0);
    blog_stat_add(BLOG_STAT_CACHE_HITS, 4);
    CHECK(blog_stats_read(2, &pid, &slot, v) == 0);
    CHECK(v[BLOG_STAT_CACHE_HITS] == 4);
    /* a connection changes nothing once the slot is known */
    CHECK(t_hook.pre_connection(NULL, NULL) == DECLINED);
    /* exit: the slot is free */
    apr_pool_destroy(pchild);
    CHECK(blog_stats_read(2, &pid, &slot, v) == 0 && pid == 0);
}

/*
 * Scoreboard slot 3 still held by an old child (alive: pid 1): the second
 * slot of it.  Both held: the counts stay private.
 */
static void
test_stats_second_slot(void)
{
    apr_pool_t *pchild = ts_child(3);
    apr_uint64_t v[BLOG_STAT_N];
    pid_t       pid;
    int         slot;

    CHECK(blog_stats_read(3, &pid, &slot, v) == 0 && pid == getpid());
    /* as if it were an old child: a new one (this process again) starts */
    t_hook.child_init(pchild, ts_s);
    CHECK(blog_stats_read(7, &pid, &slot, v) == 0 && pid == getpid());
    CHECK(slot == 3);
    /* both held: private */
    t_hook.child_init(pchild, ts_s);
    blog_stat_inc(BLOG_STAT_CACHE_MISSES);
    apr_pool_destroy(pchild);
}

/* Not in the scoreboard at child_init: a later connection finds it. */
static void
test_stats_late_slot(void)
{
    apr_pool_t *pchild = ts_child(-1);
    apr_uint64_t v[BLOG_STAT_N];
    apr_uint64_t before;
    pid_t       pid;
    int         slot;

    CHECK(blog_stats_read(1, &pid, &slot, v) == 0 && pid == 0);
    /* counted before the slot is known: private, then carried over */
    blog_stat_add(BLOG_STAT_CACHE_HITS, 3);
    before = t_stat(BLOG_STAT_CACHE_HITS);
    CHECK(before >= 3);
    t_procs[1].pid = getpid();
    CHECK(t_hook.pre_connection(NULL, NULL) == DECLINED);
    CHECK(blog_stats_read(1, &pid, &slot, v) == 0 && pid == getpid());
    CHECK(v[BLOG_STAT_CACHE_HITS] == before);
    apr_pool_destroy(pchild);
    /* no scoreboard at all: nothing found */
    t_scoreboard = 0;
    apr_pool_create(&pchild, ts_proc);
    t_hook.child_init(pchild, ts_s);
    apr_pool_destroy(pchild);
    t_scoreboard = 1;
}

/* mod_status's page: mod_blog's figures for each child still running. */
static int
ts_status(int flags)
{
    request_rec *r = t_request(ts_proc);
    int         rc;

    t_out_len = 0;
    t_out[0] = '\0';
    rc = t_status_hook(r, flags);
    apr_pool_destroy(r->pool);
    return rc;
}

static void
test_status_page(void)
{
    char        want[64];

    blog_status_register_hooks();
    CHECK(t_status_hook != NULL);
    if (t_status_hook == NULL)
        return;
    /* not ExtendedStatus: nothing */
    CHECK(ts_status(0) == OK && t_out_len == 0);
    /* stats slot 3 holds this process since the case before; the
     * scoreboard says so too, generation 7 */
    memset(t_procs, 0, sizeof(t_procs));
    memset(t_workers, 0, sizeof(t_workers));
    t_procs[3].pid = getpid();
    t_procs[3].generation = 7;
    CHECK(ts_status(AP_STATUS_EXTENDED | AP_STATUS_SHORT) == OK);
    CHECK(strstr(t_out, "BlogChildren: 1\n") != NULL);
    snprintf(want, sizeof(want), "BlogSlot3PID: %d\n", (int) getpid());
    CHECK(strstr(t_out, want) != NULL);
    CHECK(strstr(t_out, "BlogSlot3Generation: 7\n") != NULL);
    CHECK(strstr(t_out, "BlogPoolIdle: ") != NULL);
    CHECK(strstr(t_out, "BlogSlot3CacheErrors: ") != NULL);
    CHECK(ts_status(AP_STATUS_EXTENDED) == OK);
    CHECK(strstr(t_out, "<h2>mod_blog</h2>") != NULL);
    CHECK(strstr(t_out, "<p>1 children;") != NULL);
    CHECK(strstr(t_out, "<table") != NULL && strstr(t_out, "</table>") != NULL);
    CHECK(ts_status(AP_STATUS_EXTENDED | AP_STATUS_NOTABLE) == OK);
    CHECK(strstr(t_out, "<table") == NULL);
    CHECK(strstr(t_out, "<p>Slot 3 (pid ") != NULL);
    CHECK(strstr(t_out, "<p>All children:") != NULL);
    /* worker MPM: the slot went to a new child, one thread of this one
     * still runs there, with the old generation */
    t_procs[3].pid = 0;
    t_workers[3][1].pid = getpid();
    t_workers[3][1].status = SERVER_BUSY_WRITE;
    t_workers[3][1].generation = 6;
    CHECK(ts_status(AP_STATUS_EXTENDED | AP_STATUS_SHORT) == OK);
    CHECK(strstr(t_out, "BlogSlot3Generation: 6\n") != NULL);
    /* its last thread gone: not listed */
    t_workers[3][1].status = SERVER_DEAD;
    CHECK(ts_status(AP_STATUS_EXTENDED | AP_STATUS_SHORT) == OK);
    CHECK(strstr(t_out, "BlogChildren: 0\n") != NULL);
}

const t_case t_stats_cases[] = {
    /* in this order: a child finds its slot once, at child_init or at a
     * later connection */
    {"stats: the segment from the MPM's limit", test_stats_segment},
    {"stats: found at a later connection", test_stats_late_slot},
    {"stats: the child's slot, counts carried over", test_stats_child_slot},
    {"stats: an old child's slot taken: the second", test_stats_second_slot},
    {"status: mod_blog's figures on mod_status's page", test_status_page},
    {NULL, NULL}
};

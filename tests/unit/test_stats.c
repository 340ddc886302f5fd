/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_stats.c - the per-child counters in shared memory (counters_shm.c),
 * through the hooks it registers: the segment sized from the MPM's limit,
 * a free slot taken at child_init with the child's generation, the next
 * one while an older child still holds it, none when all are held, the
 * slot of a child that died without its exit cleanup freed when the MPM
 * reports it gone (child_status, in the parent), and the slot freed at
 * exit.  Runs after the other back ends' cases: from here
 * on their counters live in a slot.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apr_general.h"

#include "httpd/counters_shm.h"
#include "store/counters.h"
#include "httpd/status.h"
#include "httpd/health.h"
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

/* The shared mappings of this process (APR's anonymous segments). */
static int
ts_segments(void)
{
    FILE       *f = fopen("/proc/self/maps", "r");
    char        line[512];
    int         n = 0;

    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        n += strstr(line, "/dev/zero") != NULL;
    if (f != NULL)
        fclose(f);
    return n;
}

static void
test_stats_segment(void)
{
    pid_t       pid;
    int         gen;
    apr_uint64_t v[BLOG_STAT_N];

    apr_initialize();
    apr_pool_create(&ts_proc, NULL);
    ts_s = apr_pcalloc(ts_proc, sizeof(*ts_s));
    ts_s->process = apr_pcalloc(ts_proc, sizeof(*ts_s->process));
    ts_s->process->pool = ts_proc;
    ts_s->log.level = APLOG_DEBUG;
    CHECK(blog_stats_nslots() == 0);
    CHECK(blog_stats_read(0, &pid, &gen, v) == -1);
    t_mpm_limit = 4;
    ts_post_config();
    CHECK(blog_stats_nslots() == 8);
    CHECK(blog_stats_read(8, &pid, &gen, v) == -1);
    CHECK(blog_stats_read(5, &pid, &gen, v) == 0 && pid == 0 && gen == 0);
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
    /* a limit that changes from one pass to the next: the old segment
     * goes, one stays */
    {
        int         before = ts_segments();
        int         i;

        for (i = 0; i < 10; i++) {
            t_mpm_limit = i % 2 ? 4 : 5;
            ts_post_config();
        }
        CHECK(blog_stats_nslots() == 8);
        CHECK(ts_segments() == before);
        if (ts_segments() != before)
            fprintf(stderr, "  (%d shared mappings, %d before)\n",
                    ts_segments(), before);
    }
}

/* A child starting: its pool. */
static apr_pool_t *
ts_child(void)
{
    apr_pool_t *pchild;

    apr_pool_create(&pchild, ts_proc);
    t_hook.child_init(pchild, ts_s);
    return pchild;
}

/* The first free slot, from zero, with the generation; freed at exit. */
static void
test_stats_child_slot(void)
{
    apr_pool_t *pchild = ts_child();
    apr_uint64_t v[BLOG_STAT_N];
    pid_t       pid;
    int         gen;

    CHECK(blog_stats_read(0, &pid, &gen, v) == 0);
    CHECK(pid == getpid() && gen == t_generation);
    /* a fresh slot (this process's counts stayed in its array) */
    CHECK(v[BLOG_STAT_CACHE_HITS] == 0);
    blog_stat_add(BLOG_STAT_CACHE_HITS, 4);
    CHECK(blog_stats_read(0, &pid, &gen, v) == 0);
    CHECK(v[BLOG_STAT_CACHE_HITS] == 4);
    apr_pool_destroy(pchild);
    CHECK(blog_stats_read(0, &pid, &gen, v) == 0 && pid == 0);
}

/*
 * Slot 0 still held by an old child (this process): the next one; every
 * slot held: the counts stay private.  A child that died without its exit
 * cleanup holds its slot until the parent reaps it.
 */
static void
test_stats_held_slots(void)
{
    apr_pool_t *pchild[8];
    apr_uint64_t v[BLOG_STAT_N];
    pid_t       pid, dead;
    int         gen, i, status;

    for (i = 0; i < 8; i++)
        pchild[i] = ts_child();
    CHECK(blog_stats_read(7, &pid, &gen, v) == 0 && pid == getpid());
    apr_pool_destroy(ts_child());
    blog_stat_inc(BLOG_STAT_CACHE_MISSES);
    CHECK(blog_stats_read(7, &pid, &gen, v) == 0
          && v[BLOG_STAT_CACHE_MISSES] == 0);
    apr_pool_destroy(pchild[2]);
    if ((dead = fork()) == 0) {
        t_generation = 9;
        t_hook.child_init(ts_proc, ts_s);
        _exit(0);
    }
    CHECK(dead > 0 && waitpid(dead, &status, 0) == dead);
    CHECK(blog_stats_read(2, &pid, &gen, v) == 0 && pid == dead && gen == 9);
    /* the MPM's word on other children, or on a start, leaves it held */
    t_hook.child_status(ts_s, dead + 1, 9, 0, MPM_CHILD_EXITED);
    t_hook.child_status(ts_s, dead, 9, 0, MPM_CHILD_STARTED);
    CHECK(blog_stats_read(2, &pid, &gen, v) == 0 && pid == dead);
    /* reaped: its slot, not listed */
    t_hook.child_status(ts_s, dead, 9, 0, MPM_CHILD_EXITED);
    CHECK(blog_stats_read(2, &pid, &gen, v) == 0 && pid == 0 && gen == 9);
    CHECK(blog_stats_read(1, &pid, &gen, v) == 0 && pid == getpid());
    pchild[2] = ts_child();
    CHECK(blog_stats_read(2, &pid, &gen, v) == 0 && pid == getpid());
    /* all but slot 3 given back, for the status page's case */
    for (i = 0; i < 8; i++)
        if (i != 3)
            apr_pool_destroy(pchild[i]);
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
    blog_health_register_hooks();
    CHECK(t_status_hook != NULL);
    if (t_status_hook == NULL)
        return;
    /* not ExtendedStatus: nothing */
    CHECK(ts_status(0) == OK && t_out_len == 0);
    /* stats slot 3 holds this process since the case before */
    CHECK(ts_status(AP_STATUS_EXTENDED | AP_STATUS_SHORT) == OK);
    CHECK(strstr(t_out, "BlogChildren: 1\n") != NULL);
    snprintf(want, sizeof(want), "BlogSlot3PID: %d\n", (int) getpid());
    CHECK(strstr(t_out, want) != NULL);
    CHECK(strstr(t_out, "BlogSlot3Generation: 7\n") != NULL);
    CHECK(strstr(t_out, "BlogPoolIdle: ") != NULL);
    CHECK(strstr(t_out, "BlogSlot3CacheErrors: ") != NULL);
    /* the slots given back: not listed */
    CHECK(strstr(t_out, "BlogSlot2") == NULL);
    CHECK(ts_status(AP_STATUS_EXTENDED) == OK);
    CHECK(strstr(t_out, "<h2>mod_blog</h2>") != NULL);
    CHECK(strstr(t_out, "<p>1 children;") != NULL);
    CHECK(strstr(t_out, "<table") != NULL && strstr(t_out, "</table>") != NULL);
    CHECK(ts_status(AP_STATUS_EXTENDED | AP_STATUS_NOTABLE) == OK);
    CHECK(strstr(t_out, "<table") == NULL);
    CHECK(strstr(t_out, "<p>Slot 3 (pid ") != NULL);
    CHECK(strstr(t_out, "<p>All children:") != NULL);
}

/* A child without the health check's lock: said once; the status page
 * still shows the figures, without the last failures. */
static void
test_health_no_lock(void)
{
    apr_pool_t *pchild;
    unsigned    n = t_log_count();

    blog_status_register_hooks();
    blog_health_register_hooks();
    apr_pool_create(&pchild, ts_proc);
    t_mutex_create_fail = 1;
    t_hook.child_init(pchild, ts_s);
    t_mutex_create_fail = 0;
    CHECK(t_log_since(n, "no lock for the health check's last failures"));
    CHECK(ts_status(AP_STATUS_EXTENDED | AP_STATUS_SHORT) == OK);
    CHECK(strstr(t_out, "BlogChildren: 1\n") != NULL);
    CHECK(strstr(t_out, "BlogHealthLast") == NULL);
    apr_pool_destroy(pchild);
}

const t_case t_stats_cases[] = {
    /* in this order: the last leaves slot 3 held for the status page */
    {"stats: the segment from the MPM's limit", test_stats_segment},
    {"stats: a free slot, from zero, with the generation",
     test_stats_child_slot},
    {"stats: the slots held, and a dead child's", test_stats_held_slots},
    {"status: mod_blog's figures on mod_status's page", test_status_page},
    {"status: no lock for the health check's reasons", test_health_no_lock},
    {NULL, NULL}
};

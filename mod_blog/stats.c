/*
 * stats.c - the shared segment behind stats.h's counters.
 *
 * Made once by the parent, in the process pool (old children still count
 * across a graceful restart; ServerLimit cannot change), two slots per
 * scoreboard slot: the worker MPM gives an exiting child's scoreboard slot
 * to a new child while the old one finishes.  The MPM writes a child's pid
 * into the scoreboard after fork, so a child may count privately until its
 * first connection finds the slot.  A slot's holder is its pid and its
 * start time (/proc), which a reused pid cannot match.
 */
#include "stats.h"
#include "logno.h"

#include "http_config.h"
#include "http_connection.h"
#include "http_log.h"
#include "ap_mpm.h"
#include "scoreboard.h"
#include "apr_shm.h"

#include "apr_atomic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

APLOG_USE_MODULE(blog);

#define STATS_KEY   "blog_stats_shm"
#define STATS_MAGIC 0x626c6f67u        /* "blog" */

/* A cache line or more each, so children do not write each other's lines. */
typedef struct stats_slot
{
    apr_uint32_t pid;           /* the child counting here, 0 when none */
    apr_uint64_t start;         /* its start time, in clock ticks since boot */
    apr_uint64_t v[BLOG_STAT_N];
} __attribute__((aligned(64))) stats_slot;

typedef struct stats_segment
{
    apr_uint32_t magic;
    int         limit;          /* scoreboard slots; slots[i + limit] is
                                 * slot i's second */
    stats_slot  slots[];
} stats_segment;

static apr_uint64_t stats_private[BLOG_STAT_N];
apr_uint64_t *blog_stats_mine = stats_private;

static stats_segment *stats_seg;
static apr_uint32_t stats_me;   /* 1 + this child's slot; 0: private */

static int
stats_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                  server_rec *s)
{
    apr_pool_t *pproc = s->process->pool;
    apr_shm_t  *shm = NULL;
    apr_size_t  size;
    apr_status_t rv;
    int         limit = 0;

    (void) pconf;
    (void) plog;
    (void) ptemp;
    if (ap_mpm_query(AP_MPMQ_HARD_LIMIT_DAEMONS, &limit) != APR_SUCCESS
        || limit < 1)
        limit = 1;
    apr_pool_userdata_get((void **) &shm, STATS_KEY, pproc);
    if (shm != NULL) {
        stats_seg = apr_shm_baseaddr_get(shm);
        if (stats_seg->magic == STATS_MAGIC && stats_seg->limit == limit)
            return OK;
    }
    size = sizeof(stats_segment) + 2 * (apr_size_t) limit * sizeof(stats_slot);
    rv = apr_shm_create(&shm, size, NULL, pproc);
    if (rv != APR_SUCCESS) {
        /* The blog works without; mod_status just has nothing to show. */
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s,
                     BLOGLOGNO(00041)
                     "no shared memory for the status counters "
                     "(%" APR_SIZE_T_FMT " bytes)", size);
        stats_seg = NULL;
        return OK;
    }
    stats_seg = apr_shm_baseaddr_get(shm);
    memset(stats_seg, 0, size);
    stats_seg->magic = STATS_MAGIC;
    stats_seg->limit = limit;
    apr_pool_userdata_set(shm, STATS_KEY, apr_pool_cleanup_null, pproc);
    return OK;
}

/* The slot this process holds in the scoreboard, or -1. */
static int
stats_find_slot(void)
{
    pid_t       me = getpid();
    int         i;

    if (stats_seg == NULL || !ap_exists_scoreboard_image())
        return -1;
    for (i = 0; i < stats_seg->limit; i++) {
        process_score *ps = ap_get_scoreboard_process(i);

        if (ps != NULL && ps->pid == me)
            return i;
    }
    return -1;
}

/* Counts made before the slot was known go to the slot. */
static void
stats_carry_over(stats_slot *slot)
{
    int         k;

    for (k = 0; k < BLOG_STAT_N; k++) {
        apr_atomic_add64(&slot->v[k], apr_atomic_xchg64(&stats_private[k], 0));
    }
}

/* The slot is free again, unless a newer child took it meanwhile. */
static apr_status_t
stats_child_exit(void *data)
{
    apr_uint32_t me = apr_atomic_read32(&stats_me);

    (void) data;
    if (me != 0)
        apr_atomic_cas32(&stats_seg->slots[me - 1].pid, 0,
                         (apr_uint32_t) getpid());
    return APR_SUCCESS;
}

/* pid's start time (field 22 of /proc/<pid>/stat), or 0: no such process. */
static apr_uint64_t
stats_start_time(apr_uint32_t pid)
{
    char        path[32], buf[512];
    const char *p;
    FILE       *f;
    size_t      n;
    int         field;

    snprintf(path, sizeof(path), "/proc/%u/stat", pid);
    if (pid == 0 || (f = fopen(path, "r")) == NULL)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the name, field 2, may hold spaces and parentheses */
    if ((p = strrchr(buf, ')')) == NULL)
        return 0;
    for (field = 2; field < 21 && (p = strchr(p + 1, ' ')) != NULL; field++)
        ;
    return p != NULL ? strtoull(p + 1, NULL, 10) : 0;
}

/* Whether the child that took slot is still running. */
static int
stats_alive(stats_slot *slot)
{
    apr_uint32_t pid = apr_atomic_read32(&slot->pid);

    return pid != 0
        && stats_start_time(pid) == apr_atomic_read64(&slot->start);
}

static void
stats_take_slot(void)
{
    int         i = stats_find_slot();
    stats_slot *slot;

    if (i < 0)
        return;
    /*
     * Only this child may take these two now (one process per scoreboard
     * slot); a slot whose child died without its exit cleanup is free.
     */
    slot = &stats_seg->slots[i];
    if (stats_alive(slot))
        i += stats_seg->limit;
    slot = &stats_seg->slots[i];
    if (stats_alive(slot))
        return;                 /* two old ones still finishing: stay private */
    memset(slot->v, 0, sizeof(slot->v));
    stats_carry_over(slot);
    apr_atomic_xchgptr((volatile void **) &blog_stats_mine, slot->v);
    /* what threads added while the pointer moved */
    stats_carry_over(slot);
    apr_atomic_set64(&slot->start, stats_start_time((apr_uint32_t) getpid()));
    apr_atomic_set32(&slot->pid, (apr_uint32_t) getpid());
    apr_atomic_set32(&stats_me, (apr_uint32_t) i + 1);
}

static void
stats_child_init(apr_pool_t *pchild, server_rec *s)
{
    (void) s;
    apr_pool_cleanup_register(pchild, NULL, stats_child_exit,
                              apr_pool_cleanup_null);
    stats_take_slot();
}

/* Child_init came before the parent wrote the pid: the first connections
 * look again (a few: a process never listed, as with -X, stays private). */
#define STATS_LATE_TRIES 64

static int
stats_pre_connection(conn_rec *c, void *csd)
{
    static apr_uint32_t busy, tries;

    (void) c;
    (void) csd;
    if (apr_atomic_read32(&stats_me) != 0 || stats_seg == NULL
        || apr_atomic_read32(&tries) >= STATS_LATE_TRIES)
        return DECLINED;
    /* one thread looks; the others look at their next connection */
    if (apr_atomic_cas32(&busy, 1, 0) == 0) {
        if (apr_atomic_read32(&stats_me) == 0
            && apr_atomic_inc32(&tries) < STATS_LATE_TRIES)
            stats_take_slot();
        apr_atomic_set32(&busy, 0);
    }
    return DECLINED;
}

int
blog_stats_nslots(void)
{
    return stats_seg ? 2 * stats_seg->limit : 0;
}

int
blog_stats_read(int i, pid_t *pid, int *sb_slot, apr_uint64_t *v)
{
    stats_slot *slot;
    int         k;

    if (stats_seg == NULL || i < 0 || i >= 2 * stats_seg->limit)
        return -1;
    slot = &stats_seg->slots[i];
    *pid = stats_alive(slot) ? (pid_t) apr_atomic_read32(&slot->pid) : 0;
    *sb_slot = i % stats_seg->limit;
    for (k = 0; k < BLOG_STAT_N; k++)
        v[k] = apr_atomic_read64(&slot->v[k]);
    return 0;
}

void
blog_stats_register_hooks(void)
{
    ap_hook_post_config(stats_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    /* Before the pool opens its first connections (blog_child_init). */
    ap_hook_child_init(stats_child_init, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_pre_connection(stats_pre_connection, NULL, NULL,
                           APR_HOOK_REALLY_FIRST);
}

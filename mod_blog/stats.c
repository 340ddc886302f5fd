/*
 * stats.c - the shared segment behind the counters of stats.h.
 *
 * The parent makes one anonymous shared segment at post_config, before any
 * child is forked, with two slots per scoreboard process slot (the MPM's
 * hard limit, ServerLimit), so every child inherits the mapping.  It lives in
 * the process pool, not pconf: a graceful restart clears pconf and reloads
 * this module while old children still count into their slots, and the
 * new generation's status page must show them finishing.  ServerLimit
 * cannot change across restarts, so one segment serves the parent's whole
 * life.
 *
 * A child counts in the slot of the scoreboard slot the MPM gave it, or in
 * that slot's second one while a process that counted in the first still
 * lives: the worker MPM gives an exiting child's scoreboard slot to a new
 * child while the old one's threads finish their requests.  The MPM writes
 * the child's pid into the scoreboard from the parent, after fork, so a
 * child that looks in child_init may not find itself yet; it then counts
 * into a private array until pre_connection finds the slot (before its
 * first request), and moves those counts over.
 */
#include "stats.h"
#include "logno.h"

#include "http_config.h"
#include "http_connection.h"
#include "http_log.h"
#include "ap_mpm.h"
#include "scoreboard.h"
#include "apr_shm.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

APLOG_USE_MODULE(blog);

#define STATS_KEY   "blog_stats_shm"
#define STATS_MAGIC 0x626c6f67u        /* "blog" */

/* A cache line or more each, so children do not write each other's lines. */
typedef struct stats_slot
{
    pid_t       pid;            /* the child counting here, 0 when none */
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
static stats_slot *stats_me;

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
        apr_uint64_t n = __atomic_exchange_n(&stats_private[k], 0,
                                             __ATOMIC_RELAXED);

        __atomic_fetch_add(&slot->v[k], n, __ATOMIC_RELAXED);
    }
}

/* The slot is free again, unless a newer child took it meanwhile. */
static apr_status_t
stats_child_exit(void *data)
{
    stats_slot *slot = __atomic_load_n(&stats_me, __ATOMIC_ACQUIRE);
    pid_t       me = getpid();

    (void) data;
    if (slot != NULL)
        __atomic_compare_exchange_n(&slot->pid, &me, 0, 0, __ATOMIC_RELEASE,
                                    __ATOMIC_RELAXED);
    return APR_SUCCESS;
}

/* A process that has not exited (EPERM: alive, another user's). */
static int
stats_alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
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
    if (stats_alive(__atomic_load_n(&slot->pid, __ATOMIC_ACQUIRE)))
        slot = &stats_seg->slots[i + stats_seg->limit];
    if (stats_alive(__atomic_load_n(&slot->pid, __ATOMIC_ACQUIRE)))
        return;                 /* two old ones still finishing: stay private */
    memset(slot->v, 0, sizeof(slot->v));
    stats_carry_over(slot);
    __atomic_store_n(&blog_stats_mine, slot->v, __ATOMIC_RELEASE);
    /* what threads added while the pointer moved */
    stats_carry_over(slot);
    __atomic_store_n(&slot->pid, getpid(), __ATOMIC_RELEASE);
    __atomic_store_n(&stats_me, slot, __ATOMIC_RELEASE);
}

static void
stats_child_init(apr_pool_t *pchild, server_rec *s)
{
    (void) s;
    apr_pool_cleanup_register(pchild, NULL, stats_child_exit,
                              apr_pool_cleanup_null);
    stats_take_slot();
}

/*
 * When child_init came before the parent wrote the pid: the first
 * connections look again (a few times: a process the scoreboard never
 * lists, as with -X, keeps its private counts).
 */
#define STATS_LATE_TRIES 64

static int
stats_pre_connection(conn_rec *c, void *csd)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int  tries;

    (void) c;
    (void) csd;
    if (__atomic_load_n(&stats_me, __ATOMIC_ACQUIRE) != NULL
        || stats_seg == NULL
        || __atomic_load_n(&tries, __ATOMIC_RELAXED) >= STATS_LATE_TRIES)
        return DECLINED;
    pthread_mutex_lock(&lock);
    if (stats_me == NULL && tries++ < STATS_LATE_TRIES)
        stats_take_slot();
    pthread_mutex_unlock(&lock);
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
    *pid = __atomic_load_n(&slot->pid, __ATOMIC_ACQUIRE);
    if (!stats_alive(*pid))
        *pid = 0;
    *sb_slot = i % stats_seg->limit;
    for (k = 0; k < BLOG_STAT_N; k++)
        v[k] = __atomic_load_n(&slot->v[k], __ATOMIC_RELAXED);
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

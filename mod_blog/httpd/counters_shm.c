/* SPDX-License-Identifier: Apache-2.0 */
/*
 * counters_shm.c - the shared segment where each child places its
 * store/counters.h counters, made once by the parent in the process pool
 * (docs/OPERATIONS.md), and the hooks that keep it.  A child takes a free
 * slot at child_init and frees it at exit; the parent frees it when the MPM
 * reports the child gone, whatever the way it died.
 */
#include "httpd/counters_shm.h"
#include "core/logno.h"
#include "store/counters.h"

#include "http_config.h"
#include "http_log.h"
#include "ap_mpm.h"
#include "apr_atomic.h"
#include "apr_shm.h"

#include <string.h>
#include <unistd.h>

APLOG_USE_MODULE(blog);

#define STATS_KEY   "blog_stats_shm"

/* A cache line or more each, so children do not write each other's lines. */
typedef struct stats_slot
{
    apr_uint32_t pid;           /* the child's; 0: free */
    apr_uint32_t generation;
    apr_uint64_t v[BLOG_STAT_N];
} __attribute__((aligned(64))) stats_slot;

typedef struct stats_segment
{
    int         nslots;
    stats_slot  slots[];
} stats_segment;

static stats_segment *stats_seg;
static stats_slot *stats_me;    /* NULL: counting privately */

static int
stats_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                  server_rec *s)
{
    apr_pool_t *pproc = s->process->pool;
    apr_shm_t  *shm = NULL;
    apr_shm_t  *old;
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
    old = shm;
    if (shm != NULL) {
        stats_seg = apr_shm_baseaddr_get(shm);
        if (stats_seg->nslots == 2 * limit)
            return OK;
    }
    /* twice the scoreboard's slots, a margin: a child holds one of those
     * until it is reaped, and its stats slot is free by then */
    size = sizeof(stats_segment) + 2 * (apr_size_t) limit * sizeof(stats_slot);
    rv = apr_shm_create(&shm, size, NULL, pproc);
    if (rv != APR_SUCCESS) {
        /* The blog works without (or with the old one, its slots counted
         * in it); mod_status just has nothing, or fewer slots, to show. */
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s, BLOGLOGNO(00041)
                     "no shared memory for the status counters "
                     "(%" APR_SIZE_T_FMT " bytes)", size);
        stats_seg = old != NULL ? apr_shm_baseaddr_get(old) : NULL;
        return OK;
    }
    stats_seg = apr_shm_baseaddr_get(shm);
    memset(stats_seg, 0, size);
    stats_seg->nslots = 2 * limit;
    apr_pool_userdata_set(shm, STATS_KEY, apr_pool_cleanup_null, pproc);
    /* Only this process lets go of the old one: the children of the
     * generation before keep their mapping until they exit. */
    if (old != NULL)
        apr_shm_destroy(old);
    return OK;
}

static apr_status_t
stats_child_exit(void *slot)
{
    apr_atomic_set32(&((stats_slot *) slot)->pid, 0);
    return APR_SUCCESS;
}

static void
stats_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_uint32_t me = (apr_uint32_t) getpid();
    int         gen = 0;
    int         i;

    (void) s;
    stats_me = NULL;
    blog_counters_place(NULL);
    for (i = 0; stats_seg != NULL && i < stats_seg->nslots; i++) {
        if (apr_atomic_cas32(&stats_seg->slots[i].pid, me, 0) == 0) {
            stats_me = &stats_seg->slots[i];
            break;
        }
    }
    if (stats_me == NULL)
        return;                 /* every slot held: count privately */
    ap_mpm_query(AP_MPMQ_GENERATION, &gen);
    apr_atomic_set32(&stats_me->generation, (apr_uint32_t) gen);
    memset(stats_me->v, 0, sizeof(stats_me->v));
    blog_counters_place(stats_me->v);
    apr_pool_cleanup_register(pchild, stats_me, stats_child_exit,
                              apr_pool_cleanup_null);
}

/*
 * In the parent, as the MPM reaps a child and clears its scoreboard entry:
 * the slot of one that died without its exit cleanup (a crash, kill -9) is
 * free.  Its pid cannot be a new child's before this: it was not reaped.
 */
static void
stats_child_status(server_rec *s, pid_t pid, ap_generation_t gen, int slot,
                   mpm_child_status state)
{
    int         i;

    (void) s;
    (void) gen;
    (void) slot;
    for (i = 0; state == MPM_CHILD_EXITED && pid > 0 && stats_seg != NULL
         && i < stats_seg->nslots; i++)
        apr_atomic_cas32(&stats_seg->slots[i].pid, 0, (apr_uint32_t) pid);
}

int
blog_stats_nslots(void)
{
    return stats_seg ? stats_seg->nslots : 0;
}

int
blog_stats_read(int i, pid_t *pid, int *generation, apr_uint64_t *v)
{
    stats_slot *slot;
    int         k;

    if (stats_seg == NULL || i < 0 || i >= stats_seg->nslots)
        return -1;
    slot = &stats_seg->slots[i];
    *pid = (pid_t) apr_atomic_read32(&slot->pid);
    *generation = (int) apr_atomic_read32(&slot->generation);
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
    ap_hook_child_status(stats_child_status, NULL, NULL, APR_HOOK_MIDDLE);
}

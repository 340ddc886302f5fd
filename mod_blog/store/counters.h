/* SPDX-License-Identifier: Apache-2.0 */
/*
 * counters.h - the pool's and the cache's counters, counted with atomic adds
 * wherever they are placed: a private array until httpd/counters_shm.c gives
 * this child its slot in the shared segment (mod_status reads them there).
 */
#ifndef BLOG_COUNTERS_H
#define BLOG_COUNTERS_H

#include "apr.h"

typedef enum blog_stat
{
    /* Gauges: go up and down.  Idle is open - busy. */
    BLOG_STAT_POOL_OPEN = 0,    /* connections established, not closed */
    BLOG_STAT_POOL_BUSY,        /* checked out by a request */
    /* Counters since the child started. */
    BLOG_STAT_POOL_QUERIES,     /* page statements sent */
    BLOG_STAT_POOL_WAITS,       /* times a checkout queued for a release */
    BLOG_STAT_POOL_ACQUIRE_TIMEOUTS,    /* checkouts that got none in time */
    BLOG_STAT_POOL_CONNECTS,    /* connections opened */
    BLOG_STAT_POOL_CONNECT_FAILURES,
    BLOG_STAT_POOL_RECONNECTS,  /* connections lost under a statement */
    BLOG_STAT_POOL_QUERY_TIMEOUTS,
    BLOG_STAT_POOL_QUERY_ERRORS,        /* failed otherwise, no retry */
    BLOG_STAT_CACHE_HITS,       /* X-Cache: HIT */
    BLOG_STAT_CACHE_MISSES,     /* X-Cache: MISS */
    BLOG_STAT_CACHE_BYPASSES,   /* X-Cache: BYPASS */
    BLOG_STAT_CACHE_ERRORS,     /* Redis failures (timeouts, refusals, ...) */
    BLOG_STAT_N
} blog_stat;

/* This child's counter k: in its slot once known, else a private array. */
void        blog_stat_add(blog_stat k, long n);
apr_uint64_t blog_stat_get(blog_stat k);

#define blog_stat_inc(k) blog_stat_add((k), 1)

/*
 * Count into v (BLOG_STAT_N values, written only by this process) from now
 * on; NULL: into the private array again.
 */
void        blog_counters_place(apr_uint64_t *v);

#endif

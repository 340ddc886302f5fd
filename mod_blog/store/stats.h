/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stats.h - per-child counters of the pool and the cache in shared memory,
 * so that mod_status shows every child's from whichever child answers.  A
 * slot per child, written only by it, with atomic adds: no lock.
 */
#ifndef BLOG_STATS_H
#define BLOG_STATS_H

#include "httpd.h"

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

/* The segment (post_config) and each child's slot (child_init). */
void blog_stats_register_hooks(void);

/*
 * For the status page: how many slots, and a copy of slot i: its child's
 * pid (0: none), generation and figures.
 */
int blog_stats_nslots(void);
int blog_stats_read(int i, pid_t *pid, int *generation, apr_uint64_t *v);

#endif

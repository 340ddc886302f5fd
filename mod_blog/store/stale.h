/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stale.h - when each page key was last made stale, as this instance's
 * invalidation listener heard it (a write's NOTIFY; every key at a "*" or
 * when it starts listening).  A sealed page written back into Redis from
 * before that moment is a replay: the cache takes it for a miss.  In
 * shared memory: one child listens for all of them.
 */
#ifndef BLOG_STALE_H
#define BLOG_STALE_H

#include "apr_pools.h"
#include "apr_time.h"

/* The table, for the generation of pconf (post_config): 0, or an APR
 * status (then nothing is remembered, and nothing refused). */
apr_status_t blog_stale_create(apr_pool_t *pconf);

/* key made stale at t; every key made stale at t.  The listener's thread
 * alone writes. */
void blog_stale_mark(const char *key, apr_size_t len, apr_time_t t);
void blog_stale_mark_all(apr_time_t t);

/* When key was last made stale, at the latest (a key sharing its slot may
 * make it later); 0: not since the listener started, or no table. */
apr_time_t blog_stale_since(const char *key, apr_size_t len);

#endif

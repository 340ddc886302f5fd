/* SPDX-License-Identifier: Apache-2.0 */
/*
 * counters_shm.h - every child's counters (store/counters.h) in one shared
 * segment, a slot per child written only by it, so that mod_status shows
 * every child's from whichever child answers.
 */
#ifndef BLOG_COUNTERS_SHM_H
#define BLOG_COUNTERS_SHM_H

#include "httpd.h"

/* The segment (post_config) and each child's slot (child_init). */
void blog_stats_register_hooks(void);

/*
 * For the status page: how many slots, and a copy of slot i: its child's
 * pid (0: none), generation and figures (BLOG_STAT_N of them).
 */
int blog_stats_nslots(void);
int blog_stats_read(int i, pid_t *pid, int *generation, apr_uint64_t *v);

#endif

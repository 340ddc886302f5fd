/* SPDX-License-Identifier: Apache-2.0 */
/*
 * counters.c - counters.h's counters: atomic adds into wherever this child's
 * counters are placed.
 */
#include "store/counters.h"

#include "apr_atomic.h"

static apr_uint64_t counters_private[BLOG_STAT_N];
static apr_uint64_t *counters_mine = counters_private;

void
blog_counters_place(apr_uint64_t *v)
{
    counters_mine = v != NULL ? v : counters_private;
}

void
blog_stat_add(blog_stat k, long n)
{
    apr_atomic_add64(&counters_mine[k], (apr_uint64_t) n);
}

apr_uint64_t
blog_stat_get(blog_stat k)
{
    return apr_atomic_read64(&counters_mine[k]);
}

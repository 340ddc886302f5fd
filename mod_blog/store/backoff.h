/* SPDX-License-Identifier: Apache-2.0 */
/* backoff.h - the pause between failed connects to a back end. */
#ifndef BLOG_BACKOFF_H
#define BLOG_BACKOFF_H

#include "apr_atomic.h"
#include "apr_time.h"

/*
 * After a failed connect none before next_try: 50 ms doubling to 1 s, reset
 * by a success.  apr_atomic, no lock: a race costs one extra attempt.
 */
typedef struct blog_backoff
{
    apr_uint64_t next_try;      /* apr_time_t */
    apr_uint64_t delay;         /* apr_interval_time_t */
} blog_backoff;

/* When the next connect may be tried (0: now). */
apr_time_t blog_backoff_next(blog_backoff *b);
void blog_backoff_fail(blog_backoff *b);
void blog_backoff_reset(blog_backoff *b);

#endif

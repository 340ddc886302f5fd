/* SPDX-License-Identifier: Apache-2.0 */
/* backoff.c - backoff.h's doubling pause, shared by threads without a lock. */
#include "store/backoff.h"

#define BACKOFF_FIRST   apr_time_from_msec(50)
#define BACKOFF_MAX     apr_time_from_sec(1)

apr_time_t
blog_backoff_next(blog_backoff *b)
{
    return (apr_time_t) apr_atomic_read64(&b->next_try);
}

void
blog_backoff_fail(blog_backoff *b)
{
    apr_uint64_t d = apr_atomic_read64(&b->delay);

    d = d ? d * 2 : (apr_uint64_t) BACKOFF_FIRST;
    if (d > (apr_uint64_t) BACKOFF_MAX)
        d = (apr_uint64_t) BACKOFF_MAX;
    apr_atomic_set64(&b->delay, d);
    apr_atomic_set64(&b->next_try, (apr_uint64_t) apr_time_now() + d);
}

void
blog_backoff_reset(blog_backoff *b)
{
    apr_atomic_set64(&b->delay, 0);
    apr_atomic_set64(&b->next_try, 0);
}

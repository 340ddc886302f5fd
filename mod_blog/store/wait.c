/* SPDX-License-Identifier: Apache-2.0 */
/* wait.c - a poll against a deadline (EINTR is not it), and the backoff. */
#include "store/wait.h"

#include <errno.h>
#include <poll.h>

int
blog_wait_fd(int fd, short events, apr_time_t deadline)
{
    struct pollfd pfd = {.fd = fd, .events = events};

    if (fd < 0)
        return -1;
    for (;;) {
        apr_time_t  now = apr_time_now();
        int         n;

        if (now >= deadline)
            return -1;
        n = poll(&pfd, 1, (int) ((deadline - now + 999) / 1000));
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

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

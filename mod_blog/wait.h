/*
 * wait.h - waiting on a socket against a deadline, for the PostgreSQL and
 * Redis clients, which drive their sockets themselves, and the backoff
 * between their connect attempts.
 */
#ifndef BLOG_WAIT_H
#define BLOG_WAIT_H

#include "apr_atomic.h"
#include "apr_time.h"

/*
 * Wait until fd is ready for events (POLLIN, POLLOUT): 0 when ready, -1
 * once the deadline has passed or on an error.
 */
int blog_wait_fd(int fd, short events, apr_time_t deadline);

/*
 * After a failed connect nobody tries again before next_try; the delay
 * doubles from 50 ms to 1 s and a success resets it.  Its fields are read
 * and written with apr_atomic_*64, so one backoff may be shared by the
 * threads of a child without a lock: a race costs one extra attempt.
 */
typedef struct blog_backoff
{
    apr_uint64_t next_try;      /* apr_time_t */
    apr_uint64_t delay;         /* apr_interval_time_t */
} blog_backoff;

/* Whether a connect may be tried now. */
int blog_backoff_ready(blog_backoff *b);
/* When the next attempt is allowed (0: now). */
apr_time_t blog_backoff_next(blog_backoff *b);
void blog_backoff_fail(blog_backoff *b);
void blog_backoff_reset(blog_backoff *b);

#endif

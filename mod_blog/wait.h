/*
 * wait.h - waiting on a socket against a deadline, for the PostgreSQL and
 * Redis clients, which drive their sockets themselves.
 */
#ifndef BLOG_WAIT_H
#define BLOG_WAIT_H

#include "apr_time.h"

/*
 * Wait until fd is ready for events (POLLIN, POLLOUT): 0 when ready, -1
 * once the deadline has passed or on an error.
 */
int blog_wait_fd(int fd, short events, apr_time_t deadline);

#endif

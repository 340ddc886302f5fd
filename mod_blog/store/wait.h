/* SPDX-License-Identifier: Apache-2.0 */
/* wait.h - a socket wait against a deadline. */
#ifndef BLOG_WAIT_H
#define BLOG_WAIT_H

#include "apr_time.h"

/* 0 when fd is ready for events, -1 past the deadline or on an error. */
int blog_wait_fd(int fd, short events, apr_time_t deadline);

#endif

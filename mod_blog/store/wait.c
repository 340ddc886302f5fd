/* SPDX-License-Identifier: Apache-2.0 */
/* wait.c - a poll against a deadline (EINTR is not it). */
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

/*
 * wait.c - one poll loop against a deadline; EINTR is not the deadline.
 */
#include "wait.h"

#include <errno.h>
#include <poll.h>

int
blog_wait_fd(int fd, short events, apr_time_t deadline)
{
    struct pollfd pfd;

    if (fd < 0)
        return -1;
    pfd.fd = fd;
    pfd.events = events;
    for (;;) {
        apr_time_t  now = apr_time_now();
        int         n;

        if (now >= deadline)
            return -1;
        pfd.revents = 0;
        n = poll(&pfd, 1, (int) ((deadline - now + 999) / 1000));
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * resolve.c - resolve.h's look-ups.  Each runs getaddrinfo in a detached
 * POSIX thread (not APR's: the look-up may outlive the connection and the
 * child's pools that asked), with every signal blocked, and says it has
 * answered on an eventfd, which the asker polls against its deadline, as
 * it polls a socket.  The look-up and its asker each hold a reference:
 * whichever lets go last frees it.  An asker that gives up keeps the
 * look-up, so that a resolver that hangs costs one thread, not one per
 * connect.  Not getaddrinfo_a: glibc's own thread makes the same wait,
 * but a request it runs cannot be abandoned, only waited for.
 */
#include "store/resolve.h"

#include "store/wait.h"

#include "apr_atomic.h"
#include "apr_strings.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct blog_lookup
{
    apr_uint32_t refs;          /* the asker's and the thread's */
    apr_uint32_t done;          /* the thread has set rc and res */
    int         efd;            /* readable once done */
    int         rc;             /* getaddrinfo's */
    struct addrinfo *res;
    int         port;
    char        serv[8];
    char        host[];
};

static void
lookup_unref(blog_lookup *l)
{
    if (apr_atomic_dec32(&l->refs) != 0)
        return;
    if (l->res != NULL)
        freeaddrinfo(l->res);
    close(l->efd);
    free(l);
}

/* IPv4 first, then IPv6: hiredis' order, which Redis setups expect. */
static void *
lookup_main(void *arg)
{
    blog_lookup *l = arg;
    struct addrinfo hints;
    uint64_t    one = 1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    hints.ai_family = AF_INET;
    l->rc = getaddrinfo(l->host, l->serv, &hints, &l->res);
    if (l->rc != 0) {
        hints.ai_family = AF_INET6;
        l->rc = getaddrinfo(l->host, l->serv, &hints, &l->res);
    }
    apr_atomic_set32(&l->done, 1);
    if (write(l->efd, &one, sizeof(one)) < 0) {
        /* an eventfd at 1 takes a write: the asker's poll times out */
    }
    lookup_unref(l);
    return NULL;
}

static blog_lookup *
lookup_start(const char *host, int port)
{
    size_t      n = strlen(host) + 1;
    blog_lookup *l = calloc(1, sizeof(*l) + n);
    pthread_attr_t attr;
    pthread_t   t;
    sigset_t    all, old;
    int         rc;

    if (l == NULL)
        return NULL;
    memcpy(l->host, host, n);
    l->port = port;
    apr_snprintf(l->serv, sizeof(l->serv), "%d", port);
    l->refs = 2;
    if ((l->efd = eventfd(0, EFD_CLOEXEC)) < 0) {
        free(l);
        return NULL;
    }
    sigfillset(&all);
    rc = pthread_attr_init(&attr);
    if (rc == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        rc = pthread_create(&t, &attr, lookup_main, l);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    if (rc != 0) {
        close(l->efd);
        free(l);
        errno = rc;
        return NULL;
    }
    return l;
}

void
blog_resolve_forget(blog_lookup **pending)
{
    if (*pending != NULL)
        lookup_unref(*pending);
    *pending = NULL;
}

int
blog_resolve(blog_lookup **pending, const char *host, int port,
             apr_time_t deadline, struct addrinfo **res, char *why,
             apr_size_t why_len)
{
    struct addrinfo hints;
    char        serv[8];
    blog_lookup *l;
    int         rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    apr_snprintf(serv, sizeof(serv), "%d", port);
    /* an address: nothing to look up, nothing to wait for */
    if ((rc = getaddrinfo(host, serv, &hints, res)) != EAI_NONAME) {
        if (rc != 0)
            apr_cpystrn(why, gai_strerror(rc), why_len);
        return rc == 0 ? 0 : -1;
    }
    if (*pending != NULL
        && ((*pending)->port != port || strcmp((*pending)->host, host) != 0))
        blog_resolve_forget(pending);
    if (*pending == NULL && (*pending = lookup_start(host, port)) == NULL) {
        apr_snprintf(why, why_len, "cannot start a look-up of %s: %s", host,
                     strerror(errno));
        return -1;
    }
    l = *pending;
    if (!apr_atomic_read32(&l->done)
        && blog_wait_fd(l->efd, POLLIN, deadline) != 0
        && !apr_atomic_read32(&l->done)) {
        apr_cpystrn(why, "no answer from the resolver in time", why_len);
        return -1;              /* it goes on: the next call takes it */
    }
    rc = l->rc;
    *res = l->res;
    l->res = NULL;
    blog_resolve_forget(pending);
    if (rc != 0)
        apr_cpystrn(why, gai_strerror(rc), why_len);
    return rc == 0 ? 0 : -1;
}

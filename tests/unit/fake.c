/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake.c - the unix-socket server under fake_pg.c and fake_redis.c: a
 * thread accepts, and each connection gets a thread of its own, so that a
 * fake that stalls one client does not stall the others.  Every wait also
 * watches a stop pipe, so that fake_stop ends them all at once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fake.h"

#define FAKE_MAX_CONNS 256

struct fake_server
{
    char        path[108];      /* "" over TCP */
    void       *arg;
    int         lfd;
    int         stop[2];
    fake_conn_fn fn;
    pthread_t   acceptor;
    pthread_mutex_t lock;
    pthread_t   threads[FAKE_MAX_CONNS];
    fake_conn  *conns[FAKE_MAX_CONNS];
    int         nconns;
    unsigned    accepts;
    unsigned    releases;       /* fake_release: the holds end */
};

static void *
fake_conn_main(void *arg)
{
    fake_conn  *c = arg;

    c->srv->fn(c);
    close(c->fd);
    return NULL;
}

static void *
fake_accept_main(void *arg)
{
    fake_server *srv = arg;

    for (;;) {
        struct pollfd pfd[2] = {
            {srv->lfd, POLLIN, 0}, {srv->stop[0], POLLIN, 0}
        };
        fake_conn  *c;
        int         fd;

        if (poll(pfd, 2, -1) < 0 && errno != EINTR)
            break;
        if (pfd[1].revents)
            break;
        if (!pfd[0].revents)
            continue;
        fd = accept(srv->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        pthread_mutex_lock(&srv->lock);
        if (srv->nconns == FAKE_MAX_CONNS) {
            pthread_mutex_unlock(&srv->lock);
            close(fd);
            continue;
        }
        c = calloc(1, sizeof(*c));
        if (c == NULL)
            abort();
        c->fd = fd;
        c->srv = srv;
        c->releases = srv->releases;
        srv->conns[srv->nconns] = c;
        srv->accepts++;
        pthread_create(&srv->threads[srv->nconns++], NULL, fake_conn_main, c);
        pthread_mutex_unlock(&srv->lock);
    }
    return NULL;
}

/* Listening on lfd: the acceptor started. */
static fake_server *
fake_serve(fake_server *srv, fake_conn_fn fn, void *arg)
{
    srv->fn = fn;
    srv->arg = arg;
    pthread_mutex_init(&srv->lock, NULL);
    if (listen(srv->lfd, 64) != 0 || pipe(srv->stop) != 0)
        abort();
    pthread_create(&srv->acceptor, NULL, fake_accept_main, srv);
    return srv;
}

fake_server *
fake_start_tcp(fake_conn_fn fn, void *arg, int *port)
{
    fake_server *srv = calloc(1, sizeof(*srv));
    struct sockaddr_in a;
    socklen_t   alen = sizeof(a);

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    srv->lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (srv->lfd < 0 || bind(srv->lfd, (struct sockaddr *) &a, sizeof(a)) != 0
        || getsockname(srv->lfd, (struct sockaddr *) &a, &alen) != 0)
        abort();
    *port = ntohs(a.sin_port);
    return fake_serve(srv, fn, arg);
}

void       *
fake_arg(fake_conn *c)
{
    return c->srv->arg;
}

void       *
fake_server_arg(fake_server *srv)
{
    return srv->arg;
}

fake_server *
fake_start(const char *path, fake_conn_fn fn)
{
    fake_server *srv = calloc(1, sizeof(*srv));
    struct sockaddr_un sa;

    if (srv == NULL)
        abort();
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
    strncpy(srv->path, path, sizeof(srv->path) - 1);
    unlink(path);
    srv->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (srv->lfd < 0 || bind(srv->lfd, (struct sockaddr *) &sa, sizeof(sa)) != 0)
        abort();
    return fake_serve(srv, fn, NULL);
}

void
fake_stop(fake_server *srv)
{
    int         i;

    if (srv == NULL)
        return;
    if (write(srv->stop[1], "x", 1) != 1)
        abort();
    pthread_join(srv->acceptor, NULL);
    for (i = 0; i < srv->nconns; i++) {
        pthread_join(srv->threads[i], NULL);
        free(srv->conns[i]);
    }
    close(srv->lfd);
    close(srv->stop[0]);
    close(srv->stop[1]);
    if (srv->path[0] != '\0')
        unlink(srv->path);
    pthread_mutex_destroy(&srv->lock);
    free(srv);
}

unsigned
fake_accepts(fake_server *srv)
{
    return T_LOCKED(&srv->lock, srv->accepts);
}

int
fake_read_some(fake_conn *c, void *buf, size_t n, int ms)
{
    struct pollfd pfd[2] = {
        {c->fd, POLLIN, 0}, {c->srv->stop[0], POLLIN, 0}
    };
    ssize_t     r;
    int         p = poll(pfd, 2, ms);

    if (p < 0)
        return errno == EINTR ? 0 : -1;
    if (pfd[1].revents)
        return -1;
    if (!pfd[0].revents)
        return 0;
    r = read(c->fd, buf, n);
    if (r < 0 && errno == EINTR)
        return 0;
    return r > 0 ? (int) r : -1;
}

int
fake_read(fake_conn *c, void *buf, size_t n)
{
    size_t      got = 0;

    while (got < n) {
        int         r = fake_read_some(c, (char *) buf + got, n - got, -1);

        if (r < 0)
            return -1;
        got += (size_t) r;
    }
    return 0;
}

int
fake_write(fake_conn *c, const void *buf, size_t n)
{
    size_t      done = 0;

    while (done < n) {
        ssize_t     w = send(c->fd, (const char *) buf + done, n - done,
                             MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t) w;
    }
    return 0;
}

void
fake_hold(fake_conn *c)
{
    char        buf[4096];

    while (fake_read_some(c, buf, sizeof(buf), 50) >= 0
           && T_LOCKED(&c->srv->lock, c->srv->releases) == c->releases)
        ;
}

void
fake_release(fake_server *srv)
{
    pthread_mutex_lock(&srv->lock);
    srv->releases++;
    pthread_mutex_unlock(&srv->lock);
}

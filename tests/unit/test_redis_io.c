/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_redis_io.c - redis.c's socket paths that the fake (a unix socket
 * that reads every command at once) never takes: BlogRedis as host:port
 * (TCP, keep-alive), a refused port, a host name the resolver does not
 * answer, and writes that fill the socket: a peer that reads late (the
 * rest of a buffer resumes where the kernel stopped, or the deadline
 * passes), a peer that closed; replies too large by their headers; the
 * TLS floor.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "store/redis.h"

#include <openssl/ssl.h>

#include "backends.h"
#include "fake.h"
#include "harness.h"

#define TR_BIG (8u << 20)       /* far more than two socket buffers */

/* A listening TCP socket on 127.0.0.1, any port: its fd, *port set. */
static int
tr_listen(int *port)
{
    struct sockaddr_in a;
    socklen_t   alen = sizeof(a);
    int         fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *) &a, sizeof(a)) != 0
        || listen(fd, 4) != 0
        || getsockname(fd, (struct sockaddr *) &a, &alen) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static blog_redis_settings
tr_settings(int port)
{
    blog_redis_settings g;

    memset(&g, 0, sizeof(g));
    g.on = 1;
    g.host = "127.0.0.1";
    g.port = port;
    g.connect_timeout = apr_time_from_sec(5);
    g.timeout = apr_time_from_sec(5);
    return g;
}

/* Connected over TCP to a fresh listener; the accepted end in *peer. */
static int
tr_connect(blog_redis *r, int *lfd, int *peer)
{
    int         port = 0;
    char        why[256] = "";
    blog_redis_settings g;

    memset(r, 0, sizeof(*r));
    *lfd = tr_listen(&port);
    if (*lfd < 0)
        return -1;
    g = tr_settings(port);
    if (blog_redis_connect(r, &g, why, sizeof(why)) != 0) {
        fprintf(stderr, "  connect: %s\n", why);
        return -1;
    }
    *peer = accept(*lfd, NULL, NULL);
    return *peer < 0 ? -1 : 0;
}

static void
test_tcp_keepalive(void)
{
    blog_redis  r;
    int         lfd = -1, peer = -1, on = 0;
    socklen_t   len = sizeof(on);

    CHECK(tr_connect(&r, &lfd, &peer) == 0);
    CHECK(r.ctx != NULL);
    if (r.ctx != NULL) {
        /* a peer that vanishes without a word is found out */
        CHECK(getsockopt(r.ctx->fd, SOL_SOCKET, SO_KEEPALIVE, &on, &len) == 0);
        CHECK(on == 1);
    }
    blog_redis_close(&r);
    CHECK(r.ctx == NULL);
    if (peer >= 0)
        close(peer);
    if (lfd >= 0)
        close(lfd);
}

static void
test_tcp_refused(void)
{
    blog_redis  r;
    int         port = 0;
    int         lfd = tr_listen(&port);
    char        why[256] = "";
    blog_redis_settings g = tr_settings(port);

    /* the port was free a moment ago and nothing listens on it now */
    CHECK(lfd >= 0);
    if (lfd >= 0)
        close(lfd);
    memset(&r, 0, sizeof(r));
    CHECK(blog_redis_connect(&r, &g, why, sizeof(why)) == -1);
    CHECK(r.ctx == NULL);
    CHECK(strstr(why, "refused") != NULL);
}

/* The peer's reader: drains until end of stream, checks the pattern. */
typedef struct tr_reader
{
    int         fd;
    size_t      got;
    int         bad;
} tr_reader;

static void *
tr_read(void *arg)
{
    tr_reader  *rd = arg;
    unsigned char buf[65536];
    ssize_t     n;

    while ((n = read(rd->fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] != (unsigned char) ((rd->got + (size_t) i) % 251))
                rd->bad = 1;
        rd->got += (size_t) n;
    }
    return NULL;
}

/* Three buffers of one pattern, cut at odd places. */
static void
tr_iov(struct iovec *iov, unsigned char *data)
{
    for (size_t i = 0; i < TR_BIG; i++)
        data[i] = (unsigned char) (i % 251);
    iov[0].iov_base = data;
    iov[0].iov_len = 7;
    iov[1].iov_base = data + 7;
    iov[1].iov_len = TR_BIG / 2 + 1;
    iov[2].iov_base = data + 7 + TR_BIG / 2 + 1;
    iov[2].iov_len = TR_BIG - 7 - TR_BIG / 2 - 1;
}

static void
test_send_reader_late(void)
{
    blog_redis  r;
    int         lfd = -1, peer = -1;
    unsigned char *data = malloc(TR_BIG);
    struct iovec iov[3];
    tr_reader   rd = {-1, 0, 0};
    pthread_t   th;

    CHECK(data != NULL);
    if (data == NULL || tr_connect(&r, &lfd, &peer) != 0) {
        CHECK(0);
        free(data);
        return;
    }
    /* nobody reads: the kernel's buffers fill, the deadline passes */
    tr_iov(iov, data);
    CHECK(blog_redis_send(&r, iov, 3, apr_time_now() + apr_time_from_msec(200))
          == BLOG_REDIS_TIMEOUT);
    blog_redis_close(&r);
    close(peer);
    close(lfd);

    /* a reader that starts late: every byte arrives, in order */
    if (tr_connect(&r, &lfd, &peer) != 0) {
        CHECK(0);
        free(data);
        return;
    }
    rd.fd = peer;
    tr_iov(iov, data);
    CHECK(pthread_create(&th, NULL, tr_read, &rd) == 0);
    CHECK(blog_redis_send(&r, iov, 3, apr_time_now() + apr_time_from_sec(30))
          == BLOG_REDIS_OK);
    blog_redis_close(&r);
    pthread_join(th, NULL);
    CHECK(rd.got == TR_BIG);
    CHECK(!rd.bad);
    close(peer);
    close(lfd);
    free(data);
}

static void
test_send_peer_closed(void)
{
    blog_redis  r;
    int         lfd = -1, peer = -1;
    blog_redis_io io = BLOG_REDIS_OK;
    char        buf[65536];
    struct iovec iov;
    void        (*old) (int) = signal(SIGPIPE, SIG_IGN);   /* as in httpd */

    memset(buf, 'x', sizeof(buf));
    CHECK(tr_connect(&r, &lfd, &peer) == 0);
    close(peer);
    /* the first writes may land in the buffer; the peer's reset ends it */
    for (int i = 0; i < 50 && io == BLOG_REDIS_OK; i++) {
        iov.iov_base = buf;
        iov.iov_len = sizeof(buf);
        io = blog_redis_send(&r, &iov, 1, apr_time_now() + apr_time_from_sec(5));
    }
    CHECK(io == BLOG_REDIS_CLOSED);
    blog_redis_close(&r);
    close(lfd);
    signal(SIGPIPE, old);
}

/* A peer that reads a command, then writes a reply of its own. */
typedef struct tr_replier
{
    int         fd;
    const char *head;           /* written once */
    const char *item;           /* then written n times */
    size_t      n;
} tr_replier;

static void *
tr_reply(void *arg)
{
    tr_replier *rp = arg;
    char        buf[4096];
    char       *chunk;
    size_t      ilen = strlen(rp->item), per, i;

    if (read(rp->fd, buf, sizeof(buf)) <= 0
        || write(rp->fd, rp->head, strlen(rp->head)) < 0)
        return NULL;
    per = ilen == 0 ? 0 : ilen < 65536 ? 65536 / ilen : 1;
    chunk = malloc(per * ilen + 1);
    for (i = 0; i < per; i++)
        memcpy(chunk + i * ilen, rp->item, ilen);
    /* until all is written or the client has gone */
    for (i = 0; per > 0 && chunk != NULL && i < rp->n; i += per) {
        size_t      k = rp->n - i < per ? rp->n - i : per;

        if (send(rp->fd, chunk, k * ilen, MSG_NOSIGNAL) < 0)
            break;
    }
    free(chunk);
    return NULL;
}

/* One command's reply from such a peer: its io, and the reply if any. */
static blog_redis_io
tr_command_reply(const char *head, const char *item, size_t n,
                 size_t *elements)
{
    blog_redis  r;
    int         lfd = -1, peer = -1;
    tr_replier  rp = {-1, head, item, n};
    pthread_t   th;
    redisReply *reply = NULL;
    const char *argv[] = {"SCAN", "0"};
    blog_redis_io io = BLOG_REDIS_DOWN;

    if (tr_connect(&r, &lfd, &peer) != 0) {
        CHECK(0);
        return io;
    }
    r.max_bulk = 1024 * 1024;
    rp.fd = peer;
    CHECK(pthread_create(&th, NULL, tr_reply, &rp) == 0);
    io = blog_redis_command(&r, 2, argv, NULL,
                            apr_time_now() + apr_time_from_sec(30), &reply);
    *elements = reply != NULL && reply->type == REDIS_REPLY_ARRAY
        ? reply->elements : 0;
    freeReplyObject(reply);
    blog_redis_close(&r);
    shutdown(peer, SHUT_RDWR);
    pthread_join(th, NULL);
    close(peer);
    close(lfd);
    return io;
}

/*
 * Replies that would make hiredis hold more than a reply of the blog's
 * ever needs, judged from their headers: an array of 10^6 elements;
 * 40 000 arrays of two, 120 000 elements in all; three strings of 600 000
 * bytes, each
 * under the bound, 1.8 MB together.  A reply at the bounds passes, and
 * two replies in one read are two.
 */
static void
test_reply_bounds(void)
{
    size_t      blen = 600000;
    char       *big = malloc(blen + 16);
    size_t      elements = 0;
    int         at;

    CHECK(big != NULL);
    if (big == NULL)
        return;
    CHECK(tr_command_reply("*1000000\r\n", ":1\r\n", 1000000, &elements)
          == BLOG_REDIS_BAD);
    CHECK(tr_command_reply("*40000\r\n", "*2\r\n:1\r\n:1\r\n", 40000,
                           &elements) == BLOG_REDIS_BAD);
    at = snprintf(big, 16, "$%zu\r\n", blen);
    memset(big + at, 'x', blen);
    memcpy(big + at + blen, "\r\n", 3);
    CHECK(tr_command_reply("*3\r\n", big, 3, &elements) == BLOG_REDIS_BAD);
    CHECK(tr_command_reply("*1\r\n", big, 1, &elements) == BLOG_REDIS_OK
          && elements == 1);
    CHECK(tr_command_reply("*65536\r\n", ":1\r\n", 65536, &elements)
          == BLOG_REDIS_OK && elements == 65536);
    CHECK(tr_command_reply("*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n:5\r\n",
                           "", 0, &elements) == BLOG_REDIS_OK
          && elements == 2);
    free(big);
}

/*
 * BlogRedis host:port whose name the resolver does not answer: the
 * connect gives up by BlogRedisConnectTimeout (hiredis' own connect waited
 * for the resolver, however long), the next connects wait for the same
 * look-up, not another, and the one after its answer takes it.
 */
static void
test_resolver_hangs(void)
{
    blog_redis  r;
    int         port = 0;
    int         lfd = tr_listen(&port);
    int         peer = -1;
    blog_redis_settings g = tr_settings(port);
    unsigned    asked = fake_resolver_asked();
    char        why[256] = "";
    apr_time_t  t0 = apr_time_now();

    memset(&r, 0, sizeof(r));
    g.host = "redis" FAKE_HANG_DOMAIN;
    g.connect_timeout = apr_time_from_msec(200);
    CHECK(blog_redis_connect(&r, &g, why, sizeof(why)) == -1);
    CHECK(t_ms_since(t0) < 200 + T_MARGIN_MS);
    CHECK(strstr(why, "no answer from the resolver") != NULL);
    CHECK(blog_redis_connect(&r, &g, why, sizeof(why)) == -1);
    CHECK(fake_resolver_asked() == asked + 1);
    fake_resolver_release();
    g.connect_timeout = apr_time_from_sec(10);
    CHECK(blog_redis_connect(&r, &g, why, sizeof(why)) == 0);
    CHECK(fake_resolver_asked() == asked + 1);
    peer = lfd >= 0 ? accept(lfd, NULL, NULL) : -1;
    CHECK(peer >= 0);
    blog_redis_close(&r);
    if (peer >= 0)
        close(peer);
    if (lfd >= 0)
        close(lfd);
}

/* rediss://: the TLS context made at start-up, TLS 1.2 its floor; an
 * OpenSSL that refuses the floor stops the start, saying so. */
static void
test_tls_floor(void)
{
    apr_pool_t *p;
    blog_redis_settings g = tr_settings(6379);
    char        err[256] = "";

    apr_pool_create(&p, t_root());
    g.tls = 1;
    CHECK(blog_redis_load(p, &g, err, sizeof(err)) == 0 && g.tls_ctx != NULL);
    if (g.tls_ctx != NULL)
        CHECK(SSL_CTX_get_min_proto_version((SSL_CTX *) g.tls_ctx)
              == TLS1_2_VERSION);
    t_tls_floor_fail = 1;
    CHECK(blog_redis_load(p, &g, err, sizeof(err)) == -1);
    t_tls_floor_fail = 0;
    CHECK(strstr(err, "TLS 1.2") != NULL);
    apr_pool_destroy(p);
}

const t_case t_redis_io_cases[] = {
    {"redis: host:port over TCP, keep-alive on", test_tcp_keepalive},
    {"redis: a refused port says so", test_tcp_refused},
    {"redis: a reader late: the buffers resume where they stopped, or time out",
     test_send_reader_late},
    {"redis: a peer that closed: CLOSED", test_send_peer_closed},
    {"redis: replies bounded in elements and bytes, from their headers",
     test_reply_bounds},
    {"redis: a resolver that does not answer: the connect's deadline holds",
     test_resolver_hangs},
    {"redis: rediss://'s TLS floor, and an OpenSSL that refuses it",
     test_tls_floor},
    {NULL, NULL}
};

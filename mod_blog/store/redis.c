/* SPDX-License-Identifier: Apache-2.0 */
/*
 * redis.c - the client of redis.h.  hiredis formats and parses, but the
 * socket is non-blocking from the connect on, every wait a poll against
 * the command's deadline, and each reply judged before hiredis' reader
 * buffers it: a Redis line's first byte, a short header, and in all no
 * more than REDIS_MAX_ELEMENTS elements and max_bulk bytes of strings
 * (hiredis makes an object per element as its header is read).
 * rediss:// is OpenSSL on that socket, with the same polls
 * (why not hiredis_ssl: docs/OPERATIONS.md, "BlogRedis rediss://").
 */
#include "store/redis.h"

#include "store/redis_tls.h"
#include "store/secret.h"
#include "store/wait.h"

#include "apr_lib.h"
#include "apr_strings.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Redis's status and error lines are a sentence, not a stream. */
#define REDIS_MAX_LINE      1024
/* Elements of one reply, its nested arrays' included: far above a SCAN
 * batch of the listener's COUNT (a few MiB of hiredis objects at most). */
#define REDIS_MAX_ELEMENTS  65536

const char *const blog_redis_why[] = {
    "", "timed out", "connection closed", "bad or oversized reply",
    "no connection"
};

void
blog_redis_close(blog_redis *r)
{
    /* no close_notify: nothing is left to say, and it could block */
    SSL_free(r->tls);
    r->tls = NULL;
    redisFree(r->ctx);
    r->ctx = NULL;
}

static int
redis_auth_secret(apr_pool_t *p, blog_redis_settings *g, char *err,
                  apr_size_t err_len)
{
    char        buf[1024];
    apr_size_t  len;
    char       *sp;

    if (blog_secret_read(g->auth_file, buf, sizeof(buf), &len, err,
                         err_len) != 0)
        return -1;
    while (len > 0 && apr_isspace(buf[len - 1]))
        buf[--len] = '\0';
    if (len == 0 || strpbrk(buf, "\r\n") != NULL || strlen(buf) != len) {
        apr_snprintf(err, err_len, "%s must hold one line: \"password\" or "
                     "\"user password\"", g->auth_file);
        memset(buf, 0, sizeof(buf));
        return -1;
    }
    sp = strchr(buf, ' ');
    g->user = sp ? apr_pstrmemdup(p, buf, (apr_size_t) (sp - buf))
        : NULL;
    g->pass = apr_pstrdup(p, sp ? sp + 1 : buf);
    memset(buf, 0, sizeof(buf));
    return 0;
}

int
blog_redis_load(apr_pool_t *p, blog_redis_settings *g, char *err,
                apr_size_t err_len)
{
    g->user = g->pass = NULL;
    g->tls_ctx = NULL;
    if ((g->on && g->tls
         && blog_redis_tls_context(p, g, err, err_len) != 0)
        || (g->auth_file != NULL
            && redis_auth_secret(p, g, err, err_len) != 0))
        return -1;
    return 0;
}

/*
 * Wait for what SSL_get_error says the last call needs, by the deadline:
 * OK, TIMEOUT, or CLOSED for an error that ends the connection.
 */
static blog_redis_io
redis_tls_wait(blog_redis *r, int ret, apr_time_t deadline)
{
    int         e = SSL_get_error(r->tls, ret);

    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
        return BLOG_REDIS_CLOSED;
    return blog_wait_fd(r->ctx->fd, e == SSL_ERROR_WANT_READ ? POLLIN
                        : POLLOUT, deadline) ? BLOG_REDIS_TIMEOUT
        : BLOG_REDIS_OK;
}

/* The handshake, by the connect's deadline: 0, or -1 and why. */
static int
redis_tls_start(blog_redis *r, const blog_redis_settings *g,
                apr_time_t deadline, char *why, apr_size_t why_len)
{
    SSL        *ssl = SSL_new(g->tls_ctx);
    unsigned char ip[16];
    int         is_ip = inet_pton(AF_INET, g->host, ip) == 1
        || inet_pton(AF_INET6, g->host, ip) == 1;
    int         rc;

    r->tls = ssl;
    if (ssl == NULL || SSL_set_fd(ssl, r->ctx->fd) != 1
        || (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl),
                                                  g->host) != 1
            : SSL_set1_host(ssl, g->host) != 1
            || SSL_set_tlsext_host_name(ssl, g->host) != 1)) {
        apr_cpystrn(why, "TLS: out of memory", why_len);
        return -1;
    }
    SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE
                 | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    ERR_clear_error();
    while ((rc = SSL_connect(ssl)) != 1) {
        long        v = SSL_get_verify_result(ssl);
        blog_redis_io io = redis_tls_wait(r, rc, deadline);

        if (io == BLOG_REDIS_OK)
            continue;
        if (io == BLOG_REDIS_TIMEOUT)
            apr_cpystrn(why, "TLS handshake: timed out", why_len);
        else if (v != X509_V_OK)
            apr_snprintf(why, why_len, "TLS: Redis's certificate: %s",
                         X509_verify_cert_error_string(v));
        else
            apr_snprintf(why, why_len, "TLS handshake: %s",
                         blog_redis_tls_error(SSL_get_error(ssl, rc)
                                              == SSL_ERROR_SYSCALL
                                              ? "connection closed"
                                              : "failed"));
        return -1;
    }
    return 0;
}

/* The buffers in records of up to 16 KiB: one per small command is waste. */
static blog_redis_io
redis_tls_send(blog_redis *r, const struct iovec *iov, int n,
               apr_time_t deadline)
{
    char       *buf = r->wbuf;
    size_t      len = 0;
    size_t      done = 0;
    size_t      off = 0;
    int         i = 0;
    blog_redis_io io;

    while (done < len || i < n) {
        if (done == len) {
            for (len = done = 0; i < n && len < sizeof(r->wbuf);) {
                size_t      k = iov[i].iov_len - off;

                if (k > sizeof(r->wbuf) - len)
                    k = sizeof(r->wbuf) - len;
                memcpy(buf + len, (const char *) iov[i].iov_base + off, k);
                len += k;
                off += k;
                if (off == iov[i].iov_len) {
                    i++;
                    off = 0;
                }
            }
            if (len == 0)
                break;
        }
        int         w;

        ERR_clear_error();
        w = SSL_write(r->tls, buf + done, (int) (len - done));
        if (w > 0)
            done += (size_t) w;
        else if ((io = redis_tls_wait(r, w, deadline)) != BLOG_REDIS_OK)
            return io;
    }
    return BLOG_REDIS_OK;
}

/* AUTH on a new connection, by the connect's deadline: 0, or -1 and why. */
static int
redis_auth(blog_redis *r, const blog_redis_settings *g, apr_time_t deadline,
           char *why, apr_size_t why_len)
{
    const char *argv[3] = {
        "AUTH", g->user ? g->user : g->pass, g->pass
    };
    redisReply *reply = NULL;
    blog_redis_io io = blog_redis_command(r, g->user ? 3 : 2, argv,
                                          NULL, deadline, &reply);
    int         ok = io == BLOG_REDIS_OK && reply->type == REDIS_REPLY_STATUS;

    if (io != BLOG_REDIS_OK)
        apr_snprintf(why, why_len, "AUTH: %s", blog_redis_why[io]);
    else if (!ok)
        apr_snprintf(why, why_len, "AUTH refused: %s",
                     reply->type == REDIS_REPLY_ERROR ? reply->str
                     : "unexpected reply");
    freeReplyObject(reply);
    return ok ? 0 : -1;
}

/*
 * A TCP connect started to host:port, its name resolved by the deadline
 * (hiredis' connect resolves without one): the context, or NULL with why.
 */
static redisContext *
redis_tcp_start(blog_redis *r, const blog_redis_settings *g,
                apr_time_t deadline, char *why, apr_size_t why_len)
{
    struct addrinfo *res, *a;
    redisContext *c;
    int         fd = -1, err = 0, one = 1;

    if (blog_resolve(&r->lookup, g->host, g->port, deadline, &res, why,
                     why_len) != 0)
        return NULL;
    /* as hiredis: the first address a connect starts to */
    for (a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK
                    | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0
            && (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
                           sizeof(one)) != 0
                || (connect(fd, a->ai_addr, a->ai_addrlen) != 0
                    && errno != EINPROGRESS))) {
            err = errno;
            close(fd);
            fd = -1;
        }
        else if (fd < 0)
            err = errno;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        apr_cpystrn(why, strerror(err), why_len);
        return NULL;
    }
    if ((c = redisConnectFd(fd)) == NULL) {
        close(fd);
        apr_cpystrn(why, "out of memory", why_len);
    }
    return c;
}

int
blog_redis_connect(blog_redis *r, const blog_redis_settings *g,
                   char *why, apr_size_t why_len)
{
    apr_time_t  deadline = apr_time_now() + g->connect_timeout;
    redisContext *c;
    int         err = 0;
    socklen_t   elen = sizeof(err);

    blog_redis_close(r);
    r->in_body = 0;
    r->line_len = 0;
    r->items_due = 0;
    if (g->port == 0) {
        if ((c = redisConnectUnixNonBlock(g->host)) == NULL)
            apr_cpystrn(why, "out of memory", why_len);
    }
    else
        c = redis_tcp_start(r, g, deadline, why, why_len);
    if (c == NULL)
        return -1;
    r->ctx = c;
    r->tls_wants_write = 0;
    if (c->err)
        apr_cpystrn(why, c->errstr, why_len);
    else if (blog_wait_fd(c->fd, POLLOUT, deadline) != 0)
        err = ETIMEDOUT;
    else if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
        err = errno;
    else if (err == 0 && g->port != 0
             && redisEnableKeepAlive(c) != REDIS_OK)
        err = errno ? errno : EIO;
    if (err != 0)
        apr_cpystrn(why, strerror(err), why_len);
    else if (!c->err
             && (!g->tls
                 || redis_tls_start(r, g, deadline, why, why_len) == 0)
             && (g->pass == NULL
                 || redis_auth(r, g, deadline, why, why_len) == 0))
        return 0;
    blog_redis_close(r);
    return -1;
}

blog_redis_io
blog_redis_send(blog_redis *r, struct iovec *iov, int n, apr_time_t deadline)
{
    int         i = 0;

    if (r->tls != NULL)
        return redis_tls_send(r, iov, n, deadline);
    while (i < n) {
        ssize_t     w = writev(r->ctx->fd, iov + i, n - i);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (blog_wait_fd(r->ctx->fd, POLLOUT, deadline) != 0)
                return BLOG_REDIS_TIMEOUT;
            continue;
        }
        if (w < 0)
            return BLOG_REDIS_CLOSED;
        while (i < n && (size_t) w >= iov[i].iov_len)
            w -= (ssize_t) iov[i++].iov_len;
        if (i < n) {
            iov[i].iov_base = (char *) iov[i].iov_base + w;
            iov[i].iov_len -= (size_t) w;
        }
    }
    return BLOG_REDIS_OK;
}

/*
 * Judge a line once whole, one item of the current reply: a string (or an
 * array) declares its length in at most 31 bytes, and the reply, with
 * what it declares, stays within REDIS_MAX_ELEMENTS and max_bulk.
 */
static int
redis_line_ok(blog_redis *r)
{
    long long   len;
    char       *end;

    if (r->items_due == 0) {    /* a new reply */
        r->items_due = 1;
        r->reply_items = r->reply_bytes = 0;
    }
    r->items_due--;
    if (r->line[0] != '$' && r->line[0] != '*')
        return 1;
    r->line[r->line_len] = '\0';
    len = strtoll(r->line + 1, &end, 10);
    if (*end != '\r' || len < -1)
        return 0;
    if (len <= 0)
        return 1;
    if (r->line[0] == '*') {
        if ((apr_uint64_t) len > REDIS_MAX_ELEMENTS - r->reply_items)
            return 0;
        r->reply_items += (apr_uint64_t) len;
        r->items_due += (apr_uint64_t) len;
        return 1;
    }
    if ((apr_uint64_t) len > r->max_bulk - r->reply_bytes)
        return 0;
    r->reply_bytes += (apr_uint64_t) len;
    r->in_body = 1;
    r->body_left = (apr_uint64_t) len + 2;
    return 1;
}

/* Follow n bytes of the reply stream: 0, or -1 when it is not Redis. */
static int
redis_judge(blog_redis *r, const char *p, apr_size_t n)
{
    while (n > 0) {
        if (r->in_body) {
            apr_size_t  k = r->body_left < n ? (apr_size_t) r->body_left : n;

            r->body_left -= k;
            p += k;
            n -= k;
            r->in_body = r->body_left > 0;
            continue;
        }
        if (r->line_len == 0 && *p != '$' && *p != '+' && *p != '-'
            && *p != ':' && *p != '*')
            return -1;
        if (r->line_len < sizeof(r->line) - 1)
            r->line[r->line_len] = *p;
        else if (r->line[0] == '$' || r->line[0] == '*'
                 || r->line_len >= REDIS_MAX_LINE)
            return -1;
        r->line_len++;
        if (*p++ == '\n') {
            /* judged up to the CR; a long line heads no string or array */
            r->line_len = r->line_len <= sizeof(r->line) - 1
                ? r->line_len - 1 : 0;
            if (!redis_line_ok(r))
                return -1;
            r->line_len = 0;
        }
        n--;
    }
    return 0;
}

blog_redis_io
blog_redis_fill(blog_redis *r, apr_time_t deadline)
{
    ssize_t     n;

    if ((r->tls == NULL || SSL_pending(r->tls) == 0)
        && blog_wait_fd(r->ctx->fd, r->tls_wants_write ? POLLOUT : POLLIN,
                        deadline) != 0)
        return BLOG_REDIS_TIMEOUT;
    if (r->tls != NULL) {
        int         e;

        ERR_clear_error();
        n = SSL_read(r->tls, r->rbuf, sizeof(r->rbuf));
        e = n > 0 ? SSL_ERROR_NONE : SSL_get_error(r->tls, (int) n);
        r->tls_wants_write = e == SSL_ERROR_WANT_WRITE;
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            return BLOG_REDIS_OK;
    }
    else {
        do
            n = read(r->ctx->fd, r->rbuf, sizeof(r->rbuf));
        while (n < 0 && errno == EINTR);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return BLOG_REDIS_OK;
    }
    if (n <= 0)
        return BLOG_REDIS_CLOSED;
    if (redis_judge(r, r->rbuf, (apr_size_t) n) != 0
        || redisReaderFeed(r->ctx->reader, r->rbuf, (size_t) n) != REDIS_OK)
        return BLOG_REDIS_BAD;
    return BLOG_REDIS_OK;
}

blog_redis_io
blog_redis_next(blog_redis *r, redisReply **reply)
{
    void       *out = NULL;

    if (redisReaderGetReply(r->ctx->reader, &out) != REDIS_OK)
        return BLOG_REDIS_BAD;
    *reply = out;
    return BLOG_REDIS_OK;
}

blog_redis_io
blog_redis_command(blog_redis *r, int argc, const char **argv,
                   const size_t *lens, apr_time_t deadline, redisReply **reply)
{
    struct iovec iov;
    sds         buf = NULL;
    long long   len = redisFormatSdsCommandArgv(&buf, argc, argv, lens);
    blog_redis_io io;

    *reply = NULL;
    if (len < 0)
        return BLOG_REDIS_BAD;
    iov = (struct iovec) {buf, (size_t) len};
    io = blog_redis_send(r, &iov, 1, deadline);
    redisFreeSdsCommand(buf);
    while (io == BLOG_REDIS_OK && (io = blog_redis_next(r, reply))
           == BLOG_REDIS_OK && *reply == NULL)
        io = blog_redis_fill(r, deadline);
    return io;
}

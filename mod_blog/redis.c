/*
 * redis.c - the Redis client: see redis.h.
 *
 * hiredis 0.14 bounds each read (SO_RCVTIMEO), not a command, so a Redis
 * that trickles its answer could hold a request for ever; and it buffers a
 * string reply whole, whatever length it declares.  So the socket is
 * non-blocking from the connect on (redisConnectNonBlock: no flag of
 * hiredis is touched), every wait is a poll against the command's
 * deadline, and the bytes read are judged before hiredis' reader sees
 * them: each header line must start like Redis (+ - : $ *) and stay short,
 * and a string may not declare more than max_bulk bytes.
 */
#include "redis.h"

#include "wait.h"

#include "apr_lib.h"
#include "apr_strings.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Redis's status and error lines are a sentence, not a stream. */
#define REDIS_MAX_LINE      1024

const char *const blog_redis_why[] = {
    "", "timed out", "connection closed", "bad or oversized reply",
    "no connection"
};

void
blog_redis_close(blog_redis *r)
{
    if (r->ctx != NULL)
        redisFree(r->ctx);
    r->ctx = NULL;
}

static void
redis_why(char *why, apr_size_t len, const char *errstr)
{
    apr_snprintf(why, len, "%s", errstr);
}

/* "password" or "user password", one line. */
static int
redis_auth_secret(apr_pool_t *p, blog_cache_settings *g, char *err,
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
        return -1;
    }
    sp = strchr(buf, ' ');
    g->redis_user = sp ? apr_pstrmemdup(p, buf, (apr_size_t) (sp - buf)) : NULL;
    g->redis_pass = apr_pstrdup(p, sp ? sp + 1 : buf);
    memset(buf, 0, sizeof(buf));
    return 0;
}

int
blog_redis_secrets(apr_pool_t *p, blog_cache_settings *g, char *err,
                   apr_size_t err_len)
{
    char        buf[1024];
    apr_size_t  len;
    int         rc = 0;

    g->redis_user = g->redis_pass = NULL;
    g->seal.on = 0;
    if (g->auth_file != NULL
        && redis_auth_secret(p, g, err, err_len) != 0)
        return -1;
    if (g->key_file == NULL)
        return 0;
    if (blog_secret_read(g->key_file, buf, sizeof(buf), &len, err,
                         err_len) != 0)
        return -1;
    if (blog_seal_init(&g->seal, buf, len) != 0) {
        apr_snprintf(err, err_len, "%s: a key needs 32 bytes or more "
                     "(head -c 32 /dev/urandom), or libcrypto failed",
                     g->key_file);
        rc = -1;
    }
    memset(buf, 0, sizeof(buf));
    return rc;
}

/* AUTH on a new connection, by the connect's deadline: 0, or -1 and why. */
static int
redis_auth(blog_redis *r, const blog_cache_settings *g, apr_time_t deadline,
           char *why, apr_size_t why_len)
{
    const char *argv[3] = {"AUTH", g->redis_user, g->redis_pass};
    size_t      lens[3] = {4, g->redis_user ? strlen(g->redis_user) : 0,
                           strlen(g->redis_pass)};
    int         user = g->redis_user != NULL;
    redisReply *reply = NULL;
    blog_redis_io io;
    int         ok;

    if (!user) {
        argv[1] = argv[2];
        lens[1] = lens[2];
    }
    io = blog_redis_command(r, 2 + user, argv, lens, deadline, &reply);
    ok = io == BLOG_REDIS_OK && reply->type == REDIS_REPLY_STATUS;
    if (io != BLOG_REDIS_OK)
        apr_snprintf(why, why_len, "AUTH: %s", blog_redis_why[io]);
    else if (!ok)
        apr_snprintf(why, why_len, "AUTH refused: %.*s",
                     reply->type == REDIS_REPLY_ERROR ? (int) reply->len : 16,
                     reply->type == REDIS_REPLY_ERROR ? reply->str
                     : "unexpected reply");
    if (reply != NULL)
        freeReplyObject(reply);
    return ok ? 0 : -1;
}

int
blog_redis_connect(blog_redis *r, const blog_cache_settings *g,
                   char *why, apr_size_t why_len)
{
    apr_time_t  deadline = apr_time_now() + g->redis_connect_timeout;
    redisContext *c;
    int         err = 0;
    socklen_t   elen = sizeof(err);

    blog_redis_close(r);
    r->in_body = 0;
    r->line_len = 0;
    c = g->redis_port == 0 ? redisConnectUnixNonBlock(g->redis_host)
        : redisConnectNonBlock(g->redis_host, g->redis_port);
    if (c == NULL) {
        redis_why(why, why_len, "out of memory");
        return -1;
    }
    if (c->err) {
        redis_why(why, why_len, c->errstr);
        redisFree(c);
        return -1;
    }
    if (blog_wait_fd(c->fd, POLLOUT, deadline) != 0)
        err = ETIMEDOUT;
    else if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
        err = errno;
    if (err == 0 && g->redis_port != 0 && redisEnableKeepAlive(c) != REDIS_OK)
        err = errno ? errno : EIO;
    if (err != 0) {
        redis_why(why, why_len, strerror(err));
        redisFree(c);
        return -1;
    }
    r->ctx = c;
    if (g->redis_pass != NULL
        && redis_auth(r, g, deadline, why, why_len) != 0) {
        blog_redis_close(r);
        return -1;
    }
    return 0;
}

blog_redis_io
blog_redis_send(blog_redis *r, struct iovec *iov, int n, apr_time_t deadline)
{
    int         i = 0;

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
 * Judge a header line once whole: a string (or an array) declares its
 * length in at most 31 bytes, and a string no longer than max_bulk.
 */
static int
redis_header_ok(blog_redis *r)
{
    long long   len;
    char       *end;

    if (r->line[0] != '$' && r->line[0] != '*')
        return 1;
    r->line[r->line_len] = '\0';
    len = strtoll(r->line + 1, &end, 10);
    if (*end != '\r' || len < -1)
        return 0;
    if (r->line[0] == '$' && len >= 0) {
        if ((apr_uint64_t) len > r->max_bulk)
            return 0;
        r->in_body = 1;
        r->body_left = (apr_uint64_t) len + 2;
    }
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
            if (r->line_len <= sizeof(r->line) - 1) {
                r->line_len--;  /* judged up to the CR */
                if (!redis_header_ok(r))
                    return -1;
            }
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

    if (blog_wait_fd(r->ctx->fd, POLLIN, deadline) != 0)
        return BLOG_REDIS_TIMEOUT;
    do
        n = read(r->ctx->fd, r->rbuf, sizeof(r->rbuf));
    while (n < 0 && errno == EINTR);
    if (n == 0)
        return BLOG_REDIS_CLOSED;
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? BLOG_REDIS_OK
            : BLOG_REDIS_CLOSED;
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
                   const size_t *lens, apr_time_t deadline,
                   redisReply **reply)
{
    struct iovec iov;
    char       *buf = NULL;
    long long   len = redisFormatCommandArgv(&buf, argc, argv, lens);
    blog_redis_io io;

    *reply = NULL;
    if (len < 0)
        return BLOG_REDIS_BAD;
    iov.iov_base = buf;
    iov.iov_len = (size_t) len;
    io = blog_redis_send(r, &iov, 1, deadline);
    redisFreeCommand(buf);
    while (io == BLOG_REDIS_OK && (io = blog_redis_next(r, reply))
           == BLOG_REDIS_OK && *reply == NULL)
        io = blog_redis_fill(r, deadline);
    return io;
}

/*
 * connection.c - the blog's own HTTP/1.1 connection loop under an async
 * MPM (event), in a process_connection hook as mod_http2 runs its own.
 *
 * What the event MPM does between two keep-alive requests costs as much as
 * a cached page on this machine: the worker hands the connection to the
 * listener thread (epoll_ctl), the listener wakes on the next request,
 * removes it again and queues it for a worker, which wakes in turn.  Here
 * the worker that answered a request instead waits a short while
 * (BlogConnectionHold) for the next one on the same socket and serves it
 * itself; only a connection that stays idle longer goes back to the MPM,
 * which keeps idle connections as cheaply as ever.
 *
 * The same loop never blocks a worker on a client that sends its request
 * slowly: a request is read only once its whole header has arrived; until
 * then the connection goes back to the MPM to wait for more bytes
 * (CONN_STATE_ASYNC_WAITIO), holding no thread, with a deadline on the
 * whole header like mod_reqtimeout's.
 *
 * Under a graceful stop the MPM closes idle keep-alive connections, and a
 * request sent at that moment meets a closed socket.  A connection this
 * loop holds is instead kept until its next request (within the hold's
 * grace) and answered with "Connection: close", which Apache sends by
 * itself once the MPM is stopping.
 *
 * Core reads the client through a socket bucket, which tries the socket
 * whenever asked, and two non-blocking reads per request find it empty:
 * the greedy look past the first read of a speculative peek, and
 * ap_check_pipeline's look for a pipelined request after the answer.
 * Each is a syscall returning EAGAIN.  The loop's connections get a socket
 * bucket of their own (the insert_network_bucket hook) that remembers a
 * read that left the socket empty and answers a non-blocking read with
 * EAGAIN then, without the syscall, until the loop has seen the socket
 * readable again.  A blocking read always reads.
 *
 * An idle connection handed back in the keep-alive state is at the mercy
 * of the MPM's listener: when its next request arrives while every worker
 * of the child is busy, event closes it under that request (event.c:
 * "If we don't get a worker immediately (nonblocking), we close the
 * connection"), and when a child finds no idle worker it closes every
 * idle keep-alive connection it holds.  A load of 50 clients can crowd one
 * child of a few threads, so fewer threads meant socket errors.  With
 * BlogConnectionPark the loop hands the connection back in the I/O-wait
 * state instead: the listener then waits for a worker rather than closing,
 * and never culls it.  The price is the MPM's: that state waits under
 * Timeout, not KeepAliveTimeout, so an idle connection lives for Timeout
 * and a graceful stop waits as long for it; hence Off by default, and the
 * private stack sets Timeout to KeepAliveTimeout with it.
 *
 * Worker and prefork have no async states: the hook declines there and
 * core's loop runs as usual.
 */
#include "connection.h"

#include "httpd.h"
#include "http_config.h"
#include "http_connection.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "http_ssl.h"
#include "ap_mpm.h"
#include "apr_atomic.h"
#include "scoreboard.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

APLOG_USE_MODULE(blog);

/* How much of a pending request the header check looks at. */
#define CONN_HEAD_WINDOW    16384
/* A header must complete in this time, plus one second per 500 bytes up to
 * the maximum: mod_reqtimeout's defaults (header=20-40,minrate=500). */
#define CONN_HEAD_TIMEOUT   apr_time_from_sec(20)
#define CONN_HEAD_MAXTIME   apr_time_from_sec(40)
#define CONN_HEAD_MINRATE   500
/* Requests served before the connection goes back to the MPM once, so that
 * connections queued behind the held ones get a worker too. */
#define CONN_BUDGET         128
/* During a graceful stop, the longest wait for a held connection's last
 * request. */
#define CONN_GRACE          apr_time_from_sec(2)

typedef enum conn_head
{
    HEAD_COMPLETE,              /* a whole header is buffered: read it */
    HEAD_PARTIAL,               /* some bytes, no end of header yet */
    HEAD_CLOSED                 /* EOF or error */
} conn_head;

/*
 * The client socket as core's input filter reads it.  "drained": the last
 * read returned less than it asked for (or EAGAIN), so the socket held
 * nothing more at that moment; honoured only inside the loop ("trusted"),
 * which polls the socket itself before it reads again.
 */
typedef struct conn_sock
{
    apr_socket_t *sock;
    int         drained;
    int         trusted;
} conn_sock;

typedef struct blog_conn
{
    conn_sock   sock;
    apr_time_t  head_start;     /* first byte of the pending header, or 0 */
    /*
     * The MPM calls back only once the socket is readable or input is
     * buffered: a blocking read will not wait.  Not so for a connection
     * just accepted.
     */
    int         readable;
} blog_conn;

static apr_status_t conn_sock_read(apr_bucket *b, const char **str,
                                   apr_size_t *len, apr_read_type_e block);

/* As APR's socket bucket: read in place, never set aside, split or copied. */
static const apr_bucket_type_t conn_sock_type = {
    "BLOG_SOCKET", 5, APR_BUCKET_DATA,
    apr_bucket_destroy_noop,
    conn_sock_read,
    apr_bucket_setaside_notimpl,
    apr_bucket_split_notimpl,
    apr_bucket_copy_notimpl
};

static apr_bucket *
conn_sock_create(conn_sock *cs, apr_bucket_alloc_t *list)
{
    apr_bucket *b = apr_bucket_alloc(sizeof(*b), list);

    APR_BUCKET_INIT(b);
    b->free = apr_bucket_free;
    b->list = list;
    b->type = &conn_sock_type;
    b->length = (apr_size_t) (-1);
    b->start = -1;
    b->data = cs;
    return b;
}

/* APR's socket_bucket_read, but for the shortcut on a drained socket. */
static apr_status_t
conn_sock_read(apr_bucket *b, const char **str, apr_size_t *len,
               apr_read_type_e block)
{
    conn_sock  *cs = b->data;
    apr_interval_time_t timeout = 0;
    apr_status_t rv;
    char       *buf;

    *str = NULL;
    *len = 0;
    if (block == APR_NONBLOCK_READ && cs->drained && cs->trusted)
        return APR_EAGAIN;
    if (block == APR_NONBLOCK_READ) {
        apr_socket_timeout_get(cs->sock, &timeout);
        apr_socket_timeout_set(cs->sock, 0);
    }
    *len = APR_BUCKET_BUFF_SIZE;
    buf = apr_bucket_alloc(*len, b->list);
    rv = apr_socket_recv(cs->sock, buf, len);
    if (block == APR_NONBLOCK_READ)
        apr_socket_timeout_set(cs->sock, timeout);
    if (rv != APR_SUCCESS && rv != APR_EOF) {
        apr_bucket_free(buf);
        *len = 0;
        cs->drained = APR_STATUS_IS_EAGAIN(rv);
        return rv;
    }
    cs->drained = *len < APR_BUCKET_BUFF_SIZE;
    if (*len > 0) {
        apr_bucket_heap *h;

        b = apr_bucket_heap_make(b, buf, *len, apr_bucket_free);
        h = b->data;
        h->alloc_len = APR_BUCKET_BUFF_SIZE;
        *str = buf;
        APR_BUCKET_INSERT_AFTER(b, conn_sock_create(cs, b->list));
    }
    else {
        apr_bucket_free(buf);
        b = apr_bucket_immortal_make(b, "", 0);
        *str = b->data;
    }
    return APR_SUCCESS;
}

static apr_interval_time_t conn_hold;
static int  conn_park;
static int  conn_async;
/* Threads of this child inside the loop, and how many may hold at once. */
static apr_uint32_t conn_busy;
static apr_uint32_t conn_busy_max;

void
blog_connection_child_init(apr_interval_time_t hold, int park)
{
    int         async = 0, waitio = 0, threads = 1;

    conn_hold = hold;
    conn_park = park;
    if (ap_mpm_query(AP_MPMQ_IS_ASYNC, &async) != APR_SUCCESS)
        async = 0;
    if (ap_mpm_query(AP_MPMQ_CAN_WAITIO, &waitio) != APR_SUCCESS)
        waitio = 0;
    if (ap_mpm_query(AP_MPMQ_MAX_THREADS, &threads) != APR_SUCCESS
        || threads < 1)
        threads = 1;
    conn_async = hold > 0 && async && waitio;
    /*
     * A quarter of the threads (at least two) never hold a connection, so
     * that connections coming through the listener always find a worker.
     */
    conn_busy_max = threads > 4 ? (apr_uint32_t) (threads - threads / 4)
        : threads > 2 ? (apr_uint32_t) (threads - 2) : 0;
}

static int
conn_mpm_stopping(void)
{
    int         state = AP_MPMQ_RUNNING;

    return ap_mpm_query(AP_MPMQ_MPM_STATE, &state) != APR_SUCCESS
        || state == AP_MPMQ_STOPPING;
}

/*
 * Where a header stands, fed its bytes piece by piece as the buckets hold
 * them: leading blank lines are skipped, as ap_read_request does, and the
 * header ends at an empty line (LF LF or LF CR LF).
 */
typedef struct conn_scan
{
    int         started;        /* past the leading blank lines */
    int         nl;             /* 1 after LF, 2 after LF CR */
    int         done;
} conn_scan;

static void
conn_scan_feed(conn_scan *sc, const char *p, apr_size_t n)
{
    const char *end = p + n;

    for (; p < end && !sc->done; p++) {
        if (!sc->started) {
            if (*p == '\r' || *p == '\n')
                continue;
            sc->started = 1;
        }
        if (*p == '\n')
            sc->done = sc->nl != 0;
        sc->nl = *p == '\n' ? 1 : (*p == '\r' && sc->nl == 1) ? 2 : 0;
    }
}

/*
 * Look at what the client has sent so far without consuming it: core's
 * input filter reads the socket into its own brigade and hands back a copy,
 * so the bytes stay there for ap_read_request.  Called only when the socket
 * is readable or input is buffered, so the blocking read does not wait and
 * shows EOF as EOF.
 */
static conn_head
conn_peek_header(conn_rec *c, apr_bucket_brigade *bb, apr_size_t *len)
{
    conn_scan   sc = {0, 0, 0};
    apr_bucket *b;
    apr_status_t rv;

    *len = 0;
    rv = ap_get_brigade(c->input_filters, bb, AP_MODE_SPECULATIVE,
                        APR_BLOCK_READ, CONN_HEAD_WINDOW);
    for (b = APR_BRIGADE_FIRST(bb);
         rv == APR_SUCCESS && b != APR_BRIGADE_SENTINEL(bb) && !sc.done;
         b = APR_BUCKET_NEXT(b)) {
        const char *data;
        apr_size_t  n;

        if (APR_BUCKET_IS_METADATA(b))
            continue;
        rv = apr_bucket_read(b, &data, &n, APR_NONBLOCK_READ);
        if (rv == APR_SUCCESS) {
            conn_scan_feed(&sc, data, n);
            *len += n;
        }
    }
    apr_brigade_cleanup(bb);
    if (rv != APR_SUCCESS || *len == 0)
        return HEAD_CLOSED;
    /* A header larger than the window is read the ordinary way. */
    if (sc.done || *len >= CONN_HEAD_WINDOW)
        return HEAD_COMPLETE;
    return HEAD_PARTIAL;
}

/* Wait up to t for the socket to become readable. */
static int
conn_wait_readable(conn_rec *c, apr_interval_time_t t)
{
    apr_os_sock_t fd;
    struct pollfd pfd;
    struct timespec ts;
    int         n;

    if (apr_os_sock_get(&fd, ap_get_conn_socket(c)) != APR_SUCCESS)
        return 0;
    pfd.fd = fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    ts.tv_sec = (time_t) apr_time_sec(t);
    ts.tv_nsec = (long) apr_time_usec(t) * 1000;
    do
        n = ppoll(&pfd, 1, &ts, NULL);
    while (n < 0 && errno == EINTR);
    return n > 0;
}

/* Has the pending header of len bytes outlived mod_reqtimeout's bound? */
static int
conn_header_late(const blog_conn *bc, apr_size_t len)
{
    apr_interval_time_t allowed = CONN_HEAD_TIMEOUT
        + apr_time_from_sec(len / CONN_HEAD_MINRATE);

    if (allowed > CONN_HEAD_MAXTIME)
        allowed = CONN_HEAD_MAXTIME;
    return apr_time_now() - bc->head_start > allowed;
}

static blog_conn *
conn_state(conn_rec *c)
{
    blog_conn  *bc = ap_get_module_config(c->conn_config, &blog_module);

    if (bc == NULL) {
        bc = apr_pcalloc(c->pool, sizeof(*bc));
        ap_set_module_config(c->conn_config, &blog_module, bc);
    }
    return bc;
}

/* Read and answer one request; 1 when the connection stays open. */
static int
conn_serve_one(conn_rec *c)
{
    request_rec *r;

    ap_update_child_status_from_conn(c->sbh, SERVER_BUSY_READ, c);
    r = ap_read_request(c);
    if (r == NULL)
        return 0;
    if (r->status == HTTP_OK) {
        c->cs->state = CONN_STATE_HANDLER;
        ap_update_child_status(c->sbh, SERVER_BUSY_WRITE, r);
        /* Flushes the response; r is gone afterwards. */
        ap_process_request(r);
    }
    return !c->aborted && c->keepalive == AP_CONN_KEEPALIVE;
}

/*
 * Wait for the next request on a connection this thread holds: 1 when
 * there is something to read, 0 when it stayed idle.  A stopping MPM would
 * close an idle connection at once, so then the wait is the grace period.
 */
static int
conn_next_request(conn_rec *c)
{
    if (c->data_in_input_filters)
        return 1;
    if (conn_wait_readable(c, conn_mpm_stopping() ? CONN_GRACE : conn_hold))
        return 1;
    /* A stop that began during the hold: waiting beats closing under a
     * request that may be on its way. */
    return conn_mpm_stopping() && conn_wait_readable(c, CONN_GRACE);
}

/*
 * Serve requests while they come within the hold; the state to hand the
 * connection back in.  When more threads of the child are busy than may
 * hold (connections are not spread evenly over the children), the holders
 * let their connections go after the current request, so that the child
 * keeps idle workers for the connections the listener hands out.
 */
static conn_state_e
conn_run(conn_rec *c, blog_conn *bc, int hold)
{
    apr_bucket_brigade *bb = apr_brigade_create(c->pool, c->bucket_alloc);
    conn_state_e next = CONN_STATE_WRITE_COMPLETION;
    apr_size_t  len;
    int         served;

    /* Called with the socket readable or input buffered (see conn_peek_header). */
    bc->sock.drained = 0;
    bc->sock.trusted = 1;
    for (served = 1;; served++) {
        switch (conn_peek_header(c, bb, &len)) {
        case HEAD_CLOSED:
            ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, c,
                          "blog: connection closed by the client");
            next = CONN_STATE_LINGER;
            break;
        case HEAD_PARTIAL:
            if (bc->head_start == 0)
                bc->head_start = apr_time_now();
            next = CONN_STATE_ASYNC_WAITIO;
            if (conn_header_late(bc, len)) {
                ap_log_cerror(APLOG_MARK, APLOG_INFO, 0, c,
                              "blog: request header not complete in time; "
                              "closing the connection");
                next = CONN_STATE_LINGER;
            }
            break;
        case HEAD_COMPLETE:
            bc->head_start = 0;
            if (!conn_serve_one(c))
                next = CONN_STATE_LINGER;
            else if (hold && served < CONN_BUDGET
                     && apr_atomic_read32(&conn_busy) <= conn_busy_max
                     && conn_next_request(c)) {
                bc->sock.drained = 0;
                continue;
            }
            /* Buffered input or output needs the MPM's own handling. */
            else if (conn_park && !c->data_in_input_filters
                     && !c->data_in_output_filters && !conn_mpm_stopping())
                next = CONN_STATE_ASYNC_WAITIO;
            break;
        }
        bc->sock.trusted = 0;
        apr_brigade_destroy(bb);
        return next;
    }
}

static int
blog_process_connection(conn_rec *c)
{
    blog_conn  *bc;
    conn_state_e next;
    int         hold;

    if (!conn_async || c->cs == NULL || c->clogging_input_filters
        || c->master != NULL || strcmp(ap_get_protocol(c), AP_PROTOCOL_HTTP1)
        || ap_ssl_conn_is_ssl(c))
        return DECLINED;
    bc = conn_state(c);
    /*
     * A connection just accepted whose request is not there within the
     * hold waits for it in the MPM, under Timeout as core would read it.
     */
    if (!bc->readable && !c->data_in_input_filters
        && !conn_wait_readable(c, conn_hold))
        next = CONN_STATE_ASYNC_WAITIO;
    else {
        /* Checked again after each request: see conn_run. */
        hold = apr_atomic_inc32(&conn_busy) < conn_busy_max;
        next = conn_run(c, bc, hold);
        apr_atomic_dec32(&conn_busy);
    }
    c->cs->state = next;
    bc->readable = 1;
    if (next == CONN_STATE_ASYNC_WAITIO)
        c->cs->sense = CONN_SENSE_WANT_READ;
    return OK;
}

/* The loop's connections read the client through conn_sock. */
static apr_status_t
blog_insert_network_bucket(conn_rec *c, apr_bucket_brigade *bb,
                           apr_socket_t *sock)
{
    blog_conn  *bc = ap_get_module_config(c->conn_config, &blog_module);

    if (bc == NULL)
        return AP_DECLINED;
    bc->sock.sock = sock;
    APR_BRIGADE_INSERT_TAIL(bb, conn_sock_create(&bc->sock, c->bucket_alloc));
    return APR_SUCCESS;
}

void
blog_connection_register_hooks(void)
{
    /* After the modules that take a connection for another protocol. */
    static const char *const pred[] = {"mod_http2.c", "mod_reqtimeout.c",
                                       "mod_ssl.c", NULL};

    ap_hook_process_connection(blog_process_connection, pred, NULL,
                               APR_HOOK_MIDDLE);
    ap_hook_insert_network_bucket(blog_insert_network_bucket, NULL, NULL,
                                  APR_HOOK_MIDDLE);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hold.c - BlogConnectionHold's input filter (hold.c) over a real
 * socket pair, with core's connection input filter played by a fake that
 * answers a speculative non-blocking read as core_filters.c does: the
 * bytes waiting, nothing (an empty brigade) when none are, and at the
 * client's close a zero-length bucket.  After the blog's answer the hold
 * hands over the next request if it comes, and otherwise says what core's
 * own look said before the wait: nothing yet, so that a close or a reset
 * goes to the MPM as any idle connection's does.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "httpd.h"
#include "http_config.h"
#include "http_connection.h"
#include "http_ssl.h"
#include "util_filter.h"
#include "apr_buckets.h"
#include "apr_portable.h"

#include "httpd/hold.h"

#include "harness.h"

extern module AP_MODULE_DECLARE_DATA blog_module;

/* httpd's filter calls that hold.c makes */

static ap_filter_rec_t th_hold_rec;
static ap_filter_rec_t th_core_rec;
static ap_filter_t th_core;
static ap_filter_t th_hold;
static apr_socket_t *th_sock;

AP_DECLARE(ap_filter_rec_t *)
ap_register_input_filter(const char *name, ap_in_filter_func filter_func,
                         ap_init_filter_func filter_init,
                         ap_filter_type ftype)
{
    (void) filter_init;
    th_hold_rec.name = name;
    th_hold_rec.filter_func.in_func = filter_func;
    th_hold_rec.ftype = ftype;
    return &th_hold_rec;
}

AP_DECLARE(ap_filter_t *)
ap_add_input_filter_handle(ap_filter_rec_t *frec, void *ctx, request_rec *r,
                           conn_rec *c)
{
    (void) r;
    th_hold = (ap_filter_t) {.frec = frec, .ctx = ctx, .next = &th_core,
        .c = c};
    c->input_filters = &th_hold;
    return &th_hold;
}

AP_DECLARE(apr_status_t)
ap_get_brigade(ap_filter_t *f, apr_bucket_brigade *bb, ap_input_mode_t mode,
               apr_read_type_e block, apr_off_t readbytes)
{
    return f->frec->filter_func.in_func(f, bb, mode, block, readbytes);
}

AP_DECLARE(apr_socket_t *)
ap_get_conn_socket(conn_rec *c)
{
    (void) c;
    return th_sock;
}

AP_DECLARE(int)
ap_ssl_conn_is_ssl(conn_rec *c)
{
    (void) c;
    return 0;
}

/* core's answer to a speculative non-blocking read of the socket */
static apr_status_t
th_core_input(ap_filter_t *f, apr_bucket_brigade *bb, ap_input_mode_t mode,
              apr_read_type_e block, apr_off_t bytes)
{
    char        buf[256];
    apr_os_sock_t fd;
    ssize_t     n;

    (void) mode;
    (void) block;
    apr_os_sock_get(&fd, th_sock);
    n = recv(fd, buf, bytes < (apr_off_t) sizeof(buf) ? (size_t) bytes
             : sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return APR_SUCCESS;
    if (n < 0)
        return APR_FROM_OS_ERROR(errno);
    /* the socket bucket, morphed at EOF into an empty one, copied */
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_heap_create(buf, (apr_size_t) n,
                                                        NULL,
                                                        f->c->bucket_alloc));
    return APR_SUCCESS;
}

/* One connection and its request; peer: the client's end of the pair. */
typedef struct th_conn
{
    apr_pool_t *pool;
    conn_rec    c;
    conn_state_t cs;
    request_rec r;
    void       *config[1];
    int         peer;
} th_conn;

static void
th_open(th_conn *t)
{
    int         fds[2];
    apr_os_sock_t fd;

    memset(t, 0, sizeof(*t));
    blog_module.module_index = 0;
    blog_hold_register_hooks();
    th_core_rec.filter_func.in_func = th_core_input;
    th_core = (ap_filter_t) {.frec = &th_core_rec, .c = &t->c};
    apr_pool_create(&t->pool, NULL);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    fd = fds[0];
    th_sock = NULL;
    apr_os_sock_put(&th_sock, &fd, t->pool);
    t->peer = fds[1];
    t->c.pool = t->pool;
    t->c.bucket_alloc = apr_bucket_alloc_create(t->pool);
    t->c.conn_config = (struct ap_conf_vector_t *) t->config;
    t->c.cs = &t->cs;
    t->c.keepalive = AP_CONN_KEEPALIVE;
    t->c.input_filters = &th_core;
    t->r.connection = &t->c;
    t->r.proto_num = HTTP_VERSION(1, 1);
    t->r.headers_in = apr_table_make(t->pool, 4);
}

static void
th_close(th_conn *t)
{
    if (t->peer >= 0)
        close(t->peer);
    apr_socket_close(th_sock);
    apr_pool_destroy(t->pool);
}

/* core's pipeline check after the answer: (status, bytes it saw, seconds) */
typedef struct th_look
{
    apr_status_t rv;
    int         empty;
    apr_off_t   len;
    double      took;
} th_look;

static double
th_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static th_look
th_pipeline_look(th_conn *t)
{
    apr_bucket_brigade *bb = apr_brigade_create(t->pool, t->c.bucket_alloc);
    th_look     l;
    double      t0 = th_now();

    l.rv = ap_get_brigade(t->c.input_filters, bb, AP_MODE_SPECULATIVE,
                          APR_NONBLOCK_READ, 1);
    l.took = th_now() - t0;
    l.empty = APR_BRIGADE_EMPTY(bb);
    l.len = -1;
    apr_brigade_length(bb, 1, &l.len);
    apr_brigade_destroy(bb);
    return l;
}

typedef struct th_later
{
    int         fd;
    int         close;          /* 1: close, 0: write a request */
} th_later;

static void *
th_client_later(void *arg)
{
    th_later   *l = arg;
    struct timespec ms50 = {0, 50 * 1000 * 1000};

    nanosleep(&ms50, NULL);
    if (l->close)
        close(l->fd);
    else
        CHECK(write(l->fd, "GET / HTTP/1.1\r\n", 16) == 16);
    return NULL;
}

/* The client's next move 50 ms into a 5 s hold, which that move ends. */
static th_look
th_held_look(th_conn *t, int close_it)
{
    th_later    l = {t->peer, close_it};
    pthread_t   th;
    th_look     look;

    blog_hold_arm(&t->r, apr_time_from_sec(5));
    CHECK(t->c.input_filters == &th_hold);
    CHECK(pthread_create(&th, NULL, th_client_later, &l) == 0);
    look = th_pipeline_look(t);
    pthread_join(th, NULL);
    if (close_it)
        t->peer = -1;
    CHECK(look.rv == APR_SUCCESS);
    CHECK(look.took >= 0.04 && look.took < 4.5);
    return look;
}

static void
test_next_request_during_hold(void)
{
    th_conn     t;
    th_look     l;

    th_open(&t);
    l = th_held_look(&t, 0);
    CHECK(!l.empty && l.len == 1);
    th_close(&t);
}

/* A close is not the hold's to report: core's look before the wait said
 * nothing yet, and the MPM finds the close as for any idle connection. */
static void
test_close_during_hold_is_the_mpms(void)
{
    th_conn     t;
    th_look     l;

    th_open(&t);
    CHECK(th_held_look(&t, 1).empty);
    /* what the worker the listener wakes reads then: the close */
    l = th_pipeline_look(&t);
    CHECK(!l.empty && l.len == 0);
    th_close(&t);
}

static void
test_hold_runs_out(void)
{
    th_conn     t;
    th_look     l;

    th_open(&t);
    blog_hold_arm(&t.r, apr_time_from_msec(100));
    l = th_pipeline_look(&t);
    CHECK(l.rv == APR_SUCCESS && l.empty);
    CHECK(l.took >= 0.09);
    th_close(&t);
}

/* Armed once: core's later reads of the connection never wait. */
static void
test_hold_waits_once(void)
{
    th_conn     t;
    th_look     l;

    th_open(&t);
    blog_hold_arm(&t.r, apr_time_from_sec(1));
    (void) th_pipeline_look(&t);
    /* a second wait of the hold would take 1 s */
    l = th_pipeline_look(&t);
    CHECK(l.rv == APR_SUCCESS && l.empty);
    CHECK(l.took < 0.5);
    th_close(&t);
}

static void
test_no_hold_for_an_upgrade(void)
{
    th_conn     t;

    th_open(&t);
    apr_table_setn(t.r.headers_in, "Upgrade", "websocket");
    blog_hold_arm(&t.r, apr_time_from_sec(1));
    CHECK(t.c.input_filters == &th_core);
    th_close(&t);
}

/* A subrequest (an SSI include of a page, say): its answer is not the
 * connection's response, and never arms the hold. */
static void
test_no_hold_for_a_subrequest(void)
{
    th_conn     t;
    request_rec main_r;

    th_open(&t);
    memset(&main_r, 0, sizeof(main_r));
    t.r.main = &main_r;
    blog_hold_arm(&t.r, apr_time_from_sec(1));
    CHECK(t.c.input_filters == &th_core);
    CHECK(ap_get_module_config(t.c.conn_config, &blog_module) == NULL);
    th_close(&t);
}

const t_case t_hold_cases[] = {
    {"hold: the next request during the hold is read at once",
     test_next_request_during_hold},
    {"hold: a close during the hold is left to the MPM",
     test_close_during_hold_is_the_mpms},
    {"hold: nothing comes, the hold runs out", test_hold_runs_out},
    {"hold: one wait per arming", test_hold_waits_once},
    {"hold: none for an Upgrade", test_no_hold_for_an_upgrade},
    {"hold: none for a subrequest", test_no_hold_for_a_subrequest},
    {NULL, NULL}
};

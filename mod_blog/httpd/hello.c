/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hello.c - a TLS connection is given a worker once its ClientHello is
 * whole.  mod_ssl reads the handshake in a worker thread with blocking
 * reads, so a client that trickles its ClientHello a byte a second holds a
 * worker for as long as it trickles (RequestReadTimeout's handshake= only
 * bounds it), and clients enough of them hold every worker.  An MPM that
 * can wait for a connection's input itself (event, CONN_STATE_ASYNC_WAITIO,
 * httpd 2.4.63 on) is asked to, here: the first process_connection of a
 * TLS connection peeks at the socket, and until the first TLS record is
 * all there the connection waits in the MPM's poll, as an idle kept-alive
 * one does, holding no worker.  Each wait is the MPM's (Timeout); a
 * ClientHello not whole within Timeout of the accept is closed.
 *
 * Nothing is read: once the record is whole, or the bytes are no TLS
 * handshake record, or the client closed, mod_ssl reads them as it would
 * have.  Plain connections, other MPMs, older httpds, a server that
 * mounts no blog and BlogHandshakeWait Off (the default) are untouched.
 */
#include "httpd/hello.h"

#include "httpd.h"
#include "http_config.h"
#include "http_connection.h"
#include "http_core.h"
#include "http_ssl.h"
#include "ap_mpm.h"

#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

APLOG_USE_MODULE(blog);

#ifdef AP_MPMQ_CAN_WAITIO

#define TLS_RECORD_HEADER 5
#define TLS_HANDSHAKE 0x16
/* RFC 8446 5.2: a record's length is at most 2^14 + 256 (2^14 + 2048
 * before TLS 1.3); longer is no TLS, for mod_ssl to refuse */
#define TLS_RECORD_MAX (TLS_RECORD_HEADER + 16384 + 2048)

/* The connection's, in its pool (not its conn_config: hold.c's). */
typedef struct blog_hello
{
    apr_time_t  since;          /* accepted */
    int         lowat;          /* the socket's SO_RCVLOWAT, when set here */
    int         done;           /* mod_ssl reads from here on */
} blog_hello;

static const char hello_key[] = "blog-hello";
static int  mpm_can_wait;    /* the blog is mounted, the MPM can wait */

/*
 * The bytes the socket must hold for the first TLS record to be whole (5,
 * its header, until the header says more), or 0 when they are there, or
 * the bytes are no TLS handshake record, or the client closed: mod_ssl's.
 */
static int
hello_missing(apr_os_sock_t fd)
{
    unsigned char h[TLS_RECORD_HEADER];
    ssize_t     n = recv(fd, h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
    int         queued = 0,
                whole;
    struct pollfd closed = {.fd = fd, .events = POLLRDHUP};

    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
            ? TLS_RECORD_HEADER : 0;
    if (n == 0 || h[0] != TLS_HANDSHAKE
        || poll(&closed, 1, 0) != 0)    /* closed, or failed, after a part */
        return 0;
    if (n < TLS_RECORD_HEADER)
        return TLS_RECORD_HEADER;
    whole = TLS_RECORD_HEADER + ((h[3] << 8) | h[4]);
    if (whole > TLS_RECORD_MAX || ioctl(fd, FIONREAD, &queued) != 0
        || queued >= whole)
        return 0;
    return whole;
}

/*
 * The MPM's poll is level-triggered: a socket holding part of the record
 * is readable, and would come straight back.  SO_RCVLOWAT makes it
 * readable once the whole record is there (or the client closed).  Woken
 * with the same bytes still missing, the mark did not hold (a kernel that
 * caps it): -1, and mod_ssl reads, rather than the poll coming back.
 */
static int
set_lowat(apr_os_sock_t fd, blog_hello *h, int bytes)
{
    if (h->lowat == bytes)
        return -1;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes)) != 0)
        return -1;
    h->lowat = bytes;
    return 0;
}

static void
clear_lowat(apr_os_sock_t fd, blog_hello *h)
{
    int         one = 1;

    if (h->lowat != 1
        && setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one)) == 0)
        h->lowat = 1;
}

static int
hello_process_connection(conn_rec *c)
{
    blog_hello *h = NULL;
    apr_os_sock_t fd;
    int         missing;

    if (!mpm_can_wait || c->cs == NULL || c->master != NULL
        || !ap_ssl_conn_is_ssl(c)
        || apr_os_sock_get(&fd, ap_get_conn_socket(c)) != APR_SUCCESS)
        return DECLINED;
    apr_pool_userdata_get((void **) &h, hello_key, c->pool);
    if (h == NULL) {
        h = apr_pcalloc(c->pool, sizeof(*h));
        h->since = apr_time_now();
        h->lowat = 1;
        apr_pool_userdata_setn(h, hello_key, NULL, c->pool);
    }
    if (h->done)
        return DECLINED;
    missing = hello_missing(fd);
    if (missing == 0 || set_lowat(fd, h, missing) != 0) {
        h->done = 1;
        clear_lowat(fd, h);
        return DECLINED;
    }
    if (apr_time_now() - h->since > c->base_server->timeout) {
        clear_lowat(fd, h);
        c->cs->state = CONN_STATE_LINGER;
        return OK;
    }
    c->cs->state = CONN_STATE_ASYNC_WAITIO;
    c->cs->sense = CONN_SENSE_WANT_READ;
    return OK;
}

void
blog_hello_configure(int wanted)
{
    if (!wanted
        || ap_mpm_query(AP_MPMQ_CAN_WAITIO, &mpm_can_wait) != APR_SUCCESS)
        mpm_can_wait = 0;
}

void
blog_hello_register_hooks(void)
{
    ap_hook_process_connection(hello_process_connection, NULL, NULL,
                               APR_HOOK_REALLY_FIRST);
}

#else                           /* httpd before 2.4.63: mod_ssl reads it */

void
blog_hello_configure(int wanted)
{
    (void) wanted;
}

void
blog_hello_register_hooks(void)
{
}

#endif

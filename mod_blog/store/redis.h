/* SPDX-License-Identifier: Apache-2.0 */
/* redis.h - mod_blog's one Redis client, for the page cache and the
 * invalidation listener: each wait and each reply bounded (redis.c).
 * hiredis's types, for the store alone: above it, redis_settings.h. */
#ifndef BLOG_REDIS_H
#define BLOG_REDIS_H

#include "apr_pools.h"
#include "apr_time.h"

#include "store/redis_settings.h"
#include "store/resolve.h"

#include <hiredis/hiredis.h>
#include <sys/uio.h>

typedef enum blog_redis_io
{
    BLOG_REDIS_OK,
    BLOG_REDIS_TIMEOUT,         /* Redis slow: back off */
    BLOG_REDIS_CLOSED,          /* connection closed: reconnect at once */
    BLOG_REDIS_BAD,             /* error, garbage or an oversized reply */
    BLOG_REDIS_DOWN             /* no connection (backoff, connect failed) */
} blog_redis_io;

/* What each blog_redis_io means, for the log and the health check. */
extern const char *const blog_redis_why[];

typedef struct blog_redis
{
    redisContext *ctx;          /* NULL when not connected */
    void       *tls;            /* its SSL, with rediss:// */
    blog_lookup *lookup;        /* of the host, not answered in time */
    int         tls_wants_write;        /* SSL_read waits for POLLOUT */
    apr_size_t  max_bulk;       /* the string bytes one reply may declare */
    /* where the bytes read stand in the reply stream */
    int         in_body;        /* inside a string's body */
    apr_uint64_t body_left;     /* its bytes still due, CRLF included */
    char        line[32];       /* the start of the current header line */
    apr_size_t  line_len;
    apr_uint64_t items_due;     /* of the current reply; 0: between two */
    apr_uint64_t reply_items;   /* its array elements declared so far */
    apr_uint64_t reply_bytes;   /* its string bytes declared so far */
    char        rbuf[65536];    /* read at once: a batch of pages */
    /* TLS records gathered here, not on the writing thread's stack: every
     * worker of a child leads in turn, and each would keep 16 KiB of it */
    char        wbuf[16384];
} blog_redis;

/* Connect within BlogRedisConnectTimeout, and AUTH when BlogRedisAuth is
 * set: 0, or -1 with why saying what failed. */
int blog_redis_connect(blog_redis *r, const blog_redis_settings *g,
                       char *why, apr_size_t why_len);
void blog_redis_close(blog_redis *r);

/* Write n buffers whole by the deadline. */
blog_redis_io blog_redis_send(blog_redis *r, struct iovec *iov, int n,
                              apr_time_t deadline);

/* Wait for replies by the deadline, read what came and judge it. */
blog_redis_io blog_redis_fill(blog_redis *r, apr_time_t deadline);

/* The next complete reply read (*reply NULL: none yet), or BAD. */
blog_redis_io blog_redis_next(blog_redis *r, redisReply **reply);

/* One command sent (lens NULL: strings), its reply read by the deadline. */
blog_redis_io blog_redis_command(blog_redis *r, int argc, const char **argv,
                                 const size_t *lens, apr_time_t deadline,
                                 redisReply **reply);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sentinel.c - the cache's Redis found through Redis Sentinel, as the
 * sentinels' guidelines for clients have it: the sentinels are asked in
 * turn (the last one that answered first) for the master's address, every
 * new connection to it checks ROLE, and a switch-over is followed, told by
 * +switch-master on a subscribed sentinel or found by a failed ROLE check
 * or a -READONLY reply.
 *
 * One watcher thread per child keeps the address and its generation; a
 * connection made under an older generation is closed before its next
 * command (cache.c, invalidate.c), so no connection stays on a master the
 * sentinels replaced.  An address a sentinel names that is new, or after a
 * connection found the known one is not the master, must answer ROLE as
 * master before it is taken: a sentinel that names a replica, or one the
 * others contradict, is passed over for the next.  Every connection, wait
 * and reply is redis.c's, bounded as the cache's.
 */
#include "store/sentinel.h"

#include "core/logno.h"
#include "store/redis.h"
#include "store/ratelog.h"
#include "store/backoff.h"

#include "http_log.h"
#include "apr_atomic.h"
#include "apr_strings.h"
#include "apr_thread_mutex.h"
#include "apr_thread_proc.h"

#include <stdlib.h>
#include <string.h>

APLOG_USE_MODULE(blog);

/* A sentinel answers an address or an event: far below this. */
#define SN_MAX_REPLY        4096
#define SN_HOST_MAX         256
/* The watcher looks at its flags between waits of this long. */
#define SN_SLICE            apr_time_from_msec(100)
/* A silent subscription is PINGed this often, and dropped when its PING
 * is not answered within as long. */
#define SN_PING_EVERY       apr_time_from_sec(1)
/* While no master is known or its connections fail, the sentinels are
 * asked again this often. */
#define SN_ASK_EVERY        apr_time_from_sec(1)
#define SN_WHY_MAX          200
/* The sentinels' event of a new master: "name old-ip old-port ip port". */
#define SN_CHANNEL          "+switch-master"

typedef struct sn_addr
{
    char        host[SN_HOST_MAX];
    int         port;           /* 0: none */
} sn_addr;

/* The child's watcher, from child_init. */
typedef struct sn_child
{
    const blog_sentinel_settings *g;
    const blog_redis_settings *redis;   /* the master's connection */
    server_rec *s;
    apr_thread_t *thread;
    apr_uint32_t stop;          /* apr_atomic */
    apr_uint32_t gen;           /* apr_atomic: bumped with the address */
    apr_uint32_t suspect;       /* apr_atomic: the master may not be one */
    apr_uint32_t failing;       /* apr_atomic: its connections fail */

    apr_thread_mutex_t *lock;   /* guards what follows, to the thread's */
    sn_addr     master;         /* where connections go; port 0: none */
    apr_time_t  since;          /* when it was learnt */
    char        why[SN_WHY_MAX];        /* why none is known */
    sn_addr     reached;        /* the master a connection last reached */
    apr_time_t  lost_at;        /* the first failure since; 0: none */
    apr_time_t  last_fail;      /* the last failure */
    unsigned    changes;
    sn_addr     prev, next;     /* the last switch the connections made */
    apr_time_t  switched;
    double      without;        /* its time without a master, s */

    /* the thread's alone */
    int         first;          /* the sentinel asked first */
    int         sub_at;         /* the subscribed one */
    apr_time_t  heard, ping_sent;       /* on the subscription */
    blog_backoff sub_backoff;
    blog_redis  sub;            /* subscribed to SN_CHANNEL */
    blog_redis  ask;            /* a question, then closed */
    blog_ratelog ask_log, none_log, role_log;
} sn_child;
static sn_child *sn;

static int
sn_stopping(void)
{
    return apr_atomic_read32(&sn->stop) != 0;
}

static int
sn_same(const sn_addr *a, const sn_addr *b)
{
    return a->port == b->port && strcmp(a->host, b->host) == 0;
}

/*
 * An address from a sentinel's strings: a host of printable bytes, a port
 * from 1 to 65535: 0, or -1 when it is not one.
 */
static int
sn_addr_set(sn_addr *a, const char *host, size_t hlen, const char *port,
            size_t plen)
{
    size_t      i;
    long        p = 0;

    if (hlen == 0 || hlen >= sizeof(a->host) || plen == 0 || plen > 5)
        return -1;
    for (i = 0; i < hlen; i++)
        if (host[i] <= ' ' || host[i] >= 127)
            return -1;
    for (i = 0; i < plen; i++) {
        if (port[i] < '0' || port[i] > '9')
            return -1;
        p = p * 10 + (port[i] - '0');
    }
    if (p < 1 || p > 65535)
        return -1;
    memcpy(a->host, host, hlen);
    a->host[hlen] = '\0';
    a->port = (int) p;
    return 0;
}

/* ---- Connections ---- */

/* The master's connection settings, to address a. */
static blog_redis_settings
sn_master_conn(const blog_redis_settings *redis, const sn_addr *a)
{
    blog_redis_settings c = *redis;

    c.host = a->host;
    c.port = a->port;
    return c;
}

/* Sentinel i's: the master's TLS and timeouts, the sentinels' AUTH. */
static blog_redis_settings
sn_sentinel_conn(int i)
{
    blog_redis_settings c = *sn->redis;

    c.host = sn->g->list.node[i].host;
    c.port = sn->g->list.node[i].port;
    c.user = sn->g->user;
    c.pass = sn->g->pass;
    return c;
}

/* The next whole reply by the deadline. */
static blog_redis_io
sn_read(blog_redis *r, apr_time_t deadline, redisReply **reply)
{
    blog_redis_io io;

    while ((io = blog_redis_next(r, reply)) == BLOG_REDIS_OK && *reply == NULL)
        if ((io = blog_redis_fill(r, deadline)) != BLOG_REDIS_OK)
            break;
    return io;
}

/* ROLE on r: 1 master, 0 another role, -1 failed; why says which. */
static int
sn_role(blog_redis *r, apr_time_t deadline, char *why, apr_size_t why_len)
{
    const char *argv[] = {"ROLE"};
    redisReply *reply = NULL;
    blog_redis_io io = blog_redis_command(r, 1, argv, NULL, deadline, &reply);
    const redisReply *e = io == BLOG_REDIS_OK && reply->type
        == REDIS_REPLY_ARRAY && reply->elements >= 1 ? reply->element[0] : NULL;
    int         rc = -1;

    if (io != BLOG_REDIS_OK)
        apr_snprintf(why, why_len, "ROLE: %s", blog_redis_why[io]);
    else if (reply->type == REDIS_REPLY_ERROR)
        apr_snprintf(why, why_len, "ROLE refused: %.*s", (int) reply->len,
                     reply->str);
    else if (e == NULL || e->type != REDIS_REPLY_STRING)
        apr_cpystrn(why, "ROLE: unexpected reply", why_len);
    else if (e->len == 6 && memcmp(e->str, "master", 6) == 0)
        rc = 1;
    else {
        apr_snprintf(why, why_len, "ROLE says %.*s, not master",
                     (int) (e->len < 32 ? e->len : 32), e->str);
        rc = 0;
    }
    freeReplyObject(reply);
    return rc;
}

/* SENTINEL get-master-addr-by-name's reply: 0 with *a, or -1 and why. */
static int
sn_addr_reply(const redisReply *reply, sn_addr *a, char *why,
              apr_size_t why_len)
{
    if (reply->type == REDIS_REPLY_NIL)
        apr_snprintf(why, why_len, "knows no master %s", sn->g->master);
    else if (reply->type == REDIS_REPLY_ERROR)
        apr_snprintf(why, why_len, "refused: %.*s", (int) reply->len,
                     reply->str);
    else if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2
             || reply->element[0]->type != REDIS_REPLY_STRING
             || reply->element[1]->type != REDIS_REPLY_STRING
             || sn_addr_set(a, reply->element[0]->str, reply->element[0]->len,
                            reply->element[1]->str,
                            reply->element[1]->len) != 0)
        apr_cpystrn(why, "unexpected reply", why_len);
    else
        return 0;
    return -1;
}

/* Sentinel i asked for the master: 0 with *a, or -1 and why. */
static int
sn_ask(int i, sn_addr *a, char *why, apr_size_t why_len)
{
    blog_redis_settings c = sn_sentinel_conn(i);
    const char *argv[] = {"SENTINEL", "get-master-addr-by-name",
        sn->g->master};
    redisReply *reply = NULL;
    blog_redis_io io;
    int         rc = -1;

    if (blog_redis_connect(&sn->ask, &c, why, why_len) != 0)
        return -1;
    io = blog_redis_command(&sn->ask, 3, argv, NULL,
                            apr_time_now() + c.timeout, &reply);
    if (io != BLOG_REDIS_OK)
        apr_snprintf(why, why_len, "SENTINEL get-master-addr-by-name: %s",
                     blog_redis_why[io]);
    else
        rc = sn_addr_reply(reply, a, why, why_len);
    freeReplyObject(reply);
    blog_redis_close(&sn->ask);
    return rc;
}

/* Whether a answers ROLE as the master: 1, 0 another role, -1 failed. */
static int
sn_verify(const sn_addr *a, char *why, apr_size_t why_len)
{
    blog_redis_settings c = sn_master_conn(sn->redis, a);
    int         rc = -1;

    if (blog_redis_connect(&sn->ask, &c, why, why_len) == 0)
        rc = sn_role(&sn->ask, apr_time_now() + c.timeout, why, why_len);
    blog_redis_close(&sn->ask);
    return rc;
}

/* ---- The address ---- */

/* a is the master now (from: who says so): connections follow it. */
static void
sn_adopt(const sn_addr *a, const char *from)
{
    char        was[SN_HOST_MAX + 8] = "none";
    apr_time_t  now = apr_time_now();
    int         changed;

    apr_thread_mutex_lock(sn->lock);
    changed = !sn_same(&sn->master, a);
    if (changed) {
        if (sn->master.port != 0)
            apr_snprintf(was, sizeof(was), "%s:%d", sn->master.host,
                         sn->master.port);
        sn->master = *a;
        sn->since = now;
        sn->why[0] = '\0';
        apr_atomic_inc32(&sn->gen);
    }
    apr_thread_mutex_unlock(sn->lock);
    if (changed)
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, sn->s, BLOGLOGNO(00070)
                     "Redis Sentinel: the master of %s is %s:%d (was %s), "
                     "from %s", sn->g->master, a->host, a->port, was, from);
}

/* No master known: connections fail at once (BYPASS) until one is. */
static void
sn_forget(const char *why)
{
    apr_thread_mutex_lock(sn->lock);
    if (sn->master.port != 0) {
        sn->master.port = 0;
        sn->master.host[0] = '\0';
        sn->since = apr_time_now();
        apr_atomic_inc32(&sn->gen);
    }
    apr_cpystrn(sn->why, why, sizeof(sn->why));
    apr_thread_mutex_unlock(sn->lock);
    blog_outage_begin(&sn->none_log);
    blog_log_limited(&sn->none_log, APLOG_WARNING, 0, sn->s, BLOGLOGNO(00072)
                     "Redis Sentinel: no master of %s known (%s); bypassing "
                     "the cache", sn->g->master, why);
}

static void
sn_said(int i, const char *why)
{
    blog_log_limited(&sn->ask_log, APLOG_WARNING, 0, sn->s, BLOGLOGNO(00071)
                     "Redis Sentinel %s:%d: %s; asking the next",
                     sn->g->list.node[i].host, sn->g->list.node[i].port, why);
}

/*
 * Ask the sentinels in turn, the one that answered last first.  An address
 * that is not the one known (any, with distrust: a connection found the
 * known one is not the master) must answer ROLE as master to be taken; one
 * a sentinel names that cannot be reached is taken only when no sentinel
 * names one that answers.  Otherwise a master known and not distrusted is
 * kept (each new connection to it checks ROLE), and none known stays none.
 */
static void
sn_refresh(int distrust)
{
    int         n = sn->g->list.n;
    int         k, heard = 0, fallback_from = -1;
    sn_addr     a, cur, fallback;
    char        why[SN_WHY_MAX], last[SN_WHY_MAX + 64];

    apr_thread_mutex_lock(sn->lock);
    cur = sn->master;
    apr_thread_mutex_unlock(sn->lock);
    apr_cpystrn(last, "no sentinel answered", sizeof(last));
    for (k = 0; k < n && !sn_stopping(); k++) {
        int         i = (sn->first + k) % n;
        const blog_sentinel_node *node = &sn->g->list.node[i];
        int         rc;

        if (sn_ask(i, &a, why, sizeof(why)) != 0) {
            sn_said(i, why);
            if (heard == 0)
                apr_snprintf(last, sizeof(last), "no sentinel answered (%s:%d: "
                             "%s)", node->host, node->port, why);
            continue;
        }
        heard++;
        if (!distrust && cur.port != 0 && sn_same(&a, &cur)) {
            sn->first = i;
            return;
        }
        rc = sn_verify(&a, why, sizeof(why));
        if (rc == 1) {
            apr_snprintf(last, sizeof(last), "sentinel %s:%d", node->host,
                         node->port);
            sn->first = i;
            sn_adopt(&a, last);
            return;
        }
        apr_snprintf(last, sizeof(last), "sentinel %s:%d names %s:%d: %s",
                     node->host, node->port, a.host, a.port, why);
        sn_said(i, last);
        if (rc < 0 && fallback_from < 0
            && !(distrust && sn_same(&a, &cur))) {
            fallback = a;
            fallback_from = i;
        }
    }
    if (sn_stopping())
        return;
    if (fallback_from >= 0) {
        apr_snprintf(last, sizeof(last), "sentinel %s:%d (not answering "
                     "ROLE from here)", sn->g->list.node[fallback_from].host,
                     sn->g->list.node[fallback_from].port);
        sn->first = fallback_from;
        sn_adopt(&fallback, last);
    }
    else if (cur.port == 0 || distrust)
        sn_forget(last);
}

/* ---- The subscription ---- */

/*
 * Sentinel i asked for the master and subscribed to SN_CHANNEL in one
 * write, so that no switch falls between the answer and the subscription:
 * 0 with *a, or -1 and why.
 */
static int
sn_subscribe_to(int i, sn_addr *a, char *why, apr_size_t why_len)
{
    blog_redis_settings c = sn_sentinel_conn(i);
    const char *ask[] = {"SENTINEL", "get-master-addr-by-name",
        sn->g->master};
    const char *sub[] = {"SUBSCRIBE", SN_CHANNEL};
    sds         b1 = NULL, b2 = NULL;
    long long   l1, l2;
    redisReply *r1 = NULL, *r2 = NULL;
    blog_redis_io io = BLOG_REDIS_BAD;
    apr_time_t  deadline;
    int         rc = -1;

    if (blog_redis_connect(&sn->sub, &c, why, why_len) != 0)
        return -1;
    deadline = apr_time_now() + c.timeout;
    l1 = redisFormatSdsCommandArgv(&b1, 3, ask, NULL);
    l2 = redisFormatSdsCommandArgv(&b2, 2, sub, NULL);
    if (l1 >= 0 && l2 >= 0) {
        struct iovec iov[2] = {{b1, (size_t) l1}, {b2, (size_t) l2}};

        io = blog_redis_send(&sn->sub, iov, 2, deadline);
    }
    redisFreeSdsCommand(b1);
    redisFreeSdsCommand(b2);
    if (io == BLOG_REDIS_OK)
        io = sn_read(&sn->sub, deadline, &r1);
    if (io == BLOG_REDIS_OK)
        io = sn_read(&sn->sub, deadline, &r2);
    if (io != BLOG_REDIS_OK)
        apr_snprintf(why, why_len, "SENTINEL get-master-addr-by-name and "
                     "SUBSCRIBE: %s", blog_redis_why[io]);
    else if (sn_addr_reply(r1, a, why, why_len) != 0)
        ;
    else if (r2->type != REDIS_REPLY_ARRAY || r2->elements != 3
             || r2->element[0]->type != REDIS_REPLY_STRING
             || strcmp(r2->element[0]->str, "subscribe") != 0)
        apr_snprintf(why, why_len, "SUBSCRIBE %s refused: %.*s", SN_CHANNEL,
                     r2->type == REDIS_REPLY_ERROR ? (int) r2->len : 16,
                     r2->type == REDIS_REPLY_ERROR ? r2->str
                     : "unexpected reply");
    else
        rc = 0;
    freeReplyObject(r1);
    freeReplyObject(r2);
    if (rc != 0)
        blog_redis_close(&sn->sub);
    return rc;
}

/* Subscribe to the sentinels in turn; a master other than the one known
 * sends the watcher asking (and checking) again. */
static void
sn_subscribe(void)
{
    int         n = sn->g->list.n;
    int         k;
    sn_addr     a, cur;
    char        why[SN_WHY_MAX];

    for (k = 0; k < n && !sn_stopping(); k++) {
        int         i = (sn->first + k) % n;

        if (sn_subscribe_to(i, &a, why, sizeof(why)) != 0) {
            sn_said(i, why);
            continue;
        }
        blog_backoff_reset(&sn->sub_backoff);
        sn->sub_at = i;
        sn->heard = apr_time_now();
        sn->ping_sent = 0;
        apr_thread_mutex_lock(sn->lock);
        cur = sn->master;
        apr_thread_mutex_unlock(sn->lock);
        if (!sn_same(&a, &cur)) {
            sn->first = i;
            sn_refresh(0);
        }
        return;
    }
    blog_backoff_fail(&sn->sub_backoff);
}

/* "name old-ip old-port ip port": 0 (another master's: ignored), -1 when
 * it is not that. */
static int
sn_switch(const char *msg, size_t len)
{
    const char *w[5];
    size_t      wl[5];
    size_t      at = 0;
    int         n;
    sn_addr     a;
    char        from[SN_HOST_MAX + 64];

    for (n = 0; n < 5; n++) {
        while (at < len && msg[at] == ' ')
            at++;
        w[n] = msg + at;
        while (at < len && msg[at] != ' ')
            at++;
        wl[n] = (size_t) (msg + at - w[n]);
        if (wl[n] == 0)
            return -1;
    }
    if (wl[0] != strlen(sn->g->master)
        || memcmp(w[0], sn->g->master, wl[0]) != 0)
        return 0;
    if (sn_addr_set(&a, w[3], wl[3], w[4], wl[4]) != 0)
        return -1;
    apr_snprintf(from, sizeof(from), SN_CHANNEL " from sentinel %s:%d",
                 sn->g->list.node[sn->sub_at].host,
                 sn->g->list.node[sn->sub_at].port);
    sn_adopt(&a, from);
    return 0;
}

/* A reply on the subscription: 0, or -1 when it is not one. */
static int
sn_event(const redisReply *r)
{
    const redisReply *kind = r->type == REDIS_REPLY_ARRAY
        && r->elements >= 2 ? r->element[0] : NULL;

    if (kind == NULL || kind->type != REDIS_REPLY_STRING)
        return -1;
    if (strcmp(kind->str, "pong") == 0 || strcmp(kind->str, "subscribe") == 0)
        return 0;
    if (strcmp(kind->str, "message") != 0 || r->elements != 3
        || r->element[2]->type != REDIS_REPLY_STRING)
        return -1;
    return sn_switch(r->element[2]->str, r->element[2]->len);
}

/*
 * Up to SN_SLICE on the subscription: its events and PONGs read; a silent
 * one PINGed, one whose PING goes unanswered dropped for the next sentinel.
 */
static void
sn_listen(void)
{
    static char ping[] = "*1\r\n$4\r\nPING\r\n";
    char        why[SN_WHY_MAX];
    redisReply *reply = NULL;
    blog_redis_io io = blog_redis_fill(&sn->sub, apr_time_now() + SN_SLICE);
    apr_time_t  now;

    if (io == BLOG_REDIS_TIMEOUT)
        io = BLOG_REDIS_OK;
    while (io == BLOG_REDIS_OK
           && (io = blog_redis_next(&sn->sub, &reply)) == BLOG_REDIS_OK
           && reply != NULL) {
        sn->heard = apr_time_now();
        sn->ping_sent = 0;
        if (sn_event(reply) != 0)
            io = BLOG_REDIS_BAD;
        freeReplyObject(reply);
    }
    now = apr_time_now();
    if (io == BLOG_REDIS_OK && sn->ping_sent != 0
        && now - sn->ping_sent > SN_PING_EVERY)
        io = BLOG_REDIS_TIMEOUT;
    else if (io == BLOG_REDIS_OK && sn->ping_sent == 0
             && now - sn->heard >= SN_PING_EVERY) {
        struct iovec iov = {ping, sizeof(ping) - 1};

        sn->ping_sent = now;
        io = blog_redis_send(&sn->sub, &iov, 1, now + sn->redis->timeout);
    }
    if (io == BLOG_REDIS_OK)
        return;
    apr_snprintf(why, sizeof(why), "its " SN_CHANNEL " subscription: %s",
                 blog_redis_why[io]);
    sn_said(sn->sub_at, why);
    blog_redis_close(&sn->sub);
    sn->first = (sn->sub_at + 1) % sn->g->list.n;
}

/* ---- The thread ---- */

static void *APR_THREAD_FUNC
sn_main(apr_thread_t *thread, void *data)
{
    apr_time_t  next_ask = apr_time_now() + SN_ASK_EVERY;

    (void) data;
    while (!sn_stopping()) {
        apr_time_t  now = apr_time_now();
        int         known;

        apr_thread_mutex_lock(sn->lock);
        known = sn->master.port != 0;
        apr_thread_mutex_unlock(sn->lock);
        if (apr_atomic_xchg32(&sn->suspect, 0)) {
            sn_refresh(1);
            next_ask = now + SN_ASK_EVERY;
        }
        else if ((!known || apr_atomic_read32(&sn->failing))
                 && now >= next_ask) {
            sn_refresh(0);
            next_ask = now + SN_ASK_EVERY;
        }
        if (sn->sub.ctx == NULL
            && apr_time_now() >= blog_backoff_next(&sn->sub_backoff))
            sn_subscribe();
        if (sn->sub.ctx != NULL)
            sn_listen();
        else
            apr_sleep(SN_SLICE);
    }
    blog_redis_close(&sn->sub);
    blog_redis_close(&sn->ask);
    /* returned, not apr_thread_exit: see invalidate.c */
    (void) thread;
    return NULL;
}

/* Before the pool's cleanups: the thread uses the lock. */
static apr_status_t
sn_stop(void *data)
{
    sn_child   *c = data;
    apr_status_t rv;

    apr_atomic_set32(&c->stop, 1);
    if (c->thread != NULL)
        apr_thread_join(&rv, c->thread);
    c->thread = NULL;
    return APR_SUCCESS;
}

/* After them: nothing of this child's is asked any more. */
static apr_status_t
/* cppcheck-suppress constParameter ; an APR cleanup takes a void * */
sn_gone(void *data)
{
    if (sn == data)
        sn = NULL;
    return APR_SUCCESS;
}

/* ---- The interface ---- */

int
blog_sentinel_load(apr_pool_t *p, blog_sentinel_settings *g,
                   blog_redis_settings *redis, char *err, apr_size_t err_len)
{
    blog_redis_settings secret;

    g->user = g->pass = NULL;
    if (g->list.n == 0)
        return 0;
    redis->tls = g->list.tls;
    /* for the messages that name it: the sentinels give its address */
    redis->host = apr_psprintf(p, "the master of %s", g->master);
    redis->port = 0;
    if (g->auth_file == NULL)
        return 0;
    /* the file's format and checks are BlogRedisAuth's */
    memset(&secret, 0, sizeof(secret));
    secret.auth_file = g->auth_file;
    if (blog_redis_load(p, &secret, err, err_len) != 0)
        return -1;
    g->user = secret.user;
    g->pass = secret.pass;
    return 0;
}

void
blog_sentinel_child_init(apr_pool_t *pchild, server_rec *s,
                         const blog_redis_settings *redis,
                         const blog_sentinel_settings *g)
{
    sn_child   *c;
    apr_status_t rv;

    sn = NULL;
    if (!redis->on || g->list.n == 0)
        return;
    c = apr_pcalloc(pchild, sizeof(*c));
    c->g = g;
    c->redis = redis;
    c->s = s;
    c->sub.max_bulk = c->ask.max_bulk = SN_MAX_REPLY;
    rv = apr_thread_mutex_create(&c->lock, APR_THREAD_MUTEX_DEFAULT, pchild);
    if (rv == APR_SUCCESS) {
        apr_pool_cleanup_register(pchild, c, sn_gone, apr_pool_cleanup_null);
        sn = c;
        /* before the first request: its cache has a master to go to */
        sn_refresh(0);
        rv = apr_thread_create(&c->thread, NULL, sn_main, NULL, pchild);
    }
    if (rv == APR_SUCCESS) {
        apr_pool_pre_cleanup_register(pchild, c, sn_stop);
        return;
    }
    /* without its watcher no switch-over is followed: no master at all */
    c->thread = NULL;
    sn = NULL;
    ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, BLOGLOGNO(00075)
                 "cannot start the Redis Sentinel watcher in this child: "
                 "it bypasses the cache");
}

apr_uint32_t
blog_sentinel_generation(void)
{
    return sn != NULL ? apr_atomic_read32(&sn->gen) : 0;
}

void
blog_sentinel_failing(void)
{
    if (sn == NULL)
        return;
    apr_thread_mutex_lock(sn->lock);
    sn->last_fail = apr_time_now();
    if (sn->lost_at == 0)
        sn->lost_at = sn->last_fail;
    apr_thread_mutex_unlock(sn->lock);
    apr_atomic_set32(&sn->failing, 1);
}

void
blog_sentinel_suspect(void)
{
    if (sn != NULL)
        apr_atomic_set32(&sn->suspect, 1);
}

/*
 * A connection reached a: a switch, when it is not the last one reached,
 * is logged with the time the cache went without a master: from its first
 * failure to the later of the new address learnt and its last failure (a
 * child that served nothing meanwhile was not without one).
 */
static void
sn_reached(const sn_addr *a)
{
    apr_time_t  now = apr_time_now();
    sn_addr     was;
    double      without = -1;

    apr_thread_mutex_lock(sn->lock);
    was = sn->reached;
    if (was.port != 0 && !sn_same(&was, a)) {
        apr_time_t  end = sn->since > sn->last_fail ? sn->since
            : sn->last_fail;

        without = sn->lost_at != 0 && end > sn->lost_at
            ? (double) (end - sn->lost_at) / APR_USEC_PER_SEC : 0;
        sn->prev = was;
        sn->next = *a;
        sn->switched = now;
        sn->without = without;
        sn->changes++;
    }
    sn->reached = *a;
    sn->lost_at = 0;
    apr_atomic_set32(&sn->failing, 0);
    apr_thread_mutex_unlock(sn->lock);
    blog_outage_end(&sn->none_log, sn->s, BLOGLOGNO(00076)
                    "Redis Sentinel: a master known");
    if (without >= 0)
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, sn->s, BLOGLOGNO(00074)
                     "the cache's Redis is now %s:%d, the master of %s (was "
                     "%s:%d): the cache ran without a master for %.2f s",
                     a->host, a->port, sn->g->master, was.host, was.port,
                     without);
}

int
blog_sentinel_connect(blog_redis *r, const blog_redis_settings *redis,
                      const blog_sentinel_settings *g, apr_uint32_t *gen,
                      char *why, apr_size_t why_len)
{
    blog_redis_settings m;
    sn_addr     a;
    char        err[SN_WHY_MAX];
    int         rc;

    *gen = 0;
    if (g->list.n == 0)
        return blog_redis_connect(r, redis, why, why_len);
    if (sn == NULL) {
        apr_cpystrn(why, "no Sentinel watcher in this child (see the error "
                    "log)", why_len);
        return -1;
    }
    apr_thread_mutex_lock(sn->lock);
    a = sn->master;
    *gen = apr_atomic_read32(&sn->gen);
    apr_cpystrn(err, sn->why, sizeof(err));
    apr_thread_mutex_unlock(sn->lock);
    if (a.port == 0) {
        apr_snprintf(why, why_len, "no master known: %s", err);
        blog_sentinel_failing();
        return -1;
    }
    m = sn_master_conn(redis, &a);
    if (blog_redis_connect(r, &m, err, sizeof(err)) != 0) {
        apr_snprintf(why, why_len, "%s:%d: %s", a.host, a.port, err);
        blog_sentinel_failing();
        return -1;
    }
    rc = sn_role(r, apr_time_now() + redis->timeout, err, sizeof(err));
    if (rc == 1) {
        sn_reached(&a);
        return 0;
    }
    blog_redis_close(r);
    apr_snprintf(why, why_len, "%s:%d: %s", a.host, a.port, err);
    if (rc == 0) {
        blog_log_limited(&sn->role_log, APLOG_WARNING, 0, sn->s,
                         BLOGLOGNO(00073) "Redis %s:%d is not the master of "
                         "%s (%s): asking the sentinels again", a.host,
                         a.port, g->master, err);
        blog_sentinel_suspect();
    }
    blog_sentinel_failing();
    return -1;
}

int
blog_sentinel_status(blog_sentinel_view *v)
{
    if (sn == NULL)
        return -1;
    memset(v, 0, sizeof(*v));
    v->name = sn->g->master;
    apr_thread_mutex_lock(sn->lock);
    if (sn->master.port != 0)
        apr_snprintf(v->master, sizeof(v->master), "%s:%d", sn->master.host,
                     sn->master.port);
    apr_cpystrn(v->why, sn->why, sizeof(v->why));
    v->since = sn->since;
    v->changes = sn->changes;
    v->switched = sn->switched;
    v->without = sn->without;
    if (sn->switched != 0) {
        apr_snprintf(v->previous, sizeof(v->previous), "%s:%d",
                     sn->prev.host, sn->prev.port);
        apr_snprintf(v->next, sizeof(v->next), "%s:%d", sn->next.host,
                     sn->next.port);
    }
    apr_thread_mutex_unlock(sn->lock);
    return 0;
}

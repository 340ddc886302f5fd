/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake.h - in-process stand-ins for PostgreSQL, Redis and the resolver,
 * for the tests of the module's back ends (db.c, cache.c, invalidate.c,
 * redis.c).
 *
 * Each listens on a unix socket in a directory of its own and serves every
 * connection in a thread of the test, speaking just enough of the real
 * protocol (PostgreSQL's v3 frontend/backend protocol, Redis's RESP) for
 * the module's client code, and misbehaving on demand: it stalls, sends
 * half a reply, garbage, or closes in the middle of one.  The test sets the
 * behaviour before the call it makes and counts what the fake saw.
 */
#ifndef BLOG_TEST_FAKE_H
#define BLOG_TEST_FAKE_H

#include <pthread.h>
#include <stddef.h>

/* expr's value, read under lock (the fakes' and the stubs' counters). */
#define T_LOCKED(lock, expr) __extension__ ({ \
        __typeof__(expr) t_v_; \
        pthread_mutex_lock(lock); \
        t_v_ = (expr); \
        pthread_mutex_unlock(lock); \
        t_v_; })

/* ---- the socket server both fakes are made of ---- */

typedef struct fake_server fake_server;
typedef struct fake_conn
{
    int         fd;
    fake_server *srv;
    unsigned    releases;       /* the server's when it was accepted */
} fake_conn;

typedef void (*fake_conn_fn) (fake_conn *c);

/* Listen on path and serve each connection with fn in a thread. */
fake_server *fake_start(const char *path, fake_conn_fn fn);
/* The same on 127.0.0.1, a port of the kernel's choice (*port); arg is
 * the fake's own, for fake_arg and fake_server_arg. */
fake_server *fake_start_tcp(fake_conn_fn fn, void *arg, int *port);
void       *fake_arg(fake_conn *c);
void       *fake_server_arg(fake_server *srv);
/* Stop: every connection's reads fail, its thread ends, the socket goes. */
void        fake_stop(fake_server *srv);
/* Connections accepted since the start. */
unsigned    fake_accepts(fake_server *srv);

/* n bytes exactly: 0, or -1 on end of stream or stop. */
int         fake_read(fake_conn *c, void *buf, size_t n);
/* What has come, up to n bytes, waiting at most ms: bytes, 0 none, -1. */
int         fake_read_some(fake_conn *c, void *buf, size_t n, int ms);
int         fake_write(fake_conn *c, const void *buf, size_t n);
/* Say nothing until the client closes, the server stops or releases. */
void        fake_hold(fake_conn *c);
/* Every connection accepted so far closes once it holds (a stalled
 * server that gives up). */
void        fake_release(fake_server *srv);

/* ---- misbehaviours, shared by both fakes ---- */

typedef enum fake_mode
{
    FAKE_OK = 0,
    FAKE_STALL,                 /* no answer at all */
    FAKE_PARTIAL_STALL,         /* the first half of the answer, then none */
    FAKE_PARTIAL_CLOSE,         /* the first half, then the socket closes */
    FAKE_GARBAGE,               /* bytes that are not the protocol */
    FAKE_CLOSE,                 /* the socket closes, no answer */
    FAKE_ERROR,                 /* the protocol's error reply */
    FAKE_OVERSIZE,              /* Redis: a bulk reply declaring 2 MB */
    FAKE_LONG_LINE,             /* Redis: a status line that never ends */
    FAKE_WRONG_TYPE,            /* Redis: an integer where a string is due */
    FAKE_UNASKED,               /* Redis: the reply, then one more */
    FAKE_SLOW,                  /* the reply, after FAKE_SLOW_MS */
    FAKE_HUGE_ARRAY             /* Redis: an array of 10^6 integers */
} fake_mode;

#define FAKE_SLOW_MS 300

/* ---- PostgreSQL ---- */

typedef struct fake_pg_conf
{
    fake_mode   startup;        /* OK, STALL, CLOSE, ERROR (a FATAL) */
    fake_mode   setup;          /* the SET/PREPARE string: OK, STALL, ERROR */
    fake_mode   query;          /* pages and SELECT 1 */
    int         query_times;    /* queries that get "query", then OK; <0 all */
    const char *sqlstate;       /* of FAKE_ERROR replies to queries */
    fake_mode   listen;         /* LISTEN: OK, ERROR */
} fake_pg_conf;

/* The directory that holds .s.PGSQL.5432: the conninfo's host. */
fake_server *fake_pg_start(const char *dir);
void        fake_pg_set(const fake_pg_conf *conf);
/* What the fake saw: page statements (extended protocol), Parse messages
 * (BlogPrepare Off), simple queries. */
unsigned    fake_pg_queries(void);
unsigned    fake_pg_parses(void);
unsigned    fake_pg_simple(void);
/* BlogPrepare Off's set-ups (a set_config statement in a page's pipeline):
 * how many, the last one's SQL, whether a page statement shared its Sync. */
unsigned    fake_pg_setups(void);
const char *fake_pg_last_setup(char *buf, size_t size, int *with_page);
/* A NotificationResponse on every connection that LISTENs. */
void        fake_pg_notify(const char *payload);
/* Connections that issued LISTEN and are still open. */
int         fake_pg_listeners(void);
/* Close every listening connection (a restart, seen by the listener). */
void        fake_pg_kill_listeners(void);

/* The row of every page reply: one text column. */
#define FAKE_PG_ROW "fake row"

/* ---- Redis ---- */

/* The socket: path. */
fake_server *fake_redis_start(const char *path);
/* How it answers the next n commands (n < 0: all of them). */
void        fake_redis_set(fake_mode mode, int n);
/* A key in its store, a string's or any bytes; a copy of one (free). */
void        fake_redis_put(const char *key, const char *val);
void        fake_redis_put_bytes(const char *key, const char *val,
                                 size_t len);
char       *fake_redis_get(const char *key, size_t *len);
int         fake_redis_has(const char *key);
void        fake_redis_clear(void);
/* Require AUTH [user] pass of every connection (user NULL: "default"). */
void        fake_redis_auth(const char *user, const char *pass);
/* Commands received, as one line each ("DEL blog:page:/ blog:page:/x"). */
unsigned    fake_redis_ncmds(void);
/* Whether a command line starting with prefix came after command index
 * from, waiting up to ms; the index after it, or -1. */
int         fake_redis_wait_cmd(unsigned from, const char *prefix, int ms);
/*
 * One more Redis over TCP, on the same store: ROLE answers role ("master",
 * "slave"), and a "slave" refuses SET and DEL with -READONLY, as a replica
 * does.  (The unix-socket one is a master.)  What it was sent: ROLE
 * commands, and the others but AUTH.
 */
fake_server *fake_redis_start_tcp(const char *role, int *port);
void        fake_redis_role(fake_server *srv, const char *role);
unsigned    fake_redis_node_roles(fake_server *srv);
unsigned    fake_redis_node_cmds(fake_server *srv);
void        fake_redis_stop_tcp(fake_server *srv);

/* ---- Redis Sentinel (fake_sentinel.c) ---- */

typedef struct fake_sentinel_conf
{
    fake_mode   mode;           /* how it answers: OK, STALL, CLOSE,
                                 * GARBAGE, OVERSIZE, ERROR */
    const char *master;         /* the name it monitors */
    const char *host;           /* the address it gives for it */
    int         port;
    const char *user, *pass;    /* AUTH wanted (pass NULL: none) */
} fake_sentinel_conf;

fake_server *fake_sentinel_start(int *port);
void        fake_sentinel_set(fake_server *srv, const fake_sentinel_conf *c);
/* SENTINEL get-master-addr-by-name answered (or not), and subscribers. */
unsigned    fake_sentinel_asks(fake_server *srv);
int         fake_sentinel_subscribers(fake_server *srv);
/* A message on channel to each subscriber of it: their number. */
int         fake_sentinel_publish(fake_server *srv, const char *channel,
                                  const char *payload);
void        fake_sentinel_stop(fake_server *srv);

/* ---- the resolver (getaddrinfo, for the whole binary) ---- */

/* Names under it hang until released, or FAKE_HANG_MS, then are 127.0.0.1. */
#define FAKE_HANG_DOMAIN ".hang.invalid"
#define FAKE_HANG_MS 8000
void        fake_resolver_release(void);
/* Look-ups of such names begun so far. */
unsigned    fake_resolver_asked(void);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* sentinel.h - the cache's Redis found through Redis Sentinel (sentinel.c). */
#ifndef BLOG_SENTINEL_H
#define BLOG_SENTINEL_H

#include "store/redis_settings.h"

#include "httpd.h"
#include "apr_pools.h"
#include "apr_time.h"

typedef struct blog_sentinel_node
{
    const char *host;
    int         port;
} blog_sentinel_node;

/* BlogRedisSentinels: rediss:// for all of them or none. */
typedef struct blog_sentinel_list
{
    int         n;              /* 0: none, BlogRedis is the cache */
    int         tls;            /* the sentinels and the master over TLS */
    const blog_sentinel_node *node;
} blog_sentinel_list;

/* The directives, and BlogRedisSentinelAuth's file read at start-up. */
typedef struct blog_sentinel_settings
{
    blog_sentinel_list list;
    const char *master;         /* BlogRedisMaster: the name they monitor */
    const char *auth_file;      /* BlogRedisSentinelAuth, read into: */
    const char *user;           /* NULL: the default user */
    const char *pass;           /* NULL: no AUTH to the sentinels */
} blog_sentinel_settings;

/*
 * In the parent, as root, before redis's own load: BlogRedisSentinelAuth's
 * file read, and with sentinels the master's connection set up as theirs
 * (TLS as the sentinels; its host and port come from them): 0, or -1 with
 * err saying why.
 */
int blog_sentinel_load(apr_pool_t *p, blog_sentinel_settings *g,
                       blog_redis_settings *redis, char *err,
                       apr_size_t err_len);

/*
 * With sentinels, the child's watcher: the master asked for now, then a
 * thread that follows it.  redis: the master's connection settings.
 */
void blog_sentinel_child_init(apr_pool_t *pchild, server_rec *s,
                              const blog_redis_settings *redis,
                              const blog_sentinel_settings *g);

/* The Redis client's connection (redis.h): only the store opens it. */
struct blog_redis;

/*
 * Connect r to the cache's Redis: BlogRedis's, or, with sentinels, the
 * master they name, its ROLE checked.  *gen: the generation of the
 * address tried.  0, or -1 with why.
 */
int blog_sentinel_connect(struct blog_redis *r,
                          const blog_redis_settings *redis,
                          const blog_sentinel_settings *g, apr_uint32_t *gen,
                          char *why, apr_size_t why_len);

/*
 * The generation of the master's address: it changes when the master
 * does, so a connection made under another one is closed before its next
 * command.  0 without sentinels; an atomic read, no lock.
 */
apr_uint32_t blog_sentinel_generation(void);

/* A connection to the master failed: the time the cache runs without one
 * starts, and the watcher asks the sentinels again. */
void blog_sentinel_failing(void);

/* A reply says the master is not one (-READONLY): the sentinels are asked
 * again, and the address is dropped unless it proves to be the master. */
void blog_sentinel_suspect(void);

/* This child's view, for mod_status. */
typedef struct blog_sentinel_view
{
    const char *name;           /* BlogRedisMaster */
    char        master[300];    /* "host:port", or "" when none known */
    char        why[200];       /* why none is known */
    apr_time_t  since;          /* the address was learnt */
    unsigned    changes;        /* masters after the first */
    char        previous[300];  /* the last switch: from, to, when, */
    char        next[300];
    apr_time_t  switched;       /* 0: no switch yet */
    double      without;        /* how long the cache had no master, s */
} blog_sentinel_view;

/* 0 with *v filled, or -1 without sentinels in this child. */
int blog_sentinel_status(blog_sentinel_view *v);

#endif

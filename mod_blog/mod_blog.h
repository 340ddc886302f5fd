/*
 * mod_blog.h - configuration shared by the parts of mod_blog.
 *
 * Directives are read into blog_server_conf with sentinel values (-1, NULL)
 * meaning "not set"; post_config resolves them once into a blog_settings
 * (process-wide: database, Redis, templates) and one blog_site per server
 * (mount prefix, fast path, pre-rendered static pages).  Children inherit
 * both read-only through fork.
 */
#ifndef BLOG_MOD_BLOG_H
#define BLOG_MOD_BLOG_H

#include "httpd.h"
#include "http_config.h"
#include "apr_time.h"

#include <stdint.h>

struct blog_templates;

typedef struct blog_settings
{
    const char *conninfo;
    int         pool_min;
    int         pool_keep;
    int         pool_max;
    apr_interval_time_t pool_exptime;
    apr_interval_time_t acquire_timeout;
    apr_interval_time_t query_timeout;
    int         prepare;        /* BlogPrepare: 0 behind a transaction pooler */

    int         redis_on;
    const char *redis_host;     /* host name, or a unix socket path */
    int         redis_port;     /* 0 with a unix socket */
    apr_interval_time_t redis_connect_timeout;
    apr_interval_time_t redis_timeout;
    int         cache_ttl;      /* seconds */
    int         invalidate;     /* BlogInvalidate: listen for writes */

    const char *templates_dir;
    uint32_t    compute_limit;
    apr_interval_time_t conn_hold;  /* 0: core's connection loop */
    const struct blog_templates *tpl;
} blog_settings;

/* What a request under one server's mount needs, resolved at start-up. */
typedef struct blog_site
{
    const blog_settings *g;
    const char *base;           /* mount prefix without trailing slash */
    apr_size_t  base_len;
    int         mounted;        /* BlogMount given for this server */
    int         fast_path;
    const char *not_found;      /* pre-rendered 404 and 503 pages */
    apr_size_t  not_found_len;
    const char *unavailable;
    apr_size_t  unavailable_len;
} blog_site;

typedef struct blog_server_conf
{
    const char *mount;
    int         fast_path;

    const char *conninfo;
    int         pool_min;
    int         pool_keep;
    int         pool_max;
    apr_interval_time_t pool_exptime;
    apr_interval_time_t acquire_timeout;
    apr_interval_time_t query_timeout;
    int         prepare;
    const char *redis;
    apr_interval_time_t redis_connect_timeout;
    apr_interval_time_t redis_timeout;
    int         cache_ttl;
    int         invalidate;
    const char *templates_dir;
    int         compute_limit;
    apr_interval_time_t conn_hold;

    blog_site  *site;           /* set by post_config */
} blog_server_conf;

extern module AP_MODULE_DECLARE_DATA blog_module;

#define BLOG_CONTENT_TYPE "text/html; charset=utf-8"

#endif

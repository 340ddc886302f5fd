/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_blog.c - the module record and its start-up: the directives checked
 * together, each server's site made, the children's connections opened.
 * config.c reads the directives, urls.c answers the blog's URLs.
 */
#include "store/cache.h"
#include "core/logno.h"
#include "store/db.h"
#include "httpd/config.h"
#include "httpd/hold.h"
#include "httpd/hello.h"
#include "store/invalidate.h"
#include "httpd/invalidate_hooks.h"
#include "httpd/pages.h"
#include "httpd/page_pool.h"
#include "store/redis_settings.h"
#include "store/sentinel.h"
#include "httpd/response.h"
#include "httpd/site.h"
#include "httpd/counters_shm.h"
#include "httpd/status.h"
#include "httpd/health.h"
#include "httpd/tplfiles.h"
#include "httpd/urls.h"

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "ap_config.h"
#include "apr_strings.h"

#include <string.h>

module AP_MODULE_DECLARE_DATA blog_module;

/* The process-wide settings: the main server's configuration. */
static const blog_config *blog_g;
/* Whether some server mounts the blog: only then a child opens anything. */
static int blog_in_use;

/* s's site; its mount, if any, joins bases. */
static int
blog_make_site(apr_pool_t *p, server_rec *s, const blog_config *main,
               const blog_pageset *pages, apr_array_header_t *bases)
{
    blog_config *c = ap_get_module_config(s->module_config, &blog_module);
    const char *base = c->mount.path ? c->mount.path : "";
    blog_site  *site = apr_palloc(p, sizeof(*site));

    *site = (blog_site) {.pages = pages, .base = base,
        .compute_limit = (uint32_t) main->compute_limit,
        .fast_path_checked = apr_pcalloc(p, sizeof(apr_uint32_t)),
        .base_len = strlen(base), .mounted = c->mount.path != NULL,
        .shared = c->mount.shared, .fast_path = c->fast_path,
        .hold = c->conn_hold};
    if (blog_pages_site(p, site) != 0)
        return -1;
    c->site = site;
    if (site->mounted)
        APR_ARRAY_PUSH(bases, const char *) = site->base;
    return 0;
}

/*
 * Redis's secrets read into cache, the templates compiled into p and, with
 * bases, each server's site made, its mount joining bases: OK, or an error
 * logged.
 */
static int
blog_load(apr_pool_t *p, server_rec *s, const blog_config *c,
          blog_cache_settings *cache, apr_array_header_t *bases, char *err,
          apr_size_t err_len)
{
    blog_tpl_files files = {c->templates_dir, blog_pool_alloc, p};
    const blog_pageset *pages;
    server_rec *vs;

    if (blog_sentinel_load(p, &cache->sentinel, &cache->redis, err,
                           err_len) != 0
        || blog_cache_load(p, cache, err, err_len) != 0) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, BLOGLOGNO(00060)
                     "Redis's secrets or TLS: %s", err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    pages = blog_pageset_load(blog_tpl_file_source, &files, blog_pool_alloc,
                              p, err, err_len);
    if (pages == NULL) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, BLOGLOGNO(00004)
                     "BlogTemplates %s (%s): %s", c->templates_dir,
                     blog_where(p, c, BLOG_D_TEMPLATES), err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    for (vs = s; vs != NULL && bases != NULL; vs = vs->next) {
        if (blog_make_site(p, vs, c, pages, bases) != 0) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, vs,
                         BLOGLOGNO(00005) "cannot render the static pages");
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return OK;
}

/*
 * The sentinels' directives go together, and replace BlogRedis's address:
 * one meaning for a configuration, said by apache2 -t.
 */
static int
blog_check_sentinels(apr_pool_t *p, server_rec *s, const blog_config *c)
{
    const blog_sentinel_settings *sg = &c->cache.sentinel;
    const char *bad = NULL;

    if (sg->list.n > 0 && sg->master == NULL)
        bad = apr_psprintf(p, "BlogRedisSentinels (%s) needs BlogRedisMaster",
                           blog_where(p, c, BLOG_D_REDIS_SENTINELS));
    else if (sg->list.n == 0 && (sg->master != NULL || sg->auth_file != NULL))
        bad = apr_psprintf(p, "%s (%s) needs BlogRedisSentinels",
                           sg->master ? "BlogRedisMaster"
                           : "BlogRedisSentinelAuth",
                           blog_where(p, c, sg->master
                                      ? BLOG_D_REDIS_MASTER
                                      : BLOG_D_REDIS_SENTINEL_AUTH));
    else if (sg->list.n > 0 && c->cache.redis.on
             && (c->set & BLOG_SET(BLOG_D_REDIS)))
        bad = apr_psprintf(p, "BlogRedis (%s) and BlogRedisSentinels (%s): "
                           "set one; with sentinels the cache is the master "
                           "they name (BlogRedis Off turns the cache off)",
                           blog_where(p, c, BLOG_D_REDIS),
                           blog_where(p, c, BLOG_D_REDIS_SENTINELS));
    if (bad == NULL)
        return OK;
    ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, BLOGLOGNO(00077) "%s", bad);
    return HTTP_INTERNAL_SERVER_ERROR;
}

/*
 * Only checks, before the logs open, so that apache2 -t refuses what a
 * start would: the pool's bounds, the templates, Redis's secrets and TLS
 * (read as root, into ptemp); post_config sets up.
 */
static int
blog_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                  server_rec *s)
{
    const blog_config *c = ap_get_module_config(s->module_config,
                                                &blog_module);
    const blog_db_settings *db = &c->db;
    blog_cache_settings cache = c->cache;
    char        err[1024];

    (void) pconf;
    (void) plog;
    if (db->pool_min > db->pool_keep || db->pool_keep > db->pool_max) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, BLOGLOGNO(00001)
                     "BlogPoolMin <= BlogPoolKeep <= BlogPoolMax does not "
                     "hold: BlogPoolMin %d (%s), BlogPoolKeep %d (%s), "
                     "BlogPoolMax %d (%s)",
                     db->pool_min, blog_where(ptemp, c, BLOG_D_POOL_MIN),
                     db->pool_keep, blog_where(ptemp, c, BLOG_D_POOL_KEEP),
                     db->pool_max, blog_where(ptemp, c, BLOG_D_POOL_MAX));
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (blog_check_sentinels(ptemp, s, c) != OK)
        return HTTP_INTERNAL_SERVER_ERROR;
    return blog_load(ptemp, s, c, &cache, NULL, err, sizeof(err));
}

/*
 * The set-up, as mod_ssl's (its keys are read here, as root): the secrets,
 * the templates, each server's site, the listener's mounts.
 */
static int
blog_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                 server_rec *s)
{
    blog_config *c = ap_get_module_config(s->module_config, &blog_module);
    apr_array_header_t *bases = apr_array_make(pconf, 4, sizeof(char *));
    char        err[1024];

    (void) plog;
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return OK;
    if (blog_load(pconf, s, c, &c->cache, bases, err, sizeof(err)) != OK)
        return HTTP_INTERNAL_SERVER_ERROR;
    blog_g = c;
    blog_in_use = bases->nelts > 0;
    blog_hello_configure(blog_in_use && c->handshake_wait);
    /* the listener deletes each key under every mount of the blog */
    blog_invalidate_configure(pconf, s, c->invalidate, c->invalidate_db,
                              &c->db, &c->cache,
                              (const char *const *) bases->elts,
                              bases->nelts);
    /* accepted so that a 1.2 configuration still starts after an upgrade */
    if (c->set & BLOG_SET(BLOG_D_CONN_PARK))
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, BLOGLOGNO(00002)
                     "BlogConnectionPark (%s) is ignored: the blog's "
                     "connection loop was removed, connections are core's; "
                     "remove the directive",
                     blog_where(ptemp, c, BLOG_D_CONN_PARK));
    return OK;
}

/* With no BlogMount a child opens nothing; blog-health connects on demand. */
static void
blog_child_init(apr_pool_t *pchild, server_rec *s)
{
    if (blog_g == NULL)
        return;
    blog_db_child_init(pchild, s, &blog_g->db, blog_in_use);
    /* the master the sentinels name, before the cache and the listener */
    blog_sentinel_child_init(pchild, s, &blog_g->cache.redis,
                             &blog_g->cache.sentinel);
    blog_cache_child_init(pchild, s, &blog_g->cache);
    if (blog_in_use)
        blog_page_pool_child_init(pchild, s);
}

static void
blog_register_hooks(apr_pool_t *p)
{
    (void) p;
    ap_hook_check_config(blog_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(blog_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(blog_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    blog_urls_register_hooks();
    blog_stats_register_hooks();
    blog_status_register_hooks();
    blog_health_register_hooks();
    blog_invalidate_register_hooks();
    blog_hold_register_hooks();
    blog_response_register_hooks();
    blog_hello_register_hooks();
}

AP_DECLARE_MODULE(blog) = {
    STANDARD20_MODULE_STUFF,
    NULL,
    NULL,
    blog_create_server_config,
    blog_merge_server_config,
    blog_cmds,
    blog_register_hooks,
    AP_MODULE_FLAG_NONE
};

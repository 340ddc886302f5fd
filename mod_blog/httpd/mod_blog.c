/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_blog.c - the module record, its start-up hooks (config.c reads the
 * directives) and the URL hooks.  Two ways in serve the same bytes: the handler "blog"
 * (BlogFastPath Off) or quick_handler (On).  A URL is the blog's by its
 * path normalised, as core's walks see it; its page by the path as sent.
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
#include "store/redis.h"
#include "store/sentinel.h"
#include "httpd/response.h"
#include "core/router.h"
#include "httpd/serve.h"
#include "httpd/site.h"
#include "httpd/counters_shm.h"
#include "httpd/status.h"
#include "httpd/health.h"
#include "httpd/tplfiles.h"

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_request.h"
#include "ap_config.h"
#include "apr_atomic.h"
#include "apr_strings.h"

/* blog_core_rejects() runs core's own path checks: httpd 2.4.51 on. */
#if !AP_MODULE_MAGIC_AT_LEAST(20120211, 118)
#error "mod_blog needs httpd 2.4.51 or later (ap_unescape_url_ex)"
#endif

#include <string.h>

module AP_MODULE_DECLARE_DATA blog_module;

/* ---- Start-up ---- */

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
        blog_pages_child_init(pchild, s);
}

/* ---- Requests ---- */

#define BLOG_UNDER  1               /* a path under the mount */
#define BLOG_BARE   2               /* the mount without its slash */

/*
 * Where a path, normalised as core's walks see it, stands: under site's
 * mount (with "shared", one of the blog's own), the mount itself without
 * its slash (mod_dir's redirect), or 0: not the blog's.
 */
static int
blog_place(const blog_site *site, const char *p, apr_size_t len)
{
    if (len < site->base_len || memcmp(p, site->base, site->base_len) != 0)
        return 0;
    if (len == site->base_len)
        return site->base_len > 0 ? BLOG_BARE : 0;
    if (p[site->base_len] != '/')
        return 0;
    return !site->shared || blog_route_owned(p + site->base_len,
                                             len - site->base_len)
        ? BLOG_UNDER : 0;
}

/*
 * The blog's answer to a URL of its own, at place: the mount without its
 * slash is mod_dir's 301 to it with one; else the page of the path as
 * sent, without the query, after the mount (pages match byte for byte, no
 * decoding: docs/CONTRACT.md section 2.1), its 404 when the path as sent
 * is not under the mount (//blog/, /x/../blog/).
 */
static int
blog_answer(request_rec *r, const blog_site *site, int place)
{
    const char *u = r->unparsed_uri;
    apr_uri_t   uri;
    apr_size_t  len;

    if (place == BLOG_BARE) {
        u = apr_pstrcat(r->pool, ap_escape_uri(r->pool, site->base),
                        r->args ? "/?" : "/", r->args, (char *) NULL);
        apr_table_setn(r->headers_out, "Location",
                       ap_construct_url(r->pool, u, r));
        return HTTP_MOVED_PERMANENTLY;
    }
    /* an absolute-form target: its path, undecoded */
    if (u != NULL && u[0] != '/'
        && apr_uri_parse(r->pool, u, &uri) == APR_SUCCESS)
        u = uri.path;
    if (u == NULL)
        u = "";
    len = strcspn(u, "?");
    if (blog_place(site, u, len) != BLOG_UNDER)
        return blog_serve(r, site, "", 0);
    return blog_serve(r, site, u + site->base_len, len - site->base_len);
}

/* post_config made every server's. */
static const blog_site *
blog_site_of(request_rec *r)
{
    blog_config *c = ap_get_module_config(r->server->module_config,
                                          &blog_module);

    return c->site;
}

/* Once per child and vhost: does the fast path bypass access control? */
static void
blog_warn_fast_path(request_rec *r, const blog_site *site)
{
    request_rec *sub;
    const char *uri;

    if (apr_atomic_xchg32(site->fast_path_checked, 1))
        return;
    uri = apr_pstrcat(r->pool, site->base, "/", (char *) NULL);
    sub = ap_sub_req_lookup_uri(uri, r, NULL);
    if (sub->status == HTTP_UNAUTHORIZED || sub->status == HTTP_FORBIDDEN)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, r->server, BLOGLOGNO(00006)
                     "BlogFastPath On answers every URL under %s "
                     "from quick_handler, but access control covers it "
                     "(a request for it would get %d): Require, "
                     "authentication and output filters are bypassed; "
                     "set BlogFastPath Off", uri, sub->status);
    ap_destroy_sub_req(sub);
}

/*
 * The path as ap_process_request_internal will make it (with its flags),
 * for quick_handler, which runs before: NULL for one core rejects.
 */
static const char *
blog_core_path(request_rec *r)
{
    core_server_config *sc =
        ap_get_core_module_config(r->server->module_config);
    core_dir_config *d = ap_get_core_module_config(r->per_dir_config);
    unsigned int nflags = AP_NORMALIZE_NOT_ABOVE_ROOT;
    unsigned int uflags = AP_UNESCAPE_URL_KEEP_UNRESERVED;
    char       *p = r->parsed_uri.path;

    if (strchr(p, '%') == NULL && strstr(p, "/.") == NULL
        && strstr(p, "//") == NULL)
        return p;
    p = apr_pstrdup(r->pool, p);
    if (sc->merge_slashes != AP_CORE_CONFIG_OFF)
        nflags |= AP_NORMALIZE_MERGE_SLASHES;
    if (!d->allow_encoded_slashes)
        uflags |= AP_UNESCAPE_URL_FORBID_SLASHES;
    else if (!d->decode_encoded_slashes)
        uflags |= AP_UNESCAPE_URL_KEEP_SLASHES;
    if (!ap_normalize_path(p, nflags | AP_NORMALIZE_DECODE_UNRESERVED)
        || ap_unescape_url_ex(p, uflags) != OK)
        return NULL;
    /* a decoded %2F may make new segments: core normalises again */
    if (d->allow_encoded_slashes && d->decode_encoded_slashes)
        ap_normalize_path(p, nflags);
    return p;
}

/*
 * A path core rejects (400, 404) under the mount as sent is the blog's 404
 * (docs/CONTRACT.md), even with the fast path off; else, with it on, every
 * path under the mount, normalised, is the blog's, from here.
 */
static int
blog_quick_handler(request_rec *r, int lookup)
{
    const blog_site *site;
    const char *p;
    int         place;

    if (lookup || r->main != NULL || r->proxyreq != PROXYREQ_NONE)
        return DECLINED;
    site = blog_site_of(r);
    /* "OPTIONS *": where the blog owns every path, its methods. */
    if (r->method_number == M_OPTIONS && site->mounted
        && !site->shared && site->base_len == 0 && r->unparsed_uri != NULL
        && strcmp(r->unparsed_uri, "*") == 0)
        return blog_respond(r, HTTP_OK, "", 0, NULL);
    if (!site->mounted || r->parsed_uri.path == NULL)
        return DECLINED;
    if ((p = blog_core_path(r)) == NULL)
        return blog_place(site, r->parsed_uri.path,
                          strlen(r->parsed_uri.path)) == BLOG_UNDER
            ? blog_answer(r, site, BLOG_UNDER) : DECLINED;
    if (!site->fast_path || (place = blog_place(site, p, strlen(p))) == 0)
        return DECLINED;
    if (!apr_atomic_read32(site->fast_path_checked))
        blog_warn_fast_path(r, site);
    return blog_answer(r, site, place);
}

/* The prefix of the r->filename of a URI the blog answers. */
#define BLOG_FILENAME_PREFIX "blog:"

/* Run last, after mod_rewrite and mod_alias, before core's DocumentRoot. */
static int
blog_translate_name(request_rec *r)
{
    const blog_site *site = blog_site_of(r);

    if (!site->mounted || r->proxyreq != PROXYREQ_NONE
        || !blog_place(site, r->uri, strlen(r->uri)))
        return DECLINED;
    r->filename = apr_pstrcat(r->pool, BLOG_FILENAME_PREFIX, r->uri,
                              (char *) NULL);
    r->handler = "blog";
    return OK;
}

/* No <Directory> walk nor stat for the blog's URIs, as mod_proxy's. */
static int
blog_map_to_storage(request_rec *r)
{
    if (r->filename == NULL
        || strncmp(r->filename, BLOG_FILENAME_PREFIX,
                   sizeof(BLOG_FILENAME_PREFIX) - 1) != 0)
        return DECLINED;
    return OK;
}

/* After access control: r->uri is normalised. */
static int
blog_handler(request_rec *r)
{
    const blog_site *site;
    int         place;

    if (r->handler == NULL || strcmp(r->handler, "blog") != 0)
        return DECLINED;
    site = blog_site_of(r);
    if ((place = blog_place(site, r->uri, strlen(r->uri))) != 0)
        return blog_answer(r, site, place);
    /* outside the mount (a wider Location): the blog's 404, unless shared */
    return site->shared ? DECLINED : blog_serve(r, site, "", 0);
}

static void
blog_register_hooks(apr_pool_t *p)
{
    /* the blog's pages have their own cache: first, before mod_cache's */
    static const char *const before_cache[] = {"mod_cache.c", NULL};

    (void) p;
    ap_hook_check_config(blog_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(blog_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(blog_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_quick_handler(blog_quick_handler, NULL, before_cache,
                          APR_HOOK_FIRST);
    ap_hook_translate_name(blog_translate_name, NULL, NULL, APR_HOOK_LAST);
    ap_hook_map_to_storage(blog_map_to_storage, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_handler(blog_handler, NULL, NULL, APR_HOOK_MIDDLE);
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

/*
 * mod_blog.c - the module record, its configuration and its hooks.
 *
 * Two ways in, serving the same bytes (docs/ARCHITECTURE.md): a content
 * handler "blog" reached through translate_name (BlogFastPath Off), or
 * quick_handler answering every URI under BlogMount (BlogFastPath On).
 * Both route the raw request path, so a path is exactly one of
 * docs/CONTRACT.md's or a 404.  The directives are declared once, in
 * directives.h; this file turns that list into the command table, the
 * defaults, the merge and the checks.
 */
#include "cache.h"
#include "logno.h"
#include "db.h"
#include "directives.h"
#include "invalidate.h"
#include "pages.h"
#include "redis.h"
#include "response.h"
#include "router.h"
#include "serve.h"
#include "site.h"
#include "stats.h"
#include "status.h"

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "ap_config.h"
#include "apr_atomic.h"
#include "apr_strings.h"

/* blog_core_rejects() runs core's own path checks: httpd 2.4.51 on. */
#if !AP_MODULE_MAGIC_AT_LEAST(20120211, 118)
#error "mod_blog needs httpd 2.4.51 or later (ap_unescape_url_ex)"
#endif

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

module AP_MODULE_DECLARE_DATA blog_module;

/* ---- Configuration ---- */

typedef struct blog_mount
{
    const char *path;           /* without trailing slash; NULL: unset */
    int         shared;
} blog_mount;

/* One per server: every directive's value, which were set, and where. */
typedef struct blog_config
{
    blog_mount  mount;
    int         fast_path;
    blog_db_settings db;
    blog_cache_settings cache;
    int         invalidate;     /* BlogInvalidate */
    const char *invalidate_db;  /* BlogInvalidateDatabase; NULL: unset */
    const char *templates_dir;
    int         compute_limit;
    apr_interval_time_t conn_hold;
    int         conn_park;      /* BlogConnectionPark */

    apr_uint32_t set;           /* bit BLOG_D_x: given in this server */
    const char *file[BLOG_NDIRECTIVES];
    int         line[BLOG_NDIRECTIVES];
    const char *default_error;  /* a default that did not parse: a bug */
    blog_site  *site;           /* set by check_config */
} blog_config;

typedef struct blog_directive
{
    const char *name;
    blog_dir_type type;
    blog_dir_where where;
    const char *def;
    long        lo;
    long        hi;
    apr_size_t  off;            /* of its field in blog_config */
} blog_directive;

#define BLOG_DIRECTIVE_ENTRY(id, name, field, type, where, def, lo, hi, \
                             syntax, help) \
    {name, type, where, def, lo, hi, APR_OFFSETOF(blog_config, field)},
static const blog_directive blog_directives[BLOG_NDIRECTIVES] = {
    BLOG_DIRECTIVES(BLOG_DIRECTIVE_ENTRY)
};

#define BLOG_SET(i) ((apr_uint32_t) 1 << (i))
typedef char blog_set_holds_every_directive[BLOG_NDIRECTIVES <= 32 ? 1 : -1];

/* The process-wide settings: the main server's configuration. */
static const blog_config *blog_g;
/* Whether some server mounts the blog: only then a child opens anything. */
static int blog_in_use;

/* A duration bound for messages: "200 ms", "1 s", "3600 s". */
static const char *
blog_ms_text(apr_pool_t *p, long ms)
{
    return ms % 1000 == 0 ? apr_psprintf(p, "%ld s", ms / 1000)
        : apr_psprintf(p, "%ld ms", ms);
}

static const char *
blog_parse_mount(apr_pool_t *p, const blog_directive *d, const char *arg,
                 const char *arg2, blog_mount *m)
{
    apr_size_t  len = strlen(arg);
    const char *q;

    if (arg2 != NULL && strcasecmp(arg2, "shared") != 0)
        return apr_psprintf(p, "%s: the second argument may only be "
                            "'shared'", d->name);
    if (arg[0] != '/')
        return apr_psprintf(p, "%s must be a URL path starting with '/'",
                            d->name);
    for (q = arg; *q; q++)
        if (*q == '?' || *q == '#' || *q == '%' || *q <= ' ' || *q >= 127)
            return apr_psprintf(p, "%s must be a plain URL path: no '?', "
                                "'#', '%%', spaces or non-ASCII bytes",
                                d->name);
    if (strstr(arg, "//") || strstr(arg, "/./") || strstr(arg, "/../")
        || (len >= 2 && strcmp(arg + len - 2, "/.") == 0)
        || (len >= 3 && strcmp(arg + len - 3, "/..") == 0))
        return apr_psprintf(p, "%s must be a normalised path (no '//', '.' "
                            "or '..')", d->name);
    while (len > 0 && arg[len - 1] == '/')
        len--;
    m->path = apr_pstrmemdup(p, arg, len);
    m->shared = arg2 != NULL;
    return NULL;
}

static const char *
blog_parse_conninfo(apr_pool_t *p, const blog_directive *d, const char *arg,
                    const char **field)
{
    PQconninfoOption *opts;
    char       *msg = NULL;
    const char *err;

    opts = PQconninfoParse(arg, &msg);
    if (opts == NULL) {
        err = apr_psprintf(p, "%s: invalid conninfo: %.*s", d->name,
                           msg ? (int) strcspn(msg, "\n") : 13,
                           msg ? msg : "out of memory");
        PQfreemem(msg);
        return err;
    }
    PQconninfoFree(opts);
    *field = arg;
    return NULL;
}

/* "host:port", "[v6addr]:port" or "/path/to/redis.sock", or "off". */
static const char *
blog_parse_redis(apr_pool_t *p, const blog_directive *d, const char *arg,
                 blog_cache_settings *cs)
{
    const char *colon;
    const char *host;
    apr_size_t  hlen;
    char       *end;
    long        port;

    if (strcasecmp(arg, "off") == 0) {
        cs->redis_on = 0;
        return NULL;
    }
    cs->redis_tls = strncasecmp(arg, "rediss://", 9) == 0;
    arg += cs->redis_tls ? 9 : 0;
    if (arg[0] == '/' && cs->redis_tls)
        return apr_psprintf(p, "%s: rediss:// takes host:port", d->name);
    if (arg[0] == '/') {
        cs->redis_on = 1;
        cs->redis_host = arg;
        cs->redis_port = 0;
        return NULL;
    }
    colon = strrchr(arg, ':');
    if (colon == NULL || colon == arg)
        return apr_psprintf(p, "%s must be host:port, rediss://host:port, a "
                            "socket path, or off", d->name);
    port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end != '\0' || port < 1 || port > 65535)
        return apr_psprintf(p, "%s: the port must be a number from 1 to "
                            "65535", d->name);
    host = arg;
    hlen = (apr_size_t) (colon - arg);
    if (host[0] == '[') {
        if (hlen < 3 || host[hlen - 1] != ']')
            return apr_psprintf(p, "%s: an IPv6 address is written "
                                "[address]:port", d->name);
        host++;
        hlen -= 2;
    }
    cs->redis_on = 1;
    cs->redis_host = apr_pstrmemdup(p, host, hlen);
    cs->redis_port = (int) port;
    return NULL;
}

/* A duration within the entry's bounds; bare numbers in ms or seconds. */
static const char *
blog_parse_duration(apr_pool_t *p, const blog_directive *d, const char *arg,
                    apr_interval_time_t *field)
{
    int         secs = d->type == BLOG_DT_SEC;
    apr_interval_time_t t;

    if (d->type == BLOG_DT_MSEC_OFF && strcasecmp(arg, "off") == 0) {
        *field = 0;
        return NULL;
    }
    if (ap_timeout_parameter_parse(arg, &t, secs ? "s" : "ms") != APR_SUCCESS
        || t < apr_time_from_msec(d->lo) || t > apr_time_from_msec(d->hi))
        return apr_psprintf(p, "%s must be %sa duration from %s to %s (a "
                            "number of %s, or with a ms/s suffix)", d->name,
                            d->type == BLOG_DT_MSEC_OFF ? "Off or " : "",
                            blog_ms_text(p, d->lo), blog_ms_text(p, d->hi),
                            secs ? "seconds" : "milliseconds");
    *field = t;
    return NULL;
}

/* arg (and arg2, for BlogMount) into c: NULL, or what is wrong. */
static const char *
blog_parse(apr_pool_t *p, const blog_directive *d, const char *arg,
           const char *arg2, blog_config *c)
{
    void       *field = (char *) c + d->off;
    char       *end;
    long        v;

    switch (d->type) {
    case BLOG_DT_MOUNT:
        return blog_parse_mount(p, d, arg, arg2, field);
    case BLOG_DT_FLAG:
        if (strcasecmp(arg, "on") != 0 && strcasecmp(arg, "off") != 0)
            return apr_psprintf(p, "%s must be On or Off", d->name);
        *(int *) field = strcasecmp(arg, "on") == 0;
        return NULL;
    case BLOG_DT_CONNINFO:
        return blog_parse_conninfo(p, d, arg, field);
    case BLOG_DT_INT:
        v = strtol(arg, &end, 10);
        if (end == arg || *end != '\0' || v < d->lo || v > d->hi)
            return apr_psprintf(p, "%s must be an integer from %ld to %ld",
                                d->name, d->lo, d->hi);
        *(int *) field = (int) v;
        return NULL;
    case BLOG_DT_MSEC:
    case BLOG_DT_SEC:
    case BLOG_DT_MSEC_OFF:
        return blog_parse_duration(p, d, arg, field);
    case BLOG_DT_REDIS:
        return blog_parse_redis(p, d, arg, field);
    case BLOG_DT_PATH:
        *(const char **) field = ap_server_root_relative(p, arg);
        return *(const char **) field ? NULL
            : apr_psprintf(p, "%s: invalid path", d->name);
    }
    return "mod_blog: unknown directive type";
}

/* Bytes a directive's value takes in blog_config, for the merge. */
static apr_size_t
blog_field_size(blog_dir_type type)
{
    switch (type) {
    case BLOG_DT_MOUNT:
        return sizeof(blog_mount);
    case BLOG_DT_FLAG:
    case BLOG_DT_INT:
        return sizeof(int);
    case BLOG_DT_MSEC:
    case BLOG_DT_SEC:
    case BLOG_DT_MSEC_OFF:
        return sizeof(apr_interval_time_t);
    case BLOG_DT_CONNINFO:
    case BLOG_DT_PATH:
        return sizeof(const char *);
    case BLOG_DT_REDIS:         /* server-wide: never merged */
        return sizeof(blog_cache_settings);
    }
    return 0;
}

static void *
blog_create_server_config(apr_pool_t *p, server_rec *s)
{
    blog_config *c = apr_pcalloc(p, sizeof(*c));
    int         i;

    (void) s;
    for (i = 0; i < BLOG_NDIRECTIVES; i++) {
        const blog_directive *d = &blog_directives[i];
        const char *err;

        if (d->def == NULL)
            continue;
        err = blog_parse(p, d, d->def, NULL, c);
        if (err != NULL && c->default_error == NULL)
            c->default_error = err;
    }
    return c;
}

/* A virtual host inherits everything but what it sets itself. */
static void *
blog_merge_server_config(apr_pool_t *p, void *basev, void *addv)
{
    const blog_config *base = basev;
    const blog_config *add = addv;
    blog_config *c = apr_palloc(p, sizeof(*c));
    int         i;

    *c = *base;
    for (i = 0; i < BLOG_NDIRECTIVES; i++) {
        const blog_directive *d = &blog_directives[i];

        /* server-wide ones are refused in a virtual host (blog_set) */
        if (d->where != BLOG_DW_VHOST || !(add->set & BLOG_SET(i)))
            continue;
        memcpy((char *) c + d->off, (const char *) add + d->off,
               blog_field_size(d->type));
        c->file[i] = add->file[i];
        c->line[i] = add->line[i];
    }
    c->set = base->set | add->set;
    c->site = NULL;
    return c;
}

static const char *
blog_set(cmd_parms *cmd, const char *arg, const char *arg2)
{
    const blog_directive *d = cmd->info;
    int         i = (int) (d - blog_directives);
    blog_config *c = ap_get_module_config(cmd->server->module_config,
                                          &blog_module);
    const char *err = NULL;

    if (d->where == BLOG_DW_SERVER)
        err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    if (err == NULL)
        err = blog_parse(cmd->pool, d, arg, arg2, c);
    if (err != NULL)
        return err;
    c->set |= BLOG_SET(i);
    if (cmd->directive != NULL) {
        c->file[i] = cmd->directive->filename;
        c->line[i] = cmd->directive->line_num;
    }
    return NULL;
}

static const char *
blog_cmd_take1(cmd_parms *cmd, void *dummy, const char *arg)
{
    (void) dummy;
    return blog_set(cmd, arg, NULL);
}

static const char *
blog_cmd_take12(cmd_parms *cmd, void *dummy, const char *arg,
                const char *arg2)
{
    (void) dummy;
    return blog_set(cmd, arg, arg2);
}

/* How Apache splits each type's arguments. */
#define BLOG_CMD_BLOG_DT_MOUNT(n, i, h) \
    AP_INIT_TAKE12(n, blog_cmd_take12, i, RSRC_CONF, h)
#define BLOG_CMD_BLOG_DT_FLAG(n, i, h) \
    AP_INIT_TAKE1(n, blog_cmd_take1, i, RSRC_CONF, h)
#define BLOG_CMD_BLOG_DT_CONNINFO   BLOG_CMD_BLOG_DT_FLAG
#define BLOG_CMD_BLOG_DT_INT        BLOG_CMD_BLOG_DT_FLAG
#define BLOG_CMD_BLOG_DT_MSEC       BLOG_CMD_BLOG_DT_FLAG
#define BLOG_CMD_BLOG_DT_SEC        BLOG_CMD_BLOG_DT_FLAG
#define BLOG_CMD_BLOG_DT_MSEC_OFF   BLOG_CMD_BLOG_DT_FLAG
#define BLOG_CMD_BLOG_DT_REDIS      BLOG_CMD_BLOG_DT_FLAG
#define BLOG_CMD_BLOG_DT_PATH       BLOG_CMD_BLOG_DT_FLAG

#define BLOG_COMMAND(id, name, field, type, where, def, lo, hi, syntax, \
                     help) \
    BLOG_CMD_##type(name, (void *) &blog_directives[BLOG_D_##id], \
                    syntax ": " help),
static const command_rec blog_cmds[] = {
    BLOG_DIRECTIVES(BLOG_COMMAND)
    {NULL}
};

/* ---- Start-up ---- */

/* Where directive i of c comes from: "file:line", or "default". */
static const char *
blog_where(apr_pool_t *p, const blog_config *c, int i)
{
    if (!(c->set & BLOG_SET(i)))
        return "default";
    if (c->file[i] == NULL)
        return "command line";
    return apr_psprintf(p, "%s:%d", c->file[i], c->line[i]);
}

static int
blog_check_pool(apr_pool_t *p, const blog_config *c, server_rec *s)
{
    const blog_db_settings *db = &c->db;

    if (db->pool_min <= db->pool_keep && db->pool_keep <= db->pool_max)
        return 0;
    ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                 BLOGLOGNO(00001)
                 "BlogPoolMin <= BlogPoolKeep <= BlogPoolMax does not "
                 "hold: BlogPoolMin %d (%s), BlogPoolKeep %d (%s), "
                 "BlogPoolMax %d (%s)",
                 db->pool_min, blog_where(p, c, BLOG_D_POOL_MIN),
                 db->pool_keep, blog_where(p, c, BLOG_D_POOL_KEEP),
                 db->pool_max, blog_where(p, c, BLOG_D_POOL_MAX));
    return -1;
}

static void *
blog_pool_alloc(void *ctx, size_t size)
{
    return apr_palloc(ctx, size);
}

static int
blog_make_site(apr_pool_t *p, server_rec *s, const blog_pageset *pages)
{
    blog_config *c = ap_get_module_config(s->module_config, &blog_module);
    blog_site  *site = apr_pcalloc(p, sizeof(*site));
    blog_build  b;

    site->pages = pages;
    site->compute_limit = (uint32_t) blog_g->compute_limit;
    site->mounted = c->mount.path != NULL;
    site->shared = c->mount.shared;
    site->base = c->mount.path ? c->mount.path : "";
    site->base_len = strlen(site->base);
    site->fast_path = c->fast_path;
    memset(&b, 0, sizeof(b));
    b.pages = pages;
    b.alloc = blog_pool_alloc;
    b.alloc_ctx = p;
    b.base = site->base;
    b.base_len = site->base_len;
    if (blog_build_simple(&b, pages->not_found, "Not found",
                          BLOG_STATUS_NOT_FOUND, &site->not_found) != 0
        || blog_build_simple(&b, pages->unavailable, "Service unavailable",
                             BLOG_STATUS_UNAVAILABLE,
                             &site->unavailable) != 0)
        return -1;
    c->site = site;
    if (site->mounted)
        blog_in_use = 1;
    return 0;
}

/* The listener deletes each key under every mount that serves the blog. */
static void
blog_configure_invalidation(apr_pool_t *pconf, server_rec *s,
                            const blog_config *c)
{
    apr_array_header_t *bases = apr_array_make(pconf, 4, sizeof(char *));
    server_rec *vs;

    for (vs = s; vs != NULL; vs = vs->next) {
        const blog_config *vc = ap_get_module_config(vs->module_config,
                                                     &blog_module);

        if (vc->site != NULL && vc->site->mounted)
            APR_ARRAY_PUSH(bases, const char *) = vc->site->base;
    }
    blog_invalidate_configure(pconf, s, c->invalidate, c->invalidate_db,
                              &c->db, &c->cache,
                              (const char *const *) bases->elts,
                              bases->nelts);
}

/*
 * BlogConnectionHold and BlogConnectionPark are accepted and ignored (the
 * connection loop they set was removed): said once per start.
 */
static int
blog_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                 server_rec *s)
{
    static const int ids[] = {BLOG_D_CONN_HOLD, BLOG_D_CONN_PARK};
    const blog_config *c = ap_get_module_config(s->module_config,
                                                &blog_module);
    int         k;

    (void) pconf;
    (void) plog;
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return OK;
    for (k = 0; k < 2; k++)
        if (c->set & BLOG_SET(ids[k]))
            ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                         BLOGLOGNO(00002)
                         "%s (%s) is ignored: the blog's connection "
                         "loop was removed, connections are core's; remove "
                         "the directive", blog_directives[ids[k]].name,
                         blog_where(ptemp, c, ids[k]));
    return OK;
}

/* Checked before the logs open: a bad template stops "configtest" aloud. */
static int
blog_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                  server_rec *s)
{
    const blog_config *c = ap_get_module_config(s->module_config,
                                                &blog_module);
    const blog_pageset *pages;
    server_rec *vs;
    char        err[1024];

    (void) plog;
    if (c->default_error != NULL) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                     BLOGLOGNO(00003) "a built-in default does not parse: %s",
                     c->default_error);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    blog_g = c;
    blog_in_use = 0;
    if (blog_check_pool(ptemp, c, s) != 0)
        return HTTP_INTERNAL_SERVER_ERROR;
    /* secrets and certificates are read here, as root, as mod_ssl's are */
    if (blog_redis_load(pconf, (blog_cache_settings *) &c->cache, err,
                        sizeof(err)) != 0) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, BLOGLOGNO(00060)
                     "Redis's secrets or TLS: %s", err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    pages = blog_pageset_load(c->templates_dir, blog_pool_alloc, pconf, err,
                              sizeof(err));
    if (pages == NULL) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                     BLOGLOGNO(00004)
                     "BlogTemplates %s (%s): %s", c->templates_dir,
                     blog_where(ptemp, c, BLOG_D_TEMPLATES), err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    for (vs = s; vs != NULL; vs = vs->next)
        if (blog_make_site(pconf, vs, pages) != 0) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, vs,
                         BLOGLOGNO(00005) "cannot render the static pages");
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    blog_configure_invalidation(pconf, s, c);
    return OK;
}

/*
 * With no BlogMount anywhere a child opens nothing; the settings still go
 * to the pool and the cache, for a blog-health handler, which connects on
 * demand.
 */
static void
blog_child_init(apr_pool_t *pchild, server_rec *s)
{
    if (blog_g == NULL)
        return;
    blog_db_child_init(pchild, s, &blog_g->db, blog_in_use);
    blog_cache_child_init(pchild, s, &blog_g->cache);
    if (!blog_in_use)
        return;
    blog_pages_child_init(pchild, s);
}

/* ---- Requests ---- */

/* The path as the client sent it, without the query string. */
static int
blog_raw_path(request_rec *r, const char **path, apr_size_t *len)
{
    const char *u = r->unparsed_uri;

    if (u != NULL && u[0] == '/') {
        *path = u;
        *len = strcspn(u, "?");
        return 1;
    }
    /* absolute-form request target: apr_uri_parse split it, undecoded */
    if (r->parsed_uri.path != NULL) {
        *path = r->parsed_uri.path;
        *len = strlen(r->parsed_uri.path);
        return 1;
    }
    return 0;
}

/* Strip the mount: 1 when path is under it (the rest starts with '/'). */
static int
blog_under_mount(const blog_site *site, const char **path, apr_size_t *len)
{
    if (*len <= site->base_len
        || memcmp(*path, site->base, site->base_len) != 0
        || (*path)[site->base_len] != '/')
        return 0;
    *path += site->base_len;
    *len -= site->base_len;
    return 1;
}

static const blog_site *
blog_site_of(request_rec *r)
{
    blog_config *c = ap_get_module_config(r->server->module_config,
                                          &blog_module);

    return c->site;
}

/*
 * Once per child and virtual host, a subrequest for the mount (which runs
 * access control; quick_handler declines it): 401 or 403 means the fast
 * path serves pages the configuration protects.
 */
static void
blog_warn_fast_path(request_rec *r, blog_site *site)
{
    request_rec *sub;
    const char *uri;

    if (apr_atomic_xchg32(&site->fast_path_checked, 1))
        return;
    uri = apr_pstrcat(r->pool, site->base, "/", NULL);
    sub = ap_sub_req_lookup_uri(uri, r, NULL);
    if (sub->status == HTTP_UNAUTHORIZED || sub->status == HTTP_FORBIDDEN)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, r->server,
                     BLOGLOGNO(00006)
                     "BlogFastPath On answers every URL under %s "
                     "from quick_handler, but access control covers it "
                     "(a request for it would get %d): Require, "
                     "authentication and output filters are bypassed; "
                     "set BlogFastPath Off", uri, sub->status);
    ap_destroy_sub_req(sub);
}

/*
 * With the fast path off, the quick_handler answers only the paths that
 * core itself rejects before any access check (ap_process_request_internal,
 * with the same flags): one that normalises above the root or has a bad
 * escape (400), an encoded slash or NUL (404).  They get the blog's 404
 * page (405 for another method), as docs/CONTRACT.md wants every path that
 * is no route, and touch neither PostgreSQL nor Redis.  Every other path,
 * dot segments and "//" among them, goes through translate_name, access
 * control and the handler, which routes the raw path.
 */
static int
blog_core_rejects(request_rec *r)
{
    core_server_config *sc =
        ap_get_core_module_config(r->server->module_config);
    core_dir_config *d = ap_get_core_module_config(r->per_dir_config);
    unsigned int nflags = AP_NORMALIZE_NOT_ABOVE_ROOT
        | AP_NORMALIZE_DECODE_UNRESERVED;
    unsigned int uflags = AP_UNESCAPE_URL_KEEP_UNRESERVED;
    char       *p = r->parsed_uri.path;

    if (p == NULL || (strchr(p, '%') == NULL && strstr(p, "/.") == NULL))
        return 0;
    p = apr_pstrdup(r->pool, p);
    if (sc->merge_slashes != AP_CORE_CONFIG_OFF)
        nflags |= AP_NORMALIZE_MERGE_SLASHES;
    if (!d->allow_encoded_slashes)
        uflags |= AP_UNESCAPE_URL_FORBID_SLASHES;
    else if (!d->decode_encoded_slashes)
        uflags |= AP_UNESCAPE_URL_KEEP_SLASHES;
    return !ap_normalize_path(p, nflags)
        || ap_unescape_url_ex(p, uflags) != OK;
}

static int
blog_quick_handler(request_rec *r, int lookup)
{
    const blog_site *site;
    const char *path;
    apr_size_t  len;

    if (lookup || r->main != NULL || r->proxyreq != PROXYREQ_NONE)
        return DECLINED;
    site = blog_site_of(r);
    /*
     * "OPTIONS *" asks about the server as a whole; where the blog owns
     * every path, the answer is its methods (core would say 200 and name
     * none).
     */
    if (r->method_number == M_OPTIONS && site != NULL && site->mounted
        && !site->shared && site->base_len == 0 && r->unparsed_uri != NULL
        && strcmp(r->unparsed_uri, "*") == 0)
        return blog_respond(r, HTTP_OK, "", 0, NULL);
    if (site == NULL || !site->mounted || !blog_raw_path(r, &path, &len)
        || !blog_under_mount(site, &path, &len))
        return DECLINED;
    /* "BlogMount / shared": the rest of the virtual host is Apache's. */
    if (site->shared && !blog_route_owned(path, len))
        return DECLINED;
    if (!site->fast_path)
        return blog_core_rejects(r) ? blog_serve(r, site, path, len)
            : DECLINED;
    if (!apr_atomic_read32(&((blog_site *) site)->fast_path_checked))
        blog_warn_fast_path(r, (blog_site *) site);
    return blog_serve(r, site, path, len);
}

/* The prefix of the r->filename of a URI the blog answers. */
#define BLOG_FILENAME_PREFIX "blog:"

/*
 * The ordinary path's mapping: a URI under the mount (and, with "shared",
 * one of the blog's own) is the blog's, with no file behind it.  Run late,
 * so that mod_rewrite and mod_alias, which an admin may point at it, come
 * first; before core's DocumentRoot mapping.
 */
static int
blog_translate_name(request_rec *r)
{
    const blog_site *site = blog_site_of(r);
    const char *path;
    apr_size_t  len;

    if (site == NULL || !site->mounted || r->proxyreq != PROXYREQ_NONE
        || !blog_raw_path(r, &path, &len)
        || !blog_under_mount(site, &path, &len)
        || (site->shared && !blog_route_owned(path, len)))
        return DECLINED;
    r->filename = apr_pstrcat(r->pool, BLOG_FILENAME_PREFIX, r->uri, NULL);
    r->handler = "blog";
    return OK;
}

/*
 * No <Directory> walk nor stat for the blog's URIs, as mod_proxy skips
 * them for its own: core would look for a file under the DocumentRoot for
 * every page.  <Location> sections are still walked after this hook.
 */
static int
blog_map_to_storage(request_rec *r)
{
    if (r->filename == NULL
        || strncmp(r->filename, BLOG_FILENAME_PREFIX,
                   sizeof(BLOG_FILENAME_PREFIX) - 1) != 0)
        return DECLINED;
    return OK;
}

static int
blog_handler(request_rec *r)
{
    const blog_site *site;
    const char *path;
    apr_size_t  len;

    if (r->handler == NULL || strcmp(r->handler, "blog") != 0)
        return DECLINED;
    site = blog_site_of(r);
    if (site == NULL)
        return DECLINED;
    /*
     * Outside the mount (a Location wider than BlogMount): not a route, the
     * blog's 404; with a shared mount, left to the next handler (core's
     * files) as every path that is not the blog's.
     */
    if (!blog_raw_path(r, &path, &len)
        || !blog_under_mount(site, &path, &len)) {
        if (site->shared)
            return DECLINED;
        path = "";
        len = 0;
    }
    else if (site->shared && !blog_route_owned(path, len))
        return DECLINED;
    return blog_serve(r, site, path, len);
}

static void
blog_register_hooks(apr_pool_t *p)
{
    /*
     * mod_cache serves its hits from quick_handler at APR_HOOK_FIRST too.
     * The blog's pages have a cache of their own (X-Cache, the contract's
     * keys and TTL), so a CacheEnable over the mount must not answer them
     * from mod_cache's: the blog runs first, whatever the LoadModule order.
     * Only with BlogFastPath On, or for the fixed 405 and 404 answers.
     * Its handler needs no order: it answers only the handler "blog".
     */
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

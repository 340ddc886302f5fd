/*
 * mod_blog.c - module record, directives and hooks.
 *
 * Two ways in, serving byte-identical responses:
 *
 *  - The fast path (BlogFastPath On, the default) answers every URI under
 *    BlogMount from quick_handler, as mod_cache serves its hits: no
 *    translate_name, no map_to_storage directory walk or stat, no access,
 *    authentication or authorization hooks, no type checker or fixups.  On
 *    this machine those hooks cost about as much as the rest of a cached
 *    page.  The price: <Location> and <Directory> settings, Require, auth
 *    and every other module's URL hooks never see these requests.
 *
 *  - The ordinary path (BlogFastPath Off) answers from the handler hook the
 *    requests whose handler is "blog" ("SetHandler blog" in a <Location>),
 *    after all of Apache's request hooks, so Require and authentication
 *    apply to every page.  A user who protects the blog turns the fast path
 *    off.  (405s and 404s for paths that are not routes are still answered
 *    from quick_handler; see blog_static_answer.)
 *
 * Both route the raw request path as sent (before Apache decodes or
 * normalises it), so a path is either exactly one of docs/CONTRACT.md section 2's or a 404,
 * whichever way it came in.
 *
 * Nothing here assumes an MPM: per-child state is created in child_init,
 * shared state is locked or atomic, per-thread state is thread-local.
 */
#include "mod_blog.h"

#include "cache.h"
#include "connection.h"
#include "db.h"
#include "dbscale.h"
#include "invalidate.h"
#include "pages.h"
#include "response.h"
#include "router.h"
#include "serve.h"
#include "stats.h"
#include "status.h"

#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "ap_config.h"
#include "apr_strings.h"

#include <libpq-fe.h>
#include <malloc.h>
#include <string.h>

#ifndef BLOG_TEMPLATES_DIR
#define BLOG_TEMPLATES_DIR "/usr/share/mod_blog/templates"
#endif

#define DEF_POOL_MIN            1
#define DEF_POOL_KEEP           2
#define DEF_POOL_MAX            4
#define DEF_POOL_EXPTIME        apr_time_from_sec(60)
#define DEF_ACQUIRE_TIMEOUT     apr_time_from_sec(1)
#define DEF_QUERY_TIMEOUT       apr_time_from_sec(5)
#define DEF_REDIS_HOST          "127.0.0.1"
#define DEF_REDIS_PORT          6379
#define DEF_REDIS_CONNECT       apr_time_from_msec(200)
#define DEF_REDIS_TIMEOUT       apr_time_from_msec(200)
#define DEF_CACHE_TTL           60
#define DEF_COMPUTE_LIMIT       20000
#define DEF_CONN_HOLD           0

/* The process-wide settings, resolved by check_config. */
static blog_settings *blog_g;
/* Whether some server mounts the blog or names a database: open eagerly. */
static int blog_in_use;

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

static void *
blog_create_server_config(apr_pool_t *p, server_rec *s)
{
    blog_server_conf *c = apr_pcalloc(p, sizeof(*c));

    (void) s;
    c->fast_path = -1;
    c->pool_min = -1;
    c->pool_keep = -1;
    c->pool_max = -1;
    c->pool_exptime = -1;
    c->acquire_timeout = -1;
    c->query_timeout = -1;
    c->prepare = -1;
    c->redis_connect_timeout = -1;
    c->redis_timeout = -1;
    c->cache_ttl = -1;
    c->invalidate = -1;
    c->compute_limit = -1;
    c->conn_hold = -1;
    return c;
}

/* Only the mount and the fast path may differ between virtual hosts. */
static void *
blog_merge_server_config(apr_pool_t *p, void *basev, void *addv)
{
    const blog_server_conf *base = basev;
    const blog_server_conf *add = addv;
    blog_server_conf *c = apr_palloc(p, sizeof(*c));

    *c = *base;
    c->mount = add->mount ? add->mount : base->mount;
    c->fast_path = add->fast_path != -1 ? add->fast_path : base->fast_path;
    c->site = NULL;
    return c;
}

static blog_server_conf *
blog_cmd_conf(cmd_parms *cmd)
{
    return ap_get_module_config(cmd->server->module_config, &blog_module);
}

static const char *
blog_set_mount(cmd_parms *cmd, void *dummy, const char *arg)
{
    apr_size_t  len = strlen(arg);
    const char *p;

    (void) dummy;
    if (arg[0] != '/')
        return "BlogMount must be a URL path starting with '/'";
    for (p = arg; *p; p++)
        if (*p == '?' || *p == '#' || *p == '%' || *p <= ' ' || *p >= 127)
            return "BlogMount must be a plain URL path: no '?', '#', '%', "
                "spaces or non-ASCII bytes";
    if (strstr(arg, "//") || strstr(arg, "/./") || strstr(arg, "/../")
        || (len >= 2 && strcmp(arg + len - 2, "/.") == 0)
        || (len >= 3 && strcmp(arg + len - 3, "/..") == 0))
        return "BlogMount must be a normalised path (no '//', '.' or '..')";
    while (len > 0 && arg[len - 1] == '/')
        len--;
    blog_cmd_conf(cmd)->mount = apr_pstrmemdup(cmd->pool, arg, len);
    return NULL;
}

static const char *
blog_set_fast_path(cmd_parms *cmd, void *dummy, int flag)
{
    (void) dummy;
    blog_cmd_conf(cmd)->fast_path = flag;
    return NULL;
}

static const char *
blog_set_database(cmd_parms *cmd, void *dummy, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    PQconninfoOption *opts;
    char       *msg = NULL;

    (void) dummy;
    if (err != NULL)
        return err;
    opts = PQconninfoParse(arg, &msg);
    if (opts == NULL) {
        err = apr_psprintf(cmd->pool, "BlogDatabase: invalid conninfo: %.*s",
                           msg ? (int) strcspn(msg, "\n") : 13,
                           msg ? msg : "out of memory");
        PQfreemem(msg);
        return err;
    }
    PQconninfoFree(opts);
    blog_cmd_conf(cmd)->conninfo = arg;
    return NULL;
}

static const char *
blog_set_invalidate(cmd_parms *cmd, void *dummy, int flag)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);

    (void) dummy;
    if (err != NULL)
        return err;
    blog_cmd_conf(cmd)->invalidate = flag;
    return NULL;
}

static const char *
blog_set_prepare(cmd_parms *cmd, void *dummy, int flag)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);

    (void) dummy;
    if (err != NULL)
        return err;
    blog_cmd_conf(cmd)->prepare = flag;
    return NULL;
}

/* An integer directive; cmd->info is the offset of its int field. */
static const char *
blog_set_int(cmd_parms *cmd, void *dummy, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    const char *name = cmd->directive->directive;
    long        lo = 0, hi = 1024;
    char       *end;
    long        v;

    (void) dummy;
    if (err != NULL)
        return err;
    if (strcasecmp(name, "BlogPoolMax") == 0)
        lo = 1;
    else if (strcasecmp(name, "BlogCacheTTL") == 0) {
        lo = 1;
        hi = 365L * 86400;
    }
    else if (strcasecmp(name, "BlogComputeLimit") == 0) {
        lo = 2;
        hi = 100000000;
    }
    v = strtol(arg, &end, 10);
    if (end == arg || *end != '\0' || v < lo || v > hi)
        return apr_psprintf(cmd->pool, "%s must be an integer from %ld to %ld",
                            name, lo, hi);
    *(int *) ((char *) blog_cmd_conf(cmd) + (apr_size_t) (uintptr_t) cmd->info) = (int) v;
    return NULL;
}

/*
 * A time directive; cmd->info is the offset of its field.  Plain numbers
 * are milliseconds ("ms", "s", "mi" suffixes accepted), except
 * BlogPoolExptime, in seconds like DBDExptime.
 */
static const char *
blog_set_time(cmd_parms *cmd, void *dummy, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    const char *name = cmd->directive->directive;
    int         secs = strcasecmp(name, "BlogPoolExptime") == 0;
    apr_interval_time_t t;

    (void) dummy;
    if (err != NULL)
        return err;
    if (ap_timeout_parameter_parse(arg, &t, secs ? "s" : "ms") != APR_SUCCESS
        || t <= 0 || t > apr_time_from_sec(3600))
        return apr_psprintf(cmd->pool, "%s must be a duration from 1 ms to "
                            "1 hour (a number of %s, or with a ms/s suffix)",
                            name, secs ? "seconds" : "milliseconds");
    *(apr_interval_time_t *) ((char *) blog_cmd_conf(cmd)
                              + (apr_size_t) (uintptr_t) cmd->info) = t;
    return NULL;
}

/* "off", "host:port", "[v6addr]:port" or "/path/to/redis.sock". */
static const char *
blog_set_redis(cmd_parms *cmd, void *dummy, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    const char *colon;
    char       *end;
    long        port;

    (void) dummy;
    if (err != NULL)
        return err;
    if (strcasecmp(arg, "off") != 0 && arg[0] != '/') {
        colon = strrchr(arg, ':');
        if (colon == NULL || colon == arg)
            return "BlogRedis must be host:port, a socket path, or off";
        port = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end != '\0' || port < 1 || port > 65535)
            return "BlogRedis: the port must be a number from 1 to 65535";
    }
    blog_cmd_conf(cmd)->redis = arg;
    return NULL;
}

/* "Off" (core's connection loop) or how long a worker keeps a connection. */
static const char *
blog_set_conn_hold(cmd_parms *cmd, void *dummy, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_interval_time_t t;

    (void) dummy;
    if (err != NULL)
        return err;
    if (strcasecmp(arg, "off") == 0) {
        blog_cmd_conf(cmd)->conn_hold = 0;
        return NULL;
    }
    if (ap_timeout_parameter_parse(arg, &t, "ms") != APR_SUCCESS || t <= 0
        || t > apr_time_from_sec(1))
        return "BlogConnectionHold must be Off or a duration from 1 ms to "
            "1 s (a number of milliseconds, or with a ms/s suffix)";
    blog_cmd_conf(cmd)->conn_hold = t;
    return NULL;
}

static const char *
blog_set_templates(cmd_parms *cmd, void *dummy, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);

    (void) dummy;
    if (err != NULL)
        return err;
    blog_cmd_conf(cmd)->templates_dir = ap_server_root_relative(cmd->pool,
                                                                arg);
    if (blog_cmd_conf(cmd)->templates_dir == NULL)
        return "BlogTemplates: invalid path";
    return NULL;
}

#define BLOG_OFF(f) (void *) APR_OFFSETOF(blog_server_conf, f)

static const command_rec blog_cmds[] = {
    AP_INIT_TAKE1("BlogMount", blog_set_mount, NULL, RSRC_CONF,
                  "URL path under which the blog is served (server or "
                  "virtual host)"),
    AP_INIT_FLAG("BlogFastPath", blog_set_fast_path, NULL, RSRC_CONF,
                 "On (default): answer from quick_handler, skipping access "
                 "control; Off: answer requests with SetHandler blog"),
    AP_INIT_TAKE1("BlogDatabase", blog_set_database, NULL, RSRC_CONF,
                  "libpq connection string of the blog database"),
    AP_INIT_TAKE1("BlogPoolMin", blog_set_int, BLOG_OFF(pool_min), RSRC_CONF,
                  "PostgreSQL connections opened per child at start"),
    AP_INIT_TAKE1("BlogPoolKeep", blog_set_int, BLOG_OFF(pool_keep),
                  RSRC_CONF, "idle PostgreSQL connections kept per child"),
    AP_INIT_TAKE1("BlogPoolMax", blog_set_int, BLOG_OFF(pool_max), RSRC_CONF,
                  "maximum PostgreSQL connections per child"),
    AP_INIT_TAKE1("BlogPoolExptime", blog_set_time, BLOG_OFF(pool_exptime),
                  RSRC_CONF, "seconds before an idle connection above "
                  "BlogPoolKeep is closed"),
    AP_INIT_TAKE1("BlogPoolAcquireTimeout", blog_set_time,
                  BLOG_OFF(acquire_timeout), RSRC_CONF,
                  "longest wait for a free pooled connection (ms)"),
    AP_INIT_TAKE1("BlogQueryTimeout", blog_set_time, BLOG_OFF(query_timeout),
                  RSRC_CONF, "deadline of a page's database call (ms); also "
                  "the connection's statement_timeout"),
    AP_INIT_FLAG("BlogPrepare", blog_set_prepare, NULL, RSRC_CONF,
                 "On (default): prepare the page statements once per "
                 "connection; Off: no session state, each page one unnamed "
                 "statement (for a transaction-pooling PgBouncer)"),
    AP_INIT_TAKE1("BlogRedis", blog_set_redis, NULL, RSRC_CONF,
                  "Redis host:port or socket path for the page cache, or off"),
    AP_INIT_TAKE1("BlogRedisConnectTimeout", blog_set_time,
                  BLOG_OFF(redis_connect_timeout), RSRC_CONF,
                  "Redis connect timeout (ms)"),
    AP_INIT_TAKE1("BlogRedisTimeout", blog_set_time, BLOG_OFF(redis_timeout),
                  RSRC_CONF, "Redis command timeout (ms)"),
    AP_INIT_TAKE1("BlogCacheTTL", blog_set_int, BLOG_OFF(cache_ttl),
                  RSRC_CONF, "seconds a cached page lives in Redis"),
    AP_INIT_FLAG("BlogInvalidate", blog_set_invalidate, NULL, RSRC_CONF,
                 "On (default): one listener per Apache deletes the cached "
                 "pages pg_blog names on each write; Off: they live for "
                 "BlogCacheTTL"),
    AP_INIT_TAKE1("BlogTemplates", blog_set_templates, NULL, RSRC_CONF,
                  "folder of the page templates"),
    AP_INIT_TAKE1("BlogComputeLimit", blog_set_int, BLOG_OFF(compute_limit),
                  RSRC_CONF, "/compute sums the primes below this number"),
    AP_INIT_TAKE1("BlogConnectionHold", blog_set_conn_hold, NULL, RSRC_CONF,
                  "Off, or how long (ms) an event MPM worker waits for the "
                  "next keep-alive request before handing the connection "
                  "back to the MPM"),
    {NULL}
};

/* ------------------------------------------------------------------ */
/* Start-up                                                            */
/* ------------------------------------------------------------------ */

#define PICK(v, def) ((v) >= 0 ? (v) : (def))

static int
blog_resolve_redis(apr_pool_t *p, const char *spec, blog_settings *g)
{
    const char *colon;

    if (spec == NULL) {
        g->redis_on = 1;
        g->redis_host = DEF_REDIS_HOST;
        g->redis_port = DEF_REDIS_PORT;
        return 0;
    }
    g->redis_on = strcasecmp(spec, "off") != 0;
    if (!g->redis_on)
        return 0;
    if (spec[0] == '/') {
        g->redis_host = spec;
        g->redis_port = 0;
        return 0;
    }
    colon = strrchr(spec, ':');
    g->redis_host = apr_pstrmemdup(p, spec, (apr_size_t) (colon - spec));
    if (g->redis_host[0] == '[') {
        apr_size_t  n = strlen(g->redis_host);

        if (n < 3 || g->redis_host[n - 1] != ']')
            return -1;
        g->redis_host = apr_pstrmemdup(p, g->redis_host + 1, n - 2);
    }
    g->redis_port = atoi(colon + 1);
    return 0;
}

static blog_settings *
blog_resolve(apr_pool_t *p, const blog_server_conf *c, server_rec *s)
{
    blog_settings *g = apr_pcalloc(p, sizeof(*g));
    char        err[1024];

    g->conninfo = c->conninfo ? c->conninfo : "dbname=blog";
    g->pool_min = PICK(c->pool_min, DEF_POOL_MIN);
    g->pool_keep = PICK(c->pool_keep, DEF_POOL_KEEP);
    g->pool_max = PICK(c->pool_max, DEF_POOL_MAX);
    g->pool_exptime = PICK(c->pool_exptime, DEF_POOL_EXPTIME);
    g->acquire_timeout = PICK(c->acquire_timeout, DEF_ACQUIRE_TIMEOUT);
    g->query_timeout = PICK(c->query_timeout, DEF_QUERY_TIMEOUT);
    g->prepare = c->prepare != 0;
    g->redis_connect_timeout = PICK(c->redis_connect_timeout,
                                    DEF_REDIS_CONNECT);
    g->redis_timeout = PICK(c->redis_timeout, DEF_REDIS_TIMEOUT);
    g->cache_ttl = PICK(c->cache_ttl, DEF_CACHE_TTL);
    g->invalidate = c->invalidate != 0;
    g->compute_limit = (uint32_t) PICK(c->compute_limit, DEF_COMPUTE_LIMIT);
    g->templates_dir = c->templates_dir ? c->templates_dir
        : BLOG_TEMPLATES_DIR;
    g->conn_hold = PICK(c->conn_hold, DEF_CONN_HOLD);

    if (g->pool_min > g->pool_keep || g->pool_keep > g->pool_max) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                     "blog: BlogPoolMin (%d) <= BlogPoolKeep (%d) <= "
                     "BlogPoolMax (%d) does not hold", g->pool_min,
                     g->pool_keep, g->pool_max);
        return NULL;
    }
    if (blog_resolve_redis(p, c->redis, g) != 0) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                     "blog: BlogRedis %s: malformed address", c->redis);
        return NULL;
    }
    g->tpl = blog_templates_load(p, g->templates_dir, err, sizeof(err));
    if (g->tpl == NULL) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                     "blog: template error: %s", err);
        return NULL;
    }
    return g;
}

static int
blog_make_site(apr_pool_t *p, server_rec *s, const blog_settings *g)
{
    blog_server_conf *c = ap_get_module_config(s->module_config,
                                               &blog_module);
    blog_site  *site = apr_pcalloc(p, sizeof(*site));
    blog_page   page;

    site->g = g;
    site->mounted = c->mount != NULL;
    site->base = c->mount ? c->mount : "";
    site->base_len = strlen(site->base);
    site->fast_path = c->fast_path != 0;
    if (blog_page_not_found(p, g, site->base, site->base_len, &page) != 0)
        return -1;
    site->not_found = page.body;
    site->not_found_len = page.len;
    if (blog_page_unavailable(p, g, site->base, site->base_len, &page) != 0)
        return -1;
    site->unavailable = page.body;
    site->unavailable_len = page.len;
    c->site = site;
    if (site->mounted)
        blog_in_use = 1;
    return 0;
}

/*
 * Everything is checked and compiled here, before the logs open, so that a
 * bad template or directive stops "apachectl start" and "configtest" with
 * its message on the terminal.
 */
static int
blog_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                  server_rec *s)
{
    blog_server_conf *main_conf = ap_get_module_config(s->module_config,
                                                       &blog_module);
    server_rec *vs;

    (void) plog;
    (void) ptemp;
    blog_in_use = main_conf->conninfo != NULL;
    blog_g = blog_resolve(pconf, main_conf, s);
    if (blog_g == NULL)
        return HTTP_INTERNAL_SERVER_ERROR;
    for (vs = s; vs != NULL; vs = vs->next)
        if (blog_make_site(pconf, vs, blog_g) != 0) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, vs,
                         "blog: cannot render the static pages");
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    return OK;
}

static void
blog_child_init(apr_pool_t *pchild, server_rec *s)
{
    if (blog_g == NULL)
        return;
    /*
     * One malloc arena for the child: glibc would give each busy thread one
     * of its own (up to 8 per CPU), each keeping its own free memory, which
     * made most of a child's size.  The request path mallocs little (libpq
     * results, hiredis replies), so the shared lock costs nothing
     * measurable.  Blocks up to 256 KiB stay on the heap, which is not
     * trimmed below 4 MiB of free space: in steady state a request touches
     * no new page and makes no mmap, munmap or brk.  An outlier above that
     * (a huge page, a large reply) is mmapped and given back when freed.
     */
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
    blog_dbscale_child_init(pchild, s, blog_g);
    blog_db_child_init(pchild, s, blog_g, blog_in_use);
    blog_cache_child_init(pchild, s, blog_g);
    blog_connection_child_init(blog_g->conn_hold);
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

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
    blog_server_conf *c = ap_get_module_config(r->server->module_config,
                                               &blog_module);

    return c->site;
}

/*
 * With the fast path off, a request under the mount that can only get a
 * fixed answer (405 for another method, the 404 page for a path that is not
 * a route) is still answered here: core would otherwise reject some of them
 * (%2F, %00, encoded dot segments, bad escapes) or answer TRACE itself with
 * its own status and body before any handler runs, and neither answer
 * discloses anything or touches PostgreSQL or Redis.  Every route goes
 * through Apache's access hooks.
 */
static int
blog_static_answer(request_rec *r, const char *path, apr_size_t len)
{
    blog_route  rt;

    if (r->method_number != M_GET)
        return 1;
    blog_route_match(path, len, &rt);
    return rt.kind == BLOG_ROUTE_NOT_FOUND;
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
        && site->base_len == 0 && r->unparsed_uri != NULL
        && strcmp(r->unparsed_uri, "*") == 0)
        return blog_respond(r, HTTP_OK, "", 0, NULL);
    if (site == NULL || !site->mounted || !blog_raw_path(r, &path, &len)
        || !blog_under_mount(site, &path, &len))
        return DECLINED;
    if (!site->fast_path && !blog_static_answer(r, path, len))
        return DECLINED;
    return blog_serve(r, site, path, len);
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
    /* Outside the mount (a Location wider than BlogMount): not a route. */
    if (!blog_raw_path(r, &path, &len) || !blog_under_mount(site, &path, &len)) {
        path = "";
        len = 0;
    }
    return blog_serve(r, site, path, len);
}

static void
blog_register_hooks(apr_pool_t *p)
{
    (void) p;
    ap_hook_check_config(blog_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(blog_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    /* Before mod_cache: the blog keeps its own cache. */
    ap_hook_quick_handler(blog_quick_handler, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_handler(blog_handler, NULL, NULL, APR_HOOK_MIDDLE);
    blog_connection_register_hooks();
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

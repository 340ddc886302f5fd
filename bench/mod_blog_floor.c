/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mod_blog_floor.c - a measuring module for `make bench`: Apache's own floor.
 *
 * It answers with one page's bytes held in memory (the cached index page,
 * with the headers the blog sends on a cache hit), either from the
 * quick_handler hook, before translation, map_to_storage, access and auth,
 * or from the ordinary handler hook after all of them.  Under the same MPM
 * and load as the blog, the two give the fastest any module can answer
 * through each path, so the blog's figures can be read against them.
 *
 *   BlogFloorFile      /path/to/page.html   the bytes to answer with
 *   BlogFloorQuickPath /floor/quick          the URL answered by quick_handler
 *   <Location /floor/handler> SetHandler blog-floor </Location>
 */
#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "apr_buckets.h"
#include "apr_file_io.h"
#include "apr_strings.h"

#define FLOOR_HANDLER "blog-floor"
#define FLOOR_TYPE "text/html; charset=utf-8"

module AP_MODULE_DECLARE_DATA blog_floor_module;

typedef struct {
    const char *body;
    apr_size_t len;
    const char *quick_path;
} floor_conf;

static void *floor_create_server_conf(apr_pool_t *p, server_rec *s)
{
    (void)s;
    return apr_pcalloc(p, sizeof(floor_conf));
}

static void *floor_merge_server_conf(apr_pool_t *p, void *basev, void *addv)
{
    floor_conf *base = basev, *add = addv;
    floor_conf *conf = apr_pcalloc(p, sizeof(*conf));

    conf->body = add->body ? add->body : base->body;
    conf->len = add->body ? add->len : base->len;
    conf->quick_path = add->quick_path ? add->quick_path : base->quick_path;
    return conf;
}

/* The page is read once, at configuration time, into the config pool. */
static const char *floor_set_file(cmd_parms *cmd, void *dummy, const char *arg)
{
    floor_conf *conf = ap_get_module_config(cmd->server->module_config,
                                            &blog_floor_module);
    const char *path = ap_server_root_relative(cmd->pool, arg);
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t got;
    char *buf;
    apr_status_t rv;

    (void)dummy;
    if (!path)
        return apr_pstrcat(cmd->pool, "BlogFloorFile: bad path ", arg, NULL);
    rv = apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY,
                       APR_OS_DEFAULT, cmd->temp_pool);
    if (rv == APR_SUCCESS)
        rv = apr_file_info_get(&fi, APR_FINFO_SIZE, f);
    if (rv != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "BlogFloorFile: cannot open %s: %pm",
                            path, &rv);
    got = (apr_size_t)fi.size;
    buf = apr_palloc(cmd->pool, got + 1);
    rv = apr_file_read_full(f, buf, got, &got);
    apr_file_close(f);
    if (rv != APR_SUCCESS)
        return apr_psprintf(cmd->pool, "BlogFloorFile: cannot read %s: %pm",
                            path, &rv);
    conf->body = buf;
    conf->len = got;
    return NULL;
}

static const char *floor_set_quick_path(cmd_parms *cmd, void *dummy,
                                        const char *arg)
{
    floor_conf *conf = ap_get_module_config(cmd->server->module_config,
                                            &blog_floor_module);

    (void)dummy;
    if (arg[0] != '/')
        return "BlogFloorQuickPath must start with /";
    conf->quick_path = arg;
    return NULL;
}

/* One brigade, one immortal bucket: the page leaves in a single write. */
static int floor_send(request_rec *r, const floor_conf *conf)
{
    apr_bucket_brigade *bb;
    apr_status_t rv;

    if (r->method_number != M_GET)
        return HTTP_METHOD_NOT_ALLOWED;
    ap_set_content_type(r, FLOOR_TYPE);
    ap_set_content_length(r, conf->len);
    apr_table_setn(r->headers_out, "X-Cache", "HIT");
    if (r->header_only)
        return OK;
    bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_immortal_create(conf->body,
                            conf->len, bb->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(bb->bucket_alloc));
    rv = ap_pass_brigade(r->output_filters, bb);
    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, rv, r,
                      "blog_floor: writing the page failed");
        return AP_FILTER_ERROR;
    }
    return OK;
}

static int floor_quick_handler(request_rec *r, int lookup)
{
    const floor_conf *conf = ap_get_module_config(r->server->module_config,
                                                  &blog_floor_module);

    if (lookup || !conf->body || !conf->quick_path || r->main
        || strcmp(r->uri, conf->quick_path) != 0)
        return DECLINED;
    return floor_send(r, conf);
}

static int floor_handler(request_rec *r)
{
    const floor_conf *conf = ap_get_module_config(r->server->module_config,
                                                  &blog_floor_module);

    if (!r->handler || strcmp(r->handler, FLOOR_HANDLER) != 0 || !conf->body)
        return DECLINED;
    return floor_send(r, conf);
}

static void floor_register_hooks(apr_pool_t *p)
{
    (void)p;
    ap_hook_quick_handler(floor_quick_handler, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_handler(floor_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

static const command_rec floor_cmds[] = {
    AP_INIT_TAKE1("BlogFloorFile", floor_set_file, NULL, RSRC_CONF,
                  "the file whose bytes every floor request is answered with"),
    AP_INIT_TAKE1("BlogFloorQuickPath", floor_set_quick_path, NULL, RSRC_CONF,
                  "the URL path answered from quick_handler"),
    {NULL}
};

AP_DECLARE_MODULE(blog_floor) = {
    STANDARD20_MODULE_STUFF,
    NULL,
    NULL,
    floor_create_server_conf,
    floor_merge_server_conf,
    floor_cmds,
    floor_register_hooks,
    AP_MODULE_FLAG_NONE
};

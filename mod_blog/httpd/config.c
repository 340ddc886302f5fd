/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c - the directives of directives.h parsed into each server's
 * blog_config, its defaults, a virtual host's merge, the command table.
 */
#include "httpd/config.h"
#include "store/sentinel.h"

#include "httpd.h"
#include "http_config.h"
#include "apr_network_io.h"
#include "apr_strings.h"

#include <stdlib.h>
#include <string.h>

APLOG_USE_MODULE(blog);

typedef struct blog_directive
{
    const char *name;
    blog_dir_type type;
    blog_dir_where where;
    const char *def;
    long        lo;
    long        hi;
    apr_size_t  off;            /* of its field in blog_config */
    apr_size_t  size;           /* of that field, for the merge */
} blog_directive;

#define BLOG_DIRECTIVE_ENTRY(id, name, field, type, where, def, lo, hi, \
                             syntax, help) \
    {name, BLOG_DT_##type, BLOG_DW_##where, def, lo, hi, \
     APR_OFFSETOF(blog_config, field), \
     sizeof(((blog_config *) NULL)->field)},
static const blog_directive blog_directives[BLOG_NDIRECTIVES] = {
    BLOG_DIRECTIVES(BLOG_DIRECTIVE_ENTRY)
};

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
    for (q = arg; *q; q++) {
        if (*q == '?' || *q == '#' || *q == '%' || *q <= ' ' || *q >= 127)
            return apr_psprintf(p, "%s must be a plain URL path: no '?', "
                                "'#', '%%', spaces or non-ASCII bytes",
                                d->name);
    }
    if (strstr(arg, "//") || strstr(arg, "/./") || strstr(arg, "/../")
        || (len >= 2 && strcmp(arg + len - 2, "/.") == 0)
        || (len >= 3 && strcmp(arg + len - 3, "/..") == 0))
        return apr_psprintf(p, "%s must be a normalised path (no '//', '.' "
                            "or '..')", d->name);
    while (len > 0 && arg[len - 1] == '/')
        len--;
    *m = (blog_mount) {apr_pstrmemdup(p, arg, len), arg2 != NULL};
    return NULL;
}

static const char *
blog_parse_conninfo(apr_pool_t *p, const blog_directive *d, const char *arg,
                    const char **field)
{
    const char *why = blog_db_conninfo_error(p, arg);

    if (why != NULL)
        return apr_psprintf(p, "%s: invalid conninfo: %s", d->name, why);
    *field = arg;
    return NULL;
}

/* "host:port", "[v6addr]:port" or "/path/to/redis.sock", or "off". */
static const char *
blog_parse_redis(apr_pool_t *p, const blog_directive *d, const char *arg,
                 blog_cache_settings *cs)
{
    char       *host;
    char       *scope;
    apr_port_t  port;

    cs->redis.on = strcasecmp(arg, "off") != 0;
    cs->redis.tls = strncasecmp(arg, "rediss://", 9) == 0;
    arg += cs->redis.tls ? 9 : 0;
    if (!cs->redis.on)
        return NULL;
    if (arg[0] == '/') {
        cs->redis.host = arg;
        cs->redis.port = 0;
        return cs->redis.tls ? apr_psprintf(p, "%s: rediss:// takes "
                                            "host:port", d->name) : NULL;
    }
    if (apr_parse_addr_port(&host, &scope, &port, arg, p) != APR_SUCCESS
        || host == NULL || port == 0)
        return apr_psprintf(p, "%s must be host:port, [v6addr]:port, "
                            "rediss://host:port, a socket path, or off",
                            d->name);
    cs->redis.host = scope ? apr_psprintf(p, "%s%%%s", host, scope) : host;
    cs->redis.port = port;
    return NULL;
}

/* BlogRedisSentinels: host:port or [v6addr]:port, all rediss:// or none. */
static const char *
blog_parse_sentinels(apr_pool_t *p, const blog_directive *d, int argc,
                     char *const argv[], blog_sentinel_list *l)
{
    blog_sentinel_node *node = apr_pcalloc(p, (apr_size_t) argc
                                           * sizeof(*node));
    int         i, tls = -1;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i];
        int         t = strncasecmp(a, "rediss://", 9) == 0;
        char       *host, *scope;
        apr_port_t  port;

        if (tls >= 0 && t != tls)
            return apr_psprintf(p, "%s: every sentinel over TLS "
                                "(rediss://) or none", d->name);
        tls = t;
        if (apr_parse_addr_port(&host, &scope, &port, a + (t ? 9 : 0), p)
            != APR_SUCCESS || host == NULL || port == 0)
            return apr_psprintf(p, "%s: %s is not host:port, [v6addr]:port "
                                "or rediss://host:port", d->name, a);
        node[i].host = scope ? apr_psprintf(p, "%s%%%s", host, scope) : host;
        node[i].port = port;
    }
    *l = (blog_sentinel_list) {argc, tls, node};
    return NULL;
}

/* A name sent to Redis and found in its events: no space, no control. */
static const char *
blog_parse_name(apr_pool_t *p, const blog_directive *d, const char *arg,
                const char **field)
{
    const char *q;

    for (q = arg; *q; q++) {
        if (*q <= ' ' || *q >= 127)
            break;
    }
    if (*q != '\0' || q == arg || q - arg > 200)
        return apr_psprintf(p, "%s must be a name of printable ASCII, no "
                            "spaces, at most 200 bytes", d->name);
    *field = arg;
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

/* The argc arguments into c (the caller checked their number): NULL, or
 * what is wrong. */
static const char *
blog_parse(apr_pool_t *p, const blog_directive *d, int argc,
           char *const argv[], blog_config *c)
{
    void       *field = (char *) c + d->off;
    const char *arg = argv[0];
    char       *end;
    long        v;

    switch (d->type) {
    case BLOG_DT_MOUNT:
        return blog_parse_mount(p, d, arg, argc > 1 ? argv[1] : NULL, field);
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
    case BLOG_DT_REDIS_LIST:
        return blog_parse_sentinels(p, d, argc, argv, field);
    case BLOG_DT_NAME:
        return blog_parse_name(p, d, arg, field);
    }
    return "mod_blog: unknown directive type";
}

void *
blog_create_server_config(apr_pool_t *p, server_rec *s)
{
    blog_config *c = apr_pcalloc(p, sizeof(*c));
    int         i;

    (void) s;
    /* a default that does not parse is a bug of directives.h */
    for (i = 0; i < BLOG_NDIRECTIVES; i++) {
        char       *def = (char *) blog_directives[i].def;

        if (def != NULL)
            ap_assert(blog_parse(p, &blog_directives[i], 1, &def, c) == NULL);
    }
    return c;
}

/* A virtual host inherits everything but what it sets itself. */
void *
blog_merge_server_config(apr_pool_t *p, void *basev, void *addv)
{
    const blog_config *base = basev;
    const blog_config *add = addv;
    blog_config *c = apr_palloc(p, sizeof(*c));
    int         i;

    *c = *base;
    for (i = 0; i < BLOG_NDIRECTIVES; i++) {
        const blog_directive *d = &blog_directives[i];

        /* server-wide ones are refused in a virtual host (blog_cmd) */
        if (d->where != BLOG_DW_VHOST || !(add->set & BLOG_SET(i)))
            continue;
        memcpy((char *) c + d->off, (const char *) add + d->off, d->size);
        c->file[i] = add->file[i];
        c->line[i] = add->line[i];
    }
    c->set = base->set | add->set;
    return c;
}

/* Every directive takes one argument, but BlogMount a second and a list
 * from lo to hi. */
static const char *
blog_cmd(cmd_parms *cmd, void *dummy, int argc, char *const argv[])
{
    const blog_directive *d = cmd->info;
    int         i = (int) (d - blog_directives);
    blog_config *c = ap_get_module_config(cmd->server->module_config,
                                          &blog_module);
    int         list = d->type == BLOG_DT_REDIS_LIST;
    int         most = d->type == BLOG_DT_MOUNT ? 2 : list ? (int) d->hi : 1;
    const char *err = NULL;

    (void) dummy;
    if (argc < 1 || argc > most)
        return apr_psprintf(cmd->pool, "%s takes %s, %s", d->name,
                            most == 1 ? "one argument" : list
                            ? apr_psprintf(cmd->pool, "one to %d arguments",
                                           most) : "one or two arguments",
                            cmd->cmd->errmsg);
    if (d->where == BLOG_DW_SERVER)
        err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    if (err == NULL)
        err = blog_parse(cmd->pool, d, argc, argv, c);
    if (err != NULL)
        return err;
    c->set |= BLOG_SET(i);
    c->file[i] = cmd->directive->filename;
    c->line[i] = cmd->directive->line_num;
    return NULL;
}

/* Where directive i of c comes from: "file:line", or "default". */
const char *
blog_where(apr_pool_t *p, const blog_config *c, int i)
{
    if (!(c->set & BLOG_SET(i)))
        return "default";
    return apr_psprintf(p, "%s:%d", c->file[i], c->line[i]);
}

#define BLOG_COMMAND(id, name, field, type, where, def, lo, hi, syntax, \
                     help) \
    AP_INIT_TAKE_ARGV(name, blog_cmd, \
                      (void *) &blog_directives[BLOG_D_##id], RSRC_CONF, \
                      syntax ": " help),
const command_rec blog_cmds[] = {
    BLOG_DIRECTIVES(BLOG_COMMAND)
    {NULL}
};

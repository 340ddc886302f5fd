/* SPDX-License-Identifier: Apache-2.0 */
/*
 * urls.c - which URLs are the blog's, and the hooks that answer them.  Two
 * ways in serve the same bytes: the handler "blog" (BlogFastPath Off) or
 * quick_handler (On).  A URL is the blog's by its path normalised, as
 * core's walks see it; its page by the path as sent.
 */
#include "httpd/urls.h"
#include "core/logno.h"
#include "core/router.h"
#include "httpd/config.h"
#include "httpd/response.h"
#include "httpd/serve.h"
#include "httpd/site.h"

#include "httpd.h"
#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "http_request.h"
#include "apr_atomic.h"
#include "apr_strings.h"
#include "apr_uri.h"

/* blog_core_path() runs core's own path checks: httpd 2.4.51 on. */
#if !AP_MODULE_MAGIC_AT_LEAST(20120211, 118)
#error "mod_blog needs httpd 2.4.51 or later (ap_unescape_url_ex)"
#endif

#include <string.h>

APLOG_USE_MODULE(blog);

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

void
blog_urls_register_hooks(void)
{
    /* the blog's pages have their own cache: first, before mod_cache's */
    static const char *const before_cache[] = {"mod_cache.c", NULL};

    ap_hook_quick_handler(blog_quick_handler, NULL, before_cache,
                          APR_HOOK_FIRST);
    ap_hook_translate_name(blog_translate_name, NULL, NULL, APR_HOOK_LAST);
    ap_hook_map_to_storage(blog_map_to_storage, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_handler(blog_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

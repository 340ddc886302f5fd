/*
 * router.h - map a request path to one of the blog's six routes.
 *
 * Pure C: no APR, no allocation, no I/O, so that unit tests and fuzzers can
 * run it on plain buffers.  Paths are matched exactly as sent: no decoding,
 * no trailing slash, no dot segments.
 */
#ifndef BLOG_ROUTER_H
#define BLOG_ROUTER_H

#include <stddef.h>

typedef enum blog_route_kind
{
    BLOG_ROUTE_NOT_FOUND = 0,   /* no route, or a malformed slug */
    BLOG_ROUTE_INDEX,           /* /                   */
    BLOG_ROUTE_POST,            /* /post/{slug}        */
    BLOG_ROUTE_TAG,             /* /tag/{slug}         */
    BLOG_ROUTE_CACHED_INDEX,    /* /cached             */
    BLOG_ROUTE_CACHED_POST,     /* /post/{slug}/cached */
    BLOG_ROUTE_COMPUTE          /* /compute            */
} blog_route_kind;

#define BLOG_SLUG_MAX 64

typedef struct blog_route
{
    blog_route_kind kind;
    const char *slug;           /* points into the path; NULL without a slug */
    size_t      slug_len;
    /*
     * Length of the path of the uncached page this route shows: the cache
     * key is "blog:page:" followed by path[0 .. page_path_len).  For "/cached"
     * the uncached page is "/", which is not a prefix of the path, so
     * page_path is given too.
     */
    const char *page_path;
    size_t      page_path_len;
} blog_route;

/* 1 when s[0..len) is 1 to 64 bytes of a-z, 0-9 and '-'. */
int blog_slug_is_valid(const char *s, size_t len);

/*
 * Match path[0..len) (the part of the URI path after the blog's mount
 * prefix, starting with '/') and fill *out.  Never reads past len; NUL
 * bytes inside len are ordinary bytes (and never part of a route).  An
 * empty path (the mount point without its slash) is NOT_FOUND, as is any
 * malformed slug, so the caller answers 404 without X-Cache.  On
 * NOT_FOUND, slug and page_path are NULL; otherwise page_path is set
 * (for /compute it is the path, though nothing caches it).
 */
void blog_route_match(const char *path, size_t len, blog_route *out);

/*
 * 1 when path[0..len) is one of the blog's own: "/", "/cached",
 * "/compute", or anything under "/post/" or "/tag/" (where a malformed
 * slug is the blog's 404).  What "BlogMount / shared" answers; every other
 * path is left to the rest of the virtual host.  Every path that
 * blog_route_match matches is owned.
 */
int blog_route_owned(const char *path, size_t len);

#endif

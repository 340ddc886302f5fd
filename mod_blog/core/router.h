/* SPDX-License-Identifier: Apache-2.0 */
/*
 * router.h - a request path, exactly as sent (no decoding, no trailing
 * slash, no dot segments), to one of the blog's six routes.  Pure C.
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
    /* the uncached page's path, the cache key's (for /cached: "/") */
    const char *page_path;
    size_t      page_path_len;
} blog_route;

/* 1 when s[0..len) is 1 to 64 bytes of a-z, 0-9 and '-'. */
int blog_slug_is_valid(const char *s, size_t len);

/* path[0..len) after the mount, from its '/' (NUL is an ordinary byte),
 * into *out; NOT_FOUND's slug and page_path are NULL. */
void blog_route_match(const char *path, size_t len, blog_route *out);

/* 1 when path[0..len) is the blog's under "BlogMount / shared": a route's,
 * or anything under "/post/" or "/tag/". */
int blog_route_owned(const char *path, size_t len);

#endif

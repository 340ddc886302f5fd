/* SPDX-License-Identifier: Apache-2.0 */
/* router.c - docs/CONTRACT.md section 2's routes: what fails to match (a
 * "%2f", "//", a trailing slash, a NUL) reaches no back end. */
#include <string.h>

#include "core/router.h"

/* A string literal and its length, which the compiler counts. */
#define LIT(s) (s), (sizeof(s) - 1)

int
blog_slug_is_valid(const char *s, size_t len)
{
    size_t i;

    if (len == 0 || len > BLOG_SLUG_MAX)
        return 0;
    for (i = 0; i < len; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')
              || s[i] == '-'))
            return 0;
    }
    return 1;
}

static int
blog_path_is(const char *path, size_t len, const char *lit, size_t litlen)
{
    return len == litlen && memcmp(path, lit, litlen) == 0;
}

static int
blog_path_has_prefix(const char *path, size_t len, const char *lit,
                     size_t litlen)
{
    return len > litlen && memcmp(path, lit, litlen) == 0;
}

/* A slug after the prefix, then nothing or (if cached) "/cached". */
static void
blog_route_slug(const char *path, size_t len, size_t prefix_len,
                blog_route_kind plain, blog_route_kind cached, blog_route *out)
{
    const char *slug = path + prefix_len;
    size_t rest = len - prefix_len;
    const char *slash = memchr(slug, '/', rest);
    size_t n = slash ? (size_t) (slash - slug) : rest;

    if (!blog_slug_is_valid(slug, n))
        return;
    if (n == rest)
        *out = (blog_route) {plain, slug, n, path, len};
    else if (cached != BLOG_ROUTE_NOT_FOUND
             && blog_path_is(slug + n, rest - n, LIT("/cached")))
        *out = (blog_route) {cached, slug, n, path, prefix_len + n};
}

void
blog_route_match(const char *path, size_t len, blog_route *out)
{
    *out = (blog_route) {BLOG_ROUTE_NOT_FOUND, NULL, 0, NULL, 0};
    if (blog_path_is(path, len, LIT("/")))
        *out = (blog_route) {BLOG_ROUTE_INDEX, NULL, 0, path, 1};
    else if (blog_path_is(path, len, LIT("/cached")))
        *out = (blog_route) {BLOG_ROUTE_CACHED_INDEX, NULL, 0, LIT("/")};
    else if (blog_path_is(path, len, LIT("/compute")))
        *out = (blog_route) {BLOG_ROUTE_COMPUTE, NULL, 0, path, len};
    else if (blog_path_has_prefix(path, len, LIT("/post/")))
        blog_route_slug(path, len, sizeof("/post/") - 1, BLOG_ROUTE_POST,
                        BLOG_ROUTE_CACHED_POST, out);
    else if (blog_path_has_prefix(path, len, LIT("/tag/")))
        blog_route_slug(path, len, sizeof("/tag/") - 1, BLOG_ROUTE_TAG,
                        BLOG_ROUTE_NOT_FOUND, out);
}

int
blog_route_owned(const char *path, size_t len)
{
    return blog_path_is(path, len, LIT("/"))
        || blog_path_is(path, len, LIT("/cached"))
        || blog_path_is(path, len, LIT("/compute"))
        || blog_path_has_prefix(path, len, LIT("/post/"))
        || blog_path_has_prefix(path, len, LIT("/tag/"));
}

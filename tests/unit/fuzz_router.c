/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_router.c - libFuzzer target: the router never reads past len, a
 * match always rebuilds the exact input from its kind and slug, and every
 * match is a path a shared mount answers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/router.h"

static size_t
rebuild(const blog_route *r, char *buf)
{
    switch (r->kind) {
    case BLOG_ROUTE_INDEX:
        memcpy(buf, "/", 1);
        return 1;
    case BLOG_ROUTE_CACHED_INDEX:
        memcpy(buf, "/cached", 7);
        return 7;
    case BLOG_ROUTE_COMPUTE:
        memcpy(buf, "/compute", 8);
        return 8;
    case BLOG_ROUTE_POST:
    case BLOG_ROUTE_CACHED_POST:
        memcpy(buf, "/post/", 6);
        memcpy(buf + 6, r->slug, r->slug_len);
        if (r->kind == BLOG_ROUTE_POST)
            return 6 + r->slug_len;
        memcpy(buf + 6 + r->slug_len, "/cached", 7);
        return 13 + r->slug_len;
    case BLOG_ROUTE_TAG:
        memcpy(buf, "/tag/", 5);
        memcpy(buf + 5, r->slug, r->slug_len);
        return 5 + r->slug_len;
    default:
        return 0;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy, so ASan sees any read past len */
    char *path = malloc(size ? size : 1);
    blog_route r;

    if (path == NULL)
        abort();
    memcpy(path, data, size);
    blog_route_match(path, size, &r);
    /* a shared mount answers every route */
    if (r.kind != BLOG_ROUTE_NOT_FOUND && !blog_route_owned(path, size))
        abort();
    if (r.kind != BLOG_ROUTE_NOT_FOUND) {
        char buf[16 + BLOG_SLUG_MAX];
        size_t n;

        if (r.slug && !blog_slug_is_valid(r.slug, r.slug_len))
            abort();
        n = rebuild(&r, buf);
        if (n != size || memcmp(buf, path, n) != 0)
            abort();
        if (r.page_path == NULL || r.page_path_len == 0
            || r.page_path_len > size)
            abort();
    } else if (r.slug || r.page_path)
        abort();
    free(path);
    return 0;
}

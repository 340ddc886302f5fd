/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_router.c - every route, and the paths that must not match one.
 */
#include "harness.h"
#include "core/router.h"

typedef struct route_row
{
    const char *path;
    size_t      len;            /* 0: strlen(path) */
    blog_route_kind kind;
    const char *slug;           /* NULL: no slug */
    const char *page_path;      /* NULL: none */
} route_row;

static const char *
kind_name(blog_route_kind k)
{
    static const char *const names[] = {
        "NOT_FOUND", "INDEX", "POST", "TAG", "CACHED_INDEX", "CACHED_POST",
        "COMPUTE"
    };

    return (unsigned) k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static void
check_rows(const route_row *rows, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const route_row *r = &rows[i];
        size_t len = r->len ? r->len : strlen(r->path);
        blog_route out;
        int ok;

        memset(&out, 0xa5, sizeof(out));
        blog_route_match(r->path, len, &out);
        ok = out.kind == r->kind;
        if (r->slug)
            ok = ok && out.slug && out.slug_len == strlen(r->slug)
                && memcmp(out.slug, r->slug, out.slug_len) == 0;
        else
            ok = ok && out.slug == NULL && out.slug_len == 0;
        if (r->page_path)
            ok = ok && out.page_path
                && out.page_path_len == strlen(r->page_path)
                && memcmp(out.page_path, r->page_path,
                          out.page_path_len) == 0;
        else
            ok = ok && out.page_path == NULL && out.page_path_len == 0;
        if (!ok)
            fprintf(stderr, "  route \"%.*s\" (%zu bytes): got %s\n",
                    (int) len, r->path, len, kind_name(out.kind));
        CHECK(ok);
    }
}

#define ROWS(r) check_rows((r), sizeof(r) / sizeof((r)[0]))

static void
test_routes(void)
{
    static const route_row rows[] = {
        {"/", 0, BLOG_ROUTE_INDEX, NULL, "/"},
        {"/cached", 0, BLOG_ROUTE_CACHED_INDEX, NULL, "/"},
        {"/compute", 0, BLOG_ROUTE_COMPUTE, NULL, "/compute"},
        {"/post/post-31", 0, BLOG_ROUTE_POST, "post-31", "/post/post-31"},
        {"/post/post-31/cached", 0, BLOG_ROUTE_CACHED_POST, "post-31",
         "/post/post-31"},
        {"/tag/tag-7", 0, BLOG_ROUTE_TAG, "tag-7", "/tag/tag-7"},
        {"/post/a", 0, BLOG_ROUTE_POST, "a", "/post/a"},
        {"/post/-", 0, BLOG_ROUTE_POST, "-", "/post/-"},
        {"/post/0123456789-abcdefghijklmnopqrstuvwxyz", 0, BLOG_ROUTE_POST,
         "0123456789-abcdefghijklmnopqrstuvwxyz",
         "/post/0123456789-abcdefghijklmnopqrstuvwxyz"},
        /* words the router uses are still slugs */
        {"/post/cached", 0, BLOG_ROUTE_POST, "cached", "/post/cached"},
        {"/post/cached/cached", 0, BLOG_ROUTE_CACHED_POST, "cached",
         "/post/cached"},
        {"/tag/post", 0, BLOG_ROUTE_TAG, "post", "/tag/post"},
    };

    ROWS(rows);
}

static void
test_not_found(void)
{
    static const route_row rows[] = {
        {"", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"//", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/cached/", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/compute/", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/computex", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/Compute", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"compute", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/index.html", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post//", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post//cached", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"//post/post-1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post//post-1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1/", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1//cached", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1/cached/", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1/cachedx", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1/cache", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1/Cached", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1/x", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1/cached/cached", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/POST/post-1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/Post-1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post_1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post.1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post%2d1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1%2fcached", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post%2fpost-1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/./post-1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/../post/post-1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/..", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/.", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/./", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post 1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1?x=1", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/caf\xc3\xa9", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/'; drop table blog.posts; --", 0, BLOG_ROUTE_NOT_FOUND,
         NULL, NULL},
        {"/tag", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/tag/", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/tag/tag-7/", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/tag/tag-7/cached", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/tag/TAG-7", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/tags/tag-7", 0, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        /* NUL bytes inside len are bytes like any other */
        {"/\0", 2, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/cached\0", 8, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1\0", 13, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/po\0st-1", 13, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/post/post-1\0/cached", 20, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
        {"/tag/\0", 6, BLOG_ROUTE_NOT_FOUND, NULL, NULL},
    };

    ROWS(rows);
}

static void
test_len_is_respected(void)
{
    /* only len bytes count: a longer buffer behind them changes nothing */
    const char *buf = "/post/post-31/cached-and-more";
    blog_route r;

    blog_route_match(buf, 13, &r);
    CHECK(r.kind == BLOG_ROUTE_POST && r.slug_len == 7);
    blog_route_match(buf, 20, &r);
    CHECK(r.kind == BLOG_ROUTE_CACHED_POST && r.page_path_len == 13
          && r.page_path == buf);
    blog_route_match(buf, 1, &r);
    CHECK(r.kind == BLOG_ROUTE_INDEX);
    blog_route_match(buf, 0, &r);
    CHECK(r.kind == BLOG_ROUTE_NOT_FOUND);
    blog_route_match(NULL, 0, &r);
    CHECK(r.kind == BLOG_ROUTE_NOT_FOUND && r.slug == NULL);
    /* the slug points into the caller's path, not a copy */
    blog_route_match(buf, 13, &r);
    CHECK(r.slug == buf + 6);
}

/* path: prefix and 70 c's; a slug of 64 is a route, one of 65 is not. */
static void
slug_limit(char *path, const char *prefix, char c, blog_route_kind kind)
{
    size_t      n = strlen(prefix);
    blog_route  r;

    memcpy(path, prefix, n);
    memset(path + n, c, 70);
    blog_route_match(path, n + 64, &r);
    CHECK(r.kind == kind && r.slug_len == 64);
    blog_route_match(path, n + 65, &r);
    CHECK(r.kind == BLOG_ROUTE_NOT_FOUND);
}

static void
test_slug_lengths(void)
{
    char path[6 + 70 + 8];
    char slug[70];
    blog_route r;

    memset(slug, 'a', sizeof(slug));
    CHECK(!blog_slug_is_valid(slug, 0));
    CHECK(blog_slug_is_valid(slug, 1));
    CHECK(blog_slug_is_valid(slug, 63));
    CHECK(blog_slug_is_valid(slug, 64));
    CHECK(!blog_slug_is_valid(slug, 65));
    CHECK(!blog_slug_is_valid(slug, 70));

    slug_limit(path, "/post/", 'z', BLOG_ROUTE_POST);

    memcpy(path + 6 + 64, "/cached", 7);
    blog_route_match(path, 6 + 64 + 7, &r);
    CHECK(r.kind == BLOG_ROUTE_CACHED_POST && r.slug_len == 64
          && r.page_path_len == 6 + 64);
    memset(path + 6, 'z', 70);
    memcpy(path + 6 + 65, "/cached", 7);
    blog_route_match(path, 6 + 65 + 7, &r);
    CHECK(r.kind == BLOG_ROUTE_NOT_FOUND);

    slug_limit(path, "/tag/", '9', BLOG_ROUTE_TAG);
}

static void
test_slug_bytes(void)
{
    int c;

    /* exactly a-z, 0-9 and '-' are slug bytes */
    for (c = 0; c < 256; c++) {
        char ch = (char) c;
        int want = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
            || c == '-';

        if (blog_slug_is_valid(&ch, 1) != want)
            fprintf(stderr, "  slug byte 0x%02x\n", c);
        CHECK(blog_slug_is_valid(&ch, 1) == want);
    }
}

/* What "BlogMount / shared" answers: the routes and their namespaces. */
static void
test_owned(void)
{
    static const char *const owned[] = {
        "/", "/cached", "/compute", "/post/post-1", "/post/post-1/cached",
        "/post/NOT-a-slug", "/post/x/y/z", "/tag/tag-7", "/tag/%2F",
    };
    static const char *const not_owned[] = {
        "", "/index.html", "/server-status", "/.well-known/acme-challenge/t",
        "/post", "/post/", "/tag", "/tag/", "/postx/1", "/cached/", "/compute/",
        "/Cached", "//", "/icons/a.png",
    };
    size_t i;

    for (i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
        if (!blog_route_owned(owned[i], strlen(owned[i])))
            fprintf(stderr, "  %s is not owned\n", owned[i]);
        CHECK(blog_route_owned(owned[i], strlen(owned[i])));
    }
    for (i = 0; i < sizeof(not_owned) / sizeof(not_owned[0]); i++) {
        if (blog_route_owned(not_owned[i], strlen(not_owned[i])))
            fprintf(stderr, "  %s is owned\n", not_owned[i]);
        CHECK(!blog_route_owned(not_owned[i], strlen(not_owned[i])));
    }
    /* the length counts, not the NUL: "/cached" cut to "/cache" is not */
    CHECK(!blog_route_owned("/cached", 6));
    CHECK(!blog_route_owned(NULL, 0));
}

const t_case t_router_cases[] = {
    {"router: the six routes", test_routes},
    {"router: paths that are not routes", test_not_found},
    {"router: reads exactly len bytes", test_len_is_respected},
    {"router: slug lengths 0, 1, 64, 65", test_slug_lengths},
    {"router: slug bytes", test_slug_bytes},
    {"router: the paths a shared mount answers", test_owned},
    {NULL, NULL}
};

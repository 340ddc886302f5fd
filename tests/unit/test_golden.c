/*
 * test_golden.c - the real templates in templates/, rendered by the engine
 * from values computed with the formulas of docs/CONTRACT.md section 1, against the
 * reference pages in tests/golden/, byte for byte.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "compute.h"
#include "fields.h"
#include "harness.h"
#include "vals.h"
#include "template.h"

#ifndef TEMPLATES_DIR
#define TEMPLATES_DIR "../../templates"
#endif
#ifndef GOLDEN_DIR
#define GOLDEN_DIR "../golden"
#endif

/* ---- the seed of docs/CONTRACT.md section 1 ---- */

static const char *const author_names[10] = {
    "Ada Lovelace", "Alan Turing", "Zo\xc3\xab O'Brien", "Grace Hopper",
    "Edsger W. Dijkstra", "Barbara Liskov", "\xe6\x9d\x8e\xe4\xbc\x9f",
    "Donald Knuth", "Frances \"Fran\" Allen", "Ken & Dennis"
};

static const char *const titles[8] = {
    "Getting started", "Fish & Chips", "Why <b>bold</b> matters",
    "\"Quoted\" thoughts", "It's complicated", "Caf\xc3\xa9 society",
    "\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93 notes", "Plain words"
};

static const char *const readers[6] = {
    "Reader One", "Sam & Max", "J\xc3\xbcrgen", "<anon>", "O'Hara",
    "Quinn \"Q\""
};

static const char *const comment_texts[4] = {
    "Great post!", "I disagree & here is why.", "See <https://example.com>.",
    "Thanks \xe2\x80\x94 \"very\" helpful."
};

#define LOREM "Lorem ipsum dolor sit amet, consectetur adipiscing elit & " \
    "sed do <eiusmod> tempor. "

static const char *
tag_name(t_arena *a, int t)
{
    switch (t) {
    case 5:
        return "C & C++";
    case 12:
        return "Z\xc3\xbcrich";
    case 21:
        return "<script>";
    case 30:
        return "\"Quoted\"";
    default:
        return t_arena_printf(a, "Topic %d", t);
    }
}

static int
comment_count(int p)
{
    return p % 2 ? p % 21 : 20 - ((p - 1) % 21);
}

/* Tag ids of post p, ascending; returns how many. */
static int
post_tags(int p, int ids[3])
{
    int n = p % 5 < 3 ? 3 : 2;
    int k;
    int i;

    for (k = 0; k < n; k++)
        ids[k] = ((7 * p + 11 * k) % 30) + 1;
    for (k = 1; k < n; k++)
        for (i = k; i > 0 && ids[i - 1] > ids[i]; i--) {
            int t = ids[i];

            ids[i] = ids[i - 1];
            ids[i - 1] = t;
        }
    return n;
}

static int
post_has_tag(int p, int t)
{
    int ids[3];
    int n = post_tags(p, ids);
    int k;

    for (k = 0; k < n; k++)
        if (ids[k] == t)
            return 1;
    return 0;
}

/* published_at of post p plus extra minutes, as "YYYY-MM-DD HH:MM" UTC. */
static const char *
date_of(t_arena *a, int p, int minutes)
{
    time_t t = (time_t) 1735689600 + (time_t) (p - 1) * 6 * 3600
        + minutes * 60;
    struct tm tm;
    char *s = t_arena_alloc(a, 17);

    gmtime_r(&t, &tm);
    strftime(s, 17, "%Y-%m-%d %H:%M", &tm);
    return s;
}

static const char *
comments_label(t_arena *a, int n)
{
    return n == 1 ? "1 comment" : t_arena_printf(a, "%d comments", n);
}

/* ---- frames ---- */


static blog_val *
vals_new(t_arena *a, uint32_t n)
{
    blog_val *v = t_arena_alloc(a, n * sizeof(*v));

    memset(v, 0, n * sizeof(*v));
    return v;
}

static blog_val
tag_list(t_arena *a, int p)
{
    int ids[3];
    int n = post_tags(p, ids);
    blog_frame *items = t_arena_alloc(a, (size_t) n * sizeof(*items));
    int k;

    for (k = 0; k < n; k++) {
        blog_val *v = vals_new(a, 2);

        v[0] = S(t_arena_printf(a, "tag-%d", ids[k]));
        v[1] = S(tag_name(a, ids[k]));
        items[k].vals = v;
        items[k].first = F_TAG_SLUG;
        items[k].count = 2;
    }
    return L(items, (uint32_t) n);
}

/* The post card values of post p, as one list item. */
static void
card_frame(t_arena *a, int p, blog_frame *f)
{
    blog_val *v = vals_new(a, F_SUMMARY - F_SLUG + 1);

    v[F_SLUG - F_SLUG] = S(t_arena_printf(a, "post-%d", p));
    v[F_TITLE - F_SLUG] = S(t_arena_printf(a, "Post %d: %s", p,
                                           titles[p % 8]));
    v[F_AUTHOR - F_SLUG] = S(author_names[p % 10]);
    v[F_DATE - F_SLUG] = S(date_of(a, p, 0));
    v[F_COMMENTS_LABEL - F_SLUG] = S(comments_label(a, comment_count(p)));
    v[F_TAGS - F_SLUG] = tag_list(a, p);
    v[F_SUMMARY - F_SLUG] = S(t_arena_printf(a, "A short summary of post "
                                             "%d.", p));
    f->vals = v;
    f->first = F_SLUG;
    f->count = F_SUMMARY - F_SLUG + 1;
}

static blog_frame *
root_frame(t_arena *a, const char *title, const char *base)
{
    blog_frame *f = t_arena_alloc(a, sizeof(*f));
    blog_val *v = vals_new(a, F_COUNT);

    v[F_PAGE_TITLE] = S(title);
    v[F_BASE] = S(base);
    f->vals = v;
    f->first = 0;
    f->count = F_COUNT;
    return f;
}

static blog_frame *
index_page(t_arena *a, const char *base)
{
    blog_frame *root = root_frame(a, "Latest posts", base);
    blog_frame *cards = t_arena_alloc(a, 20 * sizeof(*cards));
    int i;

    for (i = 0; i < 20; i++)
        card_frame(a, 1000 - i, &cards[i]);
    ((blog_val *) root->vals)[F_POSTS] = L(cards, 20);
    return root;
}

static blog_frame *
tag_page(t_arena *a, int t)
{
    const char *name = tag_name(a, t);
    blog_frame *root = root_frame(a, t_arena_printf(a, "Posts tagged %s",
                                                    name), "");
    blog_frame *cards = t_arena_alloc(a, 1000 * sizeof(*cards));
    blog_val *v = (blog_val *) root->vals;
    uint32_t n = 0;
    int p;

    for (p = 1000; p >= 1; p--)
        if (post_has_tag(p, t))
            card_frame(a, p, &cards[n++]);
    v[F_HEADING] = S(name);
    v[F_POSTS] = L(cards, n);
    return root;
}

static blog_frame *
post_page(t_arena *a, int p)
{
    const char *title = t_arena_printf(a, "Post %d: %s", p, titles[p % 8]);
    blog_frame *root = root_frame(a, title, "");
    blog_val *v = (blog_val *) root->vals;
    int nc = comment_count(p);
    blog_frame *comments = t_arena_alloc(a, (size_t) (nc + 1)
                                         * sizeof(*comments));
    size_t blen;
    char *body;
    int k;

    v[F_SLUG] = S(t_arena_printf(a, "post-%d", p));
    v[F_TITLE] = S(title);
    v[F_AUTHOR] = S(author_names[p % 10]);
    v[F_DATE] = S(date_of(a, p, 0));
    v[F_COMMENTS_LABEL] = S(comments_label(a, nc));
    v[F_TAGS] = tag_list(a, p);
    body = t_arena_printf(a, "Body of post %d. ", p);
    blen = strlen(body);
    for (k = 0; k < 5 + p % 10; k++)
        body = t_arena_printf(a, "%s%s", body, LOREM);
    CHECK(strlen(body) == blen + (size_t) (5 + p % 10) * strlen(LOREM));
    v[F_BODY] = S(body);
    for (k = 1; k <= nc; k++) {
        blog_val *cv = vals_new(a, 3);

        cv[0] = S(readers[(p + k) % 6]);
        cv[1] = S(date_of(a, p, k));
        cv[2] = S(t_arena_printf(a, "Comment %d on post %d: %s", k, p,
                                 comment_texts[k % 4]));
        comments[k - 1].vals = cv;
        comments[k - 1].first = F_COMMENT_AUTHOR;
        comments[k - 1].count = 3;
    }
    v[F_COMMENTS] = L(comments, (uint32_t) nc);
    return root;
}

/* ---- rendering and comparing ---- */

static char *
render(t_arena *a, const char *page, const blog_frame *root, size_t *len)
{
    blog_tpl_env env = {TEMPLATES_DIR, blog_fields, F_COUNT, t_arena_alloc, a};
    char err[512] = "";
    blog_tpl *tpl = blog_tpl_load(&env, "layout", page, err, sizeof(err));

    if (tpl == NULL) {
        fprintf(stderr, "  %s\n", err);
        return NULL;
    }
    return blog_tpl_render(tpl, root, t_arena_alloc, a, len);
}

static void
expect_golden(t_arena *a, const char *page, const blog_frame *root,
              const char *golden)
{
    char path[512];
    size_t glen = 0;
    size_t len = 0;
    char *want;
    char *got;

    snprintf(path, sizeof(path), "%s/%s", GOLDEN_DIR, golden);
    want = t_read_file(a, path, &glen);
    if (want == NULL)
        fprintf(stderr, "  cannot read %s\n", path);
    CHECK(want != NULL);
    got = render(a, page, root, &len);
    CHECK(got != NULL);
    if (want && got) {
        if (len != glen || memcmp(got, want, len) != 0)
            fprintf(stderr, "  %s differs:\n", golden);
        CHECK_MEM(got, len, want, glen);
    }
}

static void
test_golden_posts(void)
{
    static const int posts[] = {1, 2, 21, 31, 1000};
    size_t i;

    for (i = 0; i < sizeof(posts) / sizeof(posts[0]); i++) {
        t_arena *a = t_arena_new();
        char name[32];

        snprintf(name, sizeof(name), "post-%d.html", posts[i]);
        expect_golden(a, "post", post_page(a, posts[i]), name);
        t_arena_free(a);
    }
}

static void
test_golden_index(void)
{
    t_arena *a = t_arena_new();

    expect_golden(a, "index", index_page(a, ""), "index.html");
    t_arena_free(a);
}

static void
test_golden_tags(void)
{
    static const int tags[] = {5, 7, 21};
    size_t i;

    for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
        t_arena *a = t_arena_new();
        char name[32];

        snprintf(name, sizeof(name), "tag-%d.html", tags[i]);
        expect_golden(a, "tag", tag_page(a, tags[i]), name);
        t_arena_free(a);
    }
}

static void
test_golden_compute(void)
{
    t_arena *a = t_arena_new();
    blog_frame *root = root_frame(a, "Compute", "");
    blog_val *v = (blog_val *) root->vals;
    uint32_t limit = 20000;

    v[F_LIMIT] = S(t_arena_printf(a, "%u", limit));
    v[F_SUM] = S(t_arena_printf(a, "%llu", (unsigned long long)
                                blog_sum_primes_below(limit)));
    expect_golden(a, "compute", root, "compute.html");
    t_arena_free(a);
}

static void
test_golden_not_found(void)
{
    t_arena *a = t_arena_new();

    expect_golden(a, "not_found", root_frame(a, "Not found", ""),
                  "not-found.html");
    t_arena_free(a);
}

static void
test_unavailable(void)
{
    /* no reference page: docs/CONTRACT.md section 5's layout around its one line */
    t_arena *a = t_arena_new();
    size_t len = 0;
    char *got = render(a, "unavailable",
                       root_frame(a, "Service unavailable", ""), &len);

    CHECK_STR(got, len,
              "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
              "<meta charset=\"utf-8\">\n"
              "<title>Service unavailable \xc2\xb7 Blog</title>\n"
              "</head>\n<body>\n<header><a href=\"/\">Blog</a></header>\n"
              "<main>\n<h1>Service unavailable</h1>\n</main>\n</body>\n"
              "</html>\n");
    t_arena_free(a);
}

static void
test_mount_prefix(void)
{
    /* under a mount prefix every link carries it, and nothing else moves */
    t_arena *a = t_arena_new();
    size_t len0 = 0;
    size_t len1 = 0;
    char *plain = render(a, "index", index_page(a, ""), &len0);
    char *mounted = render(a, "index", index_page(a, "/blog"), &len1);
    /* 1 header link + 20 post links + 2 or 3 tag links per card */
    size_t links = 1 + 20;
    int p;

    for (p = 981; p <= 1000; p++)
        links += p % 5 < 3 ? 3 : 2;
    CHECK(plain != NULL && mounted != NULL);
    CHECK(len1 == len0 + links * strlen("/blog"));
    CHECK(mounted && strstr(mounted, "<header><a href=\"/blog/\">Blog</a>"));
    CHECK(mounted && strstr(mounted, "<a href=\"/blog/post/post-1000\">"));
    CHECK(mounted && strstr(mounted, "<a href=\"/blog/tag/tag-22\">"));
    t_arena_free(a);
}

static void
test_tag_page_sizes(void)
{
    /* every tag page renders, with one card per post carrying the tag and
     * the size of the reference page tests/golden/tag-7.html (34 123 bytes) */
    int t;

    for (t = 1; t <= 30; t++) {
        t_arena *a = t_arena_new();
        blog_frame *root = tag_page(a, t);
        size_t len = 0;
        char *out = render(a, "tag", root, &len);
        uint32_t cards = root->vals[F_POSTS].len;
        size_t n = 0;
        const char *s = out;

        CHECK(out != NULL);
        while (s && (s = memmem(s, len - (size_t) (s - out), "<article>",
                                9)) != NULL) {
            n++;
            s += 9;
        }
        CHECK(n == cards && cards > 0);
        if (t == 7)
            CHECK(len == 34123);
        t_arena_free(a);
    }
}

const t_case t_golden_cases[] = {
    {"golden: post-1, post-2, post-21, post-31, post-1000", test_golden_posts},
    {"golden: index", test_golden_index},
    {"golden: tag-5, tag-7, tag-21", test_golden_tags},
    {"golden: compute", test_golden_compute},
    {"golden: not found", test_golden_not_found},
    {"golden: service unavailable", test_unavailable},
    {"golden: links under a mount prefix", test_mount_prefix},
    {"golden: every tag page", test_tag_page_sizes},
    {NULL, NULL}
};

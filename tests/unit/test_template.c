/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_template.c - the template engine: syntax, data model, standalone
 * lines, partials, file loading and compile errors.
 */
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "vals.h"
#include "core/template.h"
#include "httpd/tplfiles.h"

enum
{ A, B, LIST, X, Y, INNER, Z, NFIELDS };

static const char *const fields[NFIELDS] = {
    "a", "b", "list", "x", "y", "inner", "z"
};


static blog_tpl_env
env_for(t_arena *ar)
{
    blog_tpl_env env = {fields, NFIELDS, t_arena_alloc, ar};

    return env;
}

/* Partials from a NULL-terminated {name, source} table. */
static int
table_partial(void *ctx, const char *name, const char **src, size_t *len,
              const char **srcname, char *why, size_t whylen)
{
    const char *const *t = ctx;

    (void) why;
    (void) whylen;
    for (; t && t[0]; t += 2)
        if (strcmp(t[0], name) == 0) {
            *src = t[1];
            *len = strlen(t[1]);
            *srcname = t[0];
            return 0;
        }
    return -1;
}

static blog_tpl *
compile(t_arena *ar, const char *src, const char *const *partials, char *err)
{
    blog_tpl_env env = env_for(ar);

    return blog_tpl_compile(&env, src, strlen(src), "t.html", table_partial,
                            (void *) partials, err, 256);
}

typedef struct counted
{
    t_arena    *ar;
    int         calls;
} counted;

static void *
counted_alloc(void *ctx, size_t size)
{
    counted    *c = ctx;

    c->calls++;
    return t_arena_alloc(c->ar, size);
}

/*
 * blog_tpl_render with every capacity from 0 to one past the
 * page's size: the same bytes each time, from one buffer when they fit
 * and from a second, exact one when they do not (each buffer is its own
 * malloc, so ASan sees a write past a capacity).
 */
static void
expect_within(const blog_tpl *tpl, const blog_frame *root, const char *want)
{
    size_t      wlen = strlen(want);
    size_t      cap;

    for (cap = 0; cap <= wlen + 1; cap++) {
        counted     c = {t_arena_new(), 0};
        size_t      len = 0;
        char       *out = blog_tpl_render(tpl, root, counted_alloc, &c, cap,
                                          &len);

        CHECK(out != NULL);
        CHECK_STR(out, len, want);
        CHECK(c.calls == (cap == 0 || cap >= wlen ? 1 : 2));
        t_arena_free(c.ar);
    }
}

/* Renders src with root and checks the bytes, whatever the capacity. */
static void
expect(const char *src, const char *const *partials, const blog_frame *root,
       const char *want)
{
    t_arena *ar = t_arena_new();
    char err[256];
    blog_tpl *tpl = compile(ar, src, partials, err);

    if (tpl == NULL) {
        fprintf(stderr, "  compile failed: %s\n", err);
        CHECK(tpl != NULL);
    } else
        expect_within(tpl, root, want);
    t_arena_free(ar);
}

/* expect() over a NULL-terminated {src, want} table. */
static void
expect_all(const char *const *t, const char *const *partials,
           const blog_frame *root)
{
    for (; t[0] != NULL; t += 2)
        expect(t[0], partials, root, t[1]);
}

/* Compiles src and checks the exact error message. */
static void
expect_error(const char *src, const char *const *partials, const char *want)
{
    t_arena *ar = t_arena_new();
    char err[256] = "untouched";
    blog_tpl *tpl = compile(ar, src, partials, err);

    CHECK(tpl == NULL);
    CHECK_STR(err, strlen(err), want);
    t_arena_free(ar);
}

/* A root frame over every field, and a three-item list. */
typedef struct fixture
{
    blog_val    root_vals[NFIELDS];
    blog_frame  root;
    blog_val    item_vals[3][3];    /* x, y, inner */
    blog_frame  items[3];
    blog_val    inner_vals[2][1];   /* z */
    blog_frame  inner[2];
} fixture;

static void
fixture_init(fixture *f)
{
    static const char *const xs[3] = {"1", "2", "<3>"};
    int i;

    memset(f, 0, sizeof(*f));
    f->root_vals[A] = S("A&");
    f->root_vals[B] = S("");
    f->root_vals[X] = S("root-x");
    f->root_vals[LIST] = L(f->items, 3);
    f->root.vals = f->root_vals;
    f->root.first = 0;
    f->root.count = NFIELDS;
    for (i = 0; i < 2; i++) {
        f->inner_vals[i][0] = S(i ? "z1" : "z0");
        f->inner[i].vals = f->inner_vals[i];
        f->inner[i].first = Z;
        f->inner[i].count = 1;
    }
    for (i = 0; i < 3; i++) {
        f->item_vals[i][0] = S(xs[i]);
        f->item_vals[i][1] = S(i == 1 ? "" : "y");
        f->item_vals[i][2] = L(f->inner, i == 2 ? 2 : 0);
        f->items[i].vals = f->item_vals[i];
        f->items[i].first = X;
        f->items[i].count = 3;
    }
}

static void
test_text_and_values(void)
{
    static const char *const cases[] = {
        "", "",
        "plain <b>text</b> & 'quotes'\n", "plain <b>text</b> & 'quotes'\n",
        "[{{a}}]", "[A&amp;]",
        "[{{ a }}]", "[A&amp;]",
        "[{{{a}}}]", "[A&]",
        "[{{& a}}]", "[A&]",
        "[{{b}}]", "[]",
        "[{{y}}]", "[]",                /* unset */
        "[{{list}}]", "[]",             /* a list is no text */
        "{ {a} } {{a}}}", "{ {a} } A&amp;}",
        "a{{! a comment }}b", "ab",
        "a{{!\nmulti-line\n}}b", "ab",
        NULL
    };
    fixture f;

    fixture_init(&f);
    expect_all(cases, NULL, &f.root);
    expect("[{{a}}]", NULL, NULL, "[]");        /* no data at all */
}

static void
test_sections(void)
{
    static const char *const cases[] = {
        "{{#list}}[{{x}}]{{/list}}", "[1][2][&lt;3&gt;]",
        "{{#a}}yes {{a}}{{/a}}", "yes A&amp;",
        "{{#b}}no{{/b}}", "",
        "{{#y}}no{{/y}}", "",
        "{{#list}}{{#y}}y{{/y}}{{^y}}-{{/y}}{{/list}}", "y-y",
        "{{^a}}no{{/a}}", "",
        "{{^b}}empty{{/b}}", "empty",
        "{{^y}}unset{{/y}}", "unset",
        "{{^list}}no{{/list}}", "",
        "{{#list}}{{^inner}}none{{/inner}}{{/list}}", "nonenone",
        NULL
    };
    fixture f;

    fixture_init(&f);
    expect_all(cases, NULL, &f.root);
    f.root_vals[LIST] = L(f.items, 0);
    expect("{{#list}}no{{/list}}{{^list}}empty list{{/list}}", NULL, &f.root,
           "empty list");
}

static void
test_lookup(void)
{
    fixture f;

    fixture_init(&f);
    /* inner frames shadow outer ones; names not in them come from outside */
    expect("{{x}}:{{#list}}{{x}}{{a}},{{/list}}", NULL, &f.root,
           "root-x:1A&amp;,2A&amp;,&lt;3&gt;A&amp;,");
    expect("{{#list}}{{#inner}}{{z}}{{x}}{{a}}|{{/inner}}{{/list}}", NULL,
           &f.root, "z0&lt;3&gt;A&amp;|z1&lt;3&gt;A&amp;|");
    /* an UNSET value in an item falls through to the enclosing frame */
    f.item_vals[0][0].kind = BLOG_VAL_UNSET;
    expect("{{#list}}{{x}},{{/list}}", NULL, &f.root, "root-x,2,&lt;3&gt;,");
    /* a root frame that starts past field 0 */
    {
        blog_val v[2] = {S("xx"), S("yy")};
        blog_frame r = {v, X, 2};

        expect("{{a}}{{x}}{{y}}{{z}}", NULL, &r, "xxyy");
    }
}

static void
test_standalone(void)
{
    static const char *const cases[] = {
        "x\n{{#list}}\n[{{x}}]\n{{/list}}\ny\n",
        "x\n[1]\n[2]\n[&lt;3&gt;]\ny\n",
        "x\n \t{{#list}} \t\n{{x}}\n  {{/list}}\ny\n",
        "x\n1\n2\n&lt;3&gt;\ny\n",
        "x\r\n{{#list}}\r\n{{x}}\r\n{{/list}}\r\n",
        "x\r\n1\r\n2\r\n&lt;3&gt;\r\n",
        "{{! first line }}\nbody\n", "body\n",
        "body\n{{! last line, no newline }}", "body\n",
        "  {{^b}}\nempty\n  {{/b}}\n", "empty\n",
        /* not standalone: other text or tags on the line */
        "a {{#list}}{{x}}{{/list}} b\n", "a 12&lt;3&gt; b\n",
        "{{#list}}{{/list}}\n", "\n",
        "{{#list}} x\n{{/list}}", " x\n x\n x\n",
        "x {{! c }}\n", "x \n",
        /* a value tag is never standalone, even when empty */
        "{{b}}\nx\n", "\nx\n",
        "  {{b}}  \n", "    \n",
        NULL
    };
    fixture f;

    fixture_init(&f);
    expect_all(cases, NULL, &f.root);
}

static void
test_partials(void)
{
    static const char *const parts[] = {
        "p", "P{{a}}",
        "line", "L{{x}}\n",
        "outer", "<{{> p}}|{{> line}}>",
        NULL
    };
    static const char *const cases[] = {
        "<{{> p}}>", "<PA&amp;>",
        "<{{>p}}>", "<PA&amp;>",
        "x\n{{> line}}\ny\n", "x\nLroot-x\ny\n",
        "x\n  {{> line}}  \ny\n", "x\nLroot-x\ny\n",
        "{{#list}}\n{{> line}}\n{{/list}}\n", "L1\nL2\nL&lt;3&gt;\n",
        "{{> outer}}", "<PA&amp;|Lroot-x\n>",
        "{{> p}}{{> p}}", "PA&amp;PA&amp;",
        NULL
    };
    fixture f;

    fixture_init(&f);
    expect_all(cases, parts, &f.root);
}

static void
test_deep_nesting(void)
{
    char src[16 * 18 + 16 * 10 + 8] = "";
    blog_val rv[NFIELDS];
    blog_val iv[2][3];
    blog_frame items[2];
    blog_frame root;
    t_arena *ar = t_arena_new();
    char err[256];
    blog_tpl *tpl;
    int i;

    /* 16 levels of the same two-item list: 2^16 renderings of {{x}} */
    for (i = 0; i < 16; i++)
        strcat(src, "{{#list}}");
    strcat(src, "{{x}}");
    for (i = 0; i < 16; i++)
        strcat(src, "{{/list}}");
    memset(rv, 0, sizeof(rv));
    memset(iv, 0, sizeof(iv));
    for (i = 0; i < 2; i++) {
        iv[i][0] = S(i ? "b" : "&");
        items[i].vals = iv[i];
        items[i].first = X;
        items[i].count = 3;
    }
    rv[LIST] = L(items, 2);
    root.vals = rv;
    root.first = 0;
    root.count = NFIELDS;
    tpl = compile(ar, src, NULL, err);
    CHECK(tpl != NULL);
    if (tpl) {
        size_t len;
        char *out = blog_tpl_render(tpl, &root, t_arena_alloc, ar, 0, &len);

        CHECK(out != NULL);
        /* half the leaves are "&amp;" (5 bytes), half "b" */
        CHECK(len == (size_t) 32768 * 5 + 32768);
        CHECK(out && memcmp(out, "&amp;b&amp;b", 12) == 0);
        CHECK(out && out[len - 1] == 'b');
    }
    t_arena_free(ar);
    /* one level more is refused */
    {
        char deeper[17 * 18 + 17 * 10 + 8] = "";

        for (i = 0; i < 17; i++)
            strcat(deeper, "{{#list}}");
        for (i = 0; i < 17; i++)
            strcat(deeper, "{{/list}}");
        expect_error(deeper, NULL,
                     "t.html:1: sections nested deeper than 16");
    }
}

static void
test_errors(void)
{
    static const char *const parts[] = {
        "bad", "ok\n{{bad}}",
        "self", "x{{> self}}",
        "c1", "{{> c2}}",
        "c2", "\n{{> c1}}",
        "closer", "{{/list}}",
        "opener", "{{#list}}",
        NULL
    };

    static const char *const cases[] = {
        "x\n{{nope}}", "t.html:2: unknown name 'nope'",
        "{{#nope}}{{/nope}}", "t.html:1: unknown name 'nope'",
        "{{#list}}\nabc\n", "t.html:1: unclosed section 'list'",
        "a\n{{#list}}\n{{^a}}\n{{/a}}\n", "t.html:2: unclosed section 'list'",
        "{{#list}}\n{{/a}}", "t.html:2: '{{/a}}' closes 'list' opened at line 1",
        "x\n\n{{/list}}", "t.html:3: '{{/list}}' closes no open section",
        "a\n\n{{> nope}}", "t.html:3: partial 'nope' not found",
        "{{> bad}}", "bad:2: unknown name 'bad'",
        "{{> self}}", "self:1: partial cycle: 'self' includes itself",
        "{{> c1}}", "c2:2: partial cycle: 'c1' includes itself",
        "{{#list}}{{> closer}}{{/list}}",
        "closer:1: '{{/list}}' closes no open section",
        "{{> opener}}{{/list}}", "opener:1: unclosed section 'list'",
        "ab\n c {{a", "t.html:2: unclosed tag (no '}}')",
        "{{{a}}", "t.html:1: unclosed tag (no '}}}')",
        "{{! never closed", "t.html:1: unclosed tag (no '}}')",
        "{{ }}", "t.html:1: empty tag",
        "{{#}}", "t.html:1: empty tag",
        "{{a b}}", "t.html:1: malformed name 'a b'",
        "{{.}}", "t.html:1: unknown name '.'",
        "{{=<% %>=}}", "t.html:1: changing delimiters is not supported",
        NULL
    };
    const char *const *t;

    for (t = cases; t[0] != NULL; t += 2)
        expect_error(t[0], parts, t[1]);
}

static void
test_error_buffer(void)
{
    t_arena *ar = t_arena_new();
    blog_tpl_env env = env_for(ar);
    char small[8];

    /* truncated, NUL-terminated, no overflow; a NULL buffer is fine */
    memset(small, 'x', sizeof(small));
    CHECK(blog_tpl_compile(&env, "{{nope}}", 8, "t.html", NULL, NULL,
                           small, sizeof(small)) == NULL);
    CHECK(strcmp(small, "t.html:") == 0);
    CHECK(blog_tpl_compile(&env, "{{nope}}", 8, "t.html", NULL, NULL,
                           NULL, 0) == NULL);
    CHECK(blog_tpl_compile(&env, "{{> p}}", 7, "t.html", NULL, NULL,
                           NULL, 0) == NULL);
    /* only len bytes are source: a tag past len is not seen */
    CHECK(blog_tpl_compile(&env, "ok{{nope}}", 2, "t.html", NULL, NULL,
                           NULL, 0) != NULL);
    t_arena_free(ar);
}

/* Files in a fresh folder, removed afterwards. */
typedef struct tmpdir
{
    char        path[64];
    const char *names[8];
    int         n;
} tmpdir;

static void
tmp_put(tmpdir *d, const char *name, const char *data)
{
    CHECK(t_write_file(d->path, name, data) == 0);
    d->names[d->n++] = name;
}

static void
tmp_remove(tmpdir *d)
{
    char p[128];
    int i;

    for (i = 0; i < d->n; i++) {
        snprintf(p, sizeof(p), "%s/%s", d->path, d->names[i]);
        unlink(p);
    }
    rmdir(d->path);
}

/* want_tpl with every "@" replaced by the folder's path. */
static void
expect_load_error(tmpdir *d, const char *name, const char *content,
                  const char *want_tpl)
{
    t_arena *ar = t_arena_new();
    blog_tpl_env env = env_for(ar);
    blog_tpl_files files = {d->path, t_arena_alloc, ar};
    char want[512];
    char err[512] = "";
    size_t n = 0;
    const char *s;

    for (s = want_tpl; *s && n + sizeof(d->path) + 1 < sizeof(want); s++) {
        if (*s == '@') {
            memcpy(want + n, d->path, strlen(d->path));
            n += strlen(d->path);
        } else
            want[n++] = *s;
    }
    want[n] = '\0';
    CHECK(blog_tpl_load(&env, name, content, blog_tpl_file_source, &files,
                        err, sizeof(err)) == NULL);
    CHECK_STR(err, strlen(err), want);
    t_arena_free(ar);
}

static void
test_load_files(void)
{
    tmpdir d = {"/tmp/blog-tpl-XXXXXX", {0}, 0};
    fixture f;
    const char *made;

    fixture_init(&f);
    made = mkdtemp(d.path);
    CHECK(made != NULL);
    if (made == NULL)
        return;
    tmp_put(&d, "layout.html", "{{! the frame }}\n<main>\n{{> content}}\n"
            "</main>\n");
    tmp_put(&d, "page.html", "<h1>{{a}}</h1>\n{{#list}}\n{{> item}}\n"
            "{{/list}}\n");
    tmp_put(&d, "item.html", "<i>{{x}}</i>\n");
    tmp_put(&d, "broken.html", "line 1\nline 2 {{#list}}\n");
    tmp_put(&d, "loop.html", "{{> layout}}\n");
    tmp_put(&d, "escape.html", "{{> ../etc/passwd}}\n");
    {
        t_arena *ar = t_arena_new();
        blog_tpl_env env = env_for(ar);
        blog_tpl_files files = {d.path, t_arena_alloc, ar};
        char err[512] = "";
        blog_tpl *tpl = blog_tpl_load(&env, "layout", "page",
                                      blog_tpl_file_source, &files, err,
                                      sizeof(err));

        CHECK(tpl != NULL);
        if (tpl) {
            size_t len;
            char *out = blog_tpl_render(tpl, &f.root, t_arena_alloc, ar, 0,
                                        &len);

            CHECK_STR(out, len, "<main>\n<h1>A&amp;</h1>\n<i>1</i>\n"
                      "<i>2</i>\n<i>&lt;3&gt;</i>\n</main>\n");
        } else
            fprintf(stderr, "  %s\n", err);
        /* a page without the layout */
        tpl = blog_tpl_load(&env, "item", NULL, blog_tpl_file_source,
                            &files, err, sizeof(err));
        CHECK(tpl != NULL);
        t_arena_free(ar);
    }
    expect_load_error(&d, "nope", NULL,
                      "@/nope.html: No such file or directory");
    expect_load_error(&d, "layout", NULL,
                      "@/layout.html:3: partial 'content' not found: "
                      "this template wraps no page");
    expect_load_error(&d, "layout", "missing",
                      "@/layout.html:3: partial 'content' not found: "
                      "@/missing.html: No such file or directory");
    expect_load_error(&d, "layout", "broken",
                      "@/broken.html:2: unclosed section 'list'");
    expect_load_error(&d, "layout", "loop",
                      "@/loop.html:1: partial cycle: 'layout' includes "
                      "itself");
    expect_load_error(&d, "escape", NULL,
                      "@/escape.html:1: partial '../etc/passwd' not found: "
                      "invalid file name");
    tmp_remove(&d);
}

const t_case t_template_cases[] = {
    {"template: text, values, escaping, comments", test_text_and_values},
    {"template: sections and inverted sections", test_sections},
    {"template: lookup from the innermost frame out", test_lookup},
    {"template: standalone lines", test_standalone},
    {"template: partials", test_partials},
    {"template: 16 nested sections, not 17", test_deep_nesting},
    {"template: compile errors name file and line", test_errors},
    {"template: error buffer bounds", test_error_buffer},
    {"template: loading files, content partial, file errors",
     test_load_files},
    {NULL, NULL}
};

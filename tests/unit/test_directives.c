/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_directives.c - the directives' documentation says what
 * mod_blog/httpd/directives.h declares: docs/OPERATIONS.md's table and
 * man/mod_blog.7's list are exactly what t_directives_block() makes from
 * it (`make -C tests/unit docs` rewrites them), conf/blog.conf names every
 * directive and each of its commented-out defaults is the real default,
 * and no example in them sets a directive that does not exist.
 */
#include <ctype.h>
#include <stdlib.h>

#include "httpd/directives.h"
#include "harness.h"

typedef struct t_directive
{
    const char *name;
    int where;
    const char *def;
    const char *syntax;
    const char *help;
} t_directive;

#define T_DIRECTIVE(id, name, field, type, where, def, lo, hi, syntax, help) \
    {name, BLOG_DW_##where, def, syntax, help},
static const t_directive directives[BLOG_NDIRECTIVES] = {
    BLOG_DIRECTIVES(T_DIRECTIVE)
};

/* The markers around the generated text, per file. */
static const char *const readme_begin =
    "<!-- directives: generated from mod_blog/httpd/directives.h by "
    "`make -C tests/unit docs` -->\n";
static const char *const readme_end = "<!-- /directives -->\n";
static const char *const man_begin =
    ".\\\" directives: generated from mod_blog/httpd/directives.h by "
    "make -C tests/unit docs\n";
static const char *const man_end = ".\\\" /directives\n";

static char *
append(t_arena *a, char *s, const char *add)
{
    return t_arena_printf(a, "%s%s", s, add);
}

/*
 * s with prefix written before each ch: a table cell of GitHub's Markdown
 * writes "|" as "\|" even inside backquotes, a quoted roff argument '"' as
 * '""'.
 */
static const char *
escaped(t_arena *a, const char *s, char ch, char prefix)
{
    char *d = t_arena_alloc(a, strlen(s) * 2 + 1);
    char *q = d;

    for (; *s; s++) {
        if (*s == ch)
            *q++ = prefix;
        *q++ = *s;
    }
    *q = '\0';
    return d;
}

/* The generated block for "readme" or "man", markers included. */
char *
t_directives_block(t_arena *a, const char *kind)
{
    int man = strcmp(kind, "man") == 0;
    char *s = t_arena_strdup(a, man ? man_begin : readme_begin);
    int i;

    if (!man)
        s = append(a, s, "| directive | default | context | meaning |\n"
                   "|---|---|---|---|\n");
    for (i = 0; i < BLOG_NDIRECTIVES; i++) {
        const t_directive *d = &directives[i];
        /* Apache's own words for a directive's context */
        const char *where = d->where == BLOG_DW_VHOST
            ? "server config, virtual host" : "server config";

        if (man)
            s = append(a, s, t_arena_printf(
                           a, ".TP\n.B \"%s %s\"\n%c%s.\nDefault: %s%s%s.\n"
                           "Context: %s.\n", d->name,
                           escaped(a, d->syntax, '"', '"'),
                           toupper((unsigned char) d->help[0]), d->help + 1,
                           d->def ? "\\fB" : "", d->def ? d->def : "unset",
                           d->def ? "\\fR" : "", where));
        else
            s = append(a, s, t_arena_printf(
                           a, "| `%s %s` | %s%s%s | %s | %s |\n", d->name,
                           escaped(a, d->syntax, '|', '\\'),
                           d->def ? "`" : "", d->def ? d->def : "unset",
                           d->def ? "`" : "", where,
                           escaped(a, d->help, '|', '\\')));
    }
    return append(a, s, man ? man_end : readme_end);
}

/* The text of path from begin to end (markers included), or NULL. */
static char *
section(t_arena *a, const char *text, const char *begin, const char *end)
{
    const char *b = strstr(text, begin);
    const char *e = b ? strstr(b, end) : NULL;
    size_t n;
    char *s;

    if (e == NULL)
        return NULL;
    n = (size_t) (e - b) + strlen(end);
    s = t_arena_alloc(a, n + 1);
    memcpy(s, b, n);
    s[n] = '\0';
    return s;
}

static char *
tree_file(t_arena *a, const char *rel)
{
    size_t len;
    char *s = t_read_file(a, t_arena_printf(a, "%s/%s", TREE_DIR, rel), &len);

    if (s == NULL)
        fprintf(stderr, "  cannot read %s/%s\n", TREE_DIR, rel);
    return s;
}

static void
expect_block(const char *rel, const char *kind, const char *begin,
             const char *end)
{
    t_arena *a = t_arena_new();
    char *text = tree_file(a, rel);
    char *want = t_directives_block(a, kind);
    char *got = text ? section(a, text, begin, end) : NULL;

    if (text != NULL && got == NULL)
        fprintf(stderr, "  %s has no generated directives block\n", rel);
    CHECK(got != NULL);
    if (got != NULL) {
        if (strcmp(got, want) != 0)
            fprintf(stderr, "  %s disagrees with mod_blog/httpd/directives.h: "
                    "run make -C tests/unit docs\n", rel);
        CHECK_STR(got, strlen(got), want);
    }
    t_arena_free(a);
}

static void
test_readme_table(void)
{
    expect_block("docs/OPERATIONS.md", "readme", readme_begin, readme_end);
}

static void
test_man_page(void)
{
    expect_block("man/mod_blog.7", "man", man_begin, man_end);
}

static const t_directive *
find(const char *name, size_t len)
{
    int i;

    for (i = 0; i < BLOG_NDIRECTIVES; i++)
        if (strlen(directives[i].name) == len
            && strncmp(directives[i].name, name, len) == 0)
            return &directives[i];
    return NULL;
}

/*
 * Every line of the file that reads as a directive, "Blog<Upper>..." first
 * (after spaces and a '#') and then a space or nothing, names one: a
 * renamed or removed directive leaves no stale example.  ("BlogPoolOpen:
 * 8", mod_status's keys, is not a directive line.)
 */
static void
expect_known_names(const char *rel)
{
    t_arena *a = t_arena_new();
    char *text = tree_file(a, rel);
    const char *line = text;

    CHECK(text != NULL);
    while (line && *line) {
        const char *p = line;

        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#')
            p++;
        if (strncmp(p, "Blog", 4) == 0 && isupper((unsigned char) p[4])) {
            size_t n = 4;

            while (isalnum((unsigned char) p[n]))
                n++;
            if ((p[n] == ' ' || p[n] == '\n' || p[n] == '\0')
                && find(p, n) == NULL) {
                fprintf(stderr, "  %s names %.*s, which is no directive\n",
                        rel, (int) n, p);
                CHECK(0);
            }
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    t_arena_free(a);
}

static void
test_no_stale_names(void)
{
    expect_known_names("docs/OPERATIONS.md");
    expect_known_names("man/mod_blog.7");
    expect_known_names("conf/blog.conf");
    expect_known_names("conf/site-example.conf");
}

/*
 * conf/blog.conf: each directive appears, set or commented out; a
 * commented-out one shows its default, as Debian's own files do.
 */
static void
test_blog_conf(void)
{
    t_arena *a = t_arena_new();
    char *text = tree_file(a, "conf/blog.conf");
    int seen[BLOG_NDIRECTIVES] = {0};
    const char *line = text;
    int i;

    CHECK(text != NULL);
    while (line && *line) {
        const char *eol = strchr(line, '\n');
        const char *p = line;
        const char *name;
        const t_directive *d;
        size_t n;
        int commented = 0;

        if (eol == NULL)
            eol = line + strlen(line);
        while (p < eol && (*p == ' ' || *p == '\t'))
            p++;
        if (p < eol && *p == '#') {
            commented = 1;
            p++;
        }
        name = p;
        while (p < eol && isalnum((unsigned char) *p))
            p++;
        n = (size_t) (p - name);
        d = strncmp(name, "Blog", 4) == 0 ? find(name, n) : NULL;
        if (d != NULL && p < eol && *p == ' ') {
            const char *v = p + 1;
            size_t vlen = (size_t) (eol - v);

            seen[d - directives] = 1;
            /* a directive unset by default is shown with an example */
            if (commented && d->def != NULL
                && (strlen(d->def) != vlen
                    || strncmp(v, d->def, vlen) != 0)) {
                fprintf(stderr, "  conf/blog.conf: #%s %.*s, but the default "
                        "is %s\n", d->name, (int) vlen, v,
                        d->def ? d->def : "unset");
                CHECK(0);
            }
        }
        line = *eol ? eol + 1 : eol;
    }
    for (i = 0; i < BLOG_NDIRECTIVES; i++) {
        /* BlogMount and BlogFastPath belong in a site, not in blog.conf */
        if (directives[i].where == BLOG_DW_VHOST)
            continue;
        if (!seen[i])
            fprintf(stderr, "  conf/blog.conf does not mention %s\n",
                    directives[i].name);
        CHECK(seen[i]);
    }
    t_arena_free(a);
}

const t_case t_directives_cases[] = {
    {"directives: docs/OPERATIONS.md's table is generated from directives.h",
     test_readme_table},
    {"directives: man/mod_blog.7 is generated from directives.h",
     test_man_page},
    {"directives: conf/blog.conf shows every default as it is",
     test_blog_conf},
    {"directives: no example sets a directive that does not exist",
     test_no_stale_names},
    {NULL, NULL}
};

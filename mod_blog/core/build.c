/* SPDX-License-Identifier: Apache-2.0 */
/* build.c - values point into the rows; dates, labels, tag titles are made. */
#include "core/build.h"

#include "core/date.h"
#include "core/fields.h"

#include <string.h>

const char *const blog_fields[BLOG_F_COUNT] = {
    "page_title", "base", "posts", "heading", "limit", "sum", "body",
    "comments",
    "slug", "title", "author", "date", "comments_label", "tags", "summary",
    "tag_slug", "tag_name",
    "comment_author", "comment_body", "comment_date"
};

/* "-2147483648 comments" and its NUL */
#define LABEL_MAX   24
/* Per card: its date and its comment count label. */
#define CARD_SCRATCH (BLOG_DATE_LEN + LABEL_MAX)

/* The columns of pg_blog's page functions. */
enum
{
    C_SLUG, C_TITLE, C_AUTHOR, C_DATE, C_COUNT, C_TAG_SLUGS, C_TAG_NAMES,
    C_SUMMARY, C_BODY, C_COMMENT_AUTHORS, C_COMMENT_BODIES,
    C_COMMENT_TIMES, C_TAG_NAME, NCOLS
};

static const char *const col_names[NCOLS] = {
    "slug", "title", "author_name", "published_at", "comment_count",
    "tag_slugs", "tag_names", "summary", "body", "comment_authors",
    "comment_bodies", "comment_times", "tag_name"
};

#define COL(c) (1u << (c))
#define CARD_COLS (COL(C_SUMMARY + 1) - 1)     /* C_SLUG .. C_SUMMARY */
#define POST_COLS (COL(C_TITLE) | COL(C_AUTHOR) | COL(C_DATE) | COL(C_BODY) \
                   | COL(C_TAG_SLUGS) | COL(C_TAG_NAMES) \
                   | COL(C_COMMENT_AUTHORS) | COL(C_COMMENT_BODIES) \
                   | COL(C_COMMENT_TIMES))

/* A result set and the numbers of the columns a page reads in it. */
typedef struct cols
{
    const blog_rows *rs;
    int         at[NCOLS];
} cols;

static void *
b_alloc(blog_build *b, size_t n, size_t size)
{
    /* at least one element: a malloc of 0 bytes may return NULL */
    return b->alloc(b->alloc_ctx, size * (n ? n : 1));
}

static int
bad(blog_build *b, const char *column, int row)
{
    b->bad_column = column;
    b->bad_row = row;
    return -1;
}

static int
column_of(const blog_rows *rs, const char *name)
{
    int         c;

    for (c = 0; c < rs->ncols; c++) {
        if (strcmp(rs->names[c], name) == 0)
            return c;
    }
    return -1;
}

static int
cols_find(blog_build *b, const blog_rows *rs, unsigned mask, cols *cs)
{
    int         c;

    cs->rs = rs;
    for (c = 0; c < NCOLS; c++) {
        if ((mask & COL(c)) && (cs->at[c] = column_of(rs, col_names[c])) < 0)
            return bad(b, col_names[c], -1);
    }
    return 0;
}

/* A row out of range reads as NULL, as libpq's PQgetisnull says. */
static blog_cell
cell(const cols *cs, int row, int c)
{
    const blog_rows *rs = cs->rs;

    if (row < 0 || row >= rs->nrows)
        return (blog_cell) {NULL, 0};
    return rs->cells[(size_t) row * (size_t) rs->ncols + (size_t) cs->at[c]];
}

static void
val_str(blog_val *v, const char *s, size_t len)
{
    *v = (blog_val) {s, (uint32_t) len, BLOG_VAL_STR};
}

static void
root_init(blog_build *b, blog_val *vals, blog_frame *root,
          const char *title, size_t title_len)
{
    memset(vals, 0, sizeof(blog_val) * BLOG_F_COUNT);
    val_str(&vals[BLOG_F_BASE], b->base, b->base_len);
    val_str(&vals[BLOG_F_PAGE_TITLE], title, title_len);
    *root = (blog_frame) {vals, 0, BLOG_F_COUNT};
}

/*
 * The decimal digits of u at d; their count.  Not snprintf: glibc's
 * vfprintf took every worker's stack a page deeper on the pages that print
 * a count (docs/DECISIONS.md, "No printf on the request path").
 */
static size_t
put_decimal(char *d, uint64_t u)
{
    char        rev[20];        /* 18446744073709551615 */
    size_t      n = 0,
                i;

    do
        rev[n++] = (char) ('0' + u % 10);
    while ((u /= 10) != 0);
    for (i = 0; i < n; i++)
        d[i] = rev[n - 1 - i];
    return n;
}

static void
val_label(blog_val *v, char *d, int32_t n)
{
    static const char noun[] = " comments";
    size_t      len = 0;

    if (n < 0)
        d[len++] = '-';
    len += put_decimal(d + len, n < 0 ? -(int64_t) n : n);
    memcpy(d + len, noun, sizeof(noun) - 1);
    len += sizeof(noun) - 1 - (n == 1);
    val_str(v, d, len);
}

const blog_pageset *
blog_pageset_load(blog_tpl_source_fn source, void *source_ctx,
                  blog_alloc_fn alloc, void *alloc_ctx, char *err,
                  size_t errlen)
{
    blog_pageset *t = alloc(alloc_ctx, sizeof(*t));
    blog_tpl_env env = {blog_fields, BLOG_F_COUNT, alloc, alloc_ctx};
    void       *sc = source_ctx;

    if (t == NULL
        || !(t->index = blog_tpl_load(&env, "layout", "index", source, sc,
                                      err, errlen))
        || !(t->post = blog_tpl_load(&env, "layout", "post", source, sc,
                                     err, errlen))
        || !(t->tag = blog_tpl_load(&env, "layout", "tag", source, sc, err,
                                    errlen))
        || !(t->compute = blog_tpl_load(&env, "layout", "compute", source,
                                        sc, err, errlen))
        || !(t->not_found = blog_tpl_load(&env, "layout", "not_found",
                                          source, sc, err, errlen))
        || !(t->unavailable = blog_tpl_load(&env, "layout", "unavailable",
                                            source, sc, err, errlen)))
        return NULL;
    return t;
}

/* ---- Values ---- */

static int
get_text(blog_build *b, const cols *cs, int row, int c, blog_val *v)
{
    blog_cell   t = cell(cs, row, c);

    if (t.ptr == NULL || t.len < 0)
        return bad(b, col_names[c], row);
    val_str(v, t.ptr, (size_t) t.len);
    return 0;
}

/* A timestamptz of column c (in a cell or an array's element) as a date. */
static int
get_date(blog_build *b, blog_cell cl, int row, int c, char *buf, blog_val *v)
{
    int64_t     us;

    if (blog_dec_int8(cl, &us) != 0 || blog_format_date(us, buf) != 0)
        return bad(b, col_names[c], row);
    val_str(v, buf, BLOG_DATE_LEN);
    return 0;
}

/*
 * A list of one frame per element of n parallel arrays, columns c .. c +
 * n - 1 of row: element i of column c + j is field first + j of frame i.
 * Comment times are timestamptz, written as dates; the rest are text.
 */
static int
get_list(blog_build *b, const cols *cs, int row, int c, int n,
         uint32_t first, blog_val *v)
{
    blog_cell  *arr[3];
    uint32_t    len[3];
    blog_frame *items;
    blog_val   *vals;
    char       *dates;
    uint32_t    i;
    int         j;

    for (j = 0; j < n; j++) {
        if (blog_dec_array(cell(cs, row, c + j), c + j == C_COMMENT_TIMES
                           ? BLOG_OID_TIMESTAMPTZ : BLOG_OID_TEXT, b->alloc,
                           b->alloc_ctx, &arr[j], &len[j]) != 0
            || len[j] != len[0])
            return bad(b, col_names[c + j], row);
    }
    items = b_alloc(b, len[0], sizeof(blog_frame));
    vals = b_alloc(b, len[0], sizeof(blog_val) * (size_t) n);
    dates = c + n > C_COMMENT_TIMES ? b_alloc(b, len[0], BLOG_DATE_LEN) : NULL;
    if (items == NULL || vals == NULL
        || (c + n > C_COMMENT_TIMES && dates == NULL))
        return bad(b, col_names[c], row);
    for (i = 0; i < len[0]; i++) {
        blog_val   *iv = &vals[i * (uint32_t) n];

        for (j = 0; j < n; j++) {
            if (c + j != C_COMMENT_TIMES)
                val_str(&iv[j], arr[j][i].ptr, (size_t) arr[j][i].len);
            else if (get_date(b, arr[j][i], row, c + j,
                              dates + BLOG_DATE_LEN * i, &iv[j]) != 0)
                return -1;
        }
        items[i] = (blog_frame) {iv, first, (uint32_t) n};
    }
    *v = (blog_val) {items, len[0], BLOG_VAL_LIST};
    return 0;
}

/* What a card and a post's page both show, at v[F_x - off]. */
static int
get_post(blog_build *b, const cols *cs, int row, char *date, blog_val *v,
         int off)
{
    return get_text(b, cs, row, C_TITLE, &v[BLOG_F_TITLE - off]) != 0
        || get_text(b, cs, row, C_AUTHOR, &v[BLOG_F_AUTHOR - off]) != 0
        || get_date(b, cell(cs, row, C_DATE), row, C_DATE, date,
                    &v[BLOG_F_DATE - off]) != 0
        || get_list(b, cs, row, C_TAG_SLUGS, 2, BLOG_F_TAG_SLUG,
                    &v[BLOG_F_TAGS - off]) != 0 ? -1 : 0;
}

/* ---- Cards: the index and the tag page ---- */

static int
card_fill(blog_build *b, const cols *cs, int row, char *scratch,
          blog_frame *item)
{
    blog_val   *v = b_alloc(b, BLOG_CARD_COUNT, sizeof(blog_val));
    int32_t     n;

    if (v == NULL)
        return bad(b, col_names[C_SLUG], row);
    if (get_text(b, cs, row, C_SLUG, &v[BLOG_F_SLUG - BLOG_CARD_FIRST]) != 0
        || get_post(b, cs, row, scratch, v, BLOG_CARD_FIRST) != 0
        || get_text(b, cs, row, C_SUMMARY,
                    &v[BLOG_F_SUMMARY - BLOG_CARD_FIRST]) != 0)
        return -1;
    if (blog_dec_int4(cell(cs, row, C_COUNT), &n) != 0)
        return bad(b, col_names[C_COUNT], row);
    val_label(&v[BLOG_F_COMMENTS_LABEL - BLOG_CARD_FIRST],
              scratch + BLOG_DATE_LEN, n);
    *item = (blog_frame) {v, BLOG_CARD_FIRST, BLOG_CARD_COUNT};
    return 0;
}

/* Cards for rows [from, nrows), into the "posts" list of vals. */
static int
cards_fill(blog_build *b, const blog_rows *rs, int from, blog_val *vals)
{
    int         n = rs->nrows > from ? rs->nrows - from : 0;
    blog_frame *items = b_alloc(b, (size_t) n, sizeof(blog_frame));
    char       *scratch = b_alloc(b, (size_t) n, CARD_SCRATCH);
    cols        cs;
    int         i;

    if (items == NULL || scratch == NULL)
        return bad(b, col_names[C_SLUG], from);
    if (n > 0 && cols_find(b, rs, CARD_COLS, &cs) != 0)
        return -1;
    for (i = 0; i < n; i++) {
        if (card_fill(b, &cs, from + i, scratch + CARD_SCRATCH * i,
                      &items[i]) != 0)
            return -1;
    }
    vals[BLOG_F_POSTS] = (blog_val) {items, (uint32_t) n, BLOG_VAL_LIST};
    return 0;
}

/* ---- Pages ---- */

/* An eighth of room for the next page; past HINT_MAX, two passes. */
#define HINT_FOR(len) ((len) + (len) / 8)
#define HINT_MAX (256 * 1024)

static void
page_render(blog_build *b, const blog_tpl *tpl, const blog_frame *root,
            blog_page *out)
{
    size_t      cap = b->size_hint;
    size_t      len;
    char       *body = blog_tpl_render(tpl, root, b->alloc, b->alloc_ctx,
                                       cap, &len);

    if (body && len > cap && HINT_FOR(len) <= HINT_MAX)
        b->size_hint = HINT_FOR(len);
    if (body == NULL) {
        bad(b, "(rendering)", BLOG_BAD_RENDER);
        *out = *b->unavailable;
        return;
    }
    *out = (blog_page) {BLOG_STATUS_OK, body, len};
}

/* A page with a title and nothing else from outside. */
static int
build_simple(blog_build *b, const blog_tpl *tpl, const char *title,
             int status, blog_page *out)
{
    blog_val    vals[BLOG_F_COUNT];
    blog_frame  root;

    root_init(b, vals, &root, title, strlen(title));
    page_render(b, tpl, &root, out);
    out->status = status;
    return out->body ? 0 : -1;
}

int
blog_build_static(blog_build *b, blog_page *not_found, blog_page *unavailable)
{
    return build_simple(b, b->pages->not_found, "Not found",
                        BLOG_STATUS_NOT_FOUND, not_found) != 0
        || build_simple(b, b->pages->unavailable, "Service unavailable",
                        BLOG_STATUS_UNAVAILABLE, unavailable) != 0 ? -1 : 0;
}

void
blog_build_index(blog_build *b, const blog_rows *rs, blog_page *out)
{
    static const char title[] = "Latest posts";
    blog_val    vals[BLOG_F_COUNT];
    blog_frame  root;

    root_init(b, vals, &root, title, sizeof(title) - 1);
    if (cards_fill(b, rs, 0, vals) != 0)
        *out = *b->unavailable;
    else
        page_render(b, b->pages->index, &root, out);
}

void
blog_build_post(blog_build *b, const blog_rows *rs, blog_page *out)
{
    blog_val    vals[BLOG_F_COUNT];
    char        scratch[CARD_SCRATCH];
    blog_frame  root;
    cols        cs;

    if (rs->nrows == 0) {
        *out = *b->not_found;
        return;
    }
    root_init(b, vals, &root, "", 0);
    if (cols_find(b, rs, POST_COLS, &cs) != 0
        || get_post(b, &cs, 0, scratch, vals, 0) != 0
        || get_text(b, &cs, 0, C_BODY, &vals[BLOG_F_BODY]) != 0
        || get_list(b, &cs, 0, C_COMMENT_AUTHORS, 3, BLOG_F_COMMENT_AUTHOR,
                    &vals[BLOG_F_COMMENTS]) != 0) {
        *out = *b->unavailable;
        return;
    }
    vals[BLOG_F_PAGE_TITLE] = vals[BLOG_F_TITLE];
    val_label(&vals[BLOG_F_COMMENTS_LABEL], scratch + BLOG_DATE_LEN,
              (int32_t) vals[BLOG_F_COMMENTS].len);
    page_render(b, b->pages->post, &root, out);
}

void
blog_build_tag(blog_build *b, const blog_rows *rs, blog_page *out)
{
    static const char prefix[] = "Posts tagged ";
    blog_val    vals[BLOG_F_COUNT];
    blog_frame  root;
    cols        cs;
    int         from;
    char       *title;

    if (rs->nrows == 0) {
        *out = *b->not_found;
        return;
    }
    root_init(b, vals, &root, "", 0);
    if (cols_find(b, rs, COL(C_TAG_NAME) | COL(C_SLUG), &cs) != 0
        || get_text(b, &cs, 0, C_TAG_NAME, &vals[BLOG_F_HEADING]) != 0)
        goto unavailable;
    /* A tag without posts is one row with only its name. */
    from = cell(&cs, 0, C_SLUG).ptr == NULL ? 1 : 0;
    title = b_alloc(b, 1, sizeof(prefix) - 1 + vals[BLOG_F_HEADING].len);
    if (title == NULL || cards_fill(b, rs, from, vals) != 0)
        goto unavailable;
    memcpy(title, prefix, sizeof(prefix) - 1);
    memcpy(title + sizeof(prefix) - 1, vals[BLOG_F_HEADING].ptr,
           vals[BLOG_F_HEADING].len);
    val_str(&vals[BLOG_F_PAGE_TITLE], title,
            sizeof(prefix) - 1 + vals[BLOG_F_HEADING].len);
    page_render(b, b->pages->tag, &root, out);
    return;
  unavailable:
    *out = *b->unavailable;
}

void
blog_build_compute(blog_build *b, uint32_t limit, uint64_t sum, blog_page *out)
{
    static const char title[] = "Compute";
    blog_val    vals[BLOG_F_COUNT];
    blog_frame  root;
    char        limit_s[20];
    char        sum_s[20];
    /* Filled in statements of their own: passed beside the call that
     * fills them, cppcheck 2.17 (Debian 13) took them for uninitialised. */
    size_t      limit_len = put_decimal(limit_s, limit);
    size_t      sum_len = put_decimal(sum_s, sum);

    root_init(b, vals, &root, title, sizeof(title) - 1);
    val_str(&vals[BLOG_F_LIMIT], limit_s, limit_len);
    val_str(&vals[BLOG_F_SUM], sum_s, sum_len);
    page_render(b, b->pages->compute, &root, out);
}

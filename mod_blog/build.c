/*
 * build.c - one function per page, from rows to bytes.  Values point into
 * the rows; only dates, comment counts and the tag title are made here.
 */
#include "build.h"

#include "date.h"
#include "fields.h"

#include <stdio.h>
#include <string.h>

/* "-2147483648 comments" and its NUL */
#define LABEL_MAX   24
/* Per card: its date and its comment count label. */
#define CARD_SCRATCH (BLOG_DATE_LEN + LABEL_MAX)

typedef struct col
{
    const char *name;
    int         i;
} col;

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
col_find(blog_build *b, const blog_rows *rs, const char *name, col *c)
{
    c->name = name;
    c->i = rs->column(rs->src, name);
    return c->i < 0 ? bad(b, name, -1) : 0;
}

static blog_cell
cell(const blog_rows *rs, int row, const col *c)
{
    return rs->cell(rs->src, row, c->i);
}

static void
val_str(blog_val *v, const char *s, size_t len)
{
    v->ptr = s;
    v->len = (uint32_t) len;
    v->kind = BLOG_VAL_STR;
}

static void
val_list(blog_val *v, const blog_frame *items, uint32_t n)
{
    v->ptr = items;
    v->len = n;
    v->kind = BLOG_VAL_LIST;
}

static void
root_init(blog_build *b, blog_val *vals, blog_frame *root,
          const char *title, size_t title_len)
{
    memset(vals, 0, sizeof(blog_val) * F_COUNT);
    val_str(&vals[F_BASE], b->base, b->base_len);
    val_str(&vals[F_PAGE_TITLE], title, title_len);
    root->vals = vals;
    root->first = 0;
    root->count = F_COUNT;
}

static size_t
format_label(char *d, int32_t n)
{
    return (size_t) snprintf(d, LABEL_MAX, n == 1 ? "%d comment"
                             : "%d comments", (int) n);
}

/* ---- Values ---- */

static int
get_text(blog_build *b, const blog_rows *rs, int row, const col *c,
         blog_val *v)
{
    blog_bytes  t;

    if (blog_dec_text(cell(rs, row, c), &t) != 0)
        return bad(b, c->name, row);
    val_str(v, t.ptr, t.len);
    return 0;
}

static int
date_val(const char *bin, int len, char *buf, blog_val *v)
{
    blog_cell   cl = {bin, len};
    int64_t     us;

    if (blog_dec_int8(cl, &us) != 0 || blog_format_date(us, buf) != 0)
        return -1;
    val_str(v, buf, BLOG_DATE_LEN);
    return 0;
}

static int
get_date(blog_build *b, const blog_rows *rs, int row, const col *c,
         char *buf, blog_val *v)
{
    blog_cell   cl = cell(rs, row, c);

    if (date_val(cl.ptr, cl.len, buf, v) != 0)
        return bad(b, c->name, row);
    return 0;
}

static int
get_int4(blog_build *b, const blog_rows *rs, int row, const col *c,
         int32_t *n)
{
    if (blog_dec_int4(cell(rs, row, c), n) != 0)
        return bad(b, c->name, row);
    return 0;
}

static int
get_array(blog_build *b, const blog_rows *rs, int row, const col *c,
          uint32_t elemtype, blog_bytes **out, uint32_t *n)
{
    if (blog_dec_array(cell(rs, row, c), elemtype, b->alloc, b->alloc_ctx,
                       out, n) != 0)
        return bad(b, c->name, row);
    return 0;
}

/* Tag slugs and names, paired into one frame per tag. */
static int
get_tags(blog_build *b, const blog_rows *rs, int row, const col *c_slugs,
         const col *c_names, blog_val *v)
{
    blog_bytes *slugs, *names;
    uint32_t    ns, nn, i;
    blog_frame *items;
    blog_val   *vals;

    if (get_array(b, rs, row, c_slugs, BLOG_OID_TEXT, &slugs, &ns) != 0
        || get_array(b, rs, row, c_names, BLOG_OID_TEXT, &names, &nn) != 0)
        return -1;
    if (ns != nn)
        return bad(b, c_names->name, row);
    items = b_alloc(b, ns, sizeof(blog_frame));
    vals = b_alloc(b, ns, sizeof(blog_val) * TAG_COUNT);
    if (items == NULL || vals == NULL)
        return bad(b, c_names->name, row);
    for (i = 0; i < ns; i++) {
        val_str(&vals[i * TAG_COUNT + F_TAG_SLUG - TAG_FIRST], slugs[i].ptr,
                slugs[i].len);
        val_str(&vals[i * TAG_COUNT + F_TAG_NAME - TAG_FIRST], names[i].ptr,
                names[i].len);
        items[i].vals = &vals[i * TAG_COUNT];
        items[i].first = TAG_FIRST;
        items[i].count = TAG_COUNT;
    }
    val_list(v, items, ns);
    return 0;
}

/* ---- Cards: the index and the tag page ---- */

typedef struct card_cols
{
    col         slug, title, author, date, count, tag_slugs, tag_names,
                summary;
} card_cols;

static int
card_cols_find(blog_build *b, const blog_rows *rs, card_cols *cc)
{
    return col_find(b, rs, "slug", &cc->slug) != 0
        || col_find(b, rs, "title", &cc->title) != 0
        || col_find(b, rs, "author_name", &cc->author) != 0
        || col_find(b, rs, "published_at", &cc->date) != 0
        || col_find(b, rs, "comment_count", &cc->count) != 0
        || col_find(b, rs, "tag_slugs", &cc->tag_slugs) != 0
        || col_find(b, rs, "tag_names", &cc->tag_names) != 0
        || col_find(b, rs, "summary", &cc->summary) != 0 ? -1 : 0;
}

static int
card_fill(blog_build *b, const blog_rows *rs, int row, const card_cols *cc,
          char *scratch, blog_frame *item)
{
    blog_val   *v = b_alloc(b, CARD_COUNT, sizeof(blog_val));
    int32_t     n;

    if (v == NULL)
        return bad(b, cc->slug.name, row);
    if (get_text(b, rs, row, &cc->slug, &v[F_SLUG - CARD_FIRST]) != 0
        || get_text(b, rs, row, &cc->title, &v[F_TITLE - CARD_FIRST]) != 0
        || get_text(b, rs, row, &cc->author, &v[F_AUTHOR - CARD_FIRST]) != 0
        || get_date(b, rs, row, &cc->date, scratch,
                    &v[F_DATE - CARD_FIRST]) != 0
        || get_int4(b, rs, row, &cc->count, &n) != 0
        || get_tags(b, rs, row, &cc->tag_slugs, &cc->tag_names,
                    &v[F_TAGS - CARD_FIRST]) != 0
        || get_text(b, rs, row, &cc->summary,
                    &v[F_SUMMARY - CARD_FIRST]) != 0)
        return -1;
    val_str(&v[F_COMMENTS_LABEL - CARD_FIRST], scratch + BLOG_DATE_LEN,
            format_label(scratch + BLOG_DATE_LEN, n));
    item->vals = v;
    item->first = CARD_FIRST;
    item->count = CARD_COUNT;
    return 0;
}

/* Cards for rows [from, nrows), into the "posts" list of vals. */
static int
cards_fill(blog_build *b, const blog_rows *rs, int from, blog_val *vals)
{
    int         n = rs->nrows > from ? rs->nrows - from : 0;
    blog_frame *items = b_alloc(b, (size_t) n, sizeof(blog_frame));
    char       *scratch = b_alloc(b, (size_t) n, CARD_SCRATCH);
    card_cols   cc;
    int         i;

    if (items == NULL || scratch == NULL)
        return bad(b, "slug", from);
    if (n > 0 && card_cols_find(b, rs, &cc) != 0)
        return -1;
    for (i = 0; i < n; i++)
        if (card_fill(b, rs, from + i, &cc, scratch + CARD_SCRATCH * i,
                      &items[i]) != 0)
            return -1;
    val_list(&vals[F_POSTS], items, (uint32_t) n);
    return 0;
}

/* ---- Pages ---- */

static void
page_set(blog_page *out, const blog_page *page)
{
    *out = *page;
}

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
        bad(b, "(rendering)", -1);
        page_set(out, b->unavailable);
        return;
    }
    out->status = BLOG_STATUS_OK;
    out->body = body;
    out->len = len;
}

int
blog_build_simple(blog_build *b, const blog_tpl *tpl, const char *title,
                  int status, blog_page *out)
{
    blog_val    vals[F_COUNT];
    blog_frame  root;
    size_t      len;

    root_init(b, vals, &root, title, strlen(title));
    out->status = status;
    out->body = blog_tpl_render(tpl, &root, b->alloc, b->alloc_ctx, 0, &len);
    out->len = len;
    return out->body ? 0 : -1;
}

void
blog_build_index(blog_build *b, const blog_rows *rs, blog_page *out)
{
    static const char title[] = "Latest posts";
    blog_val   *vals = b_alloc(b, F_COUNT, sizeof(blog_val));
    blog_frame  root;

    if (vals != NULL)
        root_init(b, vals, &root, title, sizeof(title) - 1);
    if (vals == NULL || cards_fill(b, rs, 0, vals) != 0)
        page_set(out, b->unavailable);
    else
        page_render(b, b->pages->index, &root, out);
}

static int
post_comments(blog_build *b, const blog_rows *rs, const col *c_authors,
              const col *c_bodies, const col *c_times, blog_val *vals)
{
    blog_bytes *authors, *bodies, *times;
    uint32_t    na, nb, nt, i;
    blog_frame *items;
    blog_val   *v;
    char       *dates;

    if (get_array(b, rs, 0, c_authors, BLOG_OID_TEXT, &authors, &na) != 0
        || get_array(b, rs, 0, c_bodies, BLOG_OID_TEXT, &bodies, &nb) != 0
        || get_array(b, rs, 0, c_times, BLOG_OID_TIMESTAMPTZ, &times,
                     &nt) != 0)
        return -1;
    if (na != nb || na != nt)
        return bad(b, c_times->name, 0);
    items = b_alloc(b, na, sizeof(blog_frame));
    v = b_alloc(b, na, sizeof(blog_val) * COMMENT_COUNT);
    dates = b_alloc(b, na, BLOG_DATE_LEN);
    if (items == NULL || v == NULL || dates == NULL)
        return bad(b, c_times->name, 0);
    for (i = 0; i < na; i++) {
        blog_val   *cv = &v[i * COMMENT_COUNT];

        if (date_val(times[i].ptr, (int) times[i].len,
                     dates + BLOG_DATE_LEN * i,
                     &cv[F_COMMENT_DATE - COMMENT_FIRST]) != 0)
            return bad(b, c_times->name, 0);
        val_str(&cv[F_COMMENT_AUTHOR - COMMENT_FIRST], authors[i].ptr,
                authors[i].len);
        val_str(&cv[F_COMMENT_BODY - COMMENT_FIRST], bodies[i].ptr,
                bodies[i].len);
        items[i].vals = cv;
        items[i].first = COMMENT_FIRST;
        items[i].count = COMMENT_COUNT;
    }
    val_list(&vals[F_COMMENTS], items, na);
    return 0;
}

void
blog_build_post(blog_build *b, const blog_rows *rs, blog_page *out)
{
    blog_val   *vals;
    char       *scratch;
    blog_frame  root;
    col         c_title, c_author, c_date, c_body, c_tslugs, c_tnames,
                c_cauthors, c_cbodies, c_ctimes;

    if (rs->nrows == 0) {
        page_set(out, b->not_found);
        return;
    }
    vals = b_alloc(b, F_COUNT, sizeof(blog_val));
    scratch = b_alloc(b, 1, CARD_SCRATCH);
    if (vals != NULL)
        root_init(b, vals, &root, "", 0);
    if (vals == NULL || scratch == NULL
        || col_find(b, rs, "title", &c_title) != 0
        || col_find(b, rs, "author_name", &c_author) != 0
        || col_find(b, rs, "published_at", &c_date) != 0
        || col_find(b, rs, "body", &c_body) != 0
        || col_find(b, rs, "tag_slugs", &c_tslugs) != 0
        || col_find(b, rs, "tag_names", &c_tnames) != 0
        || col_find(b, rs, "comment_authors", &c_cauthors) != 0
        || col_find(b, rs, "comment_bodies", &c_cbodies) != 0
        || col_find(b, rs, "comment_times", &c_ctimes) != 0
        || get_text(b, rs, 0, &c_title, &vals[F_TITLE]) != 0
        || get_text(b, rs, 0, &c_author, &vals[F_AUTHOR]) != 0
        || get_date(b, rs, 0, &c_date, scratch, &vals[F_DATE]) != 0
        || get_text(b, rs, 0, &c_body, &vals[F_BODY]) != 0
        || get_tags(b, rs, 0, &c_tslugs, &c_tnames, &vals[F_TAGS]) != 0
        || post_comments(b, rs, &c_cauthors, &c_cbodies, &c_ctimes,
                         vals) != 0) {
        page_set(out, b->unavailable);
        return;
    }
    vals[F_PAGE_TITLE] = vals[F_TITLE];
    val_str(&vals[F_COMMENTS_LABEL], scratch + BLOG_DATE_LEN,
            format_label(scratch + BLOG_DATE_LEN,
                         (int32_t) vals[F_COMMENTS].len));
    page_render(b, b->pages->post, &root, out);
}

void
blog_build_tag(blog_build *b, const blog_rows *rs, blog_page *out)
{
    static const char prefix[] = "Posts tagged ";
    blog_val   *vals;
    blog_frame  root;
    col         c_name, c_slug;
    int         from;
    char       *title;

    if (rs->nrows == 0) {
        page_set(out, b->not_found);
        return;
    }
    vals = b_alloc(b, F_COUNT, sizeof(blog_val));
    if (vals == NULL)
        goto unavailable;
    root_init(b, vals, &root, "", 0);
    if (col_find(b, rs, "tag_name", &c_name) != 0
        || col_find(b, rs, "slug", &c_slug) != 0
        || get_text(b, rs, 0, &c_name, &vals[F_HEADING]) != 0)
        goto unavailable;
    /* A tag without posts is one row with only its name. */
    from = cell(rs, 0, &c_slug).ptr == NULL ? 1 : 0;
    title = b_alloc(b, 1, sizeof(prefix) - 1 + vals[F_HEADING].len);
    if (title == NULL || cards_fill(b, rs, from, vals) != 0)
        goto unavailable;
    memcpy(title, prefix, sizeof(prefix) - 1);
    memcpy(title + sizeof(prefix) - 1, vals[F_HEADING].ptr,
           vals[F_HEADING].len);
    val_str(&vals[F_PAGE_TITLE], title,
            sizeof(prefix) - 1 + vals[F_HEADING].len);
    page_render(b, b->pages->tag, &root, out);
    return;
  unavailable:
    page_set(out, b->unavailable);
}

void
blog_build_compute(blog_build *b, uint32_t limit, uint64_t sum,
                   blog_page *out)
{
    static const char title[] = "Compute";
    blog_val    vals[F_COUNT];
    blog_frame  root;
    char        limit_s[16];    /* 4294967295 */
    char        sum_s[24];      /* 18446744073709551615 */

    root_init(b, vals, &root, title, sizeof(title) - 1);
    val_str(&vals[F_LIMIT], limit_s,
            (size_t) snprintf(limit_s, sizeof(limit_s), "%u",
                              (unsigned) limit));
    val_str(&vals[F_SUM], sum_s,
            (size_t) snprintf(sum_s, sizeof(sum_s), "%llu",
                              (unsigned long long) sum));
    page_render(b, b->pages->compute, &root, out);
}

/*
 * pages.c - one function per page: pg_blog's rows (binary format) into
 * template frames, rendered into one exactly sized buffer from r->pool.
 *
 * Every value points into the PGresult, which lives as long as r->pool:
 * nothing is copied but the few strings the database does not send ready
 * made (dates, comment counts, the tag page's title).  Results are checked
 * as untrusted input: a length that does not fit its field is a malformed
 * result, answered with the 503 page, never read past.
 */
#include "pages.h"

#include "compute.h"
#include "db.h"
#include "fields.h"
#include "template.h"

#include "http_log.h"
#include "apr_strings.h"

#include <string.h>

APLOG_USE_MODULE(blog);

#define DATE_LEN    16          /* YYYY-MM-DD HH:MM */
#define LABEL_MAX   24          /* "-2147483648 comments" */
#define INDEX_LIMIT 20

struct blog_templates
{
    const blog_tpl *index;
    const blog_tpl *post;
    const blog_tpl *tag;
    const blog_tpl *compute;
    const blog_tpl *not_found;
    const blog_tpl *unavailable;
};

static void *
pages_alloc(void *ctx, size_t size)
{
    return apr_palloc(ctx, size);
}

const struct blog_templates *
blog_templates_load(apr_pool_t *p, const char *dir, char *err,
                    apr_size_t errlen)
{
    struct blog_templates *t = apr_pcalloc(p, sizeof(*t));
    blog_tpl_env env;

    env.dir = dir;
    env.fields = blog_fields;
    env.nfields = F_COUNT;
    env.alloc = pages_alloc;
    env.alloc_ctx = p;
    if (!(t->index = blog_tpl_load(&env, "layout", "index", err, errlen))
        || !(t->post = blog_tpl_load(&env, "layout", "post", err, errlen))
        || !(t->tag = blog_tpl_load(&env, "layout", "tag", err, errlen))
        || !(t->compute = blog_tpl_load(&env, "layout", "compute", err,
                                        errlen))
        || !(t->not_found = blog_tpl_load(&env, "layout", "not_found", err,
                                          errlen))
        || !(t->unavailable = blog_tpl_load(&env, "layout", "unavailable",
                                            err, errlen)))
        return NULL;
    return t;
}

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

static void
val_str(blog_val *v, const char *s, apr_size_t len)
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
root_init(blog_val *vals, blog_frame *root, const char *base,
          apr_size_t base_len, const char *title, apr_size_t title_len)
{
    memset(vals, 0, sizeof(blog_val) * F_COUNT);
    val_str(&vals[F_BASE], base, base_len);
    val_str(&vals[F_PAGE_TITLE], title, title_len);
    root->vals = vals;
    root->first = 0;
    root->count = F_COUNT;
}

static uint32_t
be32(const char *p)
{
    const unsigned char *u = (const unsigned char *) p;

    return ((uint32_t) u[0] << 24) | ((uint32_t) u[1] << 16)
        | ((uint32_t) u[2] << 8) | u[3];
}

static int64_t
be64(const char *p)
{
    return (int64_t) (((uint64_t) be32(p) << 32) | be32(p + 4));
}

static char *
put2(char *d, int v)
{
    d[0] = (char) ('0' + v / 10);
    d[1] = (char) ('0' + v % 10);
    return d + 2;
}

/*
 * A binary timestamptz (microseconds since 2000-01-01 UTC) as
 * "YYYY-MM-DD HH:MM"; -1 outside years 0..9999.
 */
static int
format_date(char *d, const char *bin)
{
    int64_t     us = be64(bin);
    int64_t     secs = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    int64_t     days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t     sod = secs - days * 86400;
    int64_t     z, era, doe, yoe, doy, mp, y, m, dd;

    /* civil_from_days (H. Hinnant), shifted from 2000-01-01 to 1970 */
    z = days + 10957 + 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    dd = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    if (y < 0 || y > 9999)
        return -1;
    d = put2(put2(d, (int) (y / 100)), (int) (y % 100));
    *d++ = '-';
    d = put2(d, (int) m);
    *d++ = '-';
    d = put2(d, (int) dd);
    *d++ = ' ';
    d = put2(d, (int) (sod / 3600));
    *d++ = ':';
    put2(d, (int) (sod / 60 % 60));
    return 0;
}

static apr_size_t
format_label(char *d, int32_t n)
{
    return (apr_size_t) apr_snprintf(d, LABEL_MAX, n == 1 ? "%d comment"
                                     : "%d comments", (int) n);
}

/* ------------------------------------------------------------------ */
/* Result access                                                       */
/* ------------------------------------------------------------------ */

typedef struct rows
{
    request_rec *r;
    const PGresult *res;
    const char *fn;             /* the SQL function, for log messages */
} rows;

static int
col(const rows *rs, const char *name)
{
    int         c = PQfnumber(rs->res, name);

    if (c < 0)
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, rs->r,
                      "blog: %s returned no column %s", rs->fn, name);
    return c;
}

static int
bad(const rows *rs, int row, int c)
{
    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, rs->r,
                  "blog: %s returned a malformed %s in row %d", rs->fn,
                  PQfname(rs->res, c), row);
    return -1;
}

static int
get_text(const rows *rs, int row, int c, blog_val *v)
{
    if (PQgetisnull(rs->res, row, c))
        return bad(rs, row, c);
    val_str(v, PQgetvalue(rs->res, row, c), PQgetlength(rs->res, row, c));
    return 0;
}

static int
get_date(const rows *rs, int row, int c, char *buf, blog_val *v)
{
    if (PQgetisnull(rs->res, row, c) || PQgetlength(rs->res, row, c) != 8
        || format_date(buf, PQgetvalue(rs->res, row, c)) != 0)
        return bad(rs, row, c);
    val_str(v, buf, DATE_LEN);
    return 0;
}

static int
get_int4(const rows *rs, int row, int c, int32_t *n)
{
    if (PQgetisnull(rs->res, row, c) || PQgetlength(rs->res, row, c) != 4)
        return bad(rs, row, c);
    *n = (int32_t) be32(PQgetvalue(rs->res, row, c));
    return 0;
}

/*
 * A one-dimensional binary array as string values pointing into the
 * result: header (ndim, flags, element type, size, lower bound), then one
 * (length, bytes) per element.  NULL arrays are empty; NULL elements and
 * every length that overruns the field are errors.
 */
static int
get_array(const rows *rs, int row, int c, blog_val **out, uint32_t *count)
{
    const char *v = PQgetvalue(rs->res, row, c);
    int         vlen = PQgetlength(rs->res, row, c);
    const char *end = v + vlen;
    const char *q;
    blog_val   *vals;
    int32_t     n, i;

    *out = NULL;
    *count = 0;
    if (PQgetisnull(rs->res, row, c))
        return 0;
    if (vlen < 12)
        return bad(rs, row, c);
    if (be32(v) == 0)
        return 0;
    if (be32(v) != 1 || vlen < 20)
        return bad(rs, row, c);
    n = (int32_t) be32(v + 12);
    if (n < 0 || n > (vlen - 20) / 4)
        return bad(rs, row, c);
    vals = apr_palloc(rs->r->pool, sizeof(blog_val) * (n ? n : 1));
    q = v + 20;
    for (i = 0; i < n; i++) {
        int32_t     len;

        if (end - q < 4)
            return bad(rs, row, c);
        len = (int32_t) be32(q);
        q += 4;
        if (len < 0 || len > end - q)
            return bad(rs, row, c);
        val_str(&vals[i], q, (apr_size_t) len);
        q += len;
    }
    *out = vals;
    *count = (uint32_t) n;
    return 0;
}

/* Tag slugs and names, paired into one frame per tag. */
static int
get_tags(const rows *rs, int row, int c_slugs, int c_names, blog_val *v)
{
    blog_val   *slugs, *names, *vals;
    uint32_t    ns, nn, i;
    blog_frame *items;

    if (get_array(rs, row, c_slugs, &slugs, &ns) != 0
        || get_array(rs, row, c_names, &names, &nn) != 0)
        return -1;
    if (ns != nn)
        return bad(rs, row, c_names);
    items = apr_palloc(rs->r->pool, sizeof(blog_frame) * (ns ? ns : 1));
    vals = apr_palloc(rs->r->pool, sizeof(blog_val) * TAG_COUNT * (ns ? ns : 1));
    for (i = 0; i < ns; i++) {
        vals[i * TAG_COUNT] = slugs[i];
        vals[i * TAG_COUNT + 1] = names[i];
        items[i].vals = &vals[i * TAG_COUNT];
        items[i].first = TAG_FIRST;
        items[i].count = TAG_COUNT;
    }
    val_list(v, items, ns);
    return 0;
}

/* Columns of a post card, shared by the index and the tag page. */
typedef struct card_cols
{
    int         slug, title, author, date, count, tag_slugs, tag_names,
                summary;
} card_cols;

static int
card_cols_find(const rows *rs, card_cols *cc)
{
    cc->slug = col(rs, "slug");
    cc->title = col(rs, "title");
    cc->author = col(rs, "author_name");
    cc->date = col(rs, "published_at");
    cc->count = col(rs, "comment_count");
    cc->tag_slugs = col(rs, "tag_slugs");
    cc->tag_names = col(rs, "tag_names");
    cc->summary = col(rs, "summary");
    return cc->slug < 0 || cc->title < 0 || cc->author < 0 || cc->date < 0
        || cc->count < 0 || cc->tag_slugs < 0 || cc->tag_names < 0
        || cc->summary < 0 ? -1 : 0;
}

static int
card_fill(const rows *rs, int row, const card_cols *cc, char *scratch,
          blog_frame *item)
{
    blog_val   *v = apr_palloc(rs->r->pool, sizeof(blog_val) * CARD_COUNT);
    int32_t     n;

    if (get_text(rs, row, cc->slug, &v[F_SLUG - CARD_FIRST]) != 0
        || get_text(rs, row, cc->title, &v[F_TITLE - CARD_FIRST]) != 0
        || get_text(rs, row, cc->author, &v[F_AUTHOR - CARD_FIRST]) != 0
        || get_date(rs, row, cc->date, scratch,
                    &v[F_DATE - CARD_FIRST]) != 0
        || get_int4(rs, row, cc->count, &n) != 0
        || get_tags(rs, row, cc->tag_slugs, cc->tag_names,
                    &v[F_TAGS - CARD_FIRST]) != 0
        || get_text(rs, row, cc->summary, &v[F_SUMMARY - CARD_FIRST]) != 0)
        return -1;
    val_str(&v[F_COMMENTS_LABEL - CARD_FIRST], scratch + DATE_LEN,
            format_label(scratch + DATE_LEN, n));
    item->vals = v;
    item->first = CARD_FIRST;
    item->count = CARD_COUNT;
    return 0;
}

/* Cards for rows [from, nrows), into the "posts" list of vals. */
static int
cards_fill(const rows *rs, int from, blog_val *vals)
{
    int         nrows = PQntuples(rs->res);
    int         n = nrows > from ? nrows - from : 0;
    blog_frame *items = apr_palloc(rs->r->pool,
                                   sizeof(blog_frame) * (n ? n : 1));
    char       *scratch = apr_palloc(rs->r->pool,
                                     (DATE_LEN + LABEL_MAX) * (n ? n : 1));
    card_cols   cc;
    int         i;

    if (n > 0 && card_cols_find(rs, &cc) != 0)
        return -1;
    for (i = 0; i < n; i++)
        if (card_fill(rs, from + i, &cc,
                      scratch + (DATE_LEN + LABEL_MAX) * i, &items[i]) != 0)
            return -1;
    val_list(&vals[F_POSTS], items, (uint32_t) n);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Pages                                                               */
/* ------------------------------------------------------------------ */

static void
page_static(blog_page *out, int status, const char *body, apr_size_t len)
{
    out->status = status;
    out->body = body;
    out->len = len;
}

static void
page_render(request_rec *r, const blog_site *site, const blog_tpl *tpl,
            const blog_frame *root, blog_page *out)
{
    size_t      len;
    char       *body = blog_tpl_render(tpl, root, pages_alloc, r->pool, &len);

    if (body == NULL) {
        page_static(out, HTTP_SERVICE_UNAVAILABLE, site->unavailable,
                    site->unavailable_len);
        return;
    }
    page_static(out, HTTP_OK, body, len);
}

static int
page_simple(apr_pool_t *p, const blog_tpl *tpl, const char *title,
            const char *base, apr_size_t base_len, blog_page *out)
{
    blog_val    vals[F_COUNT];
    blog_frame  root;
    size_t      len;

    root_init(vals, &root, base, base_len, title, strlen(title));
    out->body = blog_tpl_render(tpl, &root, pages_alloc, p, &len);
    out->len = len;
    return out->body ? 0 : -1;
}

int
blog_page_not_found(apr_pool_t *p, const blog_settings *g, const char *base,
                    apr_size_t base_len, blog_page *out)
{
    out->status = HTTP_NOT_FOUND;
    return page_simple(p, g->tpl->not_found, "Not found", base, base_len,
                       out);
}

int
blog_page_unavailable(apr_pool_t *p, const blog_settings *g,
                      const char *base, apr_size_t base_len, blog_page *out)
{
    out->status = HTTP_SERVICE_UNAVAILABLE;
    return page_simple(p, g->tpl->unavailable, "Service unavailable", base,
                       base_len, out);
}

static void
page_unavailable(const blog_site *site, blog_page *out)
{
    page_static(out, HTTP_SERVICE_UNAVAILABLE, site->unavailable,
                site->unavailable_len);
}

static void
page_not_found(const blog_site *site, blog_page *out)
{
    page_static(out, HTTP_NOT_FOUND, site->not_found, site->not_found_len);
}

/*
 * One call of a page function.  Returns 0 with rs set when there are rows;
 * otherwise the 503 page (database failure) or, when empty_is_404, the 404
 * page is already in out.
 */
static int
page_fetch(request_rec *r, const blog_site *site, blog_stmt stmt,
           const char *param, apr_size_t param_len, const char *fn,
           int empty_is_404, rows *rs, blog_page *out)
{
    PGresult   *res;

    if (blog_db_page(r, stmt, param, param_len, &res) != APR_SUCCESS) {
        page_unavailable(site, out);
        return -1;
    }
    if (empty_is_404 && PQntuples(res) == 0) {
        page_not_found(site, out);
        return -1;
    }
    rs->r = r;
    rs->res = res;
    rs->fn = fn;
    return 0;
}

void
blog_page_index(request_rec *r, const blog_site *site, blog_page *out)
{
    static const char limit_be[4] = {0, 0, 0, INDEX_LIMIT};
    static const char title[] = "Latest posts";
    blog_val   *vals = apr_palloc(r->pool, sizeof(blog_val) * F_COUNT);
    blog_frame  root;
    rows        rs;

    if (page_fetch(r, site, BLOG_STMT_INDEX, limit_be, 4, "blog.index_page",
                   0, &rs, out) != 0)
        return;
    root_init(vals, &root, site->base, site->base_len, title,
              sizeof(title) - 1);
    if (cards_fill(&rs, 0, vals) != 0) {
        page_unavailable(site, out);
        return;
    }
    page_render(r, site, site->g->tpl->index, &root, out);
}

static int
post_comments(const rows *rs, int c_authors, int c_bodies, int c_times,
              blog_val *vals)
{
    blog_val   *authors, *bodies, *times, *v;
    uint32_t    na, nb, nt, i;
    blog_frame *items;
    char       *dates;

    if (get_array(rs, 0, c_authors, &authors, &na) != 0
        || get_array(rs, 0, c_bodies, &bodies, &nb) != 0
        || get_array(rs, 0, c_times, &times, &nt) != 0)
        return -1;
    if (na != nb || na != nt)
        return bad(rs, 0, c_times);
    items = apr_palloc(rs->r->pool, sizeof(blog_frame) * (na ? na : 1));
    v = apr_palloc(rs->r->pool,
                   sizeof(blog_val) * COMMENT_COUNT * (na ? na : 1));
    dates = apr_palloc(rs->r->pool, DATE_LEN * (na ? na : 1));
    for (i = 0; i < na; i++) {
        blog_val   *cv = &v[i * COMMENT_COUNT];

        if (times[i].len != 8
            || format_date(dates + DATE_LEN * i, times[i].ptr) != 0)
            return bad(rs, 0, c_times);
        cv[F_COMMENT_AUTHOR - COMMENT_FIRST] = authors[i];
        val_str(&cv[F_COMMENT_DATE - COMMENT_FIRST], dates + DATE_LEN * i,
                DATE_LEN);
        cv[F_COMMENT_BODY - COMMENT_FIRST] = bodies[i];
        items[i].vals = cv;
        items[i].first = COMMENT_FIRST;
        items[i].count = COMMENT_COUNT;
    }
    val_list(&vals[F_COMMENTS], items, na);
    return 0;
}

void
blog_page_post(request_rec *r, const blog_site *site, const char *slug,
               apr_size_t slug_len, blog_page *out)
{
    blog_val   *vals = apr_palloc(r->pool, sizeof(blog_val) * F_COUNT);
    char       *scratch = apr_palloc(r->pool, DATE_LEN + LABEL_MAX);
    blog_frame  root;
    rows        rs;
    int         c_title, c_author, c_date, c_body, c_tslugs, c_tnames,
                c_cauthors, c_cbodies, c_ctimes;

    if (page_fetch(r, site, BLOG_STMT_POST, slug, slug_len, "blog.post_page",
                   1, &rs, out) != 0)
        return;
    root_init(vals, &root, site->base, site->base_len, "", 0);
    if ((c_title = col(&rs, "title")) < 0
        || (c_author = col(&rs, "author_name")) < 0
        || (c_date = col(&rs, "published_at")) < 0
        || (c_body = col(&rs, "body")) < 0
        || (c_tslugs = col(&rs, "tag_slugs")) < 0
        || (c_tnames = col(&rs, "tag_names")) < 0
        || (c_cauthors = col(&rs, "comment_authors")) < 0
        || (c_cbodies = col(&rs, "comment_bodies")) < 0
        || (c_ctimes = col(&rs, "comment_times")) < 0
        || get_text(&rs, 0, c_title, &vals[F_TITLE]) != 0
        || get_text(&rs, 0, c_author, &vals[F_AUTHOR]) != 0
        || get_date(&rs, 0, c_date, scratch, &vals[F_DATE]) != 0
        || get_text(&rs, 0, c_body, &vals[F_BODY]) != 0
        || get_tags(&rs, 0, c_tslugs, c_tnames, &vals[F_TAGS]) != 0
        || post_comments(&rs, c_cauthors, c_cbodies, c_ctimes, vals) != 0) {
        page_unavailable(site, out);
        return;
    }
    vals[F_PAGE_TITLE] = vals[F_TITLE];
    val_str(&vals[F_COMMENTS_LABEL], scratch + DATE_LEN,
            format_label(scratch + DATE_LEN,
                         (int32_t) vals[F_COMMENTS].len));
    page_render(r, site, site->g->tpl->post, &root, out);
}

void
blog_page_tag(request_rec *r, const blog_site *site, const char *slug,
              apr_size_t slug_len, blog_page *out)
{
    static const char prefix[] = "Posts tagged ";
    blog_val   *vals = apr_palloc(r->pool, sizeof(blog_val) * F_COUNT);
    blog_frame  root;
    rows        rs;
    int         c_name, c_slug, from;
    char       *title;

    if (page_fetch(r, site, BLOG_STMT_TAG, slug, slug_len, "blog.tag_page",
                   1, &rs, out) != 0)
        return;
    root_init(vals, &root, site->base, site->base_len, "", 0);
    if ((c_name = col(&rs, "tag_name")) < 0 || (c_slug = col(&rs, "slug")) < 0
        || get_text(&rs, 0, c_name, &vals[F_HEADING]) != 0) {
        page_unavailable(site, out);
        return;
    }
    /* A tag without posts is one row with only its name. */
    from = PQgetisnull(rs.res, 0, c_slug) ? 1 : 0;
    if (cards_fill(&rs, from, vals) != 0) {
        page_unavailable(site, out);
        return;
    }
    title = apr_palloc(r->pool, sizeof(prefix) - 1 + vals[F_HEADING].len);
    memcpy(title, prefix, sizeof(prefix) - 1);
    memcpy(title + sizeof(prefix) - 1, vals[F_HEADING].ptr,
           vals[F_HEADING].len);
    val_str(&vals[F_PAGE_TITLE], title,
            sizeof(prefix) - 1 + vals[F_HEADING].len);
    page_render(r, site, site->g->tpl->tag, &root, out);
}

void
blog_page_compute(request_rec *r, const blog_site *site, blog_page *out)
{
    static const char title[] = "Compute";
    blog_val    vals[F_COUNT];
    blog_frame  root;
    char        limit[16];
    char        sum[24];
    uint64_t    s = blog_sum_primes_below(site->g->compute_limit);

    root_init(vals, &root, site->base, site->base_len, title,
              sizeof(title) - 1);
    val_str(&vals[F_LIMIT], limit,
            (apr_size_t) apr_snprintf(limit, sizeof(limit), "%u",
                                      (unsigned) site->g->compute_limit));
    val_str(&vals[F_SUM], sum,
            (apr_size_t) apr_snprintf(sum, sizeof(sum), "%" APR_UINT64_T_FMT,
                                      (apr_uint64_t) s));
    page_render(r, site, site->g->tpl->compute, &root, out);
}

/*
 * status.c - mod_blog's part of /server-status (ExtendedStatus On): every
 * running child's figures (stats.h) as a table, and with ?auto as "Key:
 * value" lines, totals first (BlogPoolOpen: 8), then per stats slot
 * (BlogSlot0PoolOpen: 2; docs/OPERATIONS.md).
 */
#include "status.h"

#include "stats.h"

#include "http_config.h"
#include "http_protocol.h"
#include "mod_status.h"
#include "apr_strings.h"
#include "httpd.h"

#include <string.h>

/* IDLE is not stored: open - busy. */
#define STATUS_IDLE BLOG_STAT_N

typedef struct status_field
{
    int         stat;
    const char *key;            /* ?auto, after "Blog" (and "SlotN") */
    const char *title;          /* the table's column */
} status_field;

static const status_field status_fields[] = {
    {BLOG_STAT_POOL_OPEN, "PoolOpen", "open"},
    {STATUS_IDLE, "PoolIdle", "idle"},
    {BLOG_STAT_POOL_BUSY, "PoolBusy", "busy"},
    {BLOG_STAT_POOL_QUERIES, "PoolQueries", "queries"},
    {BLOG_STAT_POOL_WAITS, "PoolWaits", "waits"},
    {BLOG_STAT_POOL_ACQUIRE_TIMEOUTS, "PoolAcquireTimeouts",
     "acquire timeouts"},
    {BLOG_STAT_POOL_CONNECTS, "PoolConnects", "connects"},
    {BLOG_STAT_POOL_CONNECT_FAILURES, "PoolConnectFailures",
     "connect failures"},
    {BLOG_STAT_POOL_RECONNECTS, "PoolReconnects", "reconnects"},
    {BLOG_STAT_POOL_QUERY_TIMEOUTS, "PoolQueryTimeouts", "query timeouts"},
    {BLOG_STAT_POOL_QUERY_ERRORS, "PoolQueryErrors", "query errors"},
    {BLOG_STAT_CACHE_HITS, "CacheHits", "hits"},
    {BLOG_STAT_CACHE_MISSES, "CacheMisses", "misses"},
    {BLOG_STAT_CACHE_BYPASSES, "CacheBypasses", "bypasses"},
    {BLOG_STAT_CACHE_ERRORS, "CacheErrors", "errors"},
};

#define STATUS_NFIELDS (sizeof(status_fields) / sizeof(status_fields[0]))
/* The first cache column, for the table's group headings. */
#define STATUS_NPOOL 11

/* One child's figures, with idle worked out; gauges may not go below 0. */
typedef struct status_row
{
    int         slot;
    pid_t       pid;
    int         gen;
    apr_int64_t f[STATUS_NFIELDS];
} status_row;

static void
status_fill(status_row *row, const apr_uint64_t *v)
{
    apr_size_t  i;

    for (i = 0; i < STATUS_NFIELDS; i++) {
        int         k = status_fields[i].stat;
        apr_int64_t x;

        if (k == STATUS_IDLE)
            x = (apr_int64_t) v[BLOG_STAT_POOL_OPEN]
                - (apr_int64_t) v[BLOG_STAT_POOL_BUSY];
        else
            x = (apr_int64_t) v[k];
        /* open and busy are read one after the other, not together */
        row->f[i] = x < 0 ? 0 : x;
    }
}

/* The children that still run; row n is the total. */
static int
status_rows(request_rec *r, status_row **out)
{
    int         n = blog_stats_nslots();
    status_row *rows = apr_pcalloc(r->pool, (apr_size_t) (n + 1)
                                   * sizeof(*rows));
    apr_uint64_t v[BLOG_STAT_N];
    int         i, used = 0;
    apr_size_t  j;

    for (i = 0; i < n; i++) {
        pid_t       pid;
        int         gen;

        if (blog_stats_read(i, &pid, &gen, v) != 0 || pid == 0)
            continue;
        rows[used].slot = i;
        rows[used].pid = pid;
        rows[used].gen = gen;
        status_fill(&rows[used], v);
        for (j = 0; j < STATUS_NFIELDS; j++)
            rows[n].f[j] += rows[used].f[j];
        used++;
    }
    rows[used] = rows[n];
    *out = rows;
    return used;
}

static void
status_short(request_rec *r, const status_row *rows, int n)
{
    apr_size_t  j;
    int         i;

    ap_rprintf(r, "BlogChildren: %d\n", n);
    for (j = 0; j < STATUS_NFIELDS; j++)
        ap_rprintf(r, "Blog%s: %" APR_INT64_T_FMT "\n", status_fields[j].key,
                   rows[n].f[j]);
    for (i = 0; i < n; i++) {
        ap_rprintf(r, "BlogSlot%dPID: %" APR_PID_T_FMT "\n", rows[i].slot,
                   rows[i].pid);
        ap_rprintf(r, "BlogSlot%dGeneration: %d\n", rows[i].slot,
                   rows[i].gen);
        for (j = 0; j < STATUS_NFIELDS; j++)
            ap_rprintf(r, "BlogSlot%d%s: %" APR_INT64_T_FMT "\n",
                       rows[i].slot, status_fields[j].key, rows[i].f[j]);
    }
}

static void
status_cells(request_rec *r, const status_row *row)
{
    apr_size_t  j;

    for (j = 0; j < STATUS_NFIELDS; j++)
        ap_rprintf(r, "<td>%" APR_INT64_T_FMT "</td>", row->f[j]);
    ap_rputs("</tr>\n", r);
}

static void
status_table(request_rec *r, const status_row *rows, int n)
{
    apr_size_t  j;
    int         i;

    ap_rprintf(r, "<table border=\"0\" class=\"blog\">\n"
               "<tr><th colspan=\"3\"></th>"
               "<th colspan=\"%d\">PostgreSQL pool</th>"
               "<th colspan=\"%d\">Redis cache</th></tr>\n"
               "<tr><th>Slot</th><th>PID</th><th>Gen</th>",
               STATUS_NPOOL, (int) STATUS_NFIELDS - STATUS_NPOOL);
    for (j = 0; j < STATUS_NFIELDS; j++)
        ap_rprintf(r, "<th>%s</th>", status_fields[j].title);
    ap_rputs("</tr>\n", r);
    for (i = 0; i < n; i++) {
        ap_rprintf(r, "<tr><td>%d</td><td>%" APR_PID_T_FMT "</td><td>%d</td>",
                   rows[i].slot, rows[i].pid, rows[i].gen);
        status_cells(r, &rows[i]);
    }
    ap_rputs("<tr><th colspan=\"3\">all</th>", r);
    status_cells(r, &rows[n]);
    ap_rputs("</table>\n", r);
}

static void
status_list(request_rec *r, const status_row *rows, int n)
{
    apr_size_t  j;
    int         i;

    for (i = 0; i <= n; i++) {
        if (i < n)
            ap_rprintf(r, "<p>Slot %d (pid %" APR_PID_T_FMT ", generation "
                       "%d):", rows[i].slot, rows[i].pid, rows[i].gen);
        else
            ap_rputs("<p>All children:", r);
        for (j = 0; j < STATUS_NFIELDS; j++)
            ap_rprintf(r, "%s %s%s %" APR_INT64_T_FMT, j ? "," : "",
                       j == 0 ? "pool " : j == STATUS_NPOOL ? "cache " : "",
                       status_fields[j].title, rows[i].f[j]);
        ap_rputs("</p>\n", r);
    }
}

/* What /health withholds from the public: this child's last reasons. */
static void
status_health(request_rec *r, int flags)
{
    static const char *const names[2] = {"PostgreSQL", "Redis"};
    char        why[600];
    char        when[APR_RFC822_DATE_LEN];
    apr_time_t  at;
    int         k;

    for (k = 0; k < 2; k++) {
        if (!blog_health_last(k, why, sizeof(why), &at))
            continue;
        apr_rfc822_date(when, at);
        if (flags & AP_STATUS_SHORT)
            ap_rprintf(r, "BlogHealthLast%sFailure: %s: %s\n", names[k],
                       when, why);
        else
            ap_rprintf(r, "<p>Last failed health check of %s (this child, "
                       "%s): %s</p>\n", names[k], when,
                       ap_escape_html(r->pool, why));
    }
}

static int
status_hook(request_rec *r, int flags)
{
    status_row *rows;
    int         n;

    if (!(flags & AP_STATUS_EXTENDED) || blog_stats_nslots() == 0)
        return OK;
    n = status_rows(r, &rows);
    if (flags & AP_STATUS_SHORT) {
        status_short(r, rows, n);
        status_health(r, flags);
        return OK;
    }
    ap_rputs("<hr /><h2>mod_blog</h2>\n", r);
    ap_rprintf(r, "<p>%d children; figures since each child started "
               "(open, idle and busy: now).</p>\n", n);
    if (flags & AP_STATUS_NOTABLE)
        status_list(r, rows, n);
    else
        status_table(r, rows, n);
    status_health(r, flags);
    return OK;
}

void
blog_status_register_hooks(void)
{
    APR_OPTIONAL_HOOK(ap, status_hook, status_hook, NULL, NULL,
                      APR_HOOK_MIDDLE);
}

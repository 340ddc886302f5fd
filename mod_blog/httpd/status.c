/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status.c - mod_blog's figures on mod_status's page (docs/OPERATIONS.md,
 * "Status and health"): every child's counters, this child's last failed
 * health checks and its Redis master.
 */
#include "httpd/status.h"
#include "httpd/health.h"

#include "store/sentinel.h"
#include "httpd/counters_shm.h"
#include "store/counters.h"

#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "mod_status.h"
#include "apr_strings.h"
#include "httpd.h"

#include <string.h>

APLOG_USE_MODULE(blog);

/* ---- The status page ---- */

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

/* One child's figures, with idle worked out. */
typedef struct status_row
{
    int         slot;
    pid_t       pid;
    int         gen;
    apr_int64_t f[STATUS_NFIELDS];
} status_row;

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
        status_row *row = &rows[used];

        /* a free slot's row is written over by the next, or the total */
        if (blog_stats_read(i, &row->pid, &row->gen, v) != 0 || row->pid == 0)
            continue;
        row->slot = i;
        for (j = 0; j < STATUS_NFIELDS; j++) {
            int         k = status_fields[j].stat;
            apr_int64_t x = k != STATUS_IDLE ? (apr_int64_t) v[k]
                : (apr_int64_t) (v[BLOG_STAT_POOL_OPEN]
                                 - v[BLOG_STAT_POOL_BUSY]);

            /* open and busy are read one after the other: not below 0 */
            row->f[j] = x < 0 ? 0 : x;
            rows[n].f[j] += row->f[j];
        }
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
        ap_rprintf(r, "BlogSlot%dGeneration: %d\n", rows[i].slot, rows[i].gen);
        for (j = 0; j < STATUS_NFIELDS; j++)
            ap_rprintf(r, "BlogSlot%d%s: %" APR_INT64_T_FMT "\n",
                       rows[i].slot, status_fields[j].key, rows[i].f[j]);
    }
}

/* The HTML: a table, or with ?notable a paragraph per child; total last. */
static void
status_html(request_rec *r, const status_row *rows, int n, int notable)
{
    apr_size_t  j;
    int         i;

    ap_rputs("<hr /><h2>mod_blog</h2>\n", r);
    ap_rprintf(r, "<p>%d children; figures since each child started "
               "(open, idle and busy: now).</p>\n", n);
    if (!notable) {
        ap_rprintf(r, "<table border=\"0\" class=\"blog\">\n"
                   "<tr><th colspan=\"3\"></th>"
                   "<th colspan=\"%d\">PostgreSQL pool</th>"
                   "<th colspan=\"%d\">Redis cache</th></tr>\n"
                   "<tr><th>Slot</th><th>PID</th><th>Gen</th>",
                   STATUS_NPOOL, (int) STATUS_NFIELDS - STATUS_NPOOL);
        for (j = 0; j < STATUS_NFIELDS; j++)
            ap_rprintf(r, "<th>%s</th>", status_fields[j].title);
        ap_rputs("</tr>\n", r);
    }
    for (i = 0; i <= n; i++) {
        if (i == n)
            ap_rputs(notable ? "<p>All children:"
                     : "<tr><th colspan=\"3\">all</th>", r);
        else
            ap_rprintf(r, notable ? "<p>Slot %d (pid %" APR_PID_T_FMT
                       ", generation %d):" : "<tr><td>%d</td><td>%"
                       APR_PID_T_FMT "</td><td>%d</td>", rows[i].slot,
                       rows[i].pid, rows[i].gen);
        for (j = 0; j < STATUS_NFIELDS; j++) {
            if (notable)
                ap_rprintf(r, "%s %s%s %" APR_INT64_T_FMT, j ? "," : "",
                           j == 0 ? "pool " : j == STATUS_NPOOL ? "cache "
                           : "", status_fields[j].title, rows[i].f[j]);
            else
                ap_rprintf(r, "<td>%" APR_INT64_T_FMT "</td>", rows[i].f[j]);
        }
        ap_rputs(notable ? "</p>\n" : "</tr>\n", r);
    }
    if (!notable)
        ap_rputs("</table>\n", r);
}

/* What /health withholds from the public: this child's last reasons. */
static void
status_health(request_rec *r, int flags)
{
    static const char *const names[2] = {"PostgreSQL", "Redis"};
    char        why[BLOG_HEALTH_WHY_MAX];
    char        when[APR_RFC822_DATE_LEN];
    int         k;

    for (k = BLOG_HEALTH_PG; k <= BLOG_HEALTH_REDIS; k++) {
        apr_time_t  at;

        if (blog_health_last_failure(k, why, sizeof(why), &at) != 0)
            return;
        if (at == 0)
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

/* With sentinels, this child's master: which, since when, the last switch
 * and how long its cache ran without one. */
static void
status_sentinel(request_rec *r, int flags)
{
    blog_sentinel_view v;
    char        since[APR_RFC822_DATE_LEN], when[APR_RFC822_DATE_LEN];
    const char *master;

    if (blog_sentinel_status(&v) != 0)
        return;
    master = v.master[0] ? v.master : apr_pstrcat(r->pool, "none (", v.why,
                                                  ")", (char *) NULL);
    apr_rfc822_date(since, v.since);
    apr_rfc822_date(when, v.switched);
    if (flags & AP_STATUS_SHORT) {
        ap_rprintf(r, "BlogRedisMaster: %s\nBlogRedisMasterSince: %s\n"
                   "BlogRedisMasterChanges: %u\n", master, since, v.changes);
        if (v.switched != 0)
            ap_rprintf(r, "BlogRedisLastSwitch: %s: %s to %s, the cache "
                       "without a master for %.2f s\n", when, v.previous,
                       v.next, v.without);
        return;
    }
    ap_rprintf(r, "<p>Redis master of %s (this child, from its sentinels): "
               "%s since %s; %u switches", ap_escape_html(r->pool, v.name),
               ap_escape_html(r->pool, master), since, v.changes);
    if (v.switched != 0)
        ap_rprintf(r, ", the last %s, from %s to %s: the cache ran without "
                   "a master for %.2f s", when,
                   ap_escape_html(r->pool, v.previous),
                   ap_escape_html(r->pool, v.next), v.without);
    ap_rputs(".</p>\n", r);
}

static int
status_hook(request_rec *r, int flags)
{
    status_row *rows;
    int         n;

    if (!(flags & AP_STATUS_EXTENDED) || blog_stats_nslots() == 0)
        return OK;
    n = status_rows(r, &rows);
    if (flags & AP_STATUS_SHORT)
        status_short(r, rows, n);
    else
        status_html(r, rows, n, flags & AP_STATUS_NOTABLE);
    status_health(r, flags);
    status_sentinel(r, flags);
    return OK;
}

void
blog_status_register_hooks(void)
{
    APR_OPTIONAL_HOOK(ap, status_hook, status_hook, NULL, NULL,
                      APR_HOOK_MIDDLE);
}

/*
 * dbscale.c - several PostgreSQL hosts, and a transaction pooler in between.
 *
 * Spreading reads: libpq 15 takes a list of hosts and target_session_attrs
 * (prefer-standby: the first standby that answers, else any server), but
 * always tries the hosts in the order written, so every child of every web
 * node would pile onto the first standby; load_balance_hosts only came
 * with libpq 16.  So each new connection gets the lists in another order:
 * the permutations of the hosts are taken in turn, from a point that
 * differs between children.  Over all the permutations each standby comes
 * first among the standbys equally often, wherever the primary is listed,
 * which a plain rotation would not give (the host after the primary would
 * get its share too).
 *
 * Moving back: a pooled connection stays on its server for as long as it
 * lives, so one that libpq had to leave on the primary (no standby
 * answered) would keep reading there, and a standby that returns would get
 * no share.  So, with several hosts, a child closes one connection as it
 * goes back to the pool every DBS_REFRESH (as PgBouncer's server_lifetime
 * recycles its server connections), and one on the primary every
 * DBS_FALLBACK_RETRY while standbys are preferred: the reads return to
 * the standbys soon after they do, and connects stay rare meanwhile.
 *
 * BlogPrepare Off: PgBouncer 1.18 in transaction pooling gives each
 * transaction whichever server connection is free, so neither a PREPARE
 * nor a SET made on "our" connection can be relied on.  The page is then
 * sent as an unnamed statement with its SQL text: libpq writes Parse,
 * Bind, Describe, Execute and Sync at once, still one round trip and one
 * transaction, with binary rows; the server parses and plans the call
 * every time instead of once per connection.
 */
#include "dbscale.h"
#include "logno.h"

#include "http_log.h"
#include "apr_atomic.h"
#include "apr_strings.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

APLOG_USE_MODULE(blog);

#define DBS_MAX_HOSTS       8
/* how often a child closes a connection prefer-standby left on a primary */
#define DBS_FALLBACK_RETRY  apr_time_from_msec(500)
/* and any other, so that the spread comes back after a host returns */
#define DBS_REFRESH         apr_time_from_sec(5)

/* The host-list keywords, permuted together. */
enum
{
    DBS_HOST, DBS_HOSTADDR, DBS_PORT, DBS_NLISTS
};
static const char *const dbs_list_keys[DBS_NLISTS] = {
    "host", "hostaddr", "port"
};

static const char *dbs_conninfo;
static int  dbs_prepare = 1;
static PQconninfoOption *dbs_opts;
static int  dbs_nhosts;         /* > 1: spreading */
static int  dbs_prefer_standby;
static apr_uint32_t dbs_nperms;
/* per list: the entries, or NULL when it is not a list of dbs_nhosts */
static char **dbs_lists[DBS_NLISTS];
static apr_uint32_t dbs_next;
static apr_uint64_t dbs_fallback_due;        /* apr_time_t, apr_atomic */
static apr_uint64_t dbs_refresh_due;

static apr_status_t
dbs_free_opts(void *data)
{
    (void) data;
    PQconninfoFree(dbs_opts);
    dbs_opts = NULL;
    return APR_SUCCESS;
}

/* The comma-separated entries of val, as libpq splits them. */
static int
dbs_split(apr_pool_t *p, const char *val, char ***out)
{
    char      **v = apr_pcalloc(p, DBS_MAX_HOSTS * sizeof(*v));
    int         n = 0;

    for (;;) {
        size_t      len = strcspn(val, ",");

        if (n == DBS_MAX_HOSTS)
            return -1;
        v[n++] = apr_pstrmemdup(p, val, len);
        if (val[len] == '\0')
            break;
        val += len + 1;
    }
    *out = v;
    return n;
}

void
blog_dbscale_child_init(apr_pool_t *pchild, server_rec *s,
                        const char *conninfo, int prepare)
{
    PQconninfoOption *o;
    char      **entries[DBS_NLISTS] = {NULL};
    int         counts[DBS_NLISTS] = {0};
    int         i;

    dbs_conninfo = conninfo;
    dbs_prepare = prepare;
    dbs_nhosts = 0;
    dbs_opts = PQconninfoParse(conninfo, NULL);
    if (dbs_opts == NULL)
        return;                 /* checked at start-up: out of memory */
    apr_pool_cleanup_register(pchild, NULL, dbs_free_opts,
                              apr_pool_cleanup_null);
    for (o = dbs_opts; o->keyword != NULL; o++) {
        if (o->val == NULL)
            continue;
        if (strcmp(o->keyword, "target_session_attrs") == 0)
            dbs_prefer_standby = strcmp(o->val, "prefer-standby") == 0;
        for (i = 0; i < DBS_NLISTS; i++)
            if (strcmp(o->keyword, dbs_list_keys[i]) == 0)
                counts[i] = dbs_split(pchild, o->val, &entries[i]);
    }
    for (i = 0; i < DBS_NLISTS; i++) {
        if (counts[i] < 0) {
            ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                         BLOGLOGNO(00023)
                         "BlogDatabase lists more than %d hosts; "
                         "connecting in the order written", DBS_MAX_HOSTS);
            return;
        }
        if (counts[i] > dbs_nhosts)
            dbs_nhosts = counts[i];
    }
    if (dbs_nhosts < 2) {
        dbs_nhosts = 0;
        return;
    }
    /* libpq wants each list to be one entry or one per host */
    for (i = 0; i < DBS_NLISTS; i++) {
        if (counts[i] == dbs_nhosts)
            dbs_lists[i] = entries[i];
        else if (counts[i] > 1) {
            dbs_nhosts = 0;
            return;
        }
    }
    dbs_nperms = 1;
    for (i = 2; i <= dbs_nhosts; i++)
        dbs_nperms *= (apr_uint32_t) i;
    /* children start at different points of the cycle */
    dbs_next = ((apr_uint32_t) getpid() * 2654435761u) % dbs_nperms;
    apr_atomic_set64(&dbs_refresh_due,
                     (apr_uint64_t) (apr_time_now() + DBS_REFRESH));
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s,
                 BLOGLOGNO(00024)
                 "%d hosts, each connection tries them in another "
                 "order", dbs_nhosts);
}

/* Permutation number k of 0..n-1 (the factorial number system). */
static void
dbs_permutation(apr_uint32_t k, int n, int *perm)
{
    int         avail[DBS_MAX_HOSTS];
    apr_uint32_t f = 1;
    int         i;

    for (i = 0; i < n; i++)
        avail[i] = i;
    for (i = 2; i < n; i++)
        f *= (apr_uint32_t) i;
    for (i = 0; i < n; i++) {
        int         j = (int) (k / f);

        k %= f;
        perm[i] = avail[j];
        memmove(avail + j, avail + j + 1, (size_t) (n - i - j - 1) * sizeof(int));
        if (i < n - 1)
            f /= (apr_uint32_t) (n - 1 - i);
    }
}

int
blog_dbscale_params(const char **keys, const char **vals, int max,
                    char *buf, apr_size_t size)
{
    PQconninfoOption *o;
    int         perm[DBS_MAX_HOSTS];
    int         i, h, n = 0;

    if (dbs_nhosts == 0) {
        keys[0] = "dbname";
        vals[0] = dbs_conninfo;
        return 1;
    }
    dbs_permutation(apr_atomic_inc32(&dbs_next) % dbs_nperms, dbs_nhosts,
                    perm);
    for (o = dbs_opts; o->keyword != NULL && n < max; o++) {
        char      **list = NULL;

        if (o->val == NULL)
            continue;
        for (i = 0; i < DBS_NLISTS; i++)
            if (strcmp(o->keyword, dbs_list_keys[i]) == 0)
                list = dbs_lists[i];
        keys[n] = o->keyword;
        vals[n] = o->val;       /* also when buf is too small: as written */
        if (list != NULL) {
            char       *w = buf;

            for (h = 0; h < dbs_nhosts; h++) {
                apr_size_t  len = strlen(list[perm[h]]);

                if ((apr_size_t) (w - buf) + len + 2 > size)
                    break;
                if (h > 0)
                    *w++ = ',';
                memcpy(w, list[perm[h]], len);
                w += len;
            }
            if (h == dbs_nhosts) {
                *w++ = '\0';
                vals[n] = buf;
                size -= (apr_size_t) (w - buf);
                buf = w;
            }
        }
        n++;
    }
    return n;
}

/* One thread of the child wins the slot when it is due; the others wait. */
static int
dbs_take_slot(apr_uint64_t *slot, apr_interval_time_t every)
{
    apr_uint64_t now = (apr_uint64_t) apr_time_now();
    apr_uint64_t due = apr_atomic_read64(slot);

    if (now < due)
        return 0;
    return apr_atomic_cas64(slot, now + (apr_uint64_t) every, due) == due;
}

int
blog_dbscale_several(void)
{
    return dbs_nhosts > 1;
}

int
blog_dbscale_retire(PGconn *pg)
{
    const char *hs;

    if (dbs_nhosts == 0)
        return 0;
    hs = PQparameterStatus(pg, "in_hot_standby");
    if (dbs_prefer_standby && hs != NULL && strcmp(hs, "off") == 0)
        return dbs_take_slot(&dbs_fallback_due, DBS_FALLBACK_RETRY);
    return dbs_take_slot(&dbs_refresh_due, DBS_REFRESH);
}

int
blog_dbscale_send(PGconn *pg, const char *name, const char *sql,
                  const char *const *values, const int *lengths,
                  const int *formats)
{
    if (dbs_prepare)
        return PQsendQueryPrepared(pg, name, 1, values, lengths, formats, 1);
    return PQsendQueryParams(pg, sql, 1, NULL, values, lengths,
                             formats, 1);
}

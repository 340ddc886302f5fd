/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db_hosts.c - BlogDatabase's several hosts, spread over.  libpq 15 tries
 * a host list in the order written (load_balance_hosts came with 16), so
 * each new connection gets the permutations of the hosts in turn, from a
 * point that differs per child: each standby comes first equally often,
 * wherever the primary is listed.  A pooled connection stays on its
 * server, so with several hosts a child closes one every DBS_REFRESH, and
 * one that prefer-standby left on the primary every DBS_FALLBACK_RETRY
 * (docs/SCALING.md).
 */
#include "store/db_hosts.h"

#include "core/logno.h"

#include "http_log.h"
#include "apr_atomic.h"
#include "apr_strings.h"
#include "apr_tables.h"
#include <string.h>
#include <unistd.h>

APLOG_USE_MODULE(blog);


#define DBS_MAX_HOSTS       8
#define DBS_FALLBACK_RETRY  apr_time_from_msec(500)
/* any other: so that the spread comes back after a host returns */
#define DBS_REFRESH         apr_time_from_sec(5)

/* BlogDatabase's keywords, parsed once per child, in its pool. */
typedef struct db_hosts
{
    int         nkeys;
    const char *keys[BLOG_DB_MAX_PARAMS];
    const char *vals[BLOG_DB_MAX_PARAMS];
    char      **lists[BLOG_DB_MAX_PARAMS];   /* host, hostaddr, port: permuted */
    int         nhosts;         /* > 1: spreading */
    int         prefer_standby;
    apr_uint32_t nperms;
    apr_uint32_t next;
    apr_uint64_t fallback_due;  /* apr_time_t, apr_atomic */
    apr_uint64_t refresh_due;
} db_hosts;
static db_hosts *dbs;

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
blog_db_hosts_child_init(apr_pool_t *pchild, server_rec *s, const char *conninfo)
{
    PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
    PQconninfoOption *o;
    int         counts[BLOG_DB_MAX_PARAMS] = {0};
    int         i, n = 0;

    dbs = apr_pcalloc(pchild, sizeof(*dbs));    /* nhosts 0: as written */
    /* NULL: out of memory (the syntax was checked at start-up) */
    for (o = opts; o != NULL && o->keyword != NULL; o++) {
        if (o->val == NULL || dbs->nkeys == BLOG_DB_MAX_PARAMS - 2)
            continue;
        i = dbs->nkeys++;
        dbs->keys[i] = apr_pstrdup(pchild, o->keyword);
        dbs->vals[i] = apr_pstrdup(pchild, o->val);
        if (strcmp(o->keyword, "target_session_attrs") == 0)
            dbs->prefer_standby = strcmp(o->val, "prefer-standby") == 0;
        if (strcmp(o->keyword, "host") == 0
            || strcmp(o->keyword, "hostaddr") == 0
            || strcmp(o->keyword, "port") == 0)
            counts[i] = dbs_split(pchild, o->val, &dbs->lists[i]);
    }
    PQconninfoFree(opts);
    for (i = 0; i < dbs->nkeys; i++) {
        if (counts[i] < 0) {
            ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, BLOGLOGNO(00023)
                         "BlogDatabase lists more than %d hosts; "
                         "connecting in the order written", DBS_MAX_HOSTS);
            return;
        }
        if (counts[i] > n)
            n = counts[i];
    }
    if (n < 2)
        return;
    /* libpq wants each list to be one entry or one per host */
    for (i = 0; i < dbs->nkeys; i++) {
        if (counts[i] > 1 && counts[i] != n)
            return;
        if (counts[i] < n)
            dbs->lists[i] = NULL;
    }
    dbs->nhosts = n;
    dbs->nperms = 1;
    for (i = 2; i <= n; i++)
        dbs->nperms *= (apr_uint32_t) i;
    /* children start at different points of the cycle */
    dbs->next = ((apr_uint32_t) getpid() * 2654435761u) % dbs->nperms;
    apr_atomic_set64(&dbs->refresh_due,
                     (apr_uint64_t) (apr_time_now() + DBS_REFRESH));
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s, BLOGLOGNO(00024)
                 "%d hosts, each connection tries them in another order",
                 dbs->nhosts);
}

/*
 * Permutation number k of 0..n-1: k's digits in the mixed radix n, n-1,
 * ... pick each place in turn, the first place's digit varying fastest.
 */
static void
dbs_permutation(apr_uint32_t k, int n, int *perm)
{
    int         i;

    for (i = 0; i < n; i++)
        perm[i] = i;
    for (i = 0; i < n - 1; i++) {
        int         j = i + (int) (k % (apr_uint32_t) (n - i));
        int         t = perm[i];

        k /= (apr_uint32_t) (n - i);
        perm[i] = perm[j];
        perm[j] = t;
    }
}

int
blog_db_hosts_params(apr_pool_t *p, const char *conninfo, const char **keys,
                     const char **vals)
{
    int         perm[DBS_MAX_HOSTS];
    int         i, h;

    if (dbs->nhosts == 0) {
        keys[0] = "dbname";
        vals[0] = conninfo;
        return 1;
    }
    dbs_permutation(apr_atomic_inc32(&dbs->next) % dbs->nperms, dbs->nhosts,
                    perm);
    for (i = 0; i < dbs->nkeys; i++) {
        keys[i] = dbs->keys[i];
        vals[i] = dbs->vals[i];
        if (dbs->lists[i] != NULL) {
            apr_array_header_t *a = apr_array_make(p, dbs->nhosts,
                                                   sizeof(char *));

            for (h = 0; h < dbs->nhosts; h++)
                APR_ARRAY_PUSH(a, char *) = dbs->lists[i][perm[h]];
            vals[i] = apr_array_pstrcat(p, a, ',');
        }
    }
    return dbs->nkeys;
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
blog_db_hosts_retire(PGconn *pg)
{
    const char *hs;

    if (dbs->nhosts == 0)
        return 0;
    hs = PQparameterStatus(pg, "in_hot_standby");
    if (dbs->prefer_standby && hs != NULL && strcmp(hs, "off") == 0)
        return dbs_take_slot(&dbs->fallback_due, DBS_FALLBACK_RETRY);
    return dbs_take_slot(&dbs->refresh_due, DBS_REFRESH);
}

int
blog_db_hosts_several(void)
{
    return dbs->nhosts > 1;
}

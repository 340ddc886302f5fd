/*
 * dbscale.c - several PostgreSQL hosts.
 *
 * libpq 15 tries a host list in the order written (load_balance_hosts came
 * with 16), so each new connection gets the permutations of the hosts in
 * turn, from a point that differs per child: each standby comes first
 * equally often, wherever the primary is listed.  A pooled connection stays
 * on its server, so with several hosts a child closes one every
 * DBS_REFRESH, and one that prefer-standby left on the primary every
 * DBS_FALLBACK_RETRY (docs/SCALING.md).
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

/* The child's parse of BlogDatabase. */
static struct
{
    const char *conninfo;
    PQconninfoOption *opts;
    int         nhosts;         /* > 1: spreading */
    int         prefer_standby;
    apr_uint32_t nperms;
    char      **lists[DBS_NLISTS];      /* NULL: not a list of nhosts */
    apr_uint32_t next;
    apr_uint64_t fallback_due;  /* apr_time_t, apr_atomic */
    apr_uint64_t refresh_due;
} dbs;

static apr_status_t
dbs_free_opts(void *data)
{
    (void) data;
    PQconninfoFree(dbs.opts);
    dbs.opts = NULL;
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
                        const char *conninfo)
{
    PQconninfoOption *o;
    char      **entries[DBS_NLISTS] = {NULL};
    int         counts[DBS_NLISTS] = {0};
    int         i;

    dbs.conninfo = conninfo;
    dbs.nhosts = 0;
    dbs.opts = PQconninfoParse(conninfo, NULL);
    if (dbs.opts == NULL)
        return;                 /* checked at start-up: out of memory */
    apr_pool_cleanup_register(pchild, NULL, dbs_free_opts,
                              apr_pool_cleanup_null);
    for (o = dbs.opts; o->keyword != NULL; o++) {
        if (o->val == NULL)
            continue;
        if (strcmp(o->keyword, "target_session_attrs") == 0)
            dbs.prefer_standby = strcmp(o->val, "prefer-standby") == 0;
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
        if (counts[i] > dbs.nhosts)
            dbs.nhosts = counts[i];
    }
    if (dbs.nhosts < 2) {
        dbs.nhosts = 0;
        return;
    }
    /* libpq wants each list to be one entry or one per host */
    for (i = 0; i < DBS_NLISTS; i++) {
        if (counts[i] == dbs.nhosts)
            dbs.lists[i] = entries[i];
        else if (counts[i] > 1) {
            dbs.nhosts = 0;
            return;
        }
    }
    dbs.nperms = 1;
    for (i = 2; i <= dbs.nhosts; i++)
        dbs.nperms *= (apr_uint32_t) i;
    /* children start at different points of the cycle */
    dbs.next = ((apr_uint32_t) getpid() * 2654435761u) % dbs.nperms;
    apr_atomic_set64(&dbs.refresh_due,
                     (apr_uint64_t) (apr_time_now() + DBS_REFRESH));
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s,
                 BLOGLOGNO(00024)
                 "%d hosts, each connection tries them in another "
                 "order", dbs.nhosts);
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

    if (dbs.nhosts == 0) {
        keys[0] = "dbname";
        vals[0] = dbs.conninfo;
        return 1;
    }
    dbs_permutation(apr_atomic_inc32(&dbs.next) % dbs.nperms, dbs.nhosts,
                    perm);
    for (o = dbs.opts; o->keyword != NULL && n < max; o++) {
        char      **list = NULL;

        if (o->val == NULL)
            continue;
        for (i = 0; i < DBS_NLISTS; i++)
            if (strcmp(o->keyword, dbs_list_keys[i]) == 0)
                list = dbs.lists[i];
        keys[n] = o->keyword;
        vals[n] = o->val;       /* also when buf is too small: as written */
        if (list != NULL) {
            char       *w = buf;

            for (h = 0; h < dbs.nhosts; h++) {
                apr_size_t  len = strlen(list[perm[h]]);

                if ((apr_size_t) (w - buf) + len + 2 > size)
                    break;
                if (h > 0)
                    *w++ = ',';
                memcpy(w, list[perm[h]], len);
                w += len;
            }
            if (h == dbs.nhosts) {
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
    return dbs.nhosts > 1;
}

int
blog_dbscale_retire(PGconn *pg)
{
    const char *hs;

    if (dbs.nhosts == 0)
        return 0;
    hs = PQparameterStatus(pg, "in_hot_standby");
    if (dbs.prefer_standby && hs != NULL && strcmp(hs, "off") == 0)
        return dbs_take_slot(&dbs.fallback_due, DBS_FALLBACK_RETRY);
    return dbs_take_slot(&dbs.refresh_due, DBS_REFRESH);
}

/*
 * health.c - "SetHandler blog-health" in a <Location>: 200 "ok" when a
 * pooled connection answers PostgreSQL's "SELECT 1" and Redis answers a
 * GET, else 503 "PostgreSQL unavailable" or "Redis unavailable" (the first
 * that failed), for a load balancer or a monitor.  Nothing more: the
 * reason (libpq's or hiredis' text, with socket paths, hosts, ports and
 * role names) is for the admin, not for whoever can reach /health; it goes
 * to the error log, rate-limited, and to mod_status's page (status.c),
 * which admins protect.
 *
 * It asks through the same pool and the same Redis client as the pages
 * (a GET of a key no page uses: any answer, nil included, will do), under
 * the same deadlines (BlogQueryTimeout, BlogRedisTimeout), so it never
 * waits longer than a page would, and while a service is known to be down
 * (the backoff after a failed connect) it answers at once.  With BlogRedis Off only PostgreSQL is asked.  An ordinary
 * handler, after access control, like mod_status's server-status: a
 * Location outside BlogMount, or a virtual host of its own, reaches it.
 */
#include "status.h"

#include "cache.h"
#include "db.h"
#include "ratelog.h"

#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "apr_strings.h"

#include <pthread.h>
#include <string.h>

APLOG_USE_MODULE(blog);

#define HEALTH_WHY_MAX 600
/* under the page prefix, for an ACL that allows only it; no path is "health" */
#define HEALTH_KEY BLOG_CACHE_PREFIX "health"

static int
health_redis(request_rec *r, char *why, apr_size_t why_len)
{
    const char *body;
    apr_size_t  len;
    const char *last;

    if (!blog_cache_enabled())
        return 0;
    blog_cache_why_reset();
    if (blog_cache_get(r, HEALTH_KEY, sizeof(HEALTH_KEY) - 1, &body, &len)
        != BLOG_CACHE_DOWN)
        return 0;
    last = blog_cache_why();
    /* nothing tried: another thread's failure started the backoff */
    apr_snprintf(why, why_len, "Redis: %s", last[0] ? last
                 : "unreachable (backing off after a failure; see the "
                 "error log)");
    return -1;
}

/* This child's last failed check of each service, for mod_status. */
static pthread_mutex_t health_lock = PTHREAD_MUTEX_INITIALIZER;
static char health_last[2][HEALTH_WHY_MAX];
static apr_time_t health_last_at[2];
static blog_ratelog health_log;

static void
health_failed(request_rec *r, int which, const char *why)
{
    pthread_mutex_lock(&health_lock);
    apr_cpystrn(health_last[which], why, HEALTH_WHY_MAX);
    health_last_at[which] = apr_time_now();
    pthread_mutex_unlock(&health_lock);
    blog_log_limited(&health_log, APLOG_WARNING, 0, r->server,
                     BLOGLOGNO(00025) "health check failed: %s", why);
}

int
blog_health_last(int which, char *why, apr_size_t len, apr_time_t *at)
{
    pthread_mutex_lock(&health_lock);
    apr_cpystrn(why, health_last[which], len);
    *at = health_last_at[which];
    pthread_mutex_unlock(&health_lock);
    return *at != 0;
}

static int
health_handler(request_rec *r)
{
    char        pg_why[HEALTH_WHY_MAX];
    char        redis_why[HEALTH_WHY_MAX];
    int         pg_ok, redis_ok, rv;
    const char *body;

    if (r->handler == NULL || strcmp(r->handler, "blog-health") != 0)
        return DECLINED;
    r->allowed = AP_METHOD_BIT << M_GET;
    if (r->method_number != M_GET)
        return HTTP_METHOD_NOT_ALLOWED;
    rv = ap_discard_request_body(r);
    if (rv != OK)
        return rv;
    pg_ok = blog_db_ping(r, pg_why, sizeof(pg_why)) == 0;
    redis_ok = health_redis(r, redis_why, sizeof(redis_why)) == 0;
    if (!pg_ok)
        health_failed(r, BLOG_HEALTH_PG, pg_why);
    if (!redis_ok)
        health_failed(r, BLOG_HEALTH_REDIS, redis_why);
    body = !pg_ok ? "PostgreSQL unavailable\n"
        : !redis_ok ? "Redis unavailable\n" : "ok\n";
    r->status = pg_ok && redis_ok ? HTTP_OK : HTTP_SERVICE_UNAVAILABLE;
    ap_set_content_type(r, "text/plain; charset=utf-8");
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (r->status != HTTP_OK)
        apr_table_setn(r->headers_out, "Retry-After", "1");
    ap_set_content_length(r, (apr_off_t) strlen(body));
    ap_rwrite(body, (int) strlen(body), r);
    return OK;
}

void
blog_health_register_hooks(void)
{
    ap_hook_handler(health_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

/*
 * health.c - "SetHandler blog-health": 200 "ok" when a pooled connection
 * answers "SELECT 1" and Redis answers a GET, else 503 naming the first
 * service that failed.  The reason (hosts, roles, paths) is for the admin
 * only: the error log and mod_status's page (status.c).  It asks through
 * the pages' pool and Redis client, under their deadlines and backoffs.
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

#include "apr_thread_mutex.h"
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
static struct
{
    apr_thread_mutex_t *lock;
    char        why[2][HEALTH_WHY_MAX];
    apr_time_t  at[2];
    blog_ratelog log;
} health;

static void
health_failed(request_rec *r, int which, const char *why)
{
    if (health.lock != NULL) {
        apr_thread_mutex_lock(health.lock);
        apr_cpystrn(health.why[which], why, HEALTH_WHY_MAX);
        health.at[which] = apr_time_now();
        apr_thread_mutex_unlock(health.lock);
    }
    blog_log_limited(&health.log, APLOG_WARNING, 0, r->server,
                     BLOGLOGNO(00025) "health check failed: %s", why);
}

int
blog_health_last(int which, char *why, apr_size_t len, apr_time_t *at)
{
    *at = 0;
    if (health.lock == NULL)
        return 0;
    apr_thread_mutex_lock(health.lock);
    apr_cpystrn(why, health.why[which], len);
    *at = health.at[which];
    apr_thread_mutex_unlock(health.lock);
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

static void
health_child_init(apr_pool_t *pchild, server_rec *s)
{
    (void) s;
    apr_thread_mutex_create(&health.lock, APR_THREAD_MUTEX_DEFAULT, pchild);
}

void
blog_health_register_hooks(void)
{
    ap_hook_child_init(health_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(health_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

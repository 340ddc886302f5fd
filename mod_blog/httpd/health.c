/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health.c - the blog-health handler: PostgreSQL and Redis asked, 200 or
 * 503 (docs/OPERATIONS.md, "Status and health").  A failed check's reason
 * (hosts, roles, paths) is for the admin only: the error log and the status
 * page, never the 503's body.
 */
#include "httpd/health.h"
#include "httpd/store_call.h"

#include "core/logno.h"
#include "store/cache.h"
#include "store/db.h"
#include "store/ratelog.h"

#include "http_config.h"
#include "http_log.h"
#include "http_protocol.h"
#include "apr_strings.h"
#include "apr_thread_mutex.h"

#include <string.h>

APLOG_USE_MODULE(blog);

/* This child's last failed check of each service, for mod_status. */
static struct
{
    apr_thread_mutex_t *lock;
    char        why[2][BLOG_HEALTH_WHY_MAX];
    apr_time_t  at[2];
    blog_ratelog log;
} health;

static void
health_failed(request_rec *r, int which, const char *why)
{
    if (health.lock != NULL) {
        apr_thread_mutex_lock(health.lock);
        apr_cpystrn(health.why[which], why, BLOG_HEALTH_WHY_MAX);
        health.at[which] = apr_time_now();
        apr_thread_mutex_unlock(health.lock);
    }
    blog_log_limited(&health.log, APLOG_WARNING, 0, r->server,
                     BLOGLOGNO(00025) "health check failed: %s", why);
}

static int
health_handler(request_rec *r)
{
    char        pg_why[BLOG_HEALTH_WHY_MAX];
    char        redis_why[BLOG_HEALTH_WHY_MAX];
    int         pg_ok, redis_ok, rv;
    const char *body;
    blog_call   call = blog_call_of(r);

    if (r->handler == NULL || strcmp(r->handler, "blog-health") != 0)
        return DECLINED;
    r->allowed = AP_METHOD_BIT << M_GET;
    if (r->method_number != M_GET)
        return HTTP_METHOD_NOT_ALLOWED;
    rv = ap_discard_request_body(r);
    if (rv != OK)
        return rv;
    pg_ok = blog_db_ping(&call, pg_why, sizeof(pg_why)) == 0;
    redis_ok = blog_cache_ping(&call, redis_why, sizeof(redis_why)) == 0;
    blog_call_notes(r, &call);
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
    apr_status_t rv = apr_thread_mutex_create(&health.lock,
                                              APR_THREAD_MUTEX_DEFAULT,
                                              pchild);

    if (rv != APR_SUCCESS) {
        health.lock = NULL;     /* the checks still run, unrecorded */
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s, BLOGLOGNO(00066)
                     "no lock for the health check's last failures: "
                     "mod_status's page will not show them");
    }
}

int
blog_health_last_failure(int which, char *why, apr_size_t len,
                         apr_time_t *at)
{
    if (health.lock == NULL)
        return -1;
    apr_thread_mutex_lock(health.lock);
    apr_cpystrn(why, health.why[which], len);
    *at = health.at[which];
    apr_thread_mutex_unlock(health.lock);
    return 0;
}

void
blog_health_register_hooks(void)
{
    ap_hook_child_init(health_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(health_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

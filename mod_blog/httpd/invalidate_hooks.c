/* SPDX-License-Identifier: Apache-2.0 */
/*
 * invalidate_hooks.c - the hooks that run store/invalidate.c's listener:
 * its election mutex, a type of httpd's Mutex directive made in
 * post_config, its thread started in each child and told to stop as the
 * child stops.
 */
#include "httpd/invalidate_hooks.h"

#include "core/logno.h"
#include "store/invalidate.h"

#include "http_config.h"
#include "http_core.h"
#include "http_log.h"
#include "mpm_common.h"
#include "util_mutex.h"

APLOG_USE_MODULE(blog);

#define INV_MUTEX_TYPE      "blog-invalidate"

static int
inv_pre_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
    (void) plog;
    (void) ptemp;
    return ap_mutex_register(pconf, INV_MUTEX_TYPE, NULL, APR_LOCK_DEFAULT, 0);
}

static int
inv_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                server_rec *s)
{
    apr_proc_mutex_t *mutex = NULL;
    apr_status_t rv;

    (void) plog;
    (void) ptemp;
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG
        || !blog_invalidate_wanted())
        return OK;
    rv = ap_proc_mutex_create(&mutex, NULL, INV_MUTEX_TYPE, NULL, s, pconf, 0);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, s, BLOGLOGNO(00035)
                     "cannot create the invalidation listener's mutex");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rv = blog_invalidate_prepare(pconf, mutex);
    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s, BLOGLOGNO(00068)
                     "no shared memory for the pages' last invalidations: "
                     "a sealed page written back into Redis is refused "
                     "only once older than BlogCacheTTL");
    return OK;
}

static void
inv_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_status_t rv = blog_invalidate_start(pchild);

    if (rv != APR_SUCCESS)
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, BLOGLOGNO(00036)
                     "cannot start the invalidation listener in this child");
}

/*
 * A stopping child hands the listening over now, not at its exit.  Only
 * told, never waited for: the event MPM runs this hook on its listener
 * thread (which must go on accepting while connections drain), and may
 * run it twice, graceful then ungraceful, from two threads.
 */
static void
inv_child_stopping(apr_pool_t *pchild, int graceful)
{
    (void) pchild;
    (void) graceful;
    blog_invalidate_stop_soon();
}

void
blog_invalidate_register_hooks(void)
{
    ap_hook_pre_config(inv_pre_config, NULL, NULL, APR_HOOK_MIDDLE);
    /* after mod_blog.c's, which configures it */
    ap_hook_post_config(inv_post_config, NULL, NULL, APR_HOOK_LAST);
    ap_hook_child_init(inv_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_stopping(inv_child_stopping, NULL, NULL, APR_HOOK_MIDDLE);
}

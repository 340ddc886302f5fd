/* SPDX-License-Identifier: Apache-2.0 */
/*
 * backends.c - the helpers of backends.h.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends.h"
#include "apr_strings.h"
#include "http_log.h"

apr_pool_t *
t_root(void)
{
    static apr_pool_t *root;

    if (root == NULL) {
        apr_initialize();
        atexit(apr_terminate);
        apr_pool_create(&root, NULL);
    }
    return root;
}

request_rec *
t_request(apr_pool_t *parent)
{
    apr_pool_t *p;
    request_rec *r;

    apr_pool_create(&p, parent);
    r = apr_pcalloc(p, sizeof(*r));
    r->pool = p;
    r->notes = apr_table_make(p, 2);
    r->server = apr_pcalloc(p, sizeof(*r->server));
    r->server->log.level = APLOG_DEBUG;
    return r;
}

const char *
t_sockdir(apr_pool_t *p)
{
    char       *dir = apr_pstrdup(p, "/tmp/blog-unit-XXXXXX");

    if (mkdtemp(dir) == NULL)
        abort();
    return dir;
}

void
t_sockdir_remove(const char *dir)
{
    rmdir(dir);
}

long
t_ms_since(apr_time_t t)
{
    return (long) apr_time_as_msec(apr_time_now() - t);
}

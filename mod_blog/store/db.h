/* SPDX-License-Identifier: Apache-2.0 */
/* db.h - the per-child PostgreSQL pool and a page's one call. */
#ifndef BLOG_DB_H
#define BLOG_DB_H

#include "httpd.h"

#include "core/build.h"
#include "store/call.h"
#include "apr_time.h"


/* BlogDatabase, BlogPool*, BlogQueryTimeout and BlogPrepare. */
typedef struct blog_db_settings
{
    const char *conninfo;
    int         pool_min;
    int         pool_keep;
    int         pool_max;
    apr_interval_time_t pool_exptime;
    apr_interval_time_t acquire_timeout;
    apr_interval_time_t query_timeout;
    int         prepare;        /* 0 behind a transaction pooler */
} blog_db_settings;

typedef enum blog_stmt
{
    BLOG_STMT_INDEX = 0,        /* blog.index_page($1 integer) */
    BLOG_STMT_POST,             /* blog.post_page($1 text) */
    BLOG_STMT_TAG               /* blog.tag_page($1 text) */
} blog_stmt;

/* The child's pool; when eager (a BlogMount), BlogPoolMin opened now and
 * the opener thread started, else each connect made by the request that
 * needs it (blog-health's alone). */
void blog_db_child_init(apr_pool_t *pchild, server_rec *s,
                        const blog_db_settings *g, int eager);

/*
 * A page statement with one binary parameter: its rows, read through core's
 * blog_rows (pq_rows.c), live as long as call->pool; non-zero on any failure
 * (the caller answers 503).
 */
apr_status_t blog_db_rows(blog_call *call, blog_stmt stmt, const char *param,
                          apr_size_t param_len, blog_rows *rows);

/* NULL when libpq accepts conninfo, else why not (allocated in p). */
const char *blog_db_conninfo_error(apr_pool_t *p, const char *conninfo);

/* A pooled connection answers "SELECT 1": 0, or -1 with why. */
int blog_db_ping(blog_call *call, char *why, apr_size_t why_len);

#endif

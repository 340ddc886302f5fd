/*
 * db.h - the per-child PostgreSQL connection pool and the one call a page
 * makes to pg_blog.
 */
#ifndef BLOG_DB_H
#define BLOG_DB_H

#include "httpd.h"
#include "apr_time.h"

#include <libpq-fe.h>

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

/*
 * Set up the child's pool, opening its connections now when eager (else on
 * the first request); a database that is down now is retried later.
 */
void blog_db_child_init(apr_pool_t *pchild, server_rec *s,
                        const blog_db_settings *g, int eager);

/*
 * Run one prepared page statement with one parameter in binary format
 * (text: its bytes; integer: 4 bytes big-endian).  On success
 * *res holds the rows (binary format), freed with r->pool.  Any failure
 * (database down, timeout, error) returns non-zero: the caller answers 503.
 */
apr_status_t blog_db_page(request_rec *r, blog_stmt stmt,
                          const char *param, apr_size_t param_len,
                          PGresult **res);

/*
 * The health check: a pooled connection answers "SELECT 1" by the page
 * deadline.  0, or -1 with a one-line reason in why.
 */
int blog_db_ping(request_rec *r, char *why, apr_size_t why_len);

#endif

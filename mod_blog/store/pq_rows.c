/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pq_rows.c - a page statement's libpq result read as core's blog_rows: the
 * only reader of PGresult above the pool.
 */
#include "store/db_result.h"

static int
pq_rows_column(const void *src, const char *name)
{
    return PQfnumber(src, name);
}

static blog_cell
pq_rows_cell(const void *src, int row, int c)
{
    /* PQgetisnull says 1 for a row or column out of range, too */
    if (PQgetisnull(src, row, c))
        return (blog_cell) {NULL, 0};
    return (blog_cell) {PQgetvalue(src, row, c), PQgetlength(src, row, c)};
}

apr_status_t
blog_db_rows(blog_call *call, blog_stmt stmt, const char *param,
             apr_size_t param_len, blog_rows *rows)
{
    PGresult   *res;
    apr_status_t rv = blog_db_page(call, stmt, param, param_len, &res);

    if (rv == APR_SUCCESS)
        *rows = (blog_rows) {res, PQntuples(res), pq_rows_column,
            pq_rows_cell};
    return rv;
}

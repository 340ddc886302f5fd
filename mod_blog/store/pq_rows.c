/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pq_rows.c - a page statement's libpq result handed up as core's blog_rows:
 * every cell read here, once, so that building the page never calls back
 * down into libpq (the only reader of PGresult above the pool).
 */
#include "store/db_result.h"

/* PQgetvalue's pointers stay the result's: both live as long as the pool. */
static apr_status_t
pq_rows_fill(apr_pool_t *p, const PGresult *res, blog_rows *rows)
{
    int         nrows = PQntuples(res);
    int         ncols = PQnfields(res);
    size_t      n = (size_t) nrows * (size_t) ncols;
    /* at least one element: apr_palloc of 0 bytes may give NULL */
    const char **names = apr_palloc(p, sizeof(*names) * (ncols ? ncols : 1));
    blog_cell  *cells = apr_palloc(p, sizeof(*cells) * (n ? n : 1));
    blog_cell  *at = cells;
    int         r,
                c;

    if (names == NULL || cells == NULL)
        return APR_ENOMEM;
    for (c = 0; c < ncols; c++)
        names[c] = PQfname(res, c);
    for (r = 0; r < nrows; r++) {
        for (c = 0; c < ncols; c++, at++) {
            if (PQgetisnull(res, r, c))
                *at = (blog_cell) {NULL, 0};
            else
                *at = (blog_cell) {PQgetvalue(res, r, c),
                    PQgetlength(res, r, c)};
        }
    }
    *rows = (blog_rows) {nrows, ncols, names, cells};
    return APR_SUCCESS;
}

apr_status_t
blog_db_rows(blog_call *call, blog_stmt stmt, const char *param,
             apr_size_t param_len, blog_rows *rows)
{
    PGresult   *res;
    apr_status_t rv = blog_db_page(call, stmt, param, param_len, &res);

    return rv == APR_SUCCESS ? pq_rows_fill(call->pool, res, rows) : rv;
}

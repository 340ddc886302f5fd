/* SPDX-License-Identifier: Apache-2.0 */
/*
 * db_result.h - a page statement's libpq result, for the store alone (and
 * its tests): above the store, rows are core's blog_rows (db.h).
 */
#ifndef BLOG_DB_RESULT_H
#define BLOG_DB_RESULT_H

#include "store/db.h"

#include <libpq-fe.h>

/* The statement's result in *res, freed with call->pool; non-zero on any
 * failure. */
apr_status_t blog_db_page(blog_call *call, blog_stmt stmt, const char *param,
                          apr_size_t param_len, PGresult **res);

#endif

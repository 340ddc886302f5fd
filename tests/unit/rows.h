/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rows.h - a result set held in memory, handed to the page builder as
 * blog_rows: for the unit tests and the fuzzer.
 */
#ifndef BLOG_TEST_ROWS_H
#define BLOG_TEST_ROWS_H

#include "core/build.h"

#define T_MAX_COLS 10

typedef struct t_rows
{
    int nrows;
    int ncols;
    const char *names[T_MAX_COLS];
    blog_cell *cells;           /* nrows x ncols, row by row */
} t_rows;

/* The builder's view of t, as the store hands up libpq's. */
blog_rows t_rows_view(const t_rows *t);
/* The number of the column called name, or -1. */
int t_rows_column(const t_rows *t, const char *name);

#endif

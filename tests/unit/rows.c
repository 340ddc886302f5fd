/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rows.c - the accessors of rows.h.
 */
#include <string.h>

#include "rows.h"

int
t_rows_column(const t_rows *t, const char *name)
{
    int i;

    for (i = 0; i < t->ncols; i++)
        if (strcmp(t->names[i], name) == 0)
            return i;
    return -1;
}

static int
column(const void *src, const char *name)
{
    return t_rows_column(src, name);
}

static blog_cell
cell(const void *src, int row, int col)
{
    const t_rows *t = src;
    blog_cell none = {NULL, 0};

    if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
        return none;
    return t->cells[row * t->ncols + col];
}

blog_rows
t_rows_view(const t_rows *t)
{
    blog_rows rs = {t, t->nrows, column, cell};

    return rs;
}

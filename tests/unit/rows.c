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

blog_rows
t_rows_view(const t_rows *t)
{
    blog_rows rs = {t->nrows, t->ncols, t->names, t->cells};

    return rs;
}

/*
 * dbscale.h - past one PostgreSQL server: a multi-host BlogDatabase spread
 * over.  A layer below the pool (db.c).
 */
#ifndef BLOG_DBSCALE_H
#define BLOG_DBSCALE_H

#include "httpd.h"

#include <libpq-fe.h>

/* Parse BlogDatabase once per child; a single host leaves it as it is. */
void blog_dbscale_child_init(apr_pool_t *pchild, server_rec *s,
                             const char *conninfo);

/*
 * The next connection's keywords and values (at most max; returns how
 * many, not terminated): with several hosts their lists in another order,
 * written into buf; else "dbname" and BlogDatabase.
 */
int blog_dbscale_params(const char **keys, const char **vals, int max,
                        char *buf, apr_size_t size);

/*
 * Whether BlogDatabase lists several hosts: then a failed connect is tried
 * again in another order (libpq 15 gives up on the whole list when one
 * host closes the connection before answering).
 */
int         blog_dbscale_several(void);

/* Whether a connection going back to the pool is closed instead. */
int blog_dbscale_retire(PGconn *pg);

#endif

/*
 * dbscale.h - past one PostgreSQL server: children spread over the hosts of
 * a multi-host conninfo, and pages sent without session state through a
 * transaction pooler (BlogPrepare Off).  A layer below the pool: it knows
 * libpq and BlogDatabase, not db.c.  mod_blog.c's child_init sets it up;
 * db.c calls the others.
 */
#ifndef BLOG_DBSCALE_H
#define BLOG_DBSCALE_H

#include "httpd.h"

#include <libpq-fe.h>

/* Parse BlogDatabase once per child; a single host leaves it as it is. */
void blog_dbscale_child_init(apr_pool_t *pchild, server_rec *s,
                             const char *conninfo, int prepare);

/*
 * The keywords and values of the next connection this child opens, for
 * PQconnectStartParams with expand_dbname: with several hosts, the host,
 * hostaddr and port lists in another order each time, written into buf
 * (size bytes); else "dbname" and BlogDatabase.  At most max pairs;
 * returns how many, keys and vals not terminated.
 */
int blog_dbscale_params(const char **keys, const char **vals, int max,
                        char *buf, apr_size_t size);

/*
 * Whether BlogDatabase lists several hosts.  Then a failed connect is worth
 * one more try, with the hosts in another order: libpq 15 gives up on the
 * whole list, instead of trying the next host, when one closes the
 * connection before answering, as a server going down does.
 */
int         blog_dbscale_several(void);

/*
 * Whether a connection going back to the pool should be closed instead, so
 * that the next one is opened with the hosts in another order: with
 * several hosts, one a child every few seconds, and one that libpq's
 * prefer-standby left on a primary twice a second.
 */
int blog_dbscale_retire(PGconn *pg);

/*
 * Send a page's statement: the prepared statement by name, or with
 * BlogPrepare Off its SQL text as one unnamed extended-protocol statement
 * (Parse, Bind, Describe, Execute, Sync in one write: one round trip).
 * Returns what PQsendQueryPrepared returns.
 */
int blog_dbscale_send(PGconn *pg, const char *name, const char *sql,
                      const char *const *values, const int *lengths,
                      const int *formats);

#endif

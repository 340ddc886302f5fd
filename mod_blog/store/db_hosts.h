/* SPDX-License-Identifier: Apache-2.0 */
/* db_hosts.h - BlogDatabase's several hosts, spread over the pool's new
 * connections (db_hosts.c). */
#ifndef BLOG_DB_HOSTS_H
#define BLOG_DB_HOSTS_H

#include "httpd.h"
#include "apr_pools.h"

#include <libpq-fe.h>

/* Keywords a connection may carry: ours and BlogDatabase's. */
#define BLOG_DB_MAX_PARAMS 64

/* BlogDatabase's keywords parsed in the child, its host lists kept for
 * reordering when there are two or more (a warning on s when too many). */
void blog_db_hosts_child_init(apr_pool_t *pchild, server_rec *s,
                              const char *conninfo);

/* The next connection's keywords and values, and how many: with several
 * hosts their lists reordered (from p), else "dbname" = conninfo. */
int blog_db_hosts_params(apr_pool_t *p, const char *conninfo,
                         const char **keys, const char **vals);

/* Whether a connection going back to the pool is closed instead. */
int blog_db_hosts_retire(PGconn *pg);

/* Whether BlogDatabase lists more than one host to spread over. */
int blog_db_hosts_several(void);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* pq.h - libpq bounded by a deadline, for the pool and the listener. */
#ifndef BLOG_PQ_H
#define BLOG_PQ_H

#include "apr_time.h"

#include <libpq-fe.h>

/* Room for a flattened message. */
#define BLOG_PQ_MSG_MAX 512

/*
 * PQconnectStartParams by the deadline, "dbname" expanded (a conninfo):
 * NULL with why on a failure.
 */
PGconn *blog_pq_connect(const char *const *keys, const char *const *vals,
                        apr_time_t deadline, char *why, int *timed_out);

/*
 * Every result by the deadline (a pipeline's up to its Sync, the pipeline
 * then left): the last statement's, or the first error, or NULL on a lost
 * connection or a timeout (*timed_out).
 */
PGresult *blog_pq_results(PGconn *pg, apr_time_t deadline, int *timed_out);

/* A statement without rows by the deadline: 0, or -1 with why. */
int blog_pq_command(PGconn *pg, const char *sql, apr_time_t deadline,
                    char *why);

/* libpq's message (NULL: "unknown error") on one line in buf. */
const char *blog_pq_msg(char *buf, const char *msg);

#endif

/*
 * pq.h - the libpq helpers of mod_blog, used by the pool (db.c) and the
 * invalidation listener (invalidate.c): a connect and a round trip that
 * never wait past a deadline, and libpq's messages on one log line.
 */
#ifndef BLOG_PQ_H
#define BLOG_PQ_H

#include "apr_time.h"

#include <libpq-fe.h>

/* Room for a flattened message. */
#define BLOG_PQ_MSG_MAX 512

/*
 * PQconnectStartParams(keys, vals, expand_dbname), driven without blocking
 * past the deadline.  NULL on failure, with why (BLOG_PQ_MSG_MAX bytes):
 * libpq's message, or "no answer in time" when *timed_out.
 */
PGconn *blog_pq_connect(const char *const *keys, const char *const *vals,
                        int expand_dbname, apr_time_t deadline, char *why,
                        int *timed_out);

/*
 * Flush what was sent and collect every result by the deadline.  Returns
 * the first result (a later error wins over a COMMAND_OK; the caller
 * clears it), NULL on a lost connection or a timeout (*timed_out).
 */
PGresult *blog_pq_results(PGconn *pg, apr_time_t deadline, int *timed_out);

/*
 * libpq's message (NULL: "unknown error") in buf (BLOG_PQ_MSG_MAX bytes)
 * on one line: its line breaks and tabs one space each, no trailing one.
 */
const char *blog_pq_msg(char *buf, const char *msg);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ratelog.h - warnings that repeat, logged at most once per period with a
 * count of the ones held back, and an outage's end logged once.
 */
#ifndef BLOG_RATELOG_H
#define BLOG_RATELOG_H

#include "httpd.h"
#include "http_log.h"
#include "apr_time.h"

#include "core/logno.h"
#include "store/call.h"

/* The warnings about one service (PostgreSQL, Redis); zero-initialised. */
typedef struct blog_ratelog
{
    /* per class, [0] errors and worse, [1] the rest: a warning never
     * holds an error back */
    apr_uint64_t window_start[2];       /* apr_time_t: its last line */
    apr_uint32_t held[2];       /* lines since, not written */
    apr_uint64_t since;         /* apr_time_t: its outage began; 0: none */
    apr_uint64_t last_said;     /* apr_time_t: an outage's end last logged */
} blog_ratelog;

/* How long a kind of warning stays quiet after it was written. */
#define BLOG_RATELOG_PERIOD apr_time_from_sec(5)

/*
 * Log unless a line of this class was written less than
 * BLOG_RATELOG_PERIOD ago; the next says how many were held back.  A
 * macro, for the caller's APLOG_MARK; fmt starts with its BLOGLOGNO tag.
 */
#define blog_log_limited(rl, level, status, s, ...) \
    blog_log_limited_(rl, APLOG_MARK, level, status, NULL, s, __VA_ARGS__)
/* The same, a line of the call (call.h: its client named when it has one). */
#define blog_call_log_limited(rl, level, status, call, ...) \
    blog_log_limited_(rl, APLOG_MARK, level, status, (call)->c, (call)->s, \
                      __VA_ARGS__)
void blog_log_limited_(blog_ratelog *rl, const char *file, int line,
                       int module_index, int level, apr_status_t status,
                       const conn_rec *c, const server_rec *s,
                       const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));

/* The service's outage, so that its end is logged once. */
void blog_outage_begin(blog_ratelog *o);
/* "<what> again after N s", once per period, when an outage was running:
 * on s, or as a line of the call (blog_call_outage_end). */
#define blog_outage_end(o, s, what) \
    blog_outage_end_(o, APLOG_MARK, NULL, s, what)
#define blog_call_outage_end(o, call, what) \
    blog_outage_end_(o, APLOG_MARK, (call)->c, (call)->s, what)
void blog_outage_end_(blog_ratelog *o, const char *file, int line,
                      int module_index, const conn_rec *c,
                      const server_rec *s, const char *what);

#endif

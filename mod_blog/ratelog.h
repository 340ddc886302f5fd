/*
 * ratelog.h - warnings that repeat, logged at most once per period with a
 * count of the ones held back, and an outage's end logged once.
 */
#ifndef BLOG_RATELOG_H
#define BLOG_RATELOG_H

#include "httpd.h"
#include "apr_time.h"

/* The warnings about one service (PostgreSQL, Redis); zero-initialised. */
typedef struct blog_ratelog
{
    apr_time_t  window_start;   /* when the last line was written */
    apr_uint32_t held;          /* warnings since, not written */
} blog_ratelog;

/* How long a kind of warning stays quiet after it was written. */
#define BLOG_RATELOG_PERIOD apr_time_from_sec(5)

/*
 * Log msg for s at level, unless a warning of this kind was written less
 * than BLOG_RATELOG_PERIOD ago; the next line written says how many were
 * held back.  Safe from any thread.
 */
void blog_log_limited(blog_ratelog *rl, int level, apr_status_t status,
                      const server_rec *s, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* An outage of one service, so that its end is logged once. */
typedef struct blog_outage
{
    apr_time_t  since;          /* 0 while the service is reachable */
    apr_time_t  last_said;      /* when its end was last logged */
} blog_outage;

void blog_outage_begin(blog_outage *o);
/*
 * Logs "<what> again after N s" ("PostgreSQL reachable again after 3.2 s")
 * when an outage was running, at
 * most once per BLOG_RATELOG_PERIOD (a service that flaps is not a new
 * outage every time).
 */
void blog_outage_end(blog_outage *o, const server_rec *s, const char *what);

#endif

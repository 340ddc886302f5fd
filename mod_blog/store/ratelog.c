/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ratelog.c - a failing back end makes every request fail the same way:
 * one line each would bury the log and cost a write per request.
 */
#include "store/ratelog.h"

#include "apr_atomic.h"
#include "apr_strings.h"

#include <stdarg.h>
#include <string.h>

/* A caller's message; a count held back may follow it. */
#define RATELOG_MSG_MAX 512

/* msg, the caller's tagged line, on its client's connection when it has
 * one (call.h). */
static void
log_msg(const char *file, int line, int module_index, int level,
        apr_status_t status, const conn_rec *c, const server_rec *s,
        const char *msg)
{
    if (c != NULL)
        ap_log_cserror_(file, line, module_index, level, status, c, s, "%s",
                        msg);
    else
        ap_log_error_(file, line, module_index, level, status, s, "%s", msg);
}

void
blog_log_limited_(blog_ratelog *rl, const char *file, int line,
                  int module_index, int level, apr_status_t status,
                  const conn_rec *c, const server_rec *s, const char *fmt,
                  ...)
{
    int         k = level > APLOG_ERR;
    apr_time_t  now = apr_time_now();
    apr_time_t  start = (apr_time_t) apr_atomic_read64(&rl->window_start[k]);
    apr_uint32_t held;
    char        msg[RATELOG_MSG_MAX + 64];
    va_list     ap;

    /* One thread wins a new window; the others count as held back. */
    if ((start != 0 && now - start < BLOG_RATELOG_PERIOD)
        || apr_atomic_cas64(&rl->window_start[k], (apr_uint64_t) now,
                            (apr_uint64_t) start) != (apr_uint64_t) start) {
        apr_atomic_inc32(&rl->held[k]);
        return;
    }
    held = apr_atomic_xchg32(&rl->held[k], 0);
    va_start(ap, fmt);
    apr_vsnprintf(msg, RATELOG_MSG_MAX, fmt, ap);
    va_end(ap);
    if (held > 0) {
        apr_size_t  n = strlen(msg);

        apr_snprintf(msg + n, sizeof(msg) - n, " (%u more in the last %d s)",
                     held, (int) apr_time_sec(now - start));
    }
    /* msg carries the caller's tag: logged as the caller's own line */
    log_msg(file, line, module_index, level, status, c, s, msg);
}

void
blog_outage_begin(blog_ratelog *o)
{
    apr_atomic_cas64(&o->since, (apr_uint64_t) apr_time_now(), 0);
}

void
blog_outage_end_(blog_ratelog *o, const char *file, int line,
                 int module_index, const conn_rec *c, const server_rec *s,
                 const char *what)
{
    apr_time_t  since = (apr_time_t) apr_atomic_xchg64(&o->since, 0);
    apr_time_t  now = apr_time_now();
    apr_time_t  said = (apr_time_t) apr_atomic_read64(&o->last_said);
    char        msg[RATELOG_MSG_MAX];

    if (since == 0 || (said != 0 && now - said < BLOG_RATELOG_PERIOD)
        || apr_atomic_cas64(&o->last_said, (apr_uint64_t) now,
                            (apr_uint64_t) said) != (apr_uint64_t) said)
        return;
    apr_snprintf(msg, sizeof(msg), "%s again after %.1f s", what,
                 (double) (now - since) / APR_USEC_PER_SEC);
    log_msg(file, line, module_index, APLOG_NOTICE, 0, c, s, msg);
}

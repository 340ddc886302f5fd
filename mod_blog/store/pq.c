/* SPDX-License-Identifier: Apache-2.0 */
/* pq.c - libpq's non-blocking API against a deadline (connect_timeout
 * bounds only the blocking connect). */
#include "store/pq.h"

#include "store/wait.h"

#include "apr_strings.h"

#include <poll.h>

const char *
blog_pq_msg(char *buf, const char *msg)
{
    char       *q = buf;
    const char *p;

    for (p = msg ? msg : "unknown error"; *p && q < buf + BLOG_PQ_MSG_MAX - 1;
         p++) {
        if (*p != '\n' && *p != '\r' && *p != '\t')
            *q++ = *p;
        else if (q > buf && q[-1] != ' ')
            *q++ = ' ';
    }
    while (q > buf && q[-1] == ' ')
        q--;
    *q = '\0';
    return buf;
}

PGconn *
blog_pq_connect(const char *const *keys, const char *const *vals,
                apr_time_t deadline, char *why, int *timed_out)
{
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    PGconn     *pg = PQconnectStartParams(keys, vals, 1);

    *timed_out = 0;
    if (pg == NULL) {
        apr_cpystrn(why, "out of memory", BLOG_PQ_MSG_MAX);
        return NULL;
    }
    while (!*timed_out && PQstatus(pg) != CONNECTION_BAD
           && st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
        *timed_out = blog_wait_fd(PQsocket(pg), st == PGRES_POLLING_WRITING
                                  ? POLLOUT : POLLIN, deadline) != 0;
        if (!*timed_out)
            st = PQconnectPoll(pg);
    }
    if (st == PGRES_POLLING_OK)
        return pg;
    if (*timed_out)
        apr_cpystrn(why, "no answer in time", BLOG_PQ_MSG_MAX);
    else
        blog_pq_msg(why, PQerrorMessage(pg));
    PQfinish(pg);
    return NULL;
}

PGresult *
blog_pq_results(PGconn *pg, apr_time_t deadline, int *timed_out)
{
    PGresult   *first = NULL;
    PGresult   *next;
    int         f;

    *timed_out = 0;
    while (!*timed_out && (f = PQflush(pg)) > 0)
        *timed_out = blog_wait_fd(PQsocket(pg), POLLOUT, deadline) != 0;
    if (*timed_out || f < 0)
        return NULL;
    for (;;) {
        while (PQisBusy(pg)) {
            *timed_out = blog_wait_fd(PQsocket(pg), POLLIN, deadline) != 0;
            if (*timed_out || !PQconsumeInput(pg)) {
                PQclear(first);
                return NULL;
            }
        }
        next = PQgetResult(pg);
        /* in a pipeline a NULL ends one statement's results, its Sync all */
        if (next == NULL && PQpipelineStatus(pg) == PQ_PIPELINE_OFF)
            return first;
        if (next != NULL && PQresultStatus(next) == PGRES_PIPELINE_SYNC) {
            PQclear(next);
            PQexitPipelineMode(pg);
            return first;
        }
        if (next == NULL)
            continue;
        /* the last statement's result, or the first error */
        if (first == NULL || PQresultStatus(first) != PGRES_FATAL_ERROR) {
            PQclear(first);
            first = next;
        }
        else
            PQclear(next);
    }
}

int
blog_pq_command(PGconn *pg, const char *sql, apr_time_t deadline, char *why)
{
    PGresult   *res = NULL;
    int         timed_out = 0;
    int         ok;

    if (PQsendQuery(pg, sql))
        res = blog_pq_results(pg, deadline, &timed_out);
    ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (timed_out)
        apr_cpystrn(why, "no answer in time", BLOG_PQ_MSG_MAX);
    else if (!ok)
        blog_pq_msg(why, res ? PQresultErrorMessage(res) : PQerrorMessage(pg));
    PQclear(res);
    return ok ? 0 : -1;
}

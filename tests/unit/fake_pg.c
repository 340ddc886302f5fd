/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_pg.c - a PostgreSQL server that speaks enough of the v3 protocol
 * for libpq and the module: the startup (trust authentication, the
 * parameters libpq 15 reads, ReadyForQuery), simple queries (the session
 * set-up, LISTEN, SELECT 1), the extended protocol's Parse, Bind, Describe,
 * Execute and Sync with one row of one text column (several statements in
 * one pipeline, each answered), ErrorResponse, and NotificationResponse to
 * the connections that LISTEN.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake.h"

static pthread_mutex_t fpg_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_pg_conf fpg_conf;
static unsigned fpg_queries, fpg_parses, fpg_simple;
/* notifications not yet sent, by generation: each listener sends those
 * newer than the last it sent */
#define FPG_MAX_NOTES 64
static char *fpg_notes[FPG_MAX_NOTES];
static int  fpg_nnotes;
static int  fpg_listeners;
static unsigned fpg_kill_gen;
/* BlogPrepare Off's per-page set-up: how many, the last, whether it came
 * in one batch (one Sync) with a page statement */
#define FPG_SETUP "SELECT set_config("
#define FPG_MAX_EXEC 8
static unsigned fpg_setups;
static char fpg_last_setup[256];
static int  fpg_setup_with_page;

/* An outgoing message being built. */
typedef struct fpg_msg
{
    char        buf[1024];
    size_t      len;
} fpg_msg;

static void
fpg_begin(fpg_msg *m, char type)
{
    m->buf[m->len++] = type;
    m->len += 4;                /* the length, set by fpg_end */
}

static void
fpg_put(fpg_msg *m, const void *p, size_t n)
{
    if (m->len + n > sizeof(m->buf))
        abort();
    memcpy(m->buf + m->len, p, n);
    m->len += n;
}

static void
fpg_str(fpg_msg *m, const char *s)
{
    fpg_put(m, s, strlen(s) + 1);
}

static void
fpg_i32(fpg_msg *m, int32_t v)
{
    uint32_t    n = htonl((uint32_t) v);

    fpg_put(m, &n, 4);
}

static void
fpg_i16(fpg_msg *m, int16_t v)
{
    uint16_t    n = htons((uint16_t) v);

    fpg_put(m, &n, 2);
}

/* Close the message that starts at offset at. */
static void
fpg_end(fpg_msg *m, size_t at)
{
    uint32_t    n = htonl((uint32_t) (m->len - at - 1));

    memcpy(m->buf + at + 1, &n, 4);
}

#define FPG_MSG(m, type, body) \
    do { size_t at_ = (m)->len; fpg_begin((m), (type)); body; \
         fpg_end((m), at_); } while (0)

static void
fpg_error(fpg_msg *m, const char *severity, const char *state,
          const char *text)
{
    FPG_MSG(m, 'E', {
        fpg_put(m, "S", 1); fpg_str(m, severity);
        fpg_put(m, "V", 1); fpg_str(m, severity);
        fpg_put(m, "C", 1); fpg_str(m, state);
        fpg_put(m, "M", 1); fpg_str(m, text);
        fpg_put(m, "", 1);
    });
}

static void
fpg_ready(fpg_msg *m)
{
    FPG_MSG(m, 'Z', fpg_put(m, "I", 1));
}

static void
fpg_param(fpg_msg *m, const char *k, const char *v)
{
    FPG_MSG(m, 'S', { fpg_str(m, k); fpg_str(m, v); });
}

/* RowDescription and one DataRow of FAKE_PG_ROW, then CommandComplete. */
static void
fpg_rows(fpg_msg *m, int describe)
{
    if (describe)
        FPG_MSG(m, 'T', {
            fpg_i16(m, 1); fpg_str(m, "x"); fpg_i32(m, 0); fpg_i16(m, 0);
            fpg_i32(m, 25); fpg_i16(m, -1); fpg_i32(m, -1); fpg_i16(m, 1);
        });
    FPG_MSG(m, 'D', {
        fpg_i16(m, 1); fpg_i32(m, (int32_t) strlen(FAKE_PG_ROW));
        fpg_put(m, FAKE_PG_ROW, strlen(FAKE_PG_ROW));
    });
    FPG_MSG(m, 'C', fpg_str(m, "SELECT 1"));
}

void
fake_pg_set(const fake_pg_conf *conf)
{
    pthread_mutex_lock(&fpg_lock);
    fpg_conf = *conf;
    pthread_mutex_unlock(&fpg_lock);
}

unsigned
fake_pg_queries(void)
{
    return T_LOCKED(&fpg_lock, fpg_queries);
}

unsigned
fake_pg_parses(void)
{
    return T_LOCKED(&fpg_lock, fpg_parses);
}

unsigned
fake_pg_simple(void)
{
    return T_LOCKED(&fpg_lock, fpg_simple);
}

void
fake_pg_notify(const char *payload)
{
    pthread_mutex_lock(&fpg_lock);
    if (fpg_nnotes < FPG_MAX_NOTES)
        fpg_notes[fpg_nnotes++] = strdup(payload);
    pthread_mutex_unlock(&fpg_lock);
}

unsigned
fake_pg_setups(void)
{
    return T_LOCKED(&fpg_lock, fpg_setups);
}

const char *
fake_pg_last_setup(char *buf, size_t size, int *with_page)
{
    pthread_mutex_lock(&fpg_lock);
    snprintf(buf, size, "%s", fpg_last_setup);
    *with_page = fpg_setup_with_page;
    pthread_mutex_unlock(&fpg_lock);
    return buf;
}

int
fake_pg_listeners(void)
{
    return T_LOCKED(&fpg_lock, fpg_listeners);
}

void
fake_pg_kill_listeners(void)
{
    pthread_mutex_lock(&fpg_lock);
    fpg_kill_gen++;
    pthread_mutex_unlock(&fpg_lock);
}

/*
 * Send a reply as the mode says: whole, or half of it and then silence
 * or a close, or garbage.  0 to go on serving, -1 to close now.
 */
static int
fpg_send(fake_conn *c, const fpg_msg *m, fake_mode mode)
{
    static const char garbage[] = "\x01\x02 this is not PostgreSQL\r\n";

    switch (mode) {
    case FAKE_STALL:
        fake_hold(c);
        return -1;
    case FAKE_PARTIAL_STALL:
    case FAKE_PARTIAL_CLOSE:
        fake_write(c, m->buf, m->len / 2);
        if (mode == FAKE_PARTIAL_STALL)
            fake_hold(c);
        return -1;
    case FAKE_GARBAGE:
        fake_write(c, garbage, sizeof(garbage) - 1);
        fake_hold(c);
        return -1;
    case FAKE_CLOSE:
        return -1;
    case FAKE_SLOW:
        usleep(FAKE_SLOW_MS * 1000);
        return fake_write(c, m->buf, m->len);
    default:
        return fake_write(c, m->buf, m->len);
    }
}

/* The mode of the next page statement, counting it. */
static fake_mode
fpg_next_query(fake_pg_conf *conf)
{
    fake_mode   mode;

    pthread_mutex_lock(&fpg_lock);
    fpg_queries++;
    mode = fpg_conf.query;
    if (fpg_conf.query_times > 0 && --fpg_conf.query_times == 0)
        fpg_conf.query = FAKE_OK;
    *conf = fpg_conf;
    pthread_mutex_unlock(&fpg_lock);
    return mode;
}

static int
fpg_startup(fake_conn *c, fake_pg_conf *conf)
{
    uint32_t    len, code;
    char        body[1024];
    fpg_msg     m = {.len = 0};

    for (;;) {
        if (fake_read(c, &len, 4) != 0)
            return -1;
        len = ntohl(len);
        if (len < 8 || len - 4 > sizeof(body)
            || fake_read(c, body, len - 4) != 0)
            return -1;
        memcpy(&code, body, 4);
        code = ntohl(code);
        /* SSLRequest, GSSENCRequest: not here */
        if (code == 80877103 || code == 80877104) {
            if (fake_write(c, "N", 1) != 0)
                return -1;
            continue;
        }
        break;
    }
    pthread_mutex_lock(&fpg_lock);
    *conf = fpg_conf;
    pthread_mutex_unlock(&fpg_lock);
    if (conf->startup == FAKE_ERROR) {
        fpg_error(&m, "FATAL", "28P01", "password authentication failed");
        fake_write(c, m.buf, m.len);
        return -1;
    }
    FPG_MSG(&m, 'R', fpg_i32(&m, 0));
    fpg_param(&m, "server_version", "15.99");
    fpg_param(&m, "server_encoding", "UTF8");
    fpg_param(&m, "client_encoding", "UTF8");
    fpg_param(&m, "standard_conforming_strings", "on");
    fpg_param(&m, "integer_datetimes", "on");
    fpg_param(&m, "in_hot_standby", "off");
    fpg_param(&m, "default_transaction_read_only", "off");
    FPG_MSG(&m, 'K', { fpg_i32(&m, 4242); fpg_i32(&m, 1); });
    fpg_ready(&m);
    return fpg_send(c, &m, conf->startup);
}

/* Send the notifications queued since *sent; -1 when the socket failed. */
static int
fpg_send_notes(fake_conn *c, int *sent)
{
    fpg_msg     m = {.len = 0};

    pthread_mutex_lock(&fpg_lock);
    while (*sent < fpg_nnotes) {
        const char *p = fpg_notes[(*sent)++];

        FPG_MSG(&m, 'A', {
            fpg_i32(&m, 4242); fpg_str(&m, "blog_cache"); fpg_str(&m, p);
        });
    }
    pthread_mutex_unlock(&fpg_lock);
    return m.len ? fake_write(c, m.buf, m.len) : 0;
}

static void
fpg_serve(fake_conn *c)
{
    fake_pg_conf conf;
    fpg_msg     m = {.len = 0};
    int         listening = 0, sent = 0, parsed = 0, setup = 0;
    struct
    {
        int         parsed, setup;
    }           execs[FPG_MAX_EXEC];
    int         nexec = 0;
    char        setup_sql[sizeof(fpg_last_setup)] = "";
    unsigned    kill_gen;
    char       *body = NULL;

    pthread_mutex_lock(&fpg_lock);
    kill_gen = fpg_kill_gen;
    sent = fpg_nnotes;
    pthread_mutex_unlock(&fpg_lock);
    if (fpg_startup(c, &conf) != 0)
        return;
    for (;;) {
        char        type;
        uint32_t    len;

        /* a listener hears notifications while the client is silent */
        if (listening) {
            int         killed;
            int         r;

            killed = T_LOCKED(&fpg_lock, fpg_kill_gen) != kill_gen;
            if (killed || fpg_send_notes(c, &sent) != 0)
                break;
            r = fake_read_some(c, &type, 1, 10);
            if (r == 0)
                continue;
            if (r < 0)
                break;
        }
        else if (fake_read(c, &type, 1) != 0)
            break;
        if (fake_read(c, &len, 4) != 0)
            break;
        len = ntohl(len);
        if (len < 4 || len > (1 << 20))
            break;
        free(body);
        body = malloc(len - 4 + 1);
        if (fake_read(c, body, len - 4) != 0)
            break;
        body[len - 4] = '\0';
        m.len = 0;
        if (type == 'X')
            break;
        if (type == 'Q' && strncmp(body, "LISTEN", 6) == 0) {
            pthread_mutex_lock(&fpg_lock);
            fpg_simple++;
            conf = fpg_conf;
            pthread_mutex_unlock(&fpg_lock);
            if (conf.listen == FAKE_ERROR)
                fpg_error(&m, "ERROR", "42501", "permission denied");
            else {
                FPG_MSG(&m, 'C', fpg_str(&m, "LISTEN"));
                if (!listening) {
                    listening = 1;
                    pthread_mutex_lock(&fpg_lock);
                    fpg_listeners++;
                    pthread_mutex_unlock(&fpg_lock);
                }
            }
            fpg_ready(&m);
            if (fpg_send(c, &m, conf.listen == FAKE_ERROR ? FAKE_OK
                         : conf.listen) != 0)
                break;
        }
        else if (type == 'Q' && strcmp(body, "SELECT 1") == 0) {
            fake_mode   mode = fpg_next_query(&conf);

            if (mode == FAKE_ERROR)
                fpg_error(&m, "ERROR", conf.sqlstate ? conf.sqlstate
                          : "XX000", "fake failure");
            else
                fpg_rows(&m, 1);
            fpg_ready(&m);
            if (fpg_send(c, &m, mode == FAKE_ERROR ? FAKE_OK : mode) != 0)
                break;
        }
        else if (type == 'Q') {
            pthread_mutex_lock(&fpg_lock);
            fpg_simple++;
            conf = fpg_conf;
            pthread_mutex_unlock(&fpg_lock);
            if (conf.setup == FAKE_ERROR)
                fpg_error(&m, "ERROR", "42883",
                          "function blog.index_page(integer) does not exist");
            else
                FPG_MSG(&m, 'C', fpg_str(&m, "SET"));
            fpg_ready(&m);
            if (fpg_send(c, &m, conf.setup == FAKE_ERROR ? FAKE_OK
                         : conf.setup) != 0)
                break;
        }
        else if (type == 'P') {
            /* the statement's name, then its SQL */
            const char *sql = body + strnlen(body, len - 4) + 1;

            parsed = 1;
            setup = (size_t) (sql - body) < len - 4
                && strncmp(sql, FPG_SETUP, strlen(FPG_SETUP)) == 0;
            if (setup)
                snprintf(setup_sql, sizeof(setup_sql), "%s", sql);
            pthread_mutex_lock(&fpg_lock);
            fpg_parses++;
            pthread_mutex_unlock(&fpg_lock);
        }
        else if (type == 'E' && nexec < FPG_MAX_EXEC) {
            execs[nexec].parsed = parsed;
            execs[nexec++].setup = parsed && setup;
            parsed = setup = 0;
        }
        else if (type == 'S') {
            /* the batch of (Parse) Bind Describe Execute, each answered in
             * turn: a page statement as the mode says, the set-up of
             * BlogPrepare Off always */
            fake_mode   mode = FAKE_OK;
            int         i, pages = 0;

            for (i = 0; i < nexec && mode != FAKE_ERROR; i++) {
                if (execs[i].parsed)
                    FPG_MSG(&m, '1', (void) 0);
                if (execs[i].setup) {
                    FPG_MSG(&m, '2', (void) 0);
                    fpg_rows(&m, 1);
                    continue;
                }
                pages++;
                mode = fpg_next_query(&conf);
                if (mode == FAKE_ERROR)
                    fpg_error(&m, "ERROR", conf.sqlstate ? conf.sqlstate
                              : "XX000", "fake failure");
                else {
                    FPG_MSG(&m, '2', (void) 0);
                    fpg_rows(&m, 1);
                }
            }
            for (i = 0; i < nexec; i++) {
                if (execs[i].setup) {
                    pthread_mutex_lock(&fpg_lock);
                    fpg_setups++;
                    fpg_setup_with_page = pages > 0;
                    snprintf(fpg_last_setup, sizeof(fpg_last_setup), "%s",
                             setup_sql);
                    pthread_mutex_unlock(&fpg_lock);
                }
            }
            fpg_ready(&m);
            nexec = parsed = setup = 0;
            if (fpg_send(c, &m, mode == FAKE_ERROR ? FAKE_OK : mode) != 0)
                break;
        }
        /* Bind, Describe: answered at Sync */
    }
    free(body);
    if (listening) {
        pthread_mutex_lock(&fpg_lock);
        fpg_listeners--;
        pthread_mutex_unlock(&fpg_lock);
    }
}

fake_server *
fake_pg_start(const char *dir)
{
    char        path[108];
    fake_pg_conf zero = {0};

    snprintf(path, sizeof(path), "%s/.s.PGSQL.5432", dir);
    fake_pg_set(&zero);
    pthread_mutex_lock(&fpg_lock);
    fpg_queries = fpg_parses = fpg_simple = 0;
    while (fpg_nnotes > 0)
        free(fpg_notes[--fpg_nnotes]);
    pthread_mutex_unlock(&fpg_lock);
    return fake_start(path, fpg_serve);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_redis.c - a Redis server that answers GET, SET, DEL and SCAN from a
 * small store, in RESP, one command after another as Redis does (the
 * module pipelines), and misbehaves on demand.  The commands are parsed
 * with hiredis's own reader: a RESP request is an array of bulk strings.
 * With a password set (fake_redis_auth), a connection must AUTH first.
 */
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake.h"

#define FR_MAX_KEYS 256
#define FR_MAX_LOG  4096

static pthread_mutex_t fr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fr_cv = PTHREAD_COND_INITIALIZER;
static fake_mode fr_mode;
static int  fr_times;
static char *fr_keys[FR_MAX_KEYS], *fr_vals[FR_MAX_KEYS];
static size_t fr_lens[FR_MAX_KEYS];     /* values are bytes, sealed ones too */
static int  fr_nkeys;
static const char *fr_user, *fr_pass;   /* NULL: no AUTH wanted */
static char *fr_log[FR_MAX_LOG];
static unsigned fr_nlog;

/* A Redis over TCP (fake_redis_start_tcp); under fr_lock. */
typedef struct fr_node
{
    char        role[16];
    unsigned    roles, cmds;
} fr_node;

void
fake_redis_set(fake_mode mode, int n)
{
    pthread_mutex_lock(&fr_lock);
    fr_mode = mode;
    fr_times = n;
    pthread_mutex_unlock(&fr_lock);
}

void
fake_redis_auth(const char *user, const char *pass)
{
    pthread_mutex_lock(&fr_lock);
    fr_user = user;
    fr_pass = pass;
    pthread_mutex_unlock(&fr_lock);
}

/* Under fr_lock. */
static int
fr_find(const char *key)
{
    int         i;

    for (i = 0; i < fr_nkeys; i++)
        if (strcmp(fr_keys[i], key) == 0)
            return i;
    return -1;
}

/* Under fr_lock. */
static void
fr_put(const char *key, const char *val, size_t len)
{
    int         i = fr_find(key);

    if (i < 0) {
        if (fr_nkeys == FR_MAX_KEYS)
            return;
        i = fr_nkeys++;
        fr_keys[i] = strdup(key);
    }
    else
        free(fr_vals[i]);
    fr_vals[i] = malloc(len + 1);
    memcpy(fr_vals[i], val, len);
    fr_vals[i][len] = '\0';
    fr_lens[i] = len;
}

/* Under fr_lock. */
static int
fr_del(const char *key)
{
    int         i = fr_find(key);

    if (i < 0)
        return 0;
    free(fr_keys[i]);
    free(fr_vals[i]);
    fr_keys[i] = fr_keys[--fr_nkeys];
    fr_vals[i] = fr_vals[fr_nkeys];
    fr_lens[i] = fr_lens[fr_nkeys];
    return 1;
}

void
fake_redis_put(const char *key, const char *val)
{
    fake_redis_put_bytes(key, val, strlen(val));
}

void
fake_redis_put_bytes(const char *key, const char *val, size_t len)
{
    pthread_mutex_lock(&fr_lock);
    fr_put(key, val, len);
    pthread_mutex_unlock(&fr_lock);
}

char *
fake_redis_get(const char *key, size_t *len)
{
    char       *v = NULL;
    int         i;

    pthread_mutex_lock(&fr_lock);
    if ((i = fr_find(key)) >= 0 && (v = malloc(fr_lens[i] + 1)) != NULL) {
        memcpy(v, fr_vals[i], fr_lens[i] + 1);
        *len = fr_lens[i];
    }
    pthread_mutex_unlock(&fr_lock);
    return v;
}

int
fake_redis_has(const char *key)
{
    int         i;

    pthread_mutex_lock(&fr_lock);
    i = fr_find(key);
    pthread_mutex_unlock(&fr_lock);
    return i >= 0;
}

void
fake_redis_clear(void)
{
    pthread_mutex_lock(&fr_lock);
    while (fr_nkeys > 0)
        fr_del(fr_keys[0]);
    while (fr_nlog > 0)
        free(fr_log[--fr_nlog]);
    fr_mode = FAKE_OK;
    fr_times = 0;
    fr_user = fr_pass = NULL;
    pthread_mutex_unlock(&fr_lock);
}

unsigned
fake_redis_ncmds(void)
{
    return T_LOCKED(&fr_lock, fr_nlog);
}

int
fake_redis_wait_cmd(unsigned from, const char *prefix, int ms)
{
    struct timespec until;
    int         found = -1;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long) (ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&fr_lock);
    for (;;) {
        unsigned    i;

        for (i = from; i < fr_nlog && found < 0; i++)
            if (strncmp(fr_log[i], prefix, strlen(prefix)) == 0)
                found = (int) i + 1;
        if (found >= 0
            || pthread_cond_timedwait(&fr_cv, &fr_lock, &until) != 0)
            break;
    }
    pthread_mutex_unlock(&fr_lock);
    return found;
}

/* The reply of a well-behaved Redis to one command, into out. */
static size_t
fr_answer(redisReply *cmd, int *authed, fr_node *node, char *out, size_t size)
{
    const char *name = cmd->element[0]->str;
    const char *role = node != NULL ? node->role : "master";
    size_t      n;
    int         i;

    if (strcasecmp(name, "AUTH") == 0 && fr_pass == NULL)
        return (size_t) snprintf(out, size, "-ERR AUTH <password> called "
                                 "without any password configured\r\n");
    if (strcasecmp(name, "AUTH") == 0) {
        const char *user = cmd->elements == 3 ? cmd->element[1]->str
            : "default";

        *authed = (cmd->elements == 2 || cmd->elements == 3)
            && strcmp(user, fr_user ? fr_user : "default") == 0
            && strcmp(cmd->element[cmd->elements - 1]->str, fr_pass) == 0;
        return (size_t) snprintf(out, size, *authed ? "+OK\r\n"
                                 : "-WRONGPASS invalid username-password "
                                 "pair or user is disabled.\r\n");
    }
    if (fr_pass != NULL && !*authed)
        return (size_t) snprintf(out, size, "-NOAUTH Authentication "
                                 "required.\r\n");
    if (node != NULL && strcasecmp(name, "ROLE") != 0)
        node->cmds++;
    if (strcasecmp(name, "ROLE") == 0) {
        if (node != NULL)
            node->roles++;
        if (strcmp(role, "master") == 0)
            return (size_t) snprintf(out, size, "*3\r\n$6\r\nmaster\r\n"
                                     ":0\r\n*0\r\n");
        return (size_t) snprintf(out, size, "*5\r\n$%zu\r\n%s\r\n$9\r\n"
                                 "127.0.0.1\r\n:6379\r\n$9\r\nconnected"
                                 "\r\n:0\r\n", strlen(role), role);
    }
    if (strcmp(role, "master") != 0
        && (strcasecmp(name, "SET") == 0 || strcasecmp(name, "DEL") == 0))
        return (size_t) snprintf(out, size, "-READONLY You can't write "
                                 "against a read only replica.\r\n");

    if (strcasecmp(name, "GET") == 0 && cmd->elements == 2) {
        i = fr_find(cmd->element[1]->str);
        if (i < 0)
            return (size_t) snprintf(out, size, "$-1\r\n");
        n = (size_t) snprintf(out, size, "$%zu\r\n", fr_lens[i]);
        if (n + fr_lens[i] + 2 > size)
            abort();
        memcpy(out + n, fr_vals[i], fr_lens[i]);
        memcpy(out + n + fr_lens[i], "\r\n", 2);
        return n + fr_lens[i] + 2;
    }
    if (strcasecmp(name, "SET") == 0 && cmd->elements >= 3) {
        fr_put(cmd->element[1]->str, cmd->element[2]->str,
               cmd->element[2]->len);
        return (size_t) snprintf(out, size, "+OK\r\n");
    }
    if (strcasecmp(name, "DEL") == 0) {
        int         d = 0;

        for (i = 1; i < (int) cmd->elements; i++)
            d += fr_del(cmd->element[i]->str);
        return (size_t) snprintf(out, size, ":%d\r\n", d);
    }
    if (strcasecmp(name, "SCAN") == 0) {
        int         nk = 0;

        for (i = 0; i < fr_nkeys; i++)
            nk += strncmp(fr_keys[i], "blog:page:", 10) == 0;
        n = (size_t) snprintf(out, size, "*2\r\n$1\r\n0\r\n*%d\r\n", nk);
        for (i = 0; i < fr_nkeys; i++)
            if (strncmp(fr_keys[i], "blog:page:", 10) == 0)
                n += (size_t) snprintf(out + n, size - n, "$%zu\r\n%s\r\n",
                                       strlen(fr_keys[i]), fr_keys[i]);
        return n;
    }
    return (size_t) snprintf(out, size, "-ERR unknown command\r\n");
}

/* Log a command, take the mode for it and answer it; -1 to close. */
static int
fr_command(fake_conn *c, redisReply *cmd, int *authed, char *out,
           size_t size)
{
    char        line[4096];
    size_t      n = 0, len;
    size_t      i;
    fake_mode   mode;

    if (cmd->type != REDIS_REPLY_ARRAY || cmd->elements == 0)
        return -1;
    for (i = 0; i < cmd->elements; i++)
        n += (size_t) snprintf(line + n, sizeof(line) - n, "%s%.*s",
                               i ? " " : "", (int) cmd->element[i]->len,
                               cmd->element[i]->str);
    pthread_mutex_lock(&fr_lock);
    if (fr_nlog < FR_MAX_LOG)
        fr_log[fr_nlog++] = strdup(line);
    pthread_cond_broadcast(&fr_cv);
    mode = fr_mode;
    if (fr_times > 0 && --fr_times == 0)
        fr_mode = FAKE_OK;
    len = mode == FAKE_OK || mode == FAKE_SLOW || mode == FAKE_UNASKED || mode == FAKE_PARTIAL_STALL
        || mode == FAKE_PARTIAL_CLOSE ? fr_answer(cmd, authed, fake_arg(c),
                                                  out, size) : 0;
    pthread_mutex_unlock(&fr_lock);
    switch (mode) {
    case FAKE_OK:
        return fake_write(c, out, len);
    case FAKE_UNASKED:
        /* in one write, so that it comes with the reply asked for */
        memcpy(out + len, "+OK\r\n", 5);
        return fake_write(c, out, len + 5);
    case FAKE_STALL:
        fake_hold(c);
        return -1;
    case FAKE_PARTIAL_STALL:
    case FAKE_PARTIAL_CLOSE:
        /* a bulk reply cut inside its body */
        if (len < 4 || out[0] != '$')
            len = (size_t) snprintf(out, size, "$10\r\nabc");
        fake_write(c, out, len / 2 + 1);
        if (mode == FAKE_PARTIAL_STALL)
            fake_hold(c);
        return -1;
    case FAKE_GARBAGE:
        fake_write(c, "!garbage\r\n", 10);
        fake_hold(c);
        return -1;
    case FAKE_CLOSE:
        return -1;
    case FAKE_ERROR:
        return fake_write(c, "-READONLY You can't write against a read "
                          "only replica.\r\n", 56);
    case FAKE_OVERSIZE:
        fake_write(c, "$2000000\r\n", 10);
        fake_hold(c);
        return -1;
    case FAKE_LONG_LINE:
        memset(out, 'a', 2048);
        out[0] = '+';
        fake_write(c, out, 2048);
        fake_hold(c);
        return -1;
    case FAKE_SLOW:
        usleep(FAKE_SLOW_MS * 1000);
        return fake_write(c, out, len);
    case FAKE_WRONG_TYPE:
        return fake_write(c, ":1\r\n", 4);
    case FAKE_HUGE_ARRAY:
        /* its 4 MB until the client hangs up */
        if (fake_write(c, "*1000000\r\n", 10) == 0) {
            int         k;

            for (k = 0; k < 16384; k++)
                memcpy(out + 4 * k, ":1\r\n", 4);
            for (k = 0; k < 1000000 / 16384 + 1; k++)
                if (fake_write(c, out, 4 * (k < 1000000 / 16384 ? 16384
                                            : 1000000 % 16384)) != 0)
                    break;
        }
        fake_hold(c);
        return -1;
    }
    return -1;
}

static void
fr_serve(fake_conn *c)
{
    redisReader *rd = redisReaderCreate();
    char        in[16384];
    static __thread char out[65536];
    int         authed = 0;

    for (;;) {
        void       *cmd = NULL;
        int         r = fake_read_some(c, in, sizeof(in), -1);
        int         stop = 0;

        if (r < 0 || redisReaderFeed(rd, in, (size_t) r) != REDIS_OK)
            break;
        while (!stop && redisReaderGetReply(rd, &cmd) == REDIS_OK
               && cmd != NULL) {
            stop = fr_command(c, cmd, &authed, out, sizeof(out)) != 0;
            freeReplyObject(cmd);
            cmd = NULL;
        }
        if (stop)
            break;
    }
    redisReaderFree(rd);
}

fake_server *
fake_redis_start(const char *path)
{
    fake_redis_clear();
    return fake_start(path, fr_serve);
}

fake_server *
fake_redis_start_tcp(const char *role, int *port)
{
    fr_node    *node = calloc(1, sizeof(*node));

    snprintf(node->role, sizeof(node->role), "%s", role);
    return fake_start_tcp(fr_serve, node, port);
}

void
fake_redis_role(fake_server *srv, const char *role)
{
    fr_node    *node = fake_server_arg(srv);

    pthread_mutex_lock(&fr_lock);
    snprintf(node->role, sizeof(node->role), "%s", role);
    pthread_mutex_unlock(&fr_lock);
}

unsigned
fake_redis_node_roles(fake_server *srv)
{
    fr_node    *node = fake_server_arg(srv);

    return T_LOCKED(&fr_lock, node->roles);
}

unsigned
fake_redis_node_cmds(fake_server *srv)
{
    fr_node    *node = fake_server_arg(srv);

    return T_LOCKED(&fr_lock, node->cmds);
}

void
fake_redis_stop_tcp(fake_server *srv)
{
    fr_node    *node = fake_server_arg(srv);

    fake_stop(srv);
    free(node);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_sentinel.c - a Redis Sentinel over TCP, each with a configuration
 * of its own: it answers AUTH, PING, SENTINEL get-master-addr-by-name with
 * the address it is given (a nil reply for another name) and SUBSCRIBE,
 * and sends what fake_sentinel_publish says to its subscribers, in RESP2
 * as Redis 7's sentinels do.  Its answers misbehave on demand (fake.h's
 * modes), the subscribers' PINGs included.
 */
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"

#define FS_MAX_SUBS 64

typedef struct fs_sentinel
{
    pthread_mutex_t lock;       /* the fields, and every write to a client */
    fake_sentinel_conf conf;
    char        master[64], host[64], user[64], pass[64];
    unsigned    asks;
    fake_conn  *subs[FS_MAX_SUBS];
    int         nsubs;
} fs_sentinel;

static void
fs_copy(char *dst, size_t size, const char *src, const char **field)
{
    if (src == NULL) {
        *field = NULL;
        return;
    }
    snprintf(dst, size, "%s", src);
    *field = dst;
}

void
fake_sentinel_set(fake_server *srv, const fake_sentinel_conf *c)
{
    fs_sentinel *fs = fake_server_arg(srv);

    pthread_mutex_lock(&fs->lock);
    fs->conf = *c;
    fs_copy(fs->master, sizeof(fs->master), c->master, &fs->conf.master);
    fs_copy(fs->host, sizeof(fs->host), c->host, &fs->conf.host);
    fs_copy(fs->user, sizeof(fs->user), c->user, &fs->conf.user);
    fs_copy(fs->pass, sizeof(fs->pass), c->pass, &fs->conf.pass);
    pthread_mutex_unlock(&fs->lock);
}

unsigned
fake_sentinel_asks(fake_server *srv)
{
    fs_sentinel *fs = fake_server_arg(srv);

    return T_LOCKED(&fs->lock, fs->asks);
}

int
fake_sentinel_subscribers(fake_server *srv)
{
    fs_sentinel *fs = fake_server_arg(srv);

    return T_LOCKED(&fs->lock, fs->nsubs);
}

int
fake_sentinel_publish(fake_server *srv, const char *channel,
                      const char *payload)
{
    fs_sentinel *fs = fake_server_arg(srv);
    char        msg[1024];
    int         n = snprintf(msg, sizeof(msg), "*3\r\n$7\r\nmessage\r\n"
                             "$%zu\r\n%s\r\n$%zu\r\n%s\r\n", strlen(channel),
                             channel, strlen(payload), payload);
    int         i, sent = 0;

    pthread_mutex_lock(&fs->lock);
    for (i = 0; i < fs->nsubs; i++)
        sent += fake_write(fs->subs[i], msg, (size_t) n) == 0;
    pthread_mutex_unlock(&fs->lock);
    return sent;
}

static void
fs_unsubscribe(fs_sentinel *fs, const fake_conn *c)
{
    int         i;

    pthread_mutex_lock(&fs->lock);
    for (i = 0; i < fs->nsubs; i++)
        if (fs->subs[i] == c)
            fs->subs[i] = fs->subs[--fs->nsubs];
    pthread_mutex_unlock(&fs->lock);
}

/* The reply to one command, into out (under fs->lock): its length, or 0
 * for none at all (the mode's misbehaviour, which *close then says). */
static size_t
fs_answer(fs_sentinel *fs, fake_conn *c, redisReply *cmd, int *authed,
          int *close, char *out, size_t size)
{
    const char *name = cmd->element[0]->str;
    const fake_sentinel_conf *cf = &fs->conf;

    if (strcasecmp(name, "AUTH") == 0) {
        const char *user = cmd->elements == 3 ? cmd->element[1]->str
            : "default";

        if (cf->pass == NULL)
            return (size_t) snprintf(out, size, "-ERR AUTH <password> called "
                                     "without any password configured\r\n");
        *authed = strcmp(user, cf->user ? cf->user : "default") == 0
            && strcmp(cmd->element[cmd->elements - 1]->str, cf->pass) == 0;
        return (size_t) snprintf(out, size, *authed ? "+OK\r\n"
                                 : "-WRONGPASS invalid username-password "
                                 "pair or user is disabled.\r\n");
    }
    if (cf->pass != NULL && !*authed)
        return (size_t) snprintf(out, size, "-NOAUTH Authentication "
                                 "required.\r\n");
    switch (cf->mode) {
    case FAKE_STALL:
        return 0;
    case FAKE_CLOSE:
        *close = 1;
        return 0;
    case FAKE_GARBAGE:
        return (size_t) snprintf(out, size, "!garbage\r\n");
    case FAKE_OVERSIZE:
        *close = 1;
        return (size_t) snprintf(out, size, "$2000000\r\n");
    case FAKE_ERROR:
        return (size_t) snprintf(out, size, "-ERR No such master with that "
                                 "name\r\n");
    default:
        break;
    }
    if (strcasecmp(name, "PING") == 0)
        return (size_t) snprintf(out, size, "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    if (strcasecmp(name, "SUBSCRIBE") == 0 && cmd->elements == 2) {
        if (fs->nsubs < FS_MAX_SUBS)
            fs->subs[fs->nsubs++] = c;
        return (size_t) snprintf(out, size, "*3\r\n$9\r\nsubscribe\r\n"
                                 "$%zu\r\n%s\r\n:1\r\n", cmd->element[1]->len,
                                 cmd->element[1]->str);
    }
    if (strcasecmp(name, "SENTINEL") == 0 && cmd->elements == 3
        && strcasecmp(cmd->element[1]->str, "get-master-addr-by-name") == 0) {
        char        port[16];

        fs->asks++;
        if (cf->master == NULL || strcmp(cmd->element[2]->str, cf->master))
            return (size_t) snprintf(out, size, "*-1\r\n");
        snprintf(port, sizeof(port), "%d", cf->port);
        return (size_t) snprintf(out, size, "*2\r\n$%zu\r\n%s\r\n$%zu\r\n"
                                 "%s\r\n", strlen(cf->host), cf->host,
                                 strlen(port), port);
    }
    return (size_t) snprintf(out, size, "-ERR unknown command\r\n");
}

static void
fs_serve(fake_conn *c)
{
    fs_sentinel *fs = fake_arg(c);
    redisReader *rd = redisReaderCreate();
    char        in[4096], out[1024];
    int         authed = 0, stop = 0;

    while (!stop) {
        void       *cmd = NULL;
        int         r = fake_read_some(c, in, sizeof(in), -1);

        if (r < 0 || redisReaderFeed(rd, in, (size_t) r) != REDIS_OK)
            break;
        while (!stop && redisReaderGetReply(rd, &cmd) == REDIS_OK
               && cmd != NULL) {
            redisReply *q = cmd;
            int         close = 0;
            size_t      n = 0;

            pthread_mutex_lock(&fs->lock);
            if (q->type == REDIS_REPLY_ARRAY && q->elements > 0)
                n = fs_answer(fs, c, q, &authed, &close, out, sizeof(out));
            else
                close = 1;
            stop = close || (n > 0 && fake_write(c, out, n) != 0);
            pthread_mutex_unlock(&fs->lock);
            freeReplyObject(cmd);
            cmd = NULL;
        }
    }
    fs_unsubscribe(fs, c);
    redisReaderFree(rd);
}

fake_server *
fake_sentinel_start(int *port)
{
    fs_sentinel *fs = calloc(1, sizeof(*fs));

    pthread_mutex_init(&fs->lock, NULL);
    return fake_start_tcp(fs_serve, fs, port);
}

void
fake_sentinel_stop(fake_server *srv)
{
    fs_sentinel *fs = fake_server_arg(srv);

    fake_stop(srv);
    pthread_mutex_destroy(&fs->lock);
    free(fs);
}

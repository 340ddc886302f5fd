/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seal.h - the seal of a cached page: a keyed MAC over the time of
 * sealing, the Redis key name and the page, so that whoever can write to
 * Redis cannot have the blog serve a page of their own, nor one page under
 * another's key, nor an old page written back after its TTL.
 */
#ifndef BLOG_SEAL_H
#define BLOG_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include "apr_thread_proc.h"

/* A sealed value: "BLS3", the time of sealing (8 bytes, microseconds), a
 * 12-byte random nonce, a 16-byte tag, the page ("BLS2": its time in
 * seconds, opened too). */
#define BLOG_SEAL_HEAD  40
/* Seconds a seal may stray beyond its TTL: the web nodes' clocks. */
#define BLOG_SEAL_SKEW  5

typedef struct blog_seal
{
    int         on;
    unsigned char key[32];      /* AES-256, derived from the key file */
    apr_threadkey_t *ctx_key;   /* each thread's cipher context, keyed */
} blog_seal;

/* The key of a key file's 32 bytes or more, its threads' contexts as long
 * as p: 0, or -1. */
int         blog_seal_init(blog_seal *k, apr_pool_t *p, const char *secret,
                           size_t len);

/* The head that seals body under name at now (microseconds since the
 * epoch, apr_time_t): 0, or -1 (libcrypto failed). */
int         blog_seal_make(const blog_seal *k, const char *name,
                           size_t name_len, const char *body, size_t len,
                           int64_t now, unsigned char head[BLOG_SEAL_HEAD]);

/* 0 with *body, *len the page inside value, and *sealed (unless NULL)
 * when it was sealed (us), if its seal holds and it was sealed within ttl
 * seconds (and BLOG_SEAL_SKEW) of now (us); -1. */
int         blog_seal_open(const blog_seal *k, const char *name,
                           size_t name_len, const char *value,
                           size_t value_len, int64_t now, int64_t ttl,
                           const char **body, size_t *len, int64_t *sealed);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seal.c - AES-256-GMAC from libcrypto, 96 random bits of nonce per page
 * (GMAC must never see one twice under a key), the tag checked in constant
 * time; each thread keeps one cipher context, keyed once, on an APR thread
 * key of the seal's own (docs/DECISIONS.md, "AES-GMAC seals, one context
 * per thread").
 */
#include "store/seal.h"

#include "apr_pools.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <limits.h>
#include <string.h>

#define SEAL_MAGIC      "BLS3"
/* the earlier magic, whose stamp is in seconds: still opened, so that web
 * nodes of both versions on one Redis read each other's pages */
#define SEAL_MAGIC_S    "BLS2"
#define SEAL_STAMP      8       /* the time of sealing, us, big-endian */
#define SEAL_USEC       INT64_C(1000000)
#define SEAL_NONCE      12
#define SEAL_TAG        16

/* Fetched once, in the parent: an implicit fetch per page costs a lookup. */
static EVP_CIPHER *seal_cipher;

/* A thread's context, at its thread's exit. */
static void
seal_ctx_free(void *c)
{
    EVP_CIPHER_CTX_free(c);
}

/*
 * The key goes with its pool (APR does not delete it: a key per restart
 * would run out), and the calling thread's context with it (the parent's
 * or a test's; a worker's went when its thread exited), which deleting
 * the key does not free.
 */
static apr_status_t
seal_key_cleanup(void *data)
{
    apr_threadkey_t *key = data;
    void       *c = NULL;

    if (apr_threadkey_private_get(&c, key) == APR_SUCCESS && c) {
        apr_threadkey_private_set(NULL, key);
        EVP_CIPHER_CTX_free(c);
    }
    apr_threadkey_private_delete(key);
    return APR_SUCCESS;
}

int
blog_seal_init(blog_seal *k, apr_pool_t *p, const char *secret, size_t len)
{
    static const char label[] = "mod_blog cache key";
    unsigned int dlen = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int         ok;

    k->on = 0;
    k->ctx_key = NULL;
    if (seal_cipher == NULL)
        seal_cipher = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    /* any length of secret, an AES-256 key of it */
    ok = len >= 32 && md != NULL && seal_cipher != NULL
        && EVP_DigestInit_ex(md, EVP_sha256(), NULL)
        && EVP_DigestUpdate(md, label, sizeof(label) - 1)
        && EVP_DigestUpdate(md, secret, len)
        && EVP_DigestFinal_ex(md, k->key, &dlen) && dlen == sizeof(k->key)
        && apr_threadkey_private_create(&k->ctx_key, seal_ctx_free,
                                        p) == APR_SUCCESS;
    EVP_MD_CTX_free(md);
    if (!ok)
        return -1;
    apr_pool_cleanup_register(p, k->ctx_key, seal_key_cleanup,
                              apr_pool_cleanup_null);
    k->on = 1;
    return 0;
}

/* This thread's context for k, keyed on first use; NULL if none. */
static EVP_CIPHER_CTX *
seal_ctx(const blog_seal *k)
{
    void       *v = NULL;
    EVP_CIPHER_CTX *c;

    if (apr_threadkey_private_get(&v, k->ctx_key) != APR_SUCCESS)
        return NULL;
    if (v != NULL)
        return v;
    c = EVP_CIPHER_CTX_new();
    if (c == NULL
        || !EVP_EncryptInit_ex(c, seal_cipher, NULL, k->key, NULL)
        || apr_threadkey_private_set(c, k->ctx_key) != APR_SUCCESS) {
        EVP_CIPHER_CTX_free(c);
        return NULL;
    }
    return c;
}

/* The tag of (magic and stamp: head, name length, name, body) under the
 * nonce that follows them in head. */
static int
seal_tag(const blog_seal *k, const unsigned char *head, const char *name,
         size_t name_len, const char *body, size_t len,
         unsigned char tag[SEAL_TAG])
{
    unsigned char nl[4] = {
        (unsigned char) (name_len >> 24), (unsigned char) (name_len >> 16),
        (unsigned char) (name_len >> 8), (unsigned char) name_len
    };
    EVP_CIPHER_CTX *c;
    int         out, ok;

    if (name_len > INT_MAX || len > INT_MAX || (c = seal_ctx(k)) == NULL)
        return -1;
    /* the key stays; a new nonce starts a new GHASH */
    ok = EVP_EncryptInit_ex(c, NULL, NULL, NULL, head + 4 + SEAL_STAMP)
        && EVP_EncryptUpdate(c, NULL, &out, head, 4 + SEAL_STAMP)
        && EVP_EncryptUpdate(c, NULL, &out, nl, 4)
        && EVP_EncryptUpdate(c, NULL, &out, (const unsigned char *) name,
                             (int) name_len)
        && (len == 0
            || EVP_EncryptUpdate(c, NULL, &out, (const unsigned char *) body,
                                 (int) len))
        && EVP_EncryptFinal_ex(c, NULL, &out)
        && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, SEAL_TAG, tag);
    return ok ? 0 : -1;
}

int
blog_seal_make(const blog_seal *k, const char *name, size_t name_len,
               const char *body, size_t len, int64_t now,
               unsigned char head[BLOG_SEAL_HEAD])
{
    int         i;

    memcpy(head, SEAL_MAGIC, 4);
    for (i = 0; i < SEAL_STAMP; i++)
        head[4 + i] = (unsigned char) ((uint64_t) now >> (56 - 8 * i));
    if (RAND_bytes(head + 4 + SEAL_STAMP, SEAL_NONCE) != 1)
        return -1;
    return seal_tag(k, head, name, name_len, body, len,
                    head + 4 + SEAL_STAMP + SEAL_NONCE);
}

int
blog_seal_open(const blog_seal *k, const char *name, size_t name_len,
               const char *value, size_t value_len, int64_t now,
               int64_t ttl, const char **body, size_t *len, int64_t *sealed)
{
    const unsigned char *v = (const unsigned char *) value;
    unsigned char tag[SEAL_TAG];
    uint64_t    stamp = 0;
    int64_t     at;
    int         i, secs;

    if (value_len < BLOG_SEAL_HEAD)
        return -1;
    secs = memcmp(v, SEAL_MAGIC_S, 4) == 0;
    for (i = 0; i < SEAL_STAMP; i++)
        stamp = stamp << 8 | v[4 + i];
    if ((!secs && memcmp(v, SEAL_MAGIC, 4) != 0)
        || stamp > (uint64_t) INT64_MAX / (secs ? SEAL_USEC : 1))
        return -1;
    /* a stamp in seconds: the start of its second, never after the seal */
    at = (int64_t) stamp * (secs ? SEAL_USEC : 1);
    if (seal_tag(k, v, name, name_len, value + BLOG_SEAL_HEAD,
                 value_len - BLOG_SEAL_HEAD, tag) != 0
        || CRYPTO_memcmp(tag, v + 4 + SEAL_STAMP + SEAL_NONCE, SEAL_TAG) != 0
        || at > now + BLOG_SEAL_SKEW * SEAL_USEC
        || at < now - (ttl + BLOG_SEAL_SKEW) * SEAL_USEC)
        return -1;
    *body = value + BLOG_SEAL_HEAD;
    *len = value_len - BLOG_SEAL_HEAD;
    if (sealed != NULL)
        *sealed = at;
    return 0;
}

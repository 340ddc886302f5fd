/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_seal.c - BlogCacheKey's seal (seal.c): a sealed page opens under its
 * own key name and key, and nothing else does (a wrong or truncated tag,
 * no envelope, another page's entry, another key, a seal older than the
 * TTL written back), from many threads at once and across restarts; the
 * secret files' checks; and BlogRedisAuth's AUTH exchange (redis.c) against
 * fake_redis.c: accepted, -WRONGPASS, garbage, a disconnect, a stall, and
 * a Redis that wants AUTH from a client that sends none.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apr_general.h"
#include "apr_strings.h"

#include "store/cache.h"
#include "store/redis.h"
#include "store/seal.h"

#include <openssl/evp.h>

#include "backends.h"
#include "fake.h"
#include "harness.h"

#define TS_NAME "blog:page:/post/hello"
#define TS_BODY "<p>hello</p>"
#define TS_SECRET "0123456789abcdef0123456789abcdef"
/* now, in microseconds, and the TTL the tests open with, in seconds */
#define TS_SEC ((int64_t) 1000000)
#define TS_NOW ((int64_t) 1796000000 * TS_SEC)
#define TS_TTL 60

/* body sealed under name at t: head + body, in a malloc'ed buffer. */
static char *
ts_seal_at(const blog_seal *k, const char *name, const char *body,
           int64_t t, size_t *len)
{
    size_t      blen = strlen(body);
    char       *v = malloc(BLOG_SEAL_HEAD + blen + 1);

    if (v == NULL)
        abort();
    if (blog_seal_make(k, name, strlen(name), body, blen, t,
                       (unsigned char *) v) != 0) {
        free(v);
        return NULL;
    }
    memcpy(v + BLOG_SEAL_HEAD, body, blen + 1);
    *len = BLOG_SEAL_HEAD + blen;
    return v;
}

static char *
ts_seal(const blog_seal *k, const char *name, const char *body, size_t *len)
{
    return ts_seal_at(k, name, body, TS_NOW, len);
}

static int
ts_opens(const blog_seal *k, const char *name, const char *v, size_t len)
{
    const char *body = NULL;
    size_t      blen = 0;

    return blog_seal_open(k, name, strlen(name), v, len, TS_NOW, TS_TTL,
                          &body, &blen, NULL) == 0;
}

static void
test_seal_round_trip(void)
{
    apr_pool_t *p;
    blog_seal   k;
    const char *body = NULL;
    size_t      len, blen = 0;
    char       *v, *w;
    int64_t     at = 0;

    apr_pool_create(&p, NULL);
    CHECK(blog_seal_init(&k, p, TS_SECRET, strlen(TS_SECRET)) == 0 && k.on);
    v = ts_seal(&k, TS_NAME, TS_BODY, &len);
    CHECK(v != NULL);
    CHECK(blog_seal_open(&k, TS_NAME, strlen(TS_NAME), v, len, TS_NOW,
                         TS_TTL, &body, &blen, &at) == 0);
    CHECK_STR(body, blen, TS_BODY);
    /* when it was sealed, to the microsecond */
    CHECK(at == TS_NOW);
    CHECK(memcmp(v, "BLS3", 4) == 0);
    /* a fresh nonce each time: two seals of one page differ */
    w = ts_seal(&k, TS_NAME, TS_BODY, &len);
    CHECK(w != NULL && memcmp(v, w, BLOG_SEAL_HEAD) != 0);
    free(w);
    /* an empty page seals too */
    w = ts_seal(&k, TS_NAME, "", &len);
    CHECK(w != NULL && len == BLOG_SEAL_HEAD && ts_opens(&k, TS_NAME, w, len));
    free(w);
    free(v);
    apr_pool_destroy(p);
}

static void
test_seal_forgeries(void)
{
    apr_pool_t *p;
    blog_seal   k, other;
    size_t      len, olen, i;
    char       *v, *o;
    int         opened = 0;

    apr_pool_create(&p, NULL);
    CHECK(blog_seal_init(&k, p, TS_SECRET, strlen(TS_SECRET)) == 0);
    CHECK(blog_seal_init(&other, p, TS_SECRET "!",
                         strlen(TS_SECRET) + 1) == 0);
    v = ts_seal(&k, TS_NAME, TS_BODY, &len);
    /* any bit flipped anywhere: magic, nonce, tag, body */
    for (i = 0; i < len * 8; i++) {
        v[i / 8] ^= (char) (1 << (i % 8));
        opened += ts_opens(&k, TS_NAME, v, len);
        v[i / 8] ^= (char) (1 << (i % 8));
    }
    CHECK(opened == 0);
    CHECK(ts_opens(&k, TS_NAME, v, len));
    /* truncated at every length, and one byte more */
    for (i = 0, opened = 0; i < len; i++)
        opened += ts_opens(&k, TS_NAME, v, i);
    CHECK(opened == 0);
    CHECK(!ts_opens(&k, TS_NAME, v, len + 1));  /* the NUL after it */
    /* no envelope: the raw page, a page as long as a head */
    CHECK(!ts_opens(&k, TS_NAME, TS_BODY, strlen(TS_BODY)));
    CHECK(!ts_opens(&k, TS_NAME, "BLS2" "01234567" "0123456789ab"
                    "0123456789abcdef", BLOG_SEAL_HEAD));
    /* another page's valid entry under this key name, and the reverse */
    o = ts_seal(&k, "blog:page:/", TS_BODY, &olen);
    CHECK(ts_opens(&k, "blog:page:/", o, olen));
    CHECK(!ts_opens(&k, TS_NAME, o, olen));
    CHECK(!ts_opens(&k, "blog:page:/post/hell", v, len));
    free(o);
    /* the name's end and the body's start cannot be traded */
    o = ts_seal(&k, "blog:page:/a", "b", &olen);
    CHECK(!ts_opens(&k, "blog:page:/", o, olen));
    free(o);
    /* sealed under another key file (each seal's thread context is its
     * own: the two keys used in turn in one thread do not mix) */
    o = ts_seal(&other, TS_NAME, TS_BODY, &olen);
    CHECK(ts_opens(&other, TS_NAME, o, olen));
    CHECK(!ts_opens(&k, TS_NAME, o, olen));
    CHECK(ts_opens(&k, TS_NAME, v, len) && !ts_opens(&other, TS_NAME, v, len));
    free(o);
    free(v);
    apr_pool_destroy(p);
}

/*
 * A value sealed earlier and written back (a deleted comment's page): it
 * opens for the TTL and BLOG_SEAL_SKEW after its sealing, not later, nor
 * sealed further ahead than the skew; a stamp changed to now breaks the
 * MAC.
 */
static void
test_seal_replayed(void)
{
    static const struct
    {
        int64_t     age;        /* microseconds */
        int         opens;
    } cases[] = {
        {0, 1}, {TS_TTL * TS_SEC, 1}, {(TS_TTL + BLOG_SEAL_SKEW) * TS_SEC, 1},
        {(TS_TTL + BLOG_SEAL_SKEW) * TS_SEC + 1, 0}, {3600 * TS_SEC, 0},
        {TS_NOW, 0}, {-BLOG_SEAL_SKEW * TS_SEC, 1},
        {-BLOG_SEAL_SKEW * TS_SEC - 1, 0}, {-86400 * TS_SEC, 0}
    };
    apr_pool_t *p;
    blog_seal   k;
    size_t      i, len;
    char       *v;

    apr_pool_create(&p, NULL);
    CHECK(blog_seal_init(&k, p, TS_SECRET, strlen(TS_SECRET)) == 0);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        v = ts_seal_at(&k, TS_NAME, TS_BODY, TS_NOW - cases[i].age, &len);
        CHECK(v != NULL && ts_opens(&k, TS_NAME, v, len) == cases[i].opens);
        if (v != NULL && ts_opens(&k, TS_NAME, v, len) != cases[i].opens)
            fprintf(stderr, "  (sealed %lld us ago)\n",
                    (long long) cases[i].age);
        free(v);
    }
    /* an old seal's stamp set to now: the MAC fails */
    v = ts_seal_at(&k, TS_NAME, TS_BODY, TS_NOW - 3600 * TS_SEC, &len);
    CHECK(v != NULL);
    if (v != NULL) {
        char       *now = ts_seal(&k, TS_NAME, TS_BODY, &len);

        memcpy(v + 4, now + 4, 8);
        CHECK(!ts_opens(&k, TS_NAME, v, len));
        free(now);
    }
    free(v);
    apr_pool_destroy(p);
}

/*
 * The value the previous version stored, "BLS2" with its stamp in
 * seconds (AES-256-GCM's tag over magic, stamp, the name's length, the
 * name and the page, under SHA-256 of the label and the secret), sealed at
 * t seconds: into v, its length.
 */
static size_t
ts_seal_bls2(const char *name, const char *body, int64_t t, char *v)
{
    static const char label[] = "mod_blog cache key";
    unsigned char key[32], *h = (unsigned char *) v;
    unsigned int klen = 0;
    size_t      nl = strlen(name), bl = strlen(body);
    unsigned char nlen[4] = {0, 0, (unsigned char) (nl >> 8),
                             (unsigned char) nl};
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int         out, i, ok;

    memcpy(h, "BLS2", 4);
    for (i = 0; i < 8; i++)
        h[4 + i] = (unsigned char) ((uint64_t) t >> (56 - 8 * i));
    memset(h + 12, 7, 12);      /* the nonce */
    memcpy(v + BLOG_SEAL_HEAD, body, bl);
    ok = md && c && EVP_DigestInit_ex(md, EVP_sha256(), NULL)
        && EVP_DigestUpdate(md, label, sizeof(label) - 1)
        && EVP_DigestUpdate(md, TS_SECRET, strlen(TS_SECRET))
        && EVP_DigestFinal_ex(md, key, &klen)
        && EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, h + 12)
        && EVP_EncryptUpdate(c, NULL, &out, h, 12)
        && EVP_EncryptUpdate(c, NULL, &out, nlen, 4)
        && EVP_EncryptUpdate(c, NULL, &out, (const unsigned char *) name,
                             (int) nl)
        && EVP_EncryptUpdate(c, NULL, &out, (const unsigned char *) body,
                             (int) bl)
        && EVP_EncryptFinal_ex(c, NULL, &out)
        && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, h + 24);
    EVP_MD_CTX_free(md);
    EVP_CIPHER_CTX_free(c);
    return ok ? BLOG_SEAL_HEAD + bl : 0;
}

/*
 * A page the previous version sealed ("BLS2", seconds) opens, as sealed
 * at the start of its second: web nodes of both versions on one Redis
 * read each other's pages; its stamp changed, it fails.
 */
static void
test_seal_previous_version(void)
{
    apr_pool_t *p;
    blog_seal   k;
    char        v[BLOG_SEAL_HEAD + 64];
    const char *body = NULL;
    size_t      len, blen = 0;
    int64_t     at = 0;

    apr_pool_create(&p, NULL);
    CHECK(blog_seal_init(&k, p, TS_SECRET, strlen(TS_SECRET)) == 0);
    len = ts_seal_bls2(TS_NAME, TS_BODY, TS_NOW / TS_SEC - 10, v);
    CHECK(len > 0);
    CHECK(blog_seal_open(&k, TS_NAME, strlen(TS_NAME), v, len, TS_NOW,
                         TS_TTL, &body, &blen, &at) == 0);
    CHECK_STR(body, blen, TS_BODY);
    CHECK(at == TS_NOW - 10 * TS_SEC);
    len = ts_seal_bls2(TS_NAME, TS_BODY, TS_NOW / TS_SEC - 3600, v);
    CHECK(!ts_opens(&k, TS_NAME, v, len));
    v[11] ^= 1;
    CHECK(!ts_opens(&k, TS_NAME, v, len));
    apr_pool_destroy(p);
}

#define TT_THREADS 4
#define TT_PAGES 200

typedef struct tt_arg
{
    const blog_seal *k;
    char       *mine[TT_PAGES];     /* sealed by this thread */
    size_t      len[TT_PAGES];
    int         bad;                /* failures seen by this thread */
} tt_arg;

static void *
tt_main(void *data)
{
    tt_arg     *a = data;
    char        body[64];
    int         i;

    for (i = 0; i < TT_PAGES; i++) {
        snprintf(body, sizeof(body), "<p>page %d of %p</p>", i, data);
        a->mine[i] = ts_seal(a->k, TS_NAME, body, &a->len[i]);
        a->bad += a->mine[i] == NULL
            || !ts_opens(a->k, TS_NAME, a->mine[i], a->len[i])
            || ts_opens(a->k, "blog:page:/", a->mine[i], a->len[i]);
    }
    return NULL;
}

/*
 * Threads sealing and opening at once, each with its own context; what
 * they sealed opens under the main thread's; each context is freed at
 * its thread's exit (the leak checks of ASan and valgrind see it
 * otherwise).
 */
static void
test_seal_threads(void)
{
    apr_pool_t *p;
    blog_seal   k;
    pthread_t   th[TT_THREADS];
    tt_arg      a[TT_THREADS];
    int         t, i, bad = 0;

    apr_pool_create(&p, NULL);
    CHECK(blog_seal_init(&k, p, TS_SECRET, strlen(TS_SECRET)) == 0);
    memset(a, 0, sizeof(a));
    for (t = 0; t < TT_THREADS; t++) {
        a[t].k = &k;
        CHECK(pthread_create(&th[t], NULL, tt_main, &a[t]) == 0);
    }
    for (t = 0; t < TT_THREADS; t++) {
        pthread_join(th[t], NULL);
        bad += a[t].bad;
        for (i = 0; i < TT_PAGES; i++) {
            bad += a[t].mine[i] == NULL
                || !ts_opens(&k, TS_NAME, a[t].mine[i], a[t].len[i]);
            free(a[t].mine[i]);
        }
    }
    CHECK(bad == 0);
    apr_pool_destroy(p);
}

/*
 * A seal goes with its pool (a restart clears Apache's configuration
 * pool): more restarts than a process has thread keys (1024 on glibc)
 * still seal, so no key is left behind.
 */
static void
test_seal_restarts(void)
{
    int         i, ok = 0;

    for (i = 0; i < 1500; i++) {
        apr_pool_t *p;
        blog_seal   k;
        size_t      len;
        char       *v;

        apr_pool_create(&p, NULL);
        if (blog_seal_init(&k, p, TS_SECRET, strlen(TS_SECRET)) == 0
            && (v = ts_seal(&k, TS_NAME, TS_BODY, &len)) != NULL) {
            ok += ts_opens(&k, TS_NAME, v, len);
            free(v);
        }
        apr_pool_destroy(p);
    }
    CHECK(ok == 1500);
}

static char ts_dir[] = "/tmp/blog-seal-XXXXXX";

static const char *
ts_file(const char *name, const char *data, mode_t mode)
{
    static char path[128];

    snprintf(path, sizeof(path), "%s/%s", ts_dir, name);
    if (t_write_file(ts_dir, name, data) != 0 || chmod(path, mode) != 0)
        return NULL;
    return path;
}

static void
test_seal_secret_files(void)
{
    apr_pool_t *p;
    blog_cache_settings g;
    char        err[256];

    CHECK(mkdtemp(ts_dir) != NULL);
    apr_pool_create(&p, NULL);
    memset(&g, 0, sizeof(g));
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == 0);
    CHECK(g.redis.pass == NULL && !g.seal.on);

    g.redis.auth_file = ts_file("auth", "blog s3cret pass\n", 0600);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == 0);
    CHECK(g.redis.user && strcmp(g.redis.user, "blog") == 0);
    CHECK(g.redis.pass && strcmp(g.redis.pass, "s3cret pass") == 0);
    g.redis.auth_file = ts_file("auth", "s3cret\r\n", 0400);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == 0);
    CHECK(g.redis.user == NULL && strcmp(g.redis.pass, "s3cret") == 0);
    /* readable by the group or others, empty, two lines, missing */
    g.redis.auth_file = ts_file("auth", "s3cret\n", 0640);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == -1);
    CHECK(strstr(err, "mode 0640") != NULL && strstr(err, "chmod 600"));
    g.redis.auth_file = ts_file("auth", "s3cret\n", 0604);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == -1);
    g.redis.auth_file = ts_file("auth", "\n", 0600);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == -1);
    CHECK(strstr(err, "one line") != NULL);
    g.redis.auth_file = ts_file("auth", "a\nb\n", 0600);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == -1);
    g.redis.auth_file = apr_pstrcat(p, ts_dir, "/none", (char *) NULL);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == -1);
    CHECK(strstr(err, "cannot open") != NULL);
    g.redis.auth_file = ts_dir;
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == -1);
    CHECK(strstr(err, "not a regular file") != NULL);
    g.redis.auth_file = NULL;

    g.key_file = ts_file("key", "short", 0600);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == -1);
    CHECK(strstr(err, "32 bytes") != NULL && !g.seal.on);
    g.key_file = ts_file("key", TS_SECRET, 0644);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == -1 && !g.seal.on);
    g.key_file = ts_file("key", TS_SECRET, 0600);
    CHECK(blog_cache_load(p, &g, err, sizeof(err)) == 0 && g.seal.on);
    apr_pool_destroy(p);
}

/* ---- AUTH against fake_redis.c ---- */

static apr_pool_t *ta_pool;
static fake_server *ta_redis;
static blog_cache_settings ta_g;
static blog_redis ta_r = {.max_bulk = 1024};

static int
ta_connect(char *why, size_t len)
{
    why[0] = '\0';
    return blog_redis_connect(&ta_r, &ta_g.redis, why, len);
}

/* One GET on the connection: its reply's type, or -1. */
static int
ta_get(char *err, size_t len)
{
    const char *argv[] = {"GET", TS_NAME};
    size_t      lens[] = {3, strlen(TS_NAME)};
    redisReply *reply = NULL;
    int         type = -1;

    if (blog_redis_command(&ta_r, 2, argv, lens,
                           apr_time_now() + apr_time_from_sec(10),
                           &reply) == BLOG_REDIS_OK) {
        type = reply->type;
        if (err)
            apr_snprintf(err, len, "%.*s", (int) reply->len,
                         reply->str ? reply->str : "");
        freeReplyObject(reply);
    }
    return type;
}

static void
test_auth_exchange(void)
{
    char        why[200];
    unsigned    n;

    apr_pool_create(&ta_pool, NULL);
    ta_redis = fake_redis_start(apr_pstrcat(ta_pool, ts_dir, "/r.sock",
                                            (char *) NULL));
    ta_g.redis.on = 1;
    ta_g.redis.host = apr_pstrcat(ta_pool, ts_dir, "/r.sock", (char *) NULL);
    ta_g.redis.connect_timeout = apr_time_from_msec(300);
    ta_g.redis.timeout = apr_time_from_sec(10);

    /* the password alone, then a user and its password */
    fake_redis_auth(NULL, "s3cret");
    ta_g.redis.pass = "s3cret";
    n = fake_redis_ncmds();
    CHECK(ta_connect(why, sizeof(why)) == 0);
    CHECK(fake_redis_wait_cmd(n, "AUTH s3cret", 0) > 0);
    CHECK(ta_get(NULL, 0) == REDIS_REPLY_NIL);
    fake_redis_auth("blog", "s3cret");
    ta_g.redis.user = "blog";
    n = fake_redis_ncmds();
    CHECK(ta_connect(why, sizeof(why)) == 0);
    CHECK(fake_redis_wait_cmd(n, "AUTH blog s3cret", 0) > 0);
    CHECK(ta_get(NULL, 0) == REDIS_REPLY_NIL);

    /* a wrong password: no connection, and why says so */
    ta_g.redis.pass = "wrong";
    CHECK(ta_connect(why, sizeof(why)) == -1 && ta_r.ctx == NULL);
    CHECK(strstr(why, "AUTH refused: WRONGPASS") != NULL);
    ta_g.redis.pass = "s3cret";

    /* garbage, a disconnect, a stall in answer to AUTH */
    fake_redis_set(FAKE_GARBAGE, 1);
    CHECK(ta_connect(why, sizeof(why)) == -1 && ta_r.ctx == NULL);
    CHECK(strstr(why, "AUTH: bad or oversized reply") != NULL);
    fake_redis_set(FAKE_CLOSE, 1);
    CHECK(ta_connect(why, sizeof(why)) == -1);
    CHECK(strstr(why, "AUTH: connection closed") != NULL);
    fake_redis_set(FAKE_STALL, 1);
    CHECK(ta_connect(why, sizeof(why)) == -1);
    CHECK(strstr(why, "AUTH: timed out") != NULL);
    fake_redis_set(FAKE_OK, 0);
    CHECK(ta_connect(why, sizeof(why)) == 0);

    /* no AUTH while Redis wants one: every command is refused */
    ta_g.redis.user = ta_g.redis.pass = NULL;
    n = fake_redis_ncmds();
    CHECK(ta_connect(why, sizeof(why)) == 0);
    CHECK(ta_get(why, sizeof(why)) == REDIS_REPLY_ERROR);
    CHECK(strncmp(why, "NOAUTH", 6) == 0);
    CHECK(fake_redis_wait_cmd(n, "AUTH", 0) < 0);

    /* rediss:// to a Redis that speaks no TLS: the handshake fails */
    {
        char        err[256];

        ta_g.redis.tls = 1;
        ta_g.redis.tls_ca = apr_pstrcat(ta_pool, ts_dir, "/none.pem",
                                        (char *) NULL);
        CHECK(blog_cache_load(ta_pool, &ta_g, err, sizeof(err)) == -1);
        CHECK(strstr(err, "BlogRedisTLSCA") != NULL);
        ta_g.redis.tls_ca = NULL;
        CHECK(blog_cache_load(ta_pool, &ta_g, err, sizeof(err)) == 0);
        CHECK(ta_g.redis.tls_ctx != NULL);
        CHECK(ta_connect(why, sizeof(why)) == -1 && ta_r.ctx == NULL);
        CHECK(strstr(why, "TLS handshake") != NULL);
        ta_g.redis.tls = 0;
    }
    blog_redis_close(&ta_r);
    fake_redis_auth(NULL, NULL);
    fake_stop(ta_redis);
    apr_pool_destroy(ta_pool);
}

static void
test_seal_cleanup(void)
{
    const char *names[] = {"auth", "key", "r.sock"};
    char        path[128];
    size_t      i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", ts_dir, names[i]);
        unlink(path);
    }
    CHECK(rmdir(ts_dir) == 0);
}

const t_case t_seal_cases[] = {
    {"seal: a sealed page opens", test_seal_round_trip},
    {"seal: forged, truncated, moved or foreign entries do not",
     test_seal_forgeries},
    {"seal: a value sealed more than the TTL ago does not",
     test_seal_replayed},
    {"seal: the previous version's pages (BLS2, seconds) open",
     test_seal_previous_version},
    {"seal: threads at once, each with its own context", test_seal_threads},
    {"seal: a seal per restart leaves no thread key behind",
     test_seal_restarts},
    {"seal: the secret files of BlogRedisAuth and BlogCacheKey",
     test_seal_secret_files},
    {"redis: AUTH ok, WRONGPASS, garbage, disconnect, stall, NOAUTH; TLS "
     "to a plain Redis",
     test_auth_exchange},
    {"seal: cleanup", test_seal_cleanup},
    {NULL, NULL}
};

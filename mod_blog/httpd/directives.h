/* SPDX-License-Identifier: Apache-2.0 */
/*
 * directives.h - every directive, once: X(id, name, blog_config's field,
 * type, where, default (parsed as if configured; NULL: unset), min, max (ms
 * for durations), syntax, help).  test_directives.c checks the docs by it.
 */
#ifndef BLOG_DIRECTIVES_H
#define BLOG_DIRECTIVES_H

#ifndef BLOG_TEMPLATES_DIR
#define BLOG_TEMPLATES_DIR "/usr/share/mod_blog/templates"
#endif

typedef enum blog_dir_type
{
    BLOG_DT_MOUNT,              /* a URL path, optionally "shared" */
    BLOG_DT_FLAG,               /* On or Off */
    BLOG_DT_CONNINFO,           /* a libpq conninfo, checked by libpq */
    BLOG_DT_INT,                /* an integer within the bounds */
    BLOG_DT_MSEC,               /* a duration, bare numbers in ms */
    BLOG_DT_SEC,                /* a duration, bare numbers in seconds */
    BLOG_DT_MSEC_OFF,           /* Off (0) or a BLOG_DT_MSEC duration */
    BLOG_DT_REDIS,              /* host:port, [v6]:port, /socket or Off */
    BLOG_DT_PATH,               /* a folder or file, relative to ServerRoot */
    BLOG_DT_REDIS_LIST,         /* lo to hi host:port, all rediss:// or none */
    BLOG_DT_NAME                /* a word of printable ASCII */
} blog_dir_type;

typedef enum blog_dir_where
{
    BLOG_DW_SERVER,
    BLOG_DW_VHOST
} blog_dir_where;

/* Bounds shared by several entries: an hour is longer than any page wait. */
#define BLOG_HOUR_MS    (3600L * 1000)
#define BLOG_YEAR_S     (365L * 86400)

#define BLOG_DIRECTIVES(X) \
    X(MOUNT, "BlogMount", mount, MOUNT, VHOST, NULL, 0, 0, "/path [shared]", \
      "where the blog answers (links carry the prefix); with shared, only " \
      "its own paths, the rest of the host is left to Apache") \
    X(FAST_PATH, "BlogFastPath", fast_path, FLAG, VHOST, "Off", 0, 0, \
      "On|Off", "Off: an ordinary content handler, after access control, " \
      "auth and with the output filters; On: answered from quick_handler, " \
      "bypassing them all (as CacheQuickHandler)") \
    X(DATABASE, "BlogDatabase", db.conninfo, CONNINFO, SERVER, "dbname=blog", \
      0, 0, "\"conninfo\"", \
      "the pg_blog database, as a libpq connection string") \
    X(POOL_MIN, "BlogPoolMin", db.pool_min, INT, SERVER, "1", 0, 1024, "n", \
      "PostgreSQL connections a child opens at start") \
    X(POOL_KEEP, "BlogPoolKeep", db.pool_keep, INT, SERVER, "2", 0, 1024, \
      "n", "idle PostgreSQL connections a child keeps") \
    X(POOL_MAX, "BlogPoolMax", db.pool_max, INT, SERVER, "4", 1, 1024, "n", \
      "PostgreSQL connections a child may hold") \
    X(POOL_EXPTIME, "BlogPoolExptime", db.pool_exptime, SEC, SERVER, "60", 1, \
      BLOG_HOUR_MS, "seconds", \
      "idle time before a connection above BlogPoolKeep is closed") \
    X(ACQUIRE_TIMEOUT, "BlogPoolAcquireTimeout", db.acquire_timeout, MSEC, \
      SERVER, "1000", 1, BLOG_HOUR_MS, "duration", \
      "longest wait for a free connection before the answer is 503") \
    X(QUERY_TIMEOUT, "BlogQueryTimeout", db.query_timeout, MSEC, SERVER, \
      "5000", 1, BLOG_HOUR_MS, "duration", "deadline of a page's whole " \
      "database call, then 503; also its query's statement_timeout") \
    X(PREPARE, "BlogPrepare", db.prepare, FLAG, SERVER, "On", 0, 0, "On|Off", \
      "On: page statements prepared once per connection; Off: no session " \
      "state, for a transaction-pooling PgBouncer") \
    X(REDIS, "BlogRedis", cache, REDIS, SERVER, "127.0.0.1:6379", 0, 0, \
      "host:port|rediss://host:port|/socket|Off", "the Redis of the page " \
      "cache (rediss://: over TLS, its certificate verified against the " \
      "host name), or Off") \
    X(REDIS_TLS_CA, "BlogRedisTLSCA", cache.redis.tls_ca, PATH, SERVER, \
      NULL, 0, 0, "file", "with rediss://, the CA certificates (PEM) " \
      "Redis's must chain to; unset: the system's") \
    X(REDIS_TLS_CERT, "BlogRedisTLSCert", cache.redis.tls_cert, PATH, \
      SERVER, NULL, 0, 0, "file", "with rediss://, a client certificate " \
      "and its key (PEM, for its owner only), for a Redis with " \
      "tls-auth-clients") \
    X(REDIS_AUTH, "BlogRedisAuth", cache.redis.auth_file, PATH, SERVER, \
      NULL, 0, 0, "file", "Redis AUTH on every connection: a file of one " \
      "line, \"password\" or \"user password\", for its owner only (read at " \
      "start-up, as root)") \
    X(REDIS_SENTINELS, "BlogRedisSentinels", cache.sentinel.list, \
      REDIS_LIST, SERVER, NULL, 1, 16, \
      "host:port ...|rediss://host:port ...", "Redis Sentinels that name " \
      "the master of BlogRedisMaster, which is then the cache (found again " \
      "after a failover; rediss://: the sentinels and the master over " \
      "TLS), in place of BlogRedis's; unset: BlogRedis") \
    X(REDIS_MASTER, "BlogRedisMaster", cache.sentinel.master, NAME, SERVER, \
      NULL, 0, 0, "name", "with BlogRedisSentinels, the name they monitor " \
      "the cache's master by") \
    X(REDIS_SENTINEL_AUTH, "BlogRedisSentinelAuth", cache.sentinel.auth_file, \
      PATH, SERVER, NULL, 0, 0, "file", "AUTH to the sentinels, a file as " \
      "BlogRedisAuth's (which is the master's); unset: none") \
    X(CACHE_KEY, "BlogCacheKey", cache.key_file, PATH, SERVER, NULL, 0, 0, \
      "file", "a secret of 32 bytes or more, for its owner only: each " \
      "cached page carries a MAC of it, one that fails is a miss; unset: " \
      "raw pages") \
    X(REDIS_CONNECT_TIMEOUT, "BlogRedisConnectTimeout", \
      cache.redis.connect_timeout, MSEC, SERVER, "200", 1, BLOG_HOUR_MS, \
      "duration", "deadline of a connect to Redis") \
    X(REDIS_TIMEOUT, "BlogRedisTimeout", cache.redis.timeout, MSEC, SERVER, \
      "200", 1, BLOG_HOUR_MS, "duration", "deadline of a whole Redis " \
      "command; past it X-Cache: BYPASS, never an error") \
    X(CACHE_TTL, "BlogCacheTTL", cache.cache_ttl, INT, SERVER, "60", 1, \
      BLOG_YEAR_S, "seconds", "seconds a cached page lives in Redis") \
    X(INVALIDATE, "BlogInvalidate", invalidate, FLAG, SERVER, "On", 0, 0, \
      "On|Off", "On: one listener per Apache deletes the cached pages " \
      "each write names (pg_blog's NOTIFY); Off: they live for " \
      "BlogCacheTTL") \
    X(INVALIDATE_DATABASE, "BlogInvalidateDatabase", invalidate_db, \
      CONNINFO, SERVER, NULL, 0, 0, "\"conninfo\"", "the listener's own " \
      "conninfo, a session on the primary (LISTEN needs one: not a " \
      "transaction-pooling PgBouncer); unset: BlogDatabase") \
    X(TEMPLATES, "BlogTemplates", templates_dir, PATH, SERVER, \
      BLOG_TEMPLATES_DIR, 0, 0, "dir", \
      "folder of the page templates, compiled once at start-up") \
    X(COMPUTE_LIMIT, "BlogComputeLimit", compute_limit, INT, SERVER, \
      "20000", 2, 100000000, "n", "/compute sums the primes below n") \
    X(CONN_HOLD, "BlogConnectionHold", conn_hold, MSEC_OFF, VHOST, "Off", \
      1, 1000, "Off|duration", "after the blog's answer on a kept-alive " \
      "HTTP/1.1 connection (event MPM, no TLS), how long its worker waits " \
      "for the next request before the listener takes the connection") \
    X(HANDSHAKE_WAIT, "BlogHandshakeWait", handshake_wait, FLAG, SERVER, \
      "Off", 0, 0, "On|Off", "On: under the event MPM (httpd 2.4.63 on), a " \
      "TLS connection waits in the listener's poll until its ClientHello " \
      "is whole, holding no worker; Off: mod_ssl reads it in a worker " \
      "from the accept, as without the blog") \
    X(CONN_PARK, "BlogConnectionPark", conn_park, FLAG, SERVER, "Off", 0, 0, \
      "On|Off", "ignored, with a warning at start-up (the connection loop " \
      "it set was removed); accepted so that old configurations start")

#define BLOG_DIRECTIVE_ID(id, name, field, type, where, def, lo, hi, \
                          syntax, help) BLOG_D_##id,
enum
{
    BLOG_DIRECTIVES(BLOG_DIRECTIVE_ID)
    BLOG_NDIRECTIVES
};
#undef BLOG_DIRECTIVE_ID

#endif

# SPDX-License-Identifier: Apache-2.0
# Sourced by the stack, test and bench scripts: where the private stack lives.
# Every value may be overridden from the environment.

BLOG_ROOT=${BLOG_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BLOG_VAR=${BLOG_VAR:-$BLOG_ROOT/var}
# var/ may be a link to a folder the service users can reach (stack.sh
# prepare_var): they must be given the folder, not a path through the checkout.
if [ -L "$BLOG_VAR" ]; then BLOG_VAR=$(readlink -f "$BLOG_VAR"); fi
BLOG_PG_PORT=${BLOG_PG_PORT:-54329}
BLOG_REDIS_PORT=${BLOG_REDIS_PORT:-63790}
BLOG_HTTP_PORT=${BLOG_HTTP_PORT:-8080}
BLOG_MPM=${BLOG_MPM:-event}
# BlogFastPath of the stack's Apache: off (the ordinary content handler);
# on runs the quick_handler opt-in
BLOG_FASTPATH=${BLOG_FASTPATH:-off}
# Apache's Timeout (seconds): httpd's default
BLOG_TIMEOUT=${BLOG_TIMEOUT:-60}
# BlogRedis of the stack's Apache: the socket of the stack's Redis
BLOG_REDIS=${BLOG_REDIS:-$BLOG_VAR/run/redis.sock}
# BlogInvalidate of the stack's Apache: on (the cache invalidation listener)
BLOG_INVALIDATE=${BLOG_INVALIDATE:-on}
# BlogConnectionHold of the stack's Apache (conf/httpd.conf.in says why 100ms)
BLOG_HOLD=${BLOG_HOLD:-100ms}
# Apache's threads per child (4 children), AsyncRequestWorkerFactor,
# ServerLimit and MaxMemFree (see conf/httpd.conf.in)
BLOG_THREADS=${BLOG_THREADS:-300}
BLOG_ASYNC_FACTOR=${BLOG_ASYNC_FACTOR:-256}
BLOG_SERVER_LIMIT=${BLOG_SERVER_LIMIT:-16}
BLOG_MAXMEMFREE=${BLOG_MAXMEMFREE:-256}
# The scheduling policy the stack's Apache runs under (chrt): batch, or
# other (the kernel's default); docs/OPERATIONS.md says why batch.  Taken
# when Apache starts: a graceful restart keeps the parent's.
BLOG_SCHED=${BLOG_SCHED:-batch}
# The PostgreSQL installed (the distribution's major when there are several;
# BLOG_PG_MAJOR or BLOG_PG_BIN choose another)
if [ -z "${BLOG_PG_BIN:-}" ]; then
    BLOG_PG_BIN=/usr/lib/postgresql/$(sh "$BLOG_ROOT/scripts/pgmajor.sh")/bin
fi
# the extension is built and tested for that PostgreSQL
PG_CONFIG=${PG_CONFIG:-$BLOG_PG_BIN/pg_config}
# PostgreSQL refuses to run as root: as root, the stack's server runs as
# this dedicated system user.
BLOG_PG_OSUSER=${BLOG_PG_OSUSER:-pgblog}

PGHOST=$BLOG_VAR/run
PGPORT=$BLOG_PG_PORT
PGDATABASE=blog
PGUSER=postgres
export BLOG_ROOT BLOG_VAR BLOG_PG_PORT BLOG_REDIS_PORT BLOG_HTTP_PORT \
    BLOG_MPM BLOG_FASTPATH BLOG_TIMEOUT BLOG_REDIS BLOG_INVALIDATE BLOG_HOLD BLOG_THREADS BLOG_ASYNC_FACTOR BLOG_SERVER_LIMIT BLOG_MAXMEMFREE BLOG_SCHED BLOG_PG_BIN BLOG_PG_OSUSER PG_CONFIG \
    PGHOST PGPORT PGDATABASE PGUSER

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The private stack: PostgreSQL 15, Redis and Apache httpd, all under var/,
# on loopback ports of their own.  Starting twice is harmless; stopping
# stops only what var/run's pid files say this stack started.
#
#   scripts/stack.sh start|stop|restart|status [pg|redis|httpd ...]
#   scripts/stack.sh graceful|graceful-stop   (Apache: apachectl -k graceful, -k graceful-stop)
#   scripts/stack.sh psql [args]        psql as the cluster's superuser
#
# BLOG_MPM=event|worker and BLOG_FASTPATH=on|off choose Apache's MPM and
# mod_blog's answering hook when httpd starts.
#
# Apache's configuration is tested (apache2 -t) before every start and
# restart, as apache2ctl does; one that fails is refused, saying why.
# restart httpd and graceful keep the listening socket (SIGHUP, SIGUSR1);
# restart httpd stops and starts only to change what a start sets (the MPM,
# ThreadLimit, ServerLimit, the parent's environment and scheduling).
set -euo pipefail
. "$(dirname "$0")/env.sh"

# The daemons started here must not inherit the caller's descriptors: run
# under `flock /tmp/blog-load.lock ./blog check`, an Apache that the check
# restarted (and leaves running when the stack ran before) held the load
# lock for as long as it ran, and every other load waited.  Bash reads
# this script on fd 255.
for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    case $fd in 0|1|2|255) continue ;; esac
    [ "$(readlink "/proc/$$/fd/$fd" 2>/dev/null)" = "$(readlink -f "$0")" ] && continue
    eval "exec $fd>&-" 2>/dev/null || true
done

die() { echo "stack: $*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }

# Run a command as the user that owns the PostgreSQL cluster.
as_pg() {
    # from / : the PostgreSQL tools complain when they cannot reach the cwd
    if is_root; then (cd / && runuser -u "$BLOG_PG_OSUSER" -- "$@"); else "$@"; fi
}

# var/ must be reachable by the service users (pgblog, www-data) and short
# enough for a unix socket path; a checkout under /root is neither, so var/
# then becomes a link to a folder under /var/tmp named after the checkout.
prepare_var() {
    [ -d "$BLOG_VAR" ] && return
    if is_root; then
        id "$BLOG_PG_OSUSER" >/dev/null 2>&1 ||
            useradd --system --user-group --no-create-home \
                --home-dir /nonexistent --shell /usr/sbin/nologin "$BLOG_PG_OSUSER"
        local ok=1 u
        for u in "$BLOG_PG_OSUSER" www-data; do
            id "$u" >/dev/null 2>&1 || continue
            runuser -u "$u" -- test -x "$BLOG_ROOT" || ok=0
        done
        if [ $ok -eq 0 ] || [ ${#BLOG_VAR} -gt 60 ]; then
            local alt
            alt=/var/tmp/blog-stack-$(printf %s "$BLOG_ROOT" | cksum | cut -d' ' -f1)
            mkdir -p "$alt"
            chmod 755 "$alt"
            ln -sfn "$alt" "$BLOG_VAR"
            BLOG_VAR=$alt PGHOST=$alt/run
        fi
    fi
    mkdir -p "$BLOG_VAR"
}

make_dirs() {
    prepare_var
    mkdir -p "$BLOG_VAR"/{run,log,httpd,redis}
    chmod 755 "$BLOG_VAR" "$BLOG_VAR"/run "$BLOG_VAR"/log
    if is_root; then
        chown "$BLOG_PG_OSUSER" "$BLOG_VAR"/run
        touch "$BLOG_VAR"/log/postgresql.log
        chown "$BLOG_PG_OSUSER" "$BLOG_VAR"/log/postgresql.log
    fi
}

pid_alive() { [ -f "$1" ] && kill -0 "$(head -n1 "$1")" 2>/dev/null; }

wait_until() {   # wait_until SECONDS CMD...: poll CMD every 0.1 s
    local n=$(( $1 * 10 )); shift
    while ! "$@" >/dev/null 2>&1; do
        n=$((n - 1)); [ $n -gt 0 ] || return 1
        sleep 0.1
    done
}

# ---------------------------------------------------------------- PostgreSQL
pg_initdb() {
    [ -f "$BLOG_VAR/pg/PG_VERSION" ] && return
    echo "stack: creating the PostgreSQL cluster in $BLOG_VAR/pg"
    mkdir -p "$BLOG_VAR/pg"
    is_root && chown "$BLOG_PG_OSUSER" "$BLOG_VAR/pg"
    chmod 700 "$BLOG_VAR/pg"
    as_pg "$BLOG_PG_BIN/initdb" -D "$BLOG_VAR/pg" -U postgres -E UTF8 \
        --locale=C --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    as_pg tee -a "$BLOG_VAR/pg/postgresql.conf" >/dev/null <<CONF
# the private stack (scripts/stack.sh)
port = $BLOG_PG_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$BLOG_VAR/run'
# 2 x (4 children x 4) during a graceful restart, pgbench's 50, the tests
max_connections = 150
shared_buffers = 128MB
synchronous_commit = off
log_min_messages = warning
log_line_prefix = '%m [%p] %q%u@%d '
CONF
}

pg_running() { as_pg "$BLOG_PG_BIN/pg_ctl" -D "$BLOG_VAR/pg" status >/dev/null 2>&1; }

pg_seed() {
    if [ "$(psql -XAtq -d postgres -c "SELECT 1 FROM pg_database WHERE datname = 'blog'")" != 1 ]; then
        echo "stack: seeding the database blog"
        psql -Xq -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE blog"
        if ! psql -Xq -v ON_ERROR_STOP=1 -d blog -f "$BLOG_ROOT/sql/setup.sql"; then
            # a half-made database would be taken for a seeded one next time
            psql -Xq -d postgres -c "DROP DATABASE blog"
            die "seeding failed (is the extension installed? make install-ext)"
        fi
    else
        # a database made by an older checkout: to the installed version
        # (the write functions and cache triggers came with 1.2), then the
        # visibility map set again (1.3's update rewrites every post)
        psql -Xq -d blog -c "SET client_min_messages = warning" \
            -c "ALTER EXTENSION pg_blog UPDATE" -c "VACUUM (ANALYZE) blog.posts" ||
            echo "stack: ALTER EXTENSION pg_blog UPDATE failed" >&2
    fi
}

start_pg() {
    make_dirs
    pg_initdb
    if ! pg_running; then
        as_pg "$BLOG_PG_BIN/pg_ctl" -D "$BLOG_VAR/pg" -l "$BLOG_VAR/log/postgresql.log" \
            -w -t 60 start >/dev/null || die "PostgreSQL did not start; see $BLOG_VAR/log/postgresql.log"
    fi
    wait_until 30 "$BLOG_PG_BIN/pg_isready" -q || die "PostgreSQL is not ready"
    pg_seed
}

stop_pg() {
    [ -f "$BLOG_VAR/pg/PG_VERSION" ] || return 0
    if pg_running; then
        as_pg "$BLOG_PG_BIN/pg_ctl" -D "$BLOG_VAR/pg" -m fast -w -t 60 stop >/dev/null
    fi
}

# --------------------------------------------------------------------- Redis
redis_pidfile() { echo "$BLOG_VAR/run/redis.pid"; }

start_redis() {
    make_dirs
    pid_alive "$(redis_pidfile)" && return
    redis-server --port "$BLOG_REDIS_PORT" --bind 127.0.0.1 --daemonize yes \
        --pidfile "$(redis_pidfile)" --logfile "$BLOG_VAR/log/redis.log" \
        --unixsocket "$BLOG_VAR/run/redis.sock" --unixsocketperm 777 \
        --dir "$BLOG_VAR/redis" --save '' --appendonly no \
        --maxmemory 256mb --maxmemory-policy allkeys-lru >/dev/null
    wait_until 10 redis-cli -p "$BLOG_REDIS_PORT" ping || die "Redis did not start"
}

stop_redis() {
    local f; f=$(redis_pidfile)
    pid_alive "$f" || return 0
    local pid; pid=$(cat "$f")
    kill "$pid"
    wait_until 10 bash -c "! kill -0 $pid" || kill -9 "$pid" 2>/dev/null || true
    rm -f "$f"
}

# -------------------------------------------------------------------- Apache
httpd_pidfile() { echo "$BLOG_VAR/run/httpd.pid"; }
# BLOG_MODULE: another build of the module (bench/sweep.py compares them)
module_path() { echo "${BLOG_MODULE:-$BLOG_ROOT/mod_blog/.libs/mod_blog.so}"; }

# httpd_conf: conf/httpd.conf.in with the stack's settings, written to
# var/httpd/httpd.conf.new: the candidate that httpd_configtest checks
# before it replaces var/httpd/httpd.conf, the one Apache reads.
httpd_conf() {
    local user="" location=""
    is_root && user=$'User www-data\nGroup www-data'
    [ -f "$(module_path)" ] || die "mod_blog is not built: run make"
    case "$BLOG_FASTPATH" in
        on|On|ON) fast=On ;;
        *) fast=Off ;;
    esac
    sed -e "s|@BLOG_VAR@|$BLOG_VAR|g" -e "s|@BLOG_ROOT@|$BLOG_ROOT|g" \
        -e "s|@HTTP_PORT@|$BLOG_HTTP_PORT|g" -e "s|@MPM@|$BLOG_MPM|g" \
        -e "s|@REDIS_PORT@|$BLOG_REDIS_PORT|g" -e "s|@PG_PORT@|$BLOG_PG_PORT|g" \
        -e "s|@MODULE@|$(module_path)|g" -e "s|@FASTPATH@|$fast|g" \
        -e "s|@REDIS@|$BLOG_REDIS|g" -e "s|@TIMEOUT@|$BLOG_TIMEOUT|g" \
        -e "s|@INVALIDATE@|$BLOG_INVALIDATE|g" -e "s|@HOLD@|$BLOG_HOLD|g" \
        -e "s|@THREADS@|$BLOG_THREADS|g" -e "s|@WORKERS@|$((4 * BLOG_THREADS))|g" \
        -e "s|@SERVER_LIMIT@|$BLOG_SERVER_LIMIT|g" \
        -e "s|@ASYNC_FACTOR@|$BLOG_ASYNC_FACTOR|g" -e "s|@MAXMEMFREE@|$BLOG_MAXMEMFREE|g" \
        "$BLOG_ROOT/conf/httpd.conf.in" > "$BLOG_VAR/httpd/httpd.conf.new"
    # sed cannot insert the multi-line User block portably: append it
    if [ -n "$user" ]; then printf '%s\n' "$user" >> "$BLOG_VAR/httpd/httpd.conf.new"; fi
}

# sched_ COMMAND...: COMMAND under BLOG_SCHED's policy, which its
# processes and threads inherit, as an admin would set it in the service's
# unit (CPUSchedulingPolicy=batch).  Under SCHED_BATCH a woken worker does
# not preempt the one running: fewer switches among the children's threads
# (docs/DECISIONS.md, "Apache under SCHED_BATCH, the databases not").
# PostgreSQL and Redis keep the default, where batch lengthened the
# uncached pages' tail.
sched_() {
    if [ "$BLOG_SCHED" = batch ]; then chrt --batch 0 "$@"; else "$@"; fi
}

# The stack's own malloc settings, from outside as an admin would set them
# in Apache's envvars (the module sets nothing process-wide): one arena per
# child, where glibc would give each busy thread its own, each keeping its
# own free memory; and no per-thread cache of freed blocks (tcache), which
# each of 1 200 threads would keep filled with libpq's and hiredis's blocks
# (docs/DECISIONS.md, "One malloc arena, no thread cache").
apachectl_() {
    apachectl_with "$BLOG_VAR/httpd/httpd.conf" "$@"
}
apachectl_with() {
    local conf=$1; shift
    sched_ env MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-1}" \
        GLIBC_TUNABLES="${BLOG_GLIBC_TUNABLES-glibc.malloc.tcache_count=0}" \
        /usr/sbin/apache2 -d "$BLOG_VAR/httpd" -f "$conf" "$@"
}

# httpd_configtest WHAT: apache2 -t on the candidate configuration, as
# apache2ctl does before every restart; it becomes var/httpd/httpd.conf only
# when it passes.  Refused, apache2's own messages (the directive's file and
# line, a template's file and line) say why, and Apache, if it runs, keeps
# serving with the configuration it has.
httpd_configtest() {
    local out
    if ! out=$(apachectl_with "$BLOG_VAR/httpd/httpd.conf.new" -t 2>&1); then
        printf '%s\n' "$out" | grep -v '^Syntax OK$' >&2
        rm -f "$BLOG_VAR/httpd/httpd.conf.new"
        if pid_alive "$(httpd_pidfile)"; then
            die "$1 refused: the configuration does not pass apache2 -t; Apache keeps serving with the one it has"
        fi
        die "$1 refused: the configuration does not pass apache2 -t"
    fi
    mv "$BLOG_VAR/httpd/httpd.conf.new" "$BLOG_VAR/httpd/httpd.conf"
}

# What only a start sets, and a restart of the running parent cannot
# change: the MPM (httpd refuses another during a restart, and its parent
# exits), ThreadLimit and ServerLimit (kept, with a warning), the
# environment and scheduling policy the parent was started with.  Written
# at start; a restart or graceful asks for the same.
start_settings() {
    printf 'mpm=%s threads=%s server_limit=%s sched=%s arena=%s tunables=%s\n' \
        "$BLOG_MPM" "$BLOG_THREADS" "$BLOG_SERVER_LIMIT" "$BLOG_SCHED" \
        "${MALLOC_ARENA_MAX:-1}" "${BLOG_GLIBC_TUNABLES-glibc.malloc.tcache_count=0}"
}
started_file() { echo "$BLOG_VAR/run/httpd.started"; }
same_start_settings() { [ "$(cat "$(started_file)" 2>/dev/null)" = "$(start_settings)" ]; }

start_httpd() {
    make_dirs
    pid_alive "$(httpd_pidfile)" && return
    case "$BLOG_SCHED" in
        batch|other) ;;
        *) die "BLOG_SCHED is batch or other, not '$BLOG_SCHED'" ;;
    esac
    httpd_conf
    # An event child keeps every idle keep-alive connection it accepts open
    # (a socket each, up to 1 000 in tests/e2e/idle_conns.py): a shell's
    # usual 1 024 open files is too few.  8 192 as Debian's apache2ctl sets.
    local nofile; nofile=$(ulimit -Sn)
    if [ "$nofile" != unlimited ] && [ "$nofile" -lt 8192 ]; then
        ulimit -Sn 8192 2>/dev/null || ulimit -Sn "$(ulimit -Hn)" || true
    fi
    httpd_configtest "start"
    start_settings > "$(started_file)"
    local since; since=$(date +%s.%N)
    apachectl_ -k start || die "Apache did not start; see $BLOG_VAR/log/httpd-error.log"
    httpd_serving "$since"
}

# httpd_serving SINCE: Apache answers, and an invalidation listener that
# started after SINCE (seconds since the epoch) listens.
httpd_serving() {
    wait_until 20 curl -s -o /dev/null "http://127.0.0.1:$BLOG_HTTP_PORT/compute" ||
        die "Apache does not answer on port $BLOG_HTTP_PORT; see $BLOG_VAR/log/httpd-error.log"
    # The invalidation listener drops every cached page when it starts
    # listening: let that happen before anyone relies on a cached page.
    # (PostgreSQL may be down on purpose: then there is nothing to wait for.)
    case "$BLOG_INVALIDATE" in
        on|On|ON)
            pg_running 2>/dev/null && wait_until 5 listening "$1" || true
            sleep 0.1 ;;
    esac
}

listening() {
    [ "$(psql -XAtq -d blog -c "SELECT count(*) FROM pg_stat_activity
        WHERE application_name = 'mod_blog listener' AND query = 'LISTEN blog_cache'
        AND backend_start >= to_timestamp($1)" 2>/dev/null)" -ge 1 ]
}

# signal_httpd_exit SIGNAL SECONDS FAILURE: Apache's parent is sent SIGNAL
# and given SECONDS to exit, or the stack dies saying FAILURE; nothing to do
# when it is not running
signal_httpd_exit() {
    local f; f=$(httpd_pidfile)
    pid_alive "$f" || return 0
    local pid; pid=$(cat "$f")
    kill "-$1" "$pid"
    wait_until "$2" bash -c "! kill -0 $pid" || die "Apache ($pid) $3"
}

stop_httpd() { signal_httpd_exit TERM 20 "did not stop"; }

# signal_reread SIGNAL WHAT: the running parent, sent SIGNAL (HUP: restart,
# USR1: graceful), re-reads var/httpd/httpd.conf, keeping its listening
# sockets: new connections wait in their queue meanwhile, none is refused.
# Returns once it says it runs the new configuration; if the parent exited
# instead (what apache2 -t cannot see: a module's post-config step that
# fails), it is started again with the configuration it had.
signal_reread() {
    local f pid log off n
    f=$(httpd_pidfile); pid=$(cat "$f"); log=$BLOG_VAR/log/httpd-error.log
    off=$(stat -c %s "$log" 2>/dev/null || echo 0)
    kill "-$1" "$pid"
    for ((n = 300; n > 0; n--)); do
        # grep reads to the end (no -q): tail must not die of SIGPIPE
        tail -c +"$((off + 1))" "$log" 2>/dev/null |
            grep 'configured -- resuming normal operations' >/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "stack: Apache exited on its $2; see $log" >&2
        if [ -f "$BLOG_VAR/httpd/httpd.conf.prev" ]; then
            cp "$BLOG_VAR/httpd/httpd.conf.prev" "$BLOG_VAR/httpd/httpd.conf"
            rm -f "$f"
            apachectl_ -k start && httpd_serving "$(date +%s)" &&
                echo "stack: Apache started again with the configuration it had" >&2
        fi
        exit 1
    fi
    die "Apache did not finish its $2 within 30 s; see $log"
}

# next_conf WHAT: the candidate made and tested, the configuration in use
# kept as httpd.conf.prev.
next_conf() {
    cp "$BLOG_VAR/httpd/httpd.conf" "$BLOG_VAR/httpd/httpd.conf.prev"
    httpd_conf
    httpd_configtest "$1"
}

# apachectl -k graceful, after apachectl's configtest: the children finish
# the requests they have while new ones start with the new configuration;
# refused (and nothing changes) when the configuration does not pass, or
# asks for what only a start sets.
graceful_httpd() {
    pid_alive "$(httpd_pidfile)" || die "Apache is not running"
    same_start_settings || die "graceful restart refused: it cannot change what a start sets \
($(cat "$(started_file)" 2>/dev/null || echo unknown) -> $(start_settings)); use scripts/stack.sh restart httpd"
    next_conf "graceful restart"
    signal_reread USR1 "graceful restart"
}

# restart httpd: apachectl -k restart (HUP) when the running parent can
# take the new configuration: the children end at once, as with stop, but
# the parent keeps the listening socket (connections wait, none is
# refused) and starts new ones.  What only a start sets (another MPM,
# ThreadLimit, the parent's environment) needs stop and start: nothing
# listens in between.
restart_httpd() {
    if pid_alive "$(httpd_pidfile)" && same_start_settings; then
        local since
        next_conf "restart"
        since=$(date +%s.%N)
        signal_reread HUP "restart"
        httpd_serving "$since"
    else
        stop_httpd
        start_httpd
    fi
}

# apachectl -k graceful-stop: the children finish the requests they have,
# the parent exits after them (GracefulShutdownTimeout: none, httpd's default).
graceful_stop_httpd() { signal_httpd_exit WINCH 60 "did not stop gracefully"; }

status() {
    if [ -f "$BLOG_VAR/pg/PG_VERSION" ] && pg_running; then echo "postgresql: running (port $BLOG_PG_PORT)"; else echo "postgresql: stopped"; fi
    if pid_alive "$(redis_pidfile)"; then echo "redis: running (port $BLOG_REDIS_PORT)"; else echo "redis: stopped"; fi
    if pid_alive "$(httpd_pidfile)"; then echo "httpd: running (http://127.0.0.1:$BLOG_HTTP_PORT/)"; else echo "httpd: stopped"; fi
}

cmd=${1:-status}; shift || true
parts=("$@"); [ ${#parts[@]} -gt 0 ] || parts=(pg redis httpd)
case "$cmd" in
    start)   for p in "${parts[@]}"; do "start_$p"; done ;;
    stop)    for ((i = ${#parts[@]} - 1; i >= 0; i--)); do "stop_${parts[i]}"; done ;;
    restart) for ((i = ${#parts[@]} - 1; i >= 0; i--)); do
                 [ "${parts[i]}" = httpd ] || "stop_${parts[i]}"
             done
             for p in "${parts[@]}"; do
                 if [ "$p" = httpd ]; then restart_httpd; else "start_$p"; fi
             done ;;
    graceful) graceful_httpd ;;
    graceful-stop) graceful_stop_httpd ;;
    status)  status ;;
    psql)    exec psql -X "$@" ;;
    *) die "usage: $0 start|stop|restart|graceful|graceful-stop|status [pg|redis|httpd ...] | psql [args]" ;;
esac

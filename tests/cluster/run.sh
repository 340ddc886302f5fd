#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `make cluster-test`: the blog on hosts of its own, built on this machine
# from network namespaces, then checked by tests/cluster/checks.py from the
# client host.  Run as root.
#
#   switch   a namespace holding only the bridge br0
#   pg1      10.77.0.11  PostgreSQL primary
#   pg2/pg3  10.77.0.12/13  streaming standbys (pg_basebackup, a slot each)
#   redis    10.77.0.20  the page cache's Redis master (TLS, ACL users, sealed
#                        pages), and redis2 10.77.0.21 its replica
#   sen1-3   10.77.0.24-26  Redis Sentinels (quorum 2): the web nodes ask them
#                        for the master (BlogRedisSentinels)
#   web1/2   10.77.0.31/32  Apache (event MPM) with this checkout's mod_blog
#   pgb      10.77.0.40  PgBouncer, transaction pooling
#   client   10.77.0.50  where the checks and the load run from
#
# Nothing on the wire is trusted, as in production: the test makes a CA and
# a certificate per server (its address in subjectAltName); PostgreSQL takes
# only hostssl + scram-sha-256 from the network, each login role from the
# hosts that need it; the web nodes, the standbys and PgBouncer verify the
# server's certificate (verify-full) and read their passwords from a
# passfile only their own user can read; PgBouncer takes scram over TLS
# from the web nodes and speaks scram over TLS to the standbys.  Redis
# listens only on its tls-port, with a certificate of the same CA; the web
# nodes AUTH as an ACL user that may GET, SET, DEL and SCAN blog:page:*
# and nothing else, and seal each cached page with a shared BlogCacheKey.
#
# Every address lives inside a namespace this script creates; the machine's
# own namespace gets nothing.  Whatever happens, the EXIT trap stops every
# process left in those namespaces (by PID), deletes the namespaces and the
# temporary folder.  The last line is "N passed, N failed".
set -uo pipefail
# make check exports the private stack's libpq settings (scripts/env.sh);
# the cluster's servers have their own addresses and ports.
unset PGHOST PGPORT PGDATABASE PGUSER PGHOSTADDR PGSERVICE
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${BLOG_PG_BIN:-/usr/lib/postgresql/$(sh "$ROOT/scripts/pgmajor.sh")/bin}
PG_OSUSER=${BLOG_PG_OSUSER:-pgblog}
NET=10.77.0
ID=bc$$
HOSTS=(pg1 pg2 pg3 redis redis2 sen1 sen2 sen3 web1 web2 pgb client)
declare -A ADDR=([pg1]=$NET.11 [pg2]=$NET.12 [pg3]=$NET.13 [redis]=$NET.20
                 [redis2]=$NET.21 [sen1]=$NET.24 [sen2]=$NET.25 [sen3]=$NET.26
                 [web1]=$NET.31 [web2]=$NET.32 [pgb]=$NET.40 [client]=$NET.50)
T0=$(date +%s)

say() { echo "cluster: $*"; }
fail_setup() {
    say "setup failed: $*"
    for f in "$TMP"/*/log/*.log "$TMP"/*/*.log; do
        [ -s "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }
    done 2>/dev/null
    echo "0 passed, 1 failed"
    exit 1
}
[ "$(id -u)" -eq 0 ] || { say "must run as root (namespaces)"; echo "0 passed, 1 failed"; exit 1; }
[ -f "$ROOT/mod_blog/.libs/mod_blog.so" ] || { say "mod_blog is not built: run make"; echo "0 passed, 1 failed"; exit 1; }
command -v redis-sentinel >/dev/null || { say "redis-sentinel is not installed (sh scripts/deps.sh test)"; echo "0 passed, 1 failed"; exit 1; }

# Run under `flock /tmp/blog-load.lock ...`, the servers started here would
# inherit the lock's descriptor and hold the lock for as long as they live.
for fd in /proc/$$/fd/*; do
    [ "$(readlink "$fd")" = /tmp/blog-load.lock ] && eval "exec ${fd##*/}>&-"
done

TMP=$(mktemp -d /var/tmp/blog-cluster.XXXXXX)
chmod 755 "$TMP"

ns() { echo "$ID-$1"; }
in_ns() { local h=$1; shift; ip netns exec "$(ns "$h")" "$@"; }
as_pg() { local h=$1; shift; (cd / && ip netns exec "$(ns "$h")" runuser -u "$PG_OSUSER" -- "$@"); }

cleanup() {
    local rc=$? n h pids
    trap - EXIT INT TERM
    if [ $rc -ne 0 ]; then
        for h in web1 web2; do
            [ -s "$TMP/$h/log/httpd-error.log" ] || continue
            echo "--- $h: the last blog lines of its error log"
            grep 'blog:' "$TMP/$h/log/httpd-error.log" | tail -n 12
            echo "--- $h: its blog errors and warnings by kind"
            grep -o 'blog:\(error\|warn\)\].*' "$TMP/$h/log/httpd-error.log" |
                sed -e 's/\[pid [^]]*\] //' -e 's/[0-9][0-9.]* s\b/N s/g' | cut -c1-160 |
                sort | uniq -c | sort -rn | head -n 8
        done
        for h in pg1 pg2 pg3; do
            echo "--- $h: FATAL and ERROR lines by kind (shutdowns aside)"
            grep -h 'FATAL\|ERROR' "$TMP/$h/log/postgresql.log" 2>/dev/null |
                sed 's/^[^]]*\] //' | cut -c1-140 | sort | uniq -c | sort -rn | head -n 6
        done
    fi
    # Every process in our namespaces is ours: TERM, then KILL what stays.
    for n in 1 2; do
        for h in "${HOSTS[@]}" switch; do
            ip netns list | grep -qw "$(ns "$h")" || continue
            pids=$(ip netns pids "$(ns "$h")" 2>/dev/null | tr '\n' ' ')
            [ -n "$pids" ] || continue
            # shellcheck disable=SC2086
            if [ $n -eq 1 ]; then kill -TERM $pids 2>/dev/null; else kill -KILL $pids 2>/dev/null; fi
        done
        [ $n -eq 1 ] && for _ in $(seq 50); do
            pids=""
            for h in "${HOSTS[@]}"; do
                ip netns list | grep -qw "$(ns "$h")" && pids+=$(ip netns pids "$(ns "$h")" 2>/dev/null)
            done
            [ -z "$pids" ] && break
            sleep 0.1
        done
    done
    for h in "${HOSTS[@]}" switch; do
        ip netns del "$(ns "$h")" 2>/dev/null
    done
    rm -rf "$TMP"
    say "cleaned up ($(($(date +%s) - T0)) s in all)"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

id "$PG_OSUSER" >/dev/null 2>&1 ||
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin "$PG_OSUSER"

# ------------------------------------------------------------------ network
say "network: a bridge and ${#HOSTS[@]} hosts in namespaces $ID-*"
ip netns add "$(ns switch)" || fail_setup "ip netns add"
ip -n "$(ns switch)" link set lo up
ip -n "$(ns switch)" link add br0 type bridge || fail_setup "bridge"
ip -n "$(ns switch)" link set br0 up
for h in "${HOSTS[@]}"; do
    ip netns add "$(ns "$h")" || fail_setup "ip netns add $h"
    ip -n "$(ns switch)" link add "$h" type veth peer name eth0 netns "$(ns "$h")" ||
        fail_setup "veth $h"
    ip -n "$(ns switch)" link set "$h" master br0 up
    ip -n "$(ns "$h")" link set lo up
    ip -n "$(ns "$h")" addr add "${ADDR[$h]}/24" dev eth0
    ip -n "$(ns "$h")" link set eth0 up
done

# --------------------------------------------------------------- PostgreSQL
pg_conf() {   # pg_conf HOST: the lines that make a server this host's
    cat <<CONF
# tests/cluster/run.sh: host $1
listen_addresses = '${ADDR[$1]}'
port = 5432
unix_socket_directories = '$TMP/$1/run'
# the socket (trust, for pg_ctl and the test's setup) for its OS user only
unix_socket_permissions = 0700
ssl = on
ssl_cert_file = '$TMP/tls/$1.crt'
ssl_key_file = '$TMP/tls/$1.key'
ssl_min_protocol_version = 'TLSv1.2'
password_encryption = 'scram-sha-256'
max_connections = 100
shared_buffers = 32MB
wal_level = replica
max_wal_senders = 8
max_replication_slots = 8
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
# pg_blog's page functions are C functions: 'all' counts their calls
track_functions = 'all'
# counted at once in shared memory, where the cumulative statistics wait
# for the backend to go idle (up to 10 s): the page statements per server
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track_utility = off
log_min_messages = warning
log_line_prefix = '%m [%p] %q%u@%d '
CONF
}
mkdir -p "$TMP"/{pg1,pg2,pg3}/{run,log} "$TMP"/{redis,redis2,sen1,sen2,sen3,pgb}/log "$TMP"/{web1,web2}/{run,log,httpd} \
    "$TMP"/tls "$TMP"/client
chown -R "$PG_OSUSER" "$TMP"/pg1 "$TMP"/pg2 "$TMP"/pg3 "$TMP"/pgb

# ------------------------------------------------------------- certificates
say "tls: a CA, a certificate per server (pg1 pg2 pg3 pgb), passwords"
# Two CAs: "standbys" signs only pg2's and pg3's certificates, "servers"
# the others'.  PgBouncer 1.18 checks a server's name against the whole
# host list of its [databases] line ("10.77.0.12,10.77.0.13"), so it cannot
# verify-full a list; it verifies the chain (verify-ca) against the standby
# CA alone, which proves as much: the server is pg2 or pg3.  libpq clients
# trust both CAs (ca.crt) and check each name (verify-full).
tls_make() {
    local t=$TMP/tls h ca
    for ca in servers standbys; do
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=blog cluster test CA $ca" \
            -keyout "$t/ca-$ca.key" -out "$t/ca-$ca.crt" >>"$t/openssl.log" 2>&1 || return 1
    done
    for h in pg1 pg2 pg3 pgb redis redis2 sen1 sen2 sen3; do
        ca=servers
        case $h in pg2|pg3) ca=standbys ;; esac
        openssl req -newkey rsa:2048 -nodes -subj "/CN=$h" \
            -keyout "$t/$h.key" -out "$t/$h.csr" >>"$t/openssl.log" 2>&1 || return 1
        printf 'subjectAltName = IP:%s, DNS:%s\nextendedKeyUsage = serverAuth\n' \
            "${ADDR[$h]}" "$h" > "$t/$h.ext"
        openssl x509 -req -in "$t/$h.csr" -CA "$t/ca-$ca.crt" -CAkey "$t/ca-$ca.key" \
            -CAcreateserial -days 2 -extfile "$t/$h.ext" -out "$t/$h.crt" \
            >>"$t/openssl.log" 2>&1 || return 1
        # the server's key for its own user only (PostgreSQL refuses more)
        chown "$PG_OSUSER" "$t/$h.key"
        chmod 600 "$t/$h.key"
    done
    cat "$t/ca-servers.crt" "$t/ca-standbys.crt" > "$t/ca.crt"
    # the CAs' keys sign nothing once the servers have theirs
    rm -f "$t"/ca-*.key "$t"/*.csr "$t"/*.ext "$t"/*.srl
    chmod 644 "$t"/*.crt
}
tls_make || fail_setup "openssl: $(tail -n 3 "$TMP/tls/openssl.log")"
CA=$TMP/tls/ca.crt
declare -A PW
for r in postgres blog_web blog_listen blog_writer blog_repl redis redis_admin redis_repl \
    redis_sentinel sentinel_peer sentinel_blog; do
    PW[$r]=$(openssl rand -hex 24)
done
# passfile HOST-DIR OWNER ROLE...: a libpq passfile (0600, its owner only)
passfile() {
    local f=$TMP/$1/pgpass o=$2 r
    shift 2
    : > "$f"
    chmod 600 "$f"
    for r in "$@"; do printf '*:*:*:%s:%s\n' "$r" "${PW[$r]}"; done >> "$f"
    chown "$o" "$f"
}
# the client host runs the checks as every role; the standbys replicate
passfile client root postgres blog_web blog_listen blog_writer
for h in pg2 pg3; do passfile "$h" "$PG_OSUSER" blog_repl; done
# libpq on the client host: verify every server, passwords from the file
export PGSSLMODE=verify-full PGSSLROOTCERT=$CA PGPASSFILE=$TMP/client/pgpass

say "pg1: initdb, the blog database, two replication slots"
printf '%s\n' "${PW[postgres]}" > "$TMP/pg1/pwfile"
chown "$PG_OSUSER" "$TMP/pg1/pwfile"
chmod 600 "$TMP/pg1/pwfile"
as_pg pg1 "$PG_BIN/initdb" -D "$TMP/pg1/data" -U postgres -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 --pwfile="$TMP/pg1/pwfile" \
    >"$TMP/pg1/log/initdb.log" 2>&1 || fail_setup "initdb"
rm -f "$TMP/pg1/pwfile"
pg_conf pg1 >> "$TMP/pg1/data/postgresql.conf"
# pg_hba.conf: the socket (0700, above) for the servers' OS user; from the
# network only TLS and scram, each role from the hosts that need it; no
# line matches anything else, so it is refused.  The standbys copy it.
hba_lines() {
    local w
    echo "local all all trust"
    for w in web1 web2 pgb; do
        echo "hostssl blog blog_web ${ADDR[$w]}/32 scram-sha-256"
    done
    for w in web1 web2; do
        echo "hostssl blog blog_listen ${ADDR[$w]}/32 scram-sha-256"
    done
    echo "hostssl replication blog_repl ${ADDR[pg1]}/32 scram-sha-256"
    echo "hostssl replication blog_repl ${ADDR[pg2]}/32 scram-sha-256"
    echo "hostssl replication blog_repl ${ADDR[pg3]}/32 scram-sha-256"
    # the test's own host: its checks, writes and administration
    echo "hostssl all postgres ${ADDR[client]}/32 scram-sha-256"
    echo "hostssl blog blog_web,blog_listen,blog_writer ${ADDR[client]}/32 scram-sha-256"
}
hba_lines > "$TMP/pg1/data/pg_hba.conf"
pg_start() {
    as_pg "$1" "$PG_BIN/pg_ctl" -D "$TMP/$1/data" -l "$TMP/$1/log/postgresql.log" -w -t 60 start >/dev/null
}
pg_start pg1 || fail_setup "pg1 start"
psql_pg1() { in_ns client psql -X -q -v ON_ERROR_STOP=1 -h "${ADDR[pg1]}" -U postgres "$@"; }
psql_pg1 -d postgres -c "CREATE DATABASE blog" || fail_setup "createdb"
psql_pg1 -d blog -f "$ROOT/sql/setup.sql" >/dev/null || fail_setup "sql/setup.sql (make install-ext?)"
psql_pg1 -d blog -v web_pw="${PW[blog_web]}" -v listen_pw="${PW[blog_listen]}" \
    -v writer_pw="${PW[blog_writer]}" -v repl_pw="${PW[blog_repl]}" \
    -f "$ROOT/tests/cluster/roles.sql" >/dev/null || fail_setup "tests/cluster/roles.sql"
# Behind PgBouncer the module sets nothing per session (BlogPrepare Off):
# the role carries the timeout BlogQueryTimeout gives a direct connection.
psql_pg1 -d blog -c "ALTER ROLE blog_web SET statement_timeout = '5s'" \
    -c "CREATE EXTENSION pg_stat_statements" \
    -c "\\c postgres" -c "CREATE EXTENSION pg_stat_statements" \
    -c "SELECT pg_create_physical_replication_slot('pg2'), pg_create_physical_replication_slot('pg3')" \
    >/dev/null || fail_setup "slots"

for h in pg2 pg3; do
    say "$h: pg_basebackup from pg1 (slot $h), streaming standby"
    # -R writes this conninfo into primary_conninfo: TLS, scram, passfile
    as_pg "$h" "$PG_BIN/pg_basebackup" -D "$TMP/$h/data" \
        -d "host=${ADDR[pg1]} port=5432 user=blog_repl sslmode=verify-full sslrootcert=$CA passfile=$TMP/$h/pgpass channel_binding=require" \
        -R -S "$h" -X stream -c fast >"$TMP/$h/log/basebackup.log" 2>&1 || fail_setup "pg_basebackup $h"
    pg_conf "$h" >> "$TMP/$h/data/postgresql.conf"
    pg_start "$h" || fail_setup "$h start"
done

# -------------------------------------------------------------------- Redis
say "redis: ${ADDR[redis]}:6379 master, ${ADDR[redis2]}:6379 its replica (TLS only; ACL users)"
# redis_conf HOST [MASTER]: TLS only (port 0), replication over TLS too; the
# default user gets a password nobody but the checks use.  ACL users: blog
# (the web nodes: the page keys, and ROLE to check a master), repl (the
# replica's link) and sentinel (what Redis's docs give Sentinel).  A file,
# so that Sentinel's CONFIG REWRITE keeps what it changes.
redis_conf() {
    cat <<CONF
# tests/cluster/run.sh: host $1
bind ${ADDR[$1]}
port 0
tls-port 6379
tls-cert-file $TMP/tls/$1.crt
tls-key-file $TMP/tls/$1.key
tls-ca-cert-file $CA
tls-auth-clients no
tls-replication yes
protected-mode no
requirepass ${PW[redis_admin]}
user blog on >${PW[redis]} ~blog:page:* -@all +get +set +del +scan +role
user repl on >${PW[redis_repl]} -@all +psync +replconf +ping
user sentinel on >${PW[redis_sentinel]} allchannels -@all +multi +slaveof +ping +exec +subscribe +config|rewrite +role +publish +info +client|setname +client|kill +script|kill
masteruser repl
masterauth ${PW[redis_repl]}
daemonize yes
pidfile $TMP/$1/redis.pid
logfile $TMP/$1/log/redis.log
dir $TMP/$1
save ""
appendonly no
CONF
    [ $# -lt 2 ] || echo "replicaof ${ADDR[$2]} 6379"
}
redis_conf redis > "$TMP/redis/redis.conf"
redis_conf redis2 redis > "$TMP/redis2/redis.conf"
chmod 600 "$TMP"/redis*/redis.conf
for h in redis redis2; do
    in_ns "$h" redis-server "$TMP/$h/redis.conf" >/dev/null || fail_setup "$h"
done
# sentinel_conf HOST: TLS only, to clients and to the Redis servers; the web
# nodes' user may ask for the master, subscribe to +switch-master and PING,
# nothing else; the sentinels log in to each other as peer.  Quick for a
# test: a master silent for 1 s is down (production: 5 s to 30 s).
sentinel_conf() {
    cat <<CONF
# tests/cluster/run.sh: host $1
bind ${ADDR[$1]}
port 0
tls-port 26379
tls-cert-file $TMP/tls/$1.crt
tls-key-file $TMP/tls/$1.key
tls-ca-cert-file $CA
tls-auth-clients no
tls-replication yes
protected-mode no
daemonize yes
pidfile $TMP/$1/sentinel.pid
logfile $TMP/$1/log/sentinel.log
dir $TMP/$1
user default off
user peer on >${PW[sentinel_peer]} allchannels +@all
user blog on >${PW[sentinel_blog]} -@all +ping +subscribe +sentinel|get-master-addr-by-name &+switch-master
sentinel sentinel-user peer
sentinel sentinel-pass ${PW[sentinel_peer]}
sentinel monitor blogcache ${ADDR[redis]} 6379 2
sentinel auth-user blogcache sentinel
sentinel auth-pass blogcache ${PW[redis_sentinel]}
sentinel down-after-milliseconds blogcache 1000
sentinel failover-timeout blogcache 6000
sentinel parallel-syncs blogcache 1
CONF
}
for h in sen1 sen2 sen3; do
    say "$h: Redis Sentinel on ${ADDR[$h]}:26379, monitoring blogcache (quorum 2)"
    sentinel_conf "$h" > "$TMP/$h/sentinel.conf"
    chmod 600 "$TMP/$h/sentinel.conf"
    in_ns "$h" redis-sentinel "$TMP/$h/sentinel.conf" >/dev/null || fail_setup "$h"
done
# sentinel_cli HOST ARGS...: as the sentinels' peer user, from the client host
sentinel_cli() {
    local h=$1
    shift
    in_ns client redis-cli --tls --cacert "$CA" -h "${ADDR[$h]}" -p 26379 --user peer \
        --pass "${PW[sentinel_peer]}" --no-auth-warning "$@"
}
# Before anything relies on a failover: every sentinel knows the replica and
# the two others (they meet on the master's hello channel every 2 s).
for h in sen1 sen2 sen3; do
    for _ in $(seq 150); do
        info=$(sentinel_cli "$h" SENTINEL master blogcache 2>/dev/null | tr '\n' ' ')
        [[ $info == *"num-slaves 1 "* && $info == *"num-other-sentinels 2 "* ]] && break
        sleep 0.2
    done
    [[ $info == *"num-slaves 1 "* && $info == *"num-other-sentinels 2 "* ]] ||
        fail_setup "$h does not see the replica and the other sentinels: $info"
done
# one page key for both web nodes, read by each Apache as root at start-up
head -c 32 /dev/urandom > "$TMP/cache.key"
chmod 600 "$TMP/cache.key"

# ---------------------------------------------------------------- PgBouncer
say "pgb: PgBouncer $(pgbouncer --version | head -n1 | cut -d' ' -f2), transaction pooling over pg2 and pg3"
# PgBouncer 1.18 (built with OpenSSL) does scram on both sides: with the
# roles' SCRAM secrets (not their passwords) in its auth_file, it checks the
# client's proof and logs in to the server with the same keys.
psql_pg1 -d postgres -At -c "SELECT format('\"%s\" \"%s\"', rolname, rolpassword)
    FROM pg_authid WHERE rolname IN ('blog_web', 'postgres')" \
    > "$TMP/pgb/userlist.txt" || fail_setup "SCRAM secrets"
chmod 600 "$TMP/pgb/userlist.txt"
cat > "$TMP/pgb/pgbouncer.ini" <<INI
[databases]
; round-robin over the standbys; PgBouncer cannot skip a host that is down
blog = host=${ADDR[pg2]},${ADDR[pg3]} port=5432 dbname=blog
[pgbouncer]
listen_addr = ${ADDR[pgb]}
listen_port = 6432
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $TMP/pgb/userlist.txt
; TLS from the web nodes (no plain-text client is accepted) ...
client_tls_sslmode = require
client_tls_cert_file = $TMP/tls/pgb.crt
client_tls_key_file = $TMP/tls/pgb.key
; ... and to the standbys: a certificate of the standby CA (tls_make)
server_tls_sslmode = verify-ca
server_tls_ca_file = $TMP/tls/ca-standbys.crt
admin_users = postgres
pool_mode = transaction
default_pool_size = 8
max_client_conn = 400
server_round_robin = 1
; SHOW STATS totals move once a period
stats_period = 1
logfile = $TMP/pgb/log/pgbouncer.log
pidfile = $TMP/pgb/pgbouncer.pid
INI
chown -R "$PG_OSUSER" "$TMP/pgb"
as_pg pgb pgbouncer -d "$TMP/pgb/pgbouncer.ini" >/dev/null 2>&1 || fail_setup "pgbouncer"

# ------------------------------------------------------------------- Apache
# Two configurations per web node from the stack's conf/httpd.conf.in:
# direct (multi-host conninfo, prefer-standby) and through PgBouncer.
pg_hosts="${ADDR[pg1]},${ADDR[pg2]},${ADDR[pg3]}"
# verify-full: the server's certificate chains to the test's CA and names
# the address connected to; the password comes from the passfile that only
# www-data, the children's user, can read.
# sslcert/sslkey: no client certificate.  Unset, libpq looks for one in
# $HOME/.postgresql, and the children (www-data) inherit root's HOME, which
# they may not read: every connection would fail.  A path that does not
# exist means none.
tls_conn() {
    echo "sslmode=verify-full sslrootcert=$CA passfile=$TMP/$1/pgpass" \
         "sslcert=$TMP/$1/none sslkey=$TMP/$1/none"
}
direct_db="host=$pg_hosts port=5432 dbname=blog user=blog_web target_session_attrs=prefer-standby"
bouncer_db="host=${ADDR[pgb]} port=6432 dbname=blog user=blog_web"
# LISTEN needs a session: PgBouncer's transaction pooling would lose the
# notifications, so the listener goes to the primary directly, as
# blog_listen, a role that may connect and LISTEN and nothing more.
listen_db="host=$pg_hosts port=5432 dbname=blog user=blog_listen"
# The private stack's values (scripts/env.sh) for what the cluster keeps.
eval "$(bash -c '. "$1/scripts/env.sh" && for v in BLOG_TIMEOUT BLOG_THREADS \
    BLOG_SERVER_LIMIT BLOG_ASYNC_FACTOR BLOG_MAXMEMFREE BLOG_HOLD; do printf "%s=%q\n" "$v" "${!v}"; done' env "$ROOT")"
web_conf() {   # web_conf HOST CONNINFO PREPARE: as scripts/stack.sh's httpd_conf
    local d=$TMP/$1
    sed -e "s|@REDIS@|${ADDR[redis]}:6379|g" -e "s|@TIMEOUT@|$BLOG_TIMEOUT|g" \
        -e "s|@THREADS@|$BLOG_THREADS|g" -e "s|@WORKERS@|$((4 * BLOG_THREADS))|g" \
        -e "s|@SERVER_LIMIT@|$BLOG_SERVER_LIMIT|g" \
        -e "s|@ASYNC_FACTOR@|$BLOG_ASYNC_FACTOR|g" -e "s|@MAXMEMFREE@|$BLOG_MAXMEMFREE|g" -e "s|@BLOG_VAR@|$d|g" -e "s|@BLOG_ROOT@|$ROOT|g" -e "s|@MPM@|event|g" \
        -e "s|@MODULE@|$ROOT/mod_blog/.libs/mod_blog.so|g" -e "s|@FASTPATH@|Off|g" \
        -e "s|@HTTP_PORT@|80|g" -e "s|@REDIS_PORT@|6379|g" -e "s|@PG_PORT@|5432|g" \
        -e "s|@INVALIDATE@|On|g" -e "s|@HOLD@|$BLOG_HOLD|g" \
        -e "s|^Listen .*|Listen ${ADDR[$1]}:80|" -e "s|^ServerName .*|ServerName ${ADDR[$1]}|" \
        -e "s|^BlogDatabase .*|BlogDatabase \"$2\"\nBlogPrepare $3|" \
        -e "/^BlogRedis /d" \
        "$ROOT/conf/httpd.conf.in"
    printf 'User www-data\nGroup www-data\n'
    # the cache is the master the sentinels name, over TLS as they are
    printf 'BlogRedisSentinels rediss://%s:26379 rediss://%s:26379 rediss://%s:26379\n' \
        "${ADDR[sen1]}" "${ADDR[sen2]}" "${ADDR[sen3]}"
    printf 'BlogRedisMaster blogcache\nBlogRedisSentinelAuth %s\n' "$d/sentinel.auth"
    printf 'BlogRedisTLSCA %s\nBlogRedisAuth %s\nBlogCacheKey %s\n' "$CA" "$d/redis.auth" "$TMP/cache.key"
    # mod_status and the health check on a port of their own (the checks
    # read which Redis each child takes for the master)
    printf 'LoadModule status_module /usr/lib/apache2/modules/mod_status.so\n'
    printf 'ExtendedStatus On\nListen %s:8081\n<VirtualHost %s:8081>\n    ServerName %s\n' \
        "${ADDR[$1]}" "${ADDR[$1]}" "${ADDR[$1]}"
    printf '    <Location /server-status>\n        SetHandler server-status\n    </Location>\n'
    printf '    <Location /health>\n        SetHandler blog-health\n    </Location>\n</VirtualHost>\n'
    # Connects sized for TLS + scram across hosts on two cores shared with
    # the load.  A connect made for a request is bounded by
    # BlogPoolAcquireTimeout (1 s by default), and one here is a TLS
    # handshake and a scram exchange, two of each when libpq meets the
    # primary first and moves on (prefer-standby): under wrk it took over
    # 1 s now and then, and that request got a 503.  So the whole pool
    # opens when a child starts, before it answers anything (child_init,
    # bounded by BlogQueryTimeout), and is kept; the connects left under
    # load (the one a child recycles every few seconds to spread reads,
    # and the fault steps' reconnects) get 3 s, still within the page's
    # 5 s BlogQueryTimeout.
    printf 'BlogPoolMin 4\nBlogPoolKeep 4\nBlogPoolMax 4\nBlogPoolAcquireTimeout 3s\n'
}
for h in web1 web2; do
    passfile "$h" www-data blog_web blog_listen
    printf 'blog %s\n' "${PW[redis]}" > "$TMP/$h/redis.auth"
    printf 'blog %s\n' "${PW[sentinel_blog]}" > "$TMP/$h/sentinel.auth"
    chmod 600 "$TMP/$h/redis.auth" "$TMP/$h/sentinel.auth"
    web_conf "$h" "$direct_db $(tls_conn "$h")" On > "$TMP/$h/httpd/direct.conf"
    web_conf "$h" "$direct_db $(tls_conn "$h")" Off > "$TMP/$h/httpd/direct-noprep.conf"
    web_conf "$h" "$bouncer_db $(tls_conn "$h")" Off > "$TMP/$h/httpd/bouncer.conf"
    # the same without TLS, for the cost of TLS alone (checks.py opens a
    # hostnossl line for it while it measures, and closes it again)
    web_conf "$h" "$direct_db sslmode=disable passfile=$TMP/$h/pgpass" On > "$TMP/$h/httpd/direct-plain.conf"
    # Straight to PostgreSQL, scram must also bind to the TLS channel
    # (SCRAM-SHA-256-PLUS): a man in the middle holding a certificate the
    # CA signed still cannot relay the login.
    sed -i "s|^BlogDatabase \"\(.*\)\"$|BlogDatabase \"\1 channel_binding=require\"|" \
        "$TMP/$h/httpd/direct.conf" "$TMP/$h/httpd/direct-noprep.conf"
    for c in direct direct-noprep bouncer direct-plain; do
        printf 'BlogInvalidateDatabase "%s %s channel_binding=require"\n' "$listen_db" "$(tls_conn "$h")" \
            >> "$TMP/$h/httpd/$c.conf"
    done
    cp "$TMP/$h/httpd/direct.conf" "$TMP/$h/httpd/httpd.conf"
    grep -q "^BlogPrepare On" "$TMP/$h/httpd/httpd.conf" || fail_setup "httpd.conf.in has no BlogDatabase line"
    ! grep -n "@[A-Z_]*@" "$TMP/$h/httpd/httpd.conf" || fail_setup "a placeholder of httpd.conf.in is left"
    say "$h: Apache (event MPM, mod_blog from $ROOT) on ${ADDR[$h]}:80"
    in_ns "$h" /usr/sbin/apache2 -d "$TMP/$h/httpd" -f "$TMP/$h/httpd/httpd.conf" -k start \
        || fail_setup "apache $h"
done
for h in web1 web2; do
    for _ in $(seq 100); do
        in_ns client curl -s -o /dev/null "http://${ADDR[$h]}/compute" && break
        sleep 0.1
    done
done

say "set up in $(($(date +%s) - T0)) s; the checks run on the client host"
export CLUSTER_ID=$ID CLUSTER_TMP=$TMP CLUSTER_ROOT=$ROOT CLUSTER_PG_BIN=$PG_BIN \
    CLUSTER_PG_OSUSER=$PG_OSUSER CLUSTER_NET=$NET CLUSTER_CA=$CA
# the checks' own logins to Redis and the sentinels (the web nodes read theirs from files)
export CLUSTER_REDIS_ADMIN_PW=${PW[redis_admin]} CLUSTER_REDIS_BLOG_PW=${PW[redis]} \
    CLUSTER_SENTINEL_PEER_PW=${PW[sentinel_peer]} CLUSTER_SENTINEL_BLOG_PW=${PW[sentinel_blog]}
# In the background, so that a signal runs the EXIT trap at once (bash
# runs traps only between foreground commands).
in_ns client python3 "$ROOT/tests/cluster/checks.py" &
wait $!

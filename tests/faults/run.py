#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fault tests of the blog against the running private stack.

    . scripts/env.sh && python3 tests/faults/run.py          # the fast cases
    . scripts/env.sh && python3 tests/faults/run.py --all    # make faults
    python3 tests/faults/run.py --list | CASE...             # some cases

Stops, kills, freezes and restarts pieces of the stack (PostgreSQL, its
mod_blog backends, Redis, Apache's children), puts hostile peers in their
place (a fake Redis, slow clients, a frozen postmaster) and sends what an
attacker would, while requests are served; checks the contract's rules:
503 with Retry-After quickly while PostgreSQL is away and healing without
an Apache restart, the retry-once rule, a per-request deadline, BYPASS when
Redis is away or misbehaves, graceful restarts that lose nothing, memory
that stays flat, bounded logs.  Whatever happens, the stack is running and
healthy when this ends.  Prints a line per failed check as it goes, then
one table (case, action, figure, PASS/FAIL) and `N passed, N failed`
(cases).  Long cases (--all) take the load lock (BLOG_LOAD_LOCK) around
each loaded case.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # keep the checkout clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import (CASES, CONF_D, Case, FAST, NOT_FOUND, STOPPED, UNAVAILABLE, Load,  # noqa: E402
                    T, all_ok, apache_state, apache_with, blog_connections, bt, case,
                    check, conf_seconds, connections_bounded, expected,
                    figure, healthy, log_lines_since, pct, print_table, problems, redis_pid,
                    ref, restore,
                    run_cases, same_apache, siege, spread, stable_children,
                    threads_reading, unavailable_ok)
from blogtest import Conn  # noqa: E402
import fakes  # noqa: E402
import tls  # noqa: E402
import protocol  # noqa: E402,F401  (registers its cases)
import long_cases  # noqa: E402,F401  (registers its cases)
import stale_cases  # noqa: E402,F401  (registers its cases)


# ------------------------------------------------------------- the faults
@case("pg-stopped", "scripts/stack.sh stop pg under light load, then start")
def postgres_down():
    # a listener that has just started drops every page again by
    # BlogQueryTimeout + BlogRedisTimeout: past that, what is cached stays
    bt.settle_invalidation()
    for key in ("blog:page:/", "blog:page:/post/post-3", "blog:page:/post/post-4"):
        bt.redis_cmd("DEL", key)
    check("/cached before the outage", bt.get("/cached"), 200, expected("/cached")[1], "MISS")
    check("/post/post-3/cached before the outage", bt.get("/post/post-3/cached"), 200,
          expected("/post/post-3/cached")[1], "MISS")
    apache = apache_state()
    load = Load(threads=2, accept_503=True,
                routes=["/", "/post/post-11", "/tag/tag-3", "/compute", "/cached"])
    with load:
        time.sleep(0.5)
        out = bt.stack("stop", "pg")
        T.check(out.returncode == 0, "scripts/stack.sh stop pg", out.stdout.decode()[-300:])
        try:
            for rnd in range(2):
                for path in ("/", "/post/post-1", "/tag/tag-1"):
                    unavailable_ok("%s while PostgreSQL is down (round %d)" % (path, rnd + 1),
                                   bt.get(path))
            # Apache closes the connection after a 503 (ap_status_drops_connection);
            # if it says it keeps it, the connection must still work
            with Conn() as c:
                c.request("GET", "/compute")
                r = c.request("GET", "/post/post-2")
                unavailable_ok("/post/post-2 on a used keep-alive connection while down", r)
                if r.keeps_alive():
                    check("the keep-alive connection still serves /compute after a 503",
                          c.request("GET", "/compute"), 200, expected("/compute")[1])
                else:
                    T.check(c.pending() == b"" and c.sock.recv(1) == b"",
                            "after a 503 with Connection: close the server closes")
            check("/compute while PostgreSQL is down", bt.get("/compute"), 200,
                  expected("/compute")[1], None, FAST)
            check("/cached served from Redis while PostgreSQL is down", bt.get("/cached"), 200,
                  expected("/cached")[1], "HIT", FAST)
            check("/post/post-3/cached served from Redis while down",
                  bt.get("/post/post-3/cached"), 200, expected("/post/post-3/cached")[1],
                  "HIT", FAST)
            unavailable_ok("/post/post-4/cached (not cached) while down",
                           bt.get("/post/post-4/cached"))
            check("a malformed slug is still 404 while down (no database needed)",
                  bt.get("/post/Bad_Slug"), 404, ref.render_not_found(), None, FAST)
            load.stop.set()
            for t in load.threads:
                t.join(60)
            # a little past the module's 1 s reconnect backoff
            time.sleep(1.2)
        finally:
            out = bt.stack("start", "pg")
        T.check(out.returncode == 0, "scripts/stack.sh start pg", out.stdout.decode()[-300:])
        first = bt.get("/")
        check("the first request to / after PostgreSQL is back", first, 200, expected("/")[1])
        all_ok("requests after PostgreSQL is back", spread(["/", "/post/post-1", "/tag/tag-1"], 16))
    same_apache("PostgreSQL came back", apache)
    connections_bounded("after the PostgreSQL restart")
    figure("light load: %d x 200, %d x 503 while down, %d failed; first / after start: %d"
           % (load.ok, load.n503, len(load.failures), first.status))
    load.report("load while PostgreSQL stopped (200 or the 503 page, nothing else)")
    T.check(load.n503 > 0, "the load saw the outage (some 503s)", "%d" % load.n503)


@case("pg-terminated", "pg_terminate_backend of every pooled backend, twice")
def backends_terminated():
    spread(["/", "/post/post-1", "/tag/tag-1"], 16)
    for rnd in (1, 2):
        pids = bt.blog_backends()
        T.check(pids, "mod_blog has connections to terminate (round %d)" % rnd, "none")
        bt.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'mod_blog' AND backend_type = 'client backend'")
        gone = bt.wait_for(lambda: not set(pids) & set(bt.blog_backends()), 5 + bt.MARGIN)
        T.check(gone, "terminated backends are gone (round %d)" % rnd,
                "still there: %s" % (set(pids) & set(bt.blog_backends())))
        results = spread(["/", "/post/post-1", "/tag/tag-1", "/post/post-42"], 16)
        with Conn() as c:
            results += [(p, c.request("GET", p)) for p in ("/", "/tag/tag-2", "/post/post-2")]
        all_ok("every request after pg_terminate_backend is 200 (round %d)" % rnd, results)
        back = bt.wait_for(lambda: blog_connections() > 0, 5 + bt.MARGIN)
        T.check(back, "mod_blog connections come back (round %d)" % rnd,
                "%d" % blog_connections())
        figure("round %d: %d backends terminated, then %d requests" % (rnd, len(pids),
                                                                         len(results)))


@case("backends-frozen", "SIGSTOP every pooled backend (not the postmaster)")
def backend_hung():
    deadline = conf_seconds("BlogQueryTimeout", 5.0)
    bound = deadline + bt.MARGIN
    spread(["/", "/post/post-1", "/tag/tag-1"], 16)
    pids = bt.blog_backends()
    if not T.check(pids, "mod_blog has connections to freeze", "none"):
        return
    results = []
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
            STOPPED.add(pid)

        def one(path):
            t0 = time.monotonic()
            try:
                r = bt.get(path, timeout=bound + 20)
                results.append((path, r, time.monotonic() - t0))
            except Exception as e:
                results.append((path, e, time.monotonic() - t0))

        threads = [threading.Thread(target=one, args=(p,), daemon=True)
                   for p in ["/post/post-12", "/", "/tag/tag-4", "/post/post-13"] * 2]
        for t in threads:
            t.start()
        for t in threads:
            t.join(bound + 25)
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            STOPPED.discard(pid)
    bad = []
    n503 = 0
    slowest = 0.0
    for path, r, took in results:
        slowest = max(slowest, took)
        if isinstance(r, Exception):
            bad.append("%s: %s after %.1f s" % (path, r, took))
        elif r.status == 503:
            n503 += 1
            if r.body != UNAVAILABLE or r.get("retry-after") != "1":
                bad.append("%s: 503 without the page or Retry-After" % path)
        elif r.status != 200 or r.body != expected(path)[1]:
            bad.append("%s: %s" % (path, r.brief()))
        if took > bound:
            bad.append("%s took %.1f s" % (path, took))
    figure("with %d backends frozen: %d answers, %d x 503, slowest %.2f s (deadline %.1f s)"
           % (len(pids), len(results), n503, slowest, deadline))
    T.check(len(results) == 8 and not bad,
            "frozen backends: every request answered 200 or 503 within %.1f s" % bound,
            "%d of 8 answered; %s" % (len(results), " | ".join(bad[:3])))
    T.check(n503 > 0, "a request on a frozen backend gets 503 at its deadline",
            "no 503: the pool never handed out a frozen connection?")
    time.sleep(0.5)
    all_ok("after the backends resume, pages are 200",
           spread(["/", "/post/post-12", "/tag/tag-4"], 16))
    connections_bounded("after the frozen backends resumed")


@case("redis-stopped", "scripts/stack.sh stop redis, then start")
def redis_down():
    apache = apache_state()
    log_start = bt.error_log_size()
    out = bt.stack("stop", "redis")
    T.check(out.returncode == 0, "scripts/stack.sh stop redis", out.stdout.decode()[-300:])
    try:
        redis_failure_names_client(log_start)
        for path in ("/cached", "/post/post-5/cached", "/cached", "/post/post-5/cached"):
            check("%s with Redis stopped" % path, bt.get(path), 200, expected(path)[1],
                  "BYPASS", FAST)
        with Conn() as c:
            for path in ("/cached", "/post/post-6/cached", "/"):
                r = c.request("GET", path)
                check("%s with Redis stopped, keep-alive" % path, r, 200, expected(path)[1],
                      None if path == "/" else "BYPASS", FAST)
        check("/ with Redis stopped", bt.get("/"), 200, expected("/")[1], None, FAST)
        check("unknown slug with Redis stopped", bt.get("/post/nope/cached"), 404,
              ref.render_not_found(), False, FAST)
    finally:
        out = bt.stack("start", "redis")
    T.check(out.returncode == 0, "scripts/stack.sh start redis", out.stdout.decode()[-300:])
    cache_comes_back("after Redis restarted", "/post/post-5/cached")
    same_apache("the cache came back", apache)


def redis_failure_names_client(log_start):
    """The cache's failure line (BLOG00008, once per child per 5 s) logged
    while a request waits on Redis names that request's client, as
    ap_log_rerror's lines do: "[client 127.0.0.1:port]"."""
    def failure_lines():
        bt.get("/cached")
        return log_lines_since(log_start, r"BLOG00008")
    bt.wait_for(failure_lines, 7 + bt.MARGIN, 0.2)
    lines = log_lines_since(log_start, r"BLOG00008")
    T.check(lines, "Redis stopped: the cache's failure is logged (BLOG00008)", "none")
    anon = [line for line in lines if "[client 127.0.0.1:" not in line]
    T.check(lines and not anon, "each BLOG00008 line names the request's client "
            "[client 127.0.0.1:port]", (anon or ["-"])[0][-300:])


def cache_comes_back(when, path):
    """On one connection: BYPASS until reconnected, then MISS, then HIT;
    then every child hits."""
    seen = []
    with Conn() as c:
        def step():
            r = c.request("GET", path)
            if r.status != 200 or r.body != expected(path)[1]:
                seen.append("bad:%d" % r.status)
                return True
            seen.append(r.get("x-cache"))
            return seen[-1] != "BYPASS"
        bt.wait_for(step, 6, 0.1)
        first = seen[-1] if seen else None
        T.check(first == "MISS", "%s: the first cached answer is a MISS" % when,
                "sequence %s" % seen[-8:])
        hit = bt.wait_for(lambda: c.request("GET", path).get("x-cache") == "HIT", 5 + bt.MARGIN, 0.1)
        T.check(hit, "%s: then a HIT" % when)

    def every_child_hits():
        return all(r.get("x-cache") == "HIT" for _, r in spread([path], 8))
    T.check(bt.wait_for(every_child_hits, 6 + bt.MARGIN, 0.2), "%s: every child hits again" % when)


@case("redis-frozen", "SIGSTOP redis-server, then SIGCONT")
def redis_hung():
    bound = conf_seconds("BlogRedisTimeout", 0.2) + bt.MARGIN
    pidfile = os.path.join(bt.VAR, "run", "redis.pid")
    pid = int(open(pidfile).read().split()[0])
    bt.redis_cmd("DEL", "blog:page:/post/post-6")
    try:
        os.kill(pid, signal.SIGSTOP)
        STOPPED.add(pid)
        for path in ("/post/post-6/cached", "/cached", "/post/post-6/cached"):
            check("%s with Redis frozen" % path, bt.get(path, timeout=bound + 10), 200,
                  expected(path)[1], "BYPASS", bound)
        check("/ with Redis frozen", bt.get("/"), 200, expected("/")[1], None, FAST)
    finally:
        os.kill(pid, signal.SIGCONT)
        STOPPED.discard(pid)
    cache_comes_back("after Redis resumed", "/post/post-6/cached")


@case("graceful-x4", "4 graceful restarts under 4 keep-alive clients", loaded=True)
def graceful_under_load():
    with Load(threads=4) as load:
        time.sleep(0.7)
        for i in range(4):
            out = bt.stack("graceful")
            T.check(out.returncode == 0, "scripts/stack.sh graceful #%d" % (i + 1),
                    out.stdout.decode()[-300:])
            time.sleep(1.2)
        time.sleep(0.5)
    figure("%d good, %d retried once, %d failed" % (load.ok, load.retried, len(load.failures)))
    load.report("graceful restart x4 under load: no failed request, no wrong body")
    T.check(load.ok > 200, "the load was real", "%d requests" % load.ok)
    connections_bounded("within 10 s of the last graceful restart")
    healthy(10)


def socket_owners(*filters):
    """PIDs of the processes holding the TCP sockets ss(8) lists for the
    filters (all states, or "-l": listening)."""
    out = subprocess.run(["ss", "-tnpH"] + list(filters), stdout=subprocess.PIPE,
                         text=True).stdout
    return {int(p) for p in re.findall(r"pid=(\d+),", out)}


@case("graceful-in-flight", "a graceful restart while a page waits for PostgreSQL")
def graceful_in_flight():
    """A child that stops closes each connection after its current answer:
    the answer says so (Connection: close: core's ap_set_keepalive asks the
    MPM), so the client's next request goes to a new connection instead of
    racing that close.  The page waits on a lock that is released once the
    child serving it has stopped listening (it knows it stops), not after
    a fixed time: on a busy machine the restart's signal came after it.
    The page's deadline is long here: the steps before the release (psql,
    ss) each take a second on a busy machine."""
    with apache_with("BlogQueryTimeout 60s"):
        stable_children()
        page_through_graceful(60.0)
    stable_children()
    healthy(10)


def page_through_graceful(deadline):
    locker = subprocess.Popen(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    lock_q = ("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
              " WHERE c.relname = 'posts' AND l.mode = %s")
    stopped = False
    try:
        locker.stdin.write(b"BEGIN; LOCK TABLE blog.posts IN ACCESS EXCLUSIVE MODE;\n")
        locker.stdin.flush()
        T.check(bt.wait_for(lambda: bt.psql(lock_q % "'AccessExclusiveLock' AND l.granted")[0][0]
                            == "1", 30), "the lock is held")
        with Conn(timeout=deadline + 30) as c:
            t_sent = time.monotonic()
            c.send(bt.build("GET", "/post/post-1"))
            T.check(bt.wait_for(lambda: bt.psql(lock_q % "'AccessShareLock' AND NOT l.granted")
                                [0][0] != "0", 30, 0.02),
                    "the page waits for the lock")
            client_port = c.sock.getsockname()[1]
            child = socket_owners("state", "established", "( sport = :%d and dport = :%d )"
                                  % (bt.HTTP_PORT, client_port))
            t0 = time.monotonic()
            os.kill(bt.httpd_pid(), signal.SIGUSR1)
            stopped = bt.wait_for(lambda: not child & socket_owners(
                "-l", "( sport = :%d )" % bt.HTTP_PORT), 30, 0.02)
            took = time.monotonic() - t0
            locker.stdin.write(b"COMMIT;\n")
            locker.stdin.close()
            r = c.read_response()
            answered = time.monotonic() - t_sent
        T.check(len(child) == 1 and stopped, "the child serving the page stops listening",
                "child %s, stopped: %s" % (sorted(child), stopped))
        check("the page that waited through the graceful restart", r, 200,
              expected("/post/post-1")[1], None)
        T.check(not r.keeps_alive(), "its answer says Connection: close",
                "Connection: %r" % r.get("connection"))
        figure("its child stopped listening %.2f s after SIGUSR1; answered %d %.2f s after it "
               "was sent, Connection: %s" % (took, r.status, answered, r.get("connection")))
    finally:
        if not locker.stdin.closed:
            locker.stdin.close()
        locker.wait(30)


@case("graceful-refused", "scripts/stack.sh graceful with a template that does not compile, "
      "then with another MPM")
def graceful_refused():
    """A restart never takes the site down: what apache2 -t refuses (a
    template with an unclosed section) and what a running parent cannot
    change (the MPM: httpd's parent exits on it) are refused before any
    signal, saying why, and the same parent and children keep serving."""
    apache = apache_state()
    conf = os.path.join(CONF_D, "faults.conf")
    with tempfile.TemporaryDirectory() as d:
        folder = os.path.join(d, "templates")
        shutil.copytree(os.path.join(bt.ROOT, "templates"), folder)
        os.chmod(d, 0o755)
        index = os.path.join(folder, "index.html")
        with open(index) as f:
            text = f.read()
        T.check("{{/posts}}" in text, "index.html has a section to break")
        with open(index, "w") as f:
            f.write(text.replace("{{/posts}}", "", 1))
        os.makedirs(CONF_D, exist_ok=True)
        with open(conf, "w") as f:
            f.write('# written by tests/faults for one case; removed after it\n'
                    'BlogTemplates "%s"\n' % folder)
        try:
            t0 = time.monotonic()
            out = bt.stack("graceful")
            took = time.monotonic() - t0
        finally:
            os.unlink(conf)
    said = out.stdout.decode(errors="replace")
    T.check(out.returncode != 0, "a graceful restart with a broken template is refused",
            said[-300:])
    T.check(re.search(r"index\.html:\d+: unclosed section", said) is not None,
            "the refusal names the template's file and line", said[-300:])
    same_apache("a graceful restart was refused", apache)
    all_ok("the old children keep serving", spread(["/", "/cached", "/post/post-1"], 12))
    other = "worker" if bt.ENV.get("BLOG_MPM") == "event" else "event"
    out2 = subprocess.run([os.path.join(bt.ROOT, "scripts", "stack.sh"), "graceful"],
                          env=dict(os.environ, BLOG_MPM=other), timeout=120,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    said2 = out2.stdout.decode(errors="replace")
    T.check(out2.returncode != 0 and "restart httpd" in said2,
            "a graceful restart to another MPM is refused (httpd's parent would exit)",
            said2[-300:])
    same_apache("a graceful restart to another MPM was refused", apache)
    all_ok("the old children keep serving", spread(["/", "/cached", "/post/post-1"], 12))
    figure("refused in %.1f s: %s; to MPM %s: refused" % (
        took, (re.findall(r"[^ /]+\.html:\d+: [^\n]*", said) or ["?"])[0], other))


@case("slow-clients-short", "300 clients trickle headers, 100 a body, for 6 s; / and /cached "
      "every 100 ms", loaded=True)
def slow_clients_short():
    """The fast form of make faults' slow-clients (docs/OPERATIONS.md,
    "Sizing"): the figures are reported, the facts checked."""
    held = []
    t = threading.Thread(target=lambda: [held.append(threads_reading()) or time.sleep(0.5)
                                         for _ in range(8)], daemon=True)
    t.start()
    probe, heads, bodies = siege(300, 100, 4.0)
    t.join(10)
    lat = probe.latencies()
    figure("%d answers in 4 s, p50 %.1f ms, p99 %.1f ms, max %.2f s; workers reading a "
           "client at most %d of %d; %d of 100 bodies answered at once"
           % (len(probe.answers), 1000 * pct(lat, 50), 1000 * pct(lat, 99), max(lat or [0]),
              max(held or [0]), 4 * int(bt.ENV["BLOG_THREADS"]), bodies.answered))
    T.check(not probe.failures and len(probe.answers) >= 5,
            "400 slow clients: every answer of the prober is the page",
            "%d answers, %d failed: %s" % (len(probe.answers), len(probe.failures),
                                           probe.failures[:2]))
    T.check(bodies.answered == 100, "every body trickled to a blog route is answered at once",
            "%d of 100" % bodies.answered)
    healthy(30)


def every_worker_serves(path, workers):
    """`workers` connections each send `path`'s request line and wait, so
    that every worker thread holds one (a worker reads a request's headers
    itself), then all end their requests at once: each thread serves path.
    (the most workers seen reading at once, answers with a status line)."""
    import idle_conns
    idle_conns.raise_nofile(workers + 256)
    socks = []
    try:
        for _ in range(workers):
            s = socket.create_connection((bt.HOST, bt.HTTP_PORT), timeout=60)
            s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" % path.encode())
            socks.append(s)
        held = [0]

        def all_held():
            held[0] = max(held[0], threads_reading())
            return held[0] >= workers
        bt.wait_for(all_held, 60, 0.2)
        for s in socks:
            s.sendall(b"\r\n")
        answered = 0
        for s in socks:
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            answered += data.startswith(b"HTTP/1.1 ")
        return held[0], answered
    finally:
        for s in socks:
            s.close()


@case("memory-20k", "every worker serves each route once; then 20 000 mixed requests: "
      "children's RSS", loaded=True)
def memory_flat():
    """A child's memory must not grow with the requests it serves.  Each
    worker thread that serves for the first time touches pages of its own
    (its stack, as deep as the route goes; its allocator's blocks), and
    with 1 200 threads which ones a load wakes is the scheduler's choice:
    so every thread serves every route first, 1 200 requests held at once
    (docs/OPERATIONS.md, "Sizing": about 15 KiB a thread), and only then
    is the growth over 20 000 requests measured: a leak of 52 bytes a
    request is 1 MiB."""
    kids = stable_children()
    workers = len(kids) * int(bt.ENV["BLOG_THREADS"])
    routes = ["/", "/post/post-%d", "/tag/tag-%d", "/cached", "/post/post-%d/cached",
              "/compute", "/post/nope", "/post/Bad"]
    warm = []
    for route in routes:
        path = route % 7 if "%d" in route else route
        warm.append(every_worker_serves(path, workers))
    with Load(threads=8, routes=routes, limit=250, per_conn=25) as settle:
        settle.wait()
    before = {p: bt.rss_kib(p) for p in bt.children()}
    t0 = time.monotonic()
    with Load(threads=8, routes=routes, limit=2500, per_conn=50) as load:
        load.wait()
    took = time.monotonic() - t0
    after = {p: bt.rss_kib(p) for p in bt.children()}
    load.report("20000 requests for the memory check")
    same = sorted(before) == sorted(after) and sorted(before) == sorted(kids)
    T.check(same, "the same children before and after", "%s / %s / %s"
            % (kids, sorted(before), sorted(after)))
    T.check(all(h >= workers and a == workers for h, a in warm),
            "every worker served each route before the measure",
            "workers reading at once, answers per route: %s of %d" % (warm, workers))
    grow = sum(after.get(p, 0) - before[p] for p in before if p in after)
    figure("every one of %d workers served %d routes (at most %d reading at once); then "
           "children RSS %d KiB -> %d KiB (%+d KiB, %.1f bytes a request) over %d requests "
           "in %.1f s" % (workers, len(routes), min(h for h, _ in warm), sum(before.values()),
                          sum(after.values()), grow, 1024.0 * grow / max(1, load.ok), load.ok,
                          took))
    T.check(grow < 1024, "children's RSS grows < 1 MiB over 20000 requests once every worker "
            "has served", "%+d KiB: %s" % (grow, {p: after.get(p, 0) - before[p] for p in before}))


def handshake_limit():
    with open(os.path.join(bt.VAR, "httpd", "httpd.conf")) as f:
        return tls.handshake_limit(f.read())


@case("tls-handshakes", "a TLS port: 200 connections trickle a ClientHello, one the rest of "
      "its handshake; a page over TLS")
def tls_handshakes():
    """A client's TLS handshake, read by mod_ssl in a worker, holds it:
    RequestReadTimeout's handshake= bounds that; and under an MPM that
    waits for input itself (event), a connection whose ClientHello is not
    yet whole holds no worker at all (mod_blog/httpd/hello.c)."""
    why = tls.available()
    if why:
        figure("skipped: %s" % why)
        return
    port = bt.free_port()
    limit = handshake_limit()
    with tls.certificate() as (cert, key), apache_with(tls.listener(port, cert, key)):
        status, body = tls.get(port, "/")
        T.check(status == 200 and body == expected("/")[1], "a page over TLS",
                "status %d" % status)
        before = threads_reading()
        with tls.Trickler(port, 200) as crowd:
            reading = []
            for _ in range(10):
                time.sleep(0.5)
                reading.append(threads_reading())
        closed = tls.slow_after_hello(port, limit + 25)
    waits = bt.ENV.get("BLOG_MPM") == "event"
    figure("workers reading a client: %d before, at most %d while 200 trickled a ClientHello "
           "(MPM %s); a handshake trickled after its ClientHello closed after %s (handshake=%d)"
           % (before, max(reading), bt.ENV.get("BLOG_MPM"),
              "%.1f s" % closed if closed is not None else "never", limit))
    T.check(limit > 0, "RequestReadTimeout sets a handshake limit", "handshake=%d" % limit)
    T.check(closed is not None, "a handshake trickled after its ClientHello is closed by the "
            "server (handshake=%d s)" % limit, "still open after %d s" % (limit + 25))
    if waits:
        T.check(max(reading) < 100, "event: 200 connections trickling a ClientHello hold no "
                "worker", "%d workers reading" % max(reading))
    T.check(crowd.stats.get("opened", 0) >= 200, "the trickler ran", "%s" % crowd.stats)
    if waits:
        handshake_wait_off(port)


def handshake_wait_off(port):
    """BlogHandshakeWait Off: mod_ssl reads each ClientHello in a worker
    from the accept, as without the blog."""
    with tls.certificate() as (cert, key), \
            apache_with(tls.listener(port, cert, key) + "BlogHandshakeWait Off\n"):
        with tls.Trickler(port, 200) as crowd:
            reading = []
            for _ in range(20):
                time.sleep(0.5)
                reading.append(threads_reading())
                if reading[-1] >= 100:
                    break
    figure("BlogHandshakeWait Off: at most %d workers reading while 200 trickled a ClientHello"
           % max(reading))
    T.check(max(reading) >= 100 and crowd.stats.get("opened", 0) >= 200,
            "BlogHandshakeWait Off: the trickled ClientHellos hold workers (mod_ssl's reads)",
            "%d workers reading; %s" % (max(reading), crowd.stats))


@case("redis-killed", "SIGKILL redis-server, then start it again")
def redis_killed():
    bt.redis_cmd("DEL", "blog:page:/post/post-9")
    pid = redis_pid()
    os.kill(pid, signal.SIGKILL)
    bt.wait_for(lambda: not os.path.exists("/proc/%d" % pid), 3)
    times = []
    for path in ("/post/post-9/cached", "/cached", "/post/post-9/cached"):
        r = bt.get(path)
        times.append(r.elapsed)
        check("%s with Redis killed" % path, r, 200, expected(path)[1], "BYPASS", FAST)
    out = bt.stack("start", "redis")
    T.check(out.returncode == 0, "scripts/stack.sh start redis", out.stdout.decode()[-300:])
    cache_comes_back("after Redis was killed", "/post/post-9/cached")
    figure("BYPASS in at most %.0f ms while killed; MISS then HIT after restart"
           % (1000 * max(times)))


@case("redis-paused", "CLIENT PAUSE 3000 on Redis")
def redis_paused():
    bound = conf_seconds("BlogRedisTimeout", 0.2) + bt.MARGIN
    bt.redis_cmd("DEL", "blog:page:/post/post-10")
    bt.redis_cmd("CLIENT", "PAUSE", "3000")
    times = []
    for path in ("/post/post-10/cached", "/cached", "/post/post-10/cached"):
        r = bt.get(path, timeout=10)
        times.append(r.elapsed)
        check("%s with Redis paused" % path, r, 200, expected(path)[1], "BYPASS", bound)
    check("/ with Redis paused", bt.get("/"), 200, expected("/")[1], None, FAST)
    time.sleep(max(0, 3.2 - sum(times)))
    cache_comes_back("after CLIENT PAUSE", "/post/post-10/cached")
    figure("BYPASS in at most %.0f ms (bound %.0f ms)" % (1000 * max(times), 1000 * bound))


def page_key(path):
    return "blog:page:" + (path[:-len("/cached")] if path != "/cached" else "/")


def refused_writes(what, key_path, setting):
    """With Redis refusing SET: pages still right, each a BYPASS (the page
    was not stored: docs/CONTRACT.md section 3), nothing stored."""
    key = page_key(key_path)
    bt.redis_cmd("DEL", key)
    for k, v in setting:
        bt.redis_cmd("CONFIG", "SET", k, v)
    seen = []
    for _ in range(3):
        r = bt.get(key_path)
        seen.append(r.get("x-cache"))
        check("%s: %s" % (what, key_path), r, 200, expected(key_path)[1],
              "BYPASS", FAST)
    T.check(bt.redis_cmd("EXISTS", key) == 0, "%s: nothing was stored" % what)
    return seen


@case("redis-refuses-writes", "CONFIG SET min-replicas-to-write 1; then maxmemory 1 + noeviction")
def redis_refuses_writes():
    try:
        a = refused_writes("NOREPLICAS", "/post/post-14/cached",
                           [("min-replicas-to-write", "1")])
    finally:
        bt.redis_cmd("CONFIG", "SET", "min-replicas-to-write", "0")
    try:
        b = refused_writes("OOM", "/post/post-15/cached",
                           [("maxmemory-policy", "noeviction"), ("maxmemory", "1")])
    finally:
        bt.redis_cmd("CONFIG", "SET", "maxmemory", "256mb")
        bt.redis_cmd("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    cache_comes_back("after Redis accepts writes again", "/post/post-15/cached")
    figure("X-Cache while refused: %s / %s; then MISS, HIT" % ("/".join(a), "/".join(b)))


def misses_at_once(paths, clients=12):
    """The paths fetched by clients at once: [(path, response)]."""
    out = []
    lock = threading.Lock()
    todo = list(paths)

    def client():
        while True:
            with lock:
                if not todo:
                    return
                path = todo.pop()
            r = bt.get(path)
            with lock:
                out.append((path, r))
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


@case("redis-full", "maxmemory + noeviction: 60 misses 12 at a time, full, then nearly")
def redis_full():
    """Redis out of memory refuses SET (-OOM) and still answers GET: a
    miss whose page was not stored is a BYPASS, never a MISS (contract
    section 3); with a little room left, every MISS was stored (noeviction:
    nothing goes until its TTL).  Under an eviction policy (the stack's
    allkeys-lru), a page stored is a MISS even if later SETs evict it."""
    bt.settle_invalidation()
    paths = ["/post/post-%d/cached" % (600 + i) for i in range(60)]
    figures = []
    try:
        for label, policy, room in (("full", "noeviction", None),
                                    ("nearly full", "noeviction", 60000),
                                    ("nearly full", "allkeys-lru", 30000)):
            for path in paths:
                bt.redis_cmd("DEL", page_key(path))
            used = int(re.search(r"used_memory:(\d+)",
                                 bt.redis_cmd("INFO", "memory").decode()).group(1))
            bt.redis_cmd("CONFIG", "SET", "maxmemory-policy", policy)
            bt.redis_cmd("CONFIG", "SET", "maxmemory", "1" if room is None
                         else str(used + room))
            got = misses_at_once(paths)
            bt.redis_cmd("CONFIG", "SET", "maxmemory", "256mb")
            kinds = {}
            wrong = []
            for path, r in got:
                x = r.get("x-cache")
                kinds[x] = kinds.get(x, 0) + 1
                stored = bt.redis_cmd("EXISTS", page_key(path)) == 1
                p = problems(r, 200, expected(path)[1], ("MISS", "BYPASS"))
                if policy == "noeviction" and x == "MISS" and not stored:
                    p.append("a MISS, and nothing stored")
                if room is None and x != "BYPASS":
                    p.append("X-Cache %s with every SET refused" % x)
                if p:
                    wrong.append("%s: %s" % (path, "; ".join(p)))
            stored = sum(bt.redis_cmd("EXISTS", page_key(p)) for p in paths)
            T.check(len(got) == len(paths) and not wrong,
                    "Redis %s (%s): each answer the page, BYPASS unless stored"
                    % (label, policy), " | ".join(wrong[:3]))
            figures.append("%s, %s: %d MISS, %d BYPASS, %d stored"
                           % (label, policy, kinds.get("MISS", 0),
                              kinds.get("BYPASS", 0), stored))
    finally:
        bt.redis_cmd("CONFIG", "SET", "maxmemory", "256mb")
        bt.redis_cmd("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
        for path in paths:
            bt.redis_cmd("DEL", page_key(path))
    cache_comes_back("after Redis has room again", paths[0])
    figure("; ".join(figures))


@case("fake-redis", "BlogRedis on a fake Redis that is silent, speaks garbage, stalls mid-bulk")
def fake_redis():
    bound = conf_seconds("BlogRedisTimeout", 0.2) + bt.MARGIN
    worst = {}
    with fakes.FakeRedis(mode="ok") as fake, \
            apache_with("BlogRedis 127.0.0.1:%d" % fake.port):
        for mode in ("silent", "garbage", "stall", "ok"):
            fake.mode = mode
            time.sleep(1.1)     # past the module's Redis backoff
            worst[mode] = 0.0
            for path in ("/cached", "/post/post-16/cached", "/cached", "/post/post-17/cached",
                         "/cached", "/post/post-16/cached"):
                r = bt.get(path, timeout=30)
                worst[mode] = max(worst[mode], r.elapsed)
                want = ("MISS", "BYPASS") if mode == "ok" else "BYPASS"
                check("fake Redis %s: %s" % (mode, path), r, 200, expected(path)[1], want, bound)
        T.check(fake.served > 0, "the fake Redis was asked", "%d commands" % fake.served)
    figure(", ".join("%s %.0f ms" % (m, 1000 * t) for m, t in worst.items())
           + " (bound %.0f ms)" % (1000 * bound))


@case("table-lock", "LOCK TABLE blog.posts ACCESS EXCLUSIVE for BlogQueryTimeout + 2 s")
def table_lock():
    deadline = conf_seconds("BlogQueryTimeout", 5.0)
    bt.redis_cmd("DEL", "blog:page:/")
    check("/cached before the lock", bt.get("/cached"), 200, expected("/cached")[1], "MISS")
    locker = subprocess.Popen(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
         "BEGIN; LOCK TABLE blog.posts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(%.1f); COMMIT;"
         % (deadline + 2)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        ok = bt.wait_for(lambda: bt.psql(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
            " WHERE c.relname = 'posts' AND l.mode = 'AccessExclusiveLock' AND l.granted")[0][0]
            == "1", 5)
        T.check(ok, "the lock is held")
        results = {}

        def one(path):
            results[path] = bt.get(path, timeout=deadline + 10)
        th = threading.Thread(target=one, args=("/",), daemon=True)
        th.start()
        time.sleep(0.2)
        fast = []
        for path in ("/post/Bad_Slug", "/compute", "/cached", "/nope"):
            r = bt.get(path)
            fast.append(r.elapsed)
            want = 404 if path in ("/post/Bad_Slug", "/nope") else 200
            body = NOT_FOUND if want == 404 else expected(path)[1]
            # not held by the lock: a page that waited for it would be
            # a 503 at the deadline (the status says it; the time is a
            # figure)
            check("%s while the table is locked" % path, r, want, body,
                  "HIT" if path == "/cached" else None)
        th.join(deadline + 12)
        r = results.get("/")
        T.check(r is not None, "/ was answered while locked")
        if r is not None:
            unavailable_ok("/ while the table is locked: 503 at the deadline", r,
                           deadline + bt.MARGIN)
            T.check(r.elapsed >= deadline - 0.5, "/ waited for the deadline, not less",
                    "%.2f s" % r.elapsed)
            figure("/ -> %d after %.2f s (BlogQueryTimeout %.1f s); bad slug, /compute, "
                   "HIT in at most %.1f ms" % (r.status, r.elapsed, deadline, 1000 * max(fast)))
    finally:
        locker.wait(deadline + 10)
    all_ok("pages after the lock is released", spread(["/", "/post/post-20", "/tag/tag-2"], 8))


@case("child-killed", "SIGKILL one Apache child under 4 keep-alive clients", loaded=True)
def child_killed():
    kids = stable_children()
    with Load(threads=4) as load:
        time.sleep(1.0)
        victim = kids[0]
        os.kill(victim, signal.SIGKILL)
        t_kill = time.monotonic()
        back = bt.wait_for(lambda: len(bt.children()) == len(kids)
                           and victim not in bt.children(), 10, 0.1)
        t_back = time.monotonic() - t_kill
        time.sleep(2.0)
        n_before = len(load.failures)
        time.sleep(1.5)
        late = load.failures[n_before:]
    T.check(back, "Apache replaces the killed child", "children %s" % bt.children())
    T.check(not late, "no failure 2 s after the kill", " | ".join(late[:3]))
    wrong = [f for f in load.failures if "closed" not in f and "reset" not in f.lower()
             and "Connection" not in f]
    T.check(not wrong, "only connections of the killed child fail, never with a wrong answer",
            " | ".join(wrong[:3]))
    T.check(len(load.failures) <= 4, "at most one failed request per client (its connection "
            "was on the killed child)", "%d: %s" % (len(load.failures), load.failures[:3]))
    figure("%d good, %d retried, %d failed (in flight on the killed child); replaced in %.1f s"
           % (load.ok, load.retried, len(load.failures), t_back))
    healthy(10)


@case("web-role", "as blog_web: read or write a table, create, escalate, call the functions")
def web_role():
    def as_web(sql):
        p = subprocess.run(["psql", "-X", "-At", "-U", "blog_web", "-v", "ON_ERROR_STOP=1",
                            "-c", sql], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=30)
        return p.returncode, (p.stdout + p.stderr).decode()
    denied = 0
    tries = [
        "SELECT count(*) FROM blog.posts",
        "SELECT body FROM blog.comments LIMIT 1",
        "UPDATE blog.posts SET title = 'x'",
        "INSERT INTO blog.tags VALUES (1000, 'x', 'x')",
        "DELETE FROM blog.comments",
        "TRUNCATE blog.post_tags",
        "CREATE TABLE blog.evil (x int)",
        "CREATE TABLE public.evil (x int)",
        "CREATE FUNCTION blog.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "SET ROLE postgres",
        "SELECT pg_read_file('postgresql.conf')",
        "COPY blog.posts TO STDOUT",
        "ALTER FUNCTION blog.index_page(integer) OWNER TO blog_web",
    ]
    for sql in tries:
        rc, out = as_web(sql)
        ok = rc != 0 and ("permission denied" in out or "must be" in out)
        denied += ok
        T.check(ok, "blog_web may not: %s" % sql, out.strip()[:200])
    calls = ["SELECT count(*) > 0 FROM blog.index_page(20)",
             "SELECT count(*) > 0 FROM blog.post_page('post-1')",
             "SELECT count(*) > 0 FROM blog.tag_page('tag-1')"]
    allowed = 0
    for sql in calls:
        rc, out = as_web(sql)
        allowed += rc == 0 and out.strip() == "t"
        T.check(rc == 0 and out.strip() == "t", "blog_web may: %s" % sql, out.strip()[:200])
    figure("%d of %d denied; %d of %d page functions callable"
           % (denied, len(tries), allowed, len(calls)))


def selected(argv):
    names = [a for a in argv if not a.startswith("-")]
    cases = sorted(CASES, key=lambda c: (c.long, CASES.index(c)))
    if names:
        unknown = set(names) - {c.name for c in cases}
        if unknown:
            sys.exit("unknown case(s): %s" % " ".join(sorted(unknown)))
        return [c for c in cases if c.name in names]
    if "--all" in argv:
        return cases
    return [c for c in cases if not c.long]


def main():
    if "--list" in sys.argv:
        for c in sorted(CASES, key=lambda c: (c.long, CASES.index(c))):
            print("%-22s %-5s %s" % (c.name, "long" if c.long else "fast", c.action))
        return
    cases = selected(sys.argv[1:])
    # a SIGTERM (timeout(1), make interrupted) still thaws and restores
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    log_start = bt.error_log_size()
    ok = False
    try:
        out = bt.stack("start")
        if not T.check(out.returncode == 0 and healthy(30), "the stack is up before the faults",
                       out.stdout.decode()[-500:]):
            return
        bt.flush_page_keys()
        run_cases(cases)
    finally:
        ok = restore()
        T.check(ok, "the stack is running and healthy at the end")
        crashes = bt.crash_lines(bt.error_log_since(log_start))
        T.check(not crashes, "the error log has no crash lines",
                "%d lines, first: %s" % (len(crashes), crashes[:3]))
        end = Case("end-state", "the stack after the suite; the error log", None, False, False)
        end.result = bool(ok and not crashes)
        end.figures = ["stack %s; %d crash lines in the error log"
                       % ("healthy" if ok else "NOT healthy", len(crashes))]
        sys.exit(0 if print_table(cases + [end]) else 1)


if __name__ == "__main__":
    main()

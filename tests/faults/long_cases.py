# SPDX-License-Identifier: Apache-2.0
"""The long fault cases (`make faults` only): each freezes, floods or
restarts something for seconds under load and measures what the clients
and the error log see.  Every loaded case takes the load lock."""

import contextlib
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from common import (T, Load, Prober, apache_state, apache_with, blog_connections,
                    bt, case, check, child_rss, conf_seconds, connections_bounded,
                    expected, figure, freeze, healthy, log_lines_since, pct,
                    postmaster_pid, same_apache, siege, spread, stable_children, thaw,
                    threads_reading)
import debian_apache
import fakes
import tls

DB_ROUTES = ["/", "/post/post-%d", "/tag/tag-%d", "/post/post-31", "/tag/tag-7"]
MIXED = DB_ROUTES + ["/compute", "/cached", "/post/post-%d/cached", "/post/nope"]
CACHED = ["/cached", "/post/post-%d/cached"]


def latency_figures(load, since=0.0, until=None):
    """(count, p50, p99, max) of the answers that ended in [since, until]."""
    until = until or time.monotonic() + 1e9
    v = [s for t, s, _, _ in load.latencies if since <= t <= until]
    return len(v), pct(v, 50), pct(v, 99), max(v or [0.0])


def sample(seconds, step, fn):
    """fn() every step seconds for seconds; the values."""
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        out.append(fn())
        time.sleep(step)
    return out


# ------------------------------------------------------------------- (a)
def slow_crowd(n_header, n_body):
    """docs/OPERATIONS.md, "Sizing": while n_header connections trickle
    request headers and n_body a body to a blog route, a client asking for /
    and /cached every 100 ms on new connections gets every answer, p50 at
    most 50 ms and p99 at most 1 s."""
    probe, heads, bodies = siege(n_header, n_body, 10.0)
    lat = probe.latencies()
    p50, p99 = pct(lat, 50), pct(lat, 99)
    figure("%d trickling headers, %d a body: %d answers in 10 s, p50 %.1f ms, p99 %.1f ms, "
           "max %.2f s; %d of the bodies answered at once; %d header connections still open"
           % (n_header, n_body, len(probe.answers), 1000 * p50, 1000 * p99,
              max(lat or [0]), bodies.answered, heads.open_count()))
    T.check(not probe.failures and len(probe.answers) >= 20,
            "%d slow clients: every answer of the prober is the page" % (n_header + n_body),
            "%d answers, %d failed: %s" % (len(probe.answers), len(probe.failures),
                                           probe.failures[:2]))
    T.check(p50 <= 0.05 and p99 <= 1.0,
            "%d slow clients: p50 <= 50 ms and p99 <= 1 s" % (n_header + n_body),
            "p50 %.1f ms, p99 %.1f ms" % (1000 * p50, 1000 * p99))
    T.check(bodies.answered == n_body,
            "every body trickled to a blog route is answered at once",
            "%d of %d" % (bodies.answered, n_body))
    healthy(30)


@case("slow-clients", "300 clients trickle headers, 100 a body; / and /cached every 100 ms",
      long=True, loaded=True)
def slow_clients():
    slow_crowd(300, 100)


@case("slow-clients-1000", "1 000 clients trickle headers, 100 a body; / and /cached every 100 ms",
      long=True, loaded=True)
def slow_clients_1000():
    slow_crowd(1000, 100)


@case("slow-clients-debian", "Debian's own Apache configuration with the blog: 1 000 clients "
      "trickle headers, with Debian's defaults and with conf/blog-mpm.conf", long=True, loaded=True)
def slow_clients_debian():
    """The recommended sizing on Debian's Apache as installed (a copy of
    /etc/apache2, the blog enabled as docs/INSTALL.md says): with
    conf/blog-mpm.conf enabled, the prober gets every answer quickly beside
    1 000 clients trickling headers; Debian's defaults alone (150 workers)
    are the figure it is measured against."""
    why = debian_apache.available()
    if why:
        figure("skipped: %s" % why)
        return
    got = {}
    for name, recommended in (("debian-defaults", False), ("debian-blog-mpm", True)):
        apache = debian_apache.DebianApache(name, recommended).start()
        try:
            threads = apache.threads()
            probe, heads, _ = siege(1000, 0, 10.0, port=apache.port)
        finally:
            apache.stop()
        lat = probe.latencies()
        got[recommended] = (probe, lat)
        figure("%s: %d threads; %d answers in 10 s, %d failed, p50 %.1f ms, p99 %.1f ms"
               % (name, threads, len(probe.answers), len(probe.failures), 1000 * pct(lat, 50),
                  1000 * pct(lat, 99)))
    probe, lat = got[True]
    T.check(not probe.failures and len(probe.answers) >= 20,
            "Debian's Apache with blog-mpm.conf: every answer of the prober is the page",
            "%d answers, %d failed: %s" % (len(probe.answers), len(probe.failures),
                                           probe.failures[:2]))
    T.check(pct(lat, 50) <= 0.05 and pct(lat, 99) <= 1.0,
            "Debian's Apache with blog-mpm.conf: p50 <= 50 ms and p99 <= 1 s",
            "p50 %.1f ms, p99 %.1f ms" % (1000 * pct(lat, 50), 1000 * pct(lat, 99)))


def hello_siege(n, port, tls_port, ppid=None, seconds=12.0, settle=3.0):
    """n connections trickle a ClientHello to tls_port (each one the server
    closes opened again) while a client asks port for / and /cached every
    100 ms on new connections: every answer, p50 <= 50 ms, p99 <= 1 s."""
    with tls.Trickler(tls_port, n) as crowd:
        time.sleep(settle)
        held = []
        with Prober(port=port) as probe:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                held.append(threads_reading(ppid))
                time.sleep(0.5)
    lat = probe.latencies()
    p50, p99 = pct(lat, 50), pct(lat, 99)
    figure("%d trickling a ClientHello: %d answers in %.0f s, %d failed, p50 %.1f ms, p99 %.1f ms, "
           "max %.2f s; workers reading a client at most %d; the trickler opened %s, the server "
           "closed %s" % (n, len(probe.answers), seconds, len(probe.failures), 1000 * p50,
                          1000 * p99, max(lat or [0]), max(held or [0]),
                          crowd.stats.get("opened", "?"), crowd.stats.get("closed_by_server", "?")))
    T.check(crowd.stats.get("opened", 0) >= n, "%d trickling handshakes: the trickler ran" % n,
            "%s" % crowd.stats)
    T.check(not probe.failures and len(probe.answers) >= 20,
            "%d trickling handshakes: every answer of the prober is the page" % n,
            "%d answers, %d failed: %s" % (len(probe.answers), len(probe.failures),
                                           probe.failures[:2]))
    T.check(p50 <= 0.05 and p99 <= 1.0,
            "%d trickling handshakes: p50 <= 50 ms and p99 <= 1 s" % n,
            "p50 %.1f ms, p99 %.1f ms" % (1000 * p50, 1000 * p99))


@contextlib.contextmanager
def stack_tls():
    """The stack's Apache with a TLS port (its own RequestReadTimeout)."""
    port = bt.free_port()
    with tls.certificate() as (cert, key), apache_with(tls.listener(port, cert, key)):
        stable_children()
        yield port


@case("tls-hello-1300", "1 300 connections trickle a TLS ClientHello; / and /cached every "
      "100 ms", long=True, loaded=True)
def tls_hello_1300():
    why = tls.available()
    if why:
        figure("skipped: %s" % why)
        return
    with stack_tls() as port:
        hello_siege(1300, bt.HTTP_PORT, port)
    healthy(30)


@case("tls-hello-3000", "3 000 connections trickle a TLS ClientHello; / and /cached every "
      "100 ms", long=True, loaded=True)
def tls_hello_3000():
    why = tls.available()
    if why:
        figure("skipped: %s" % why)
        return
    with stack_tls() as port:
        hello_siege(3000, bt.HTTP_PORT, port)
    healthy(30)


@case("tls-hello-debian", "Debian's own Apache with conf/blog-mpm.conf and a TLS port: 1 300, "
      "then 3 000 connections trickle a ClientHello", long=True, loaded=True)
def tls_hello_debian():
    why = debian_apache.available() or tls.available()
    if why:
        figure("skipped: %s" % why)
        return
    with tls.certificate() as (cert, key):
        apache = debian_apache.DebianApache("debian-blog-mpm-tls", True)
        tls_port = bt.free_port()
        apache.extra = ("BlogHandshakeWait On\n"
                        + tls.listener(tls_port, cert, key, mount="    BlogMount /\n"))
        apache.start()
        try:
            for n in (1300, 3000):
                hello_siege(n, apache.port, tls_port, ppid=apache.pid())
        finally:
            apache.stop()


@case("reload-debian", "Debian's own Apache configuration with the blog: 10 graceful restarts "
      "(service apache2 reload) under 16 kept-alive clients, BlogConnectionHold off (the "
      "default) and 100ms", long=True, loaded=True)
def reload_debian():
    """What a reload costs (docs/INSTALL.md, "Upgrading"; the package's
    postinst reloads): Apache closes each kept-alive connection that is
    idle between two requests, and a request a client sends on one as it
    closes gets no byte of an answer.  tests/system/load.py sends such a
    request once more on a new connection, as RFC 9112 (9.3.1) lets a
    client do for a GET: its "retried" is what a client that does not
    retry loses, and with the retry none may fail."""
    why = debian_apache.available()
    if why:
        figure("skipped: %s" % why)
        return
    for hold in (None, "100ms"):
        apache = debian_apache.DebianApache("debian-reload", False, hold=hold).start()
        stop = os.path.join(apache.dir, "stop")
        try:
            load = subprocess.Popen([sys.executable, os.path.join(bt.ROOT, "tests", "system", "load.py"),
                                     "http://127.0.0.1:%d/" % apache.port,
                                     os.path.join(bt.ROOT, "tests", "golden"), stop,
                                     "--clients", "16"],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            time.sleep(3.0)
            for _ in range(10):
                apache.graceful()
                time.sleep(3.0)
            open(stop, "w").close()
            out = load.communicate(timeout=120)[0].decode(errors="replace")
        finally:
            apache.stop()
        counts = re.search(r"requests (\d+) retried (\d+) failed (\d+)", out)
        n, retried, failed = [int(x) for x in counts.groups()] if counts else (0, 0, -1)
        name = "BlogConnectionHold %s" % (hold or "off")
        figure("%s: %d requests, %d closed before any byte of the answer (%.1f a reload), "
               "each answered when sent again once; %d failed"
               % (name, n, retried, retried / 10.0, failed))
        T.check(failed == 0 and n > 0, "%s: a client that retries once sees no request fail "
                "through 10 reloads" % name, out[-600:])


# ------------------------------------------------------------------- (b)
@case("pg-frozen", "SIGSTOP the postmaster and every pooled backend for 8 s under load",
      long=True, loaded=True)
def pg_frozen():
    deadline = conf_seconds("BlogQueryTimeout", 5.0)
    spread(["/", "/post/post-1", "/tag/tag-1"], 16)
    apache = apache_state()
    pids = [postmaster_pid()] + bt.blog_backends()
    # /compute on a client of its own: the load's threads may all be
    # waiting on database pages at once
    with Load(threads=6, accept_503=True, routes=DB_ROUTES + ["/compute"],
              timeout=deadline + 20) as load, \
            Load(threads=1, routes=["/compute"]) as probe:
        time.sleep(1.0)
        t_freeze = time.monotonic()
        try:
            freeze(pids)
            time.sleep(8.0)
        finally:
            thaw(pids)
        t_thaw = time.monotonic()
        time.sleep(8.0)
        t_end = time.monotonic()
    n, p50, p99, worst = latency_figures(load, t_freeze)
    compute = [s for t, s, st, p in probe.latencies
               if t_freeze + 0.5 <= t <= t_thaw]
    first_200 = min([t for t, s, st, p in load.latencies
                     if t >= t_thaw and st == 200 and p != "/compute"] or [t_end])
    late_bad = [st for t, s, st, _ in load.latencies if t >= t_thaw + 5 and st != 200]
    figure("froze %d processes for %.1f s: %d answers, %d x 503, slowest %.2f s (deadline "
           "%.1f s); /compute slowest %.0f ms; first database 200 %.2f s after SIGCONT; %d non-200 "
           "from 5 s after" % (len(pids), t_thaw - t_freeze, n, load.n503, worst, deadline,
                               1000 * max(compute or [0]), first_200 - t_thaw, len(late_bad)))
    T.check(worst <= deadline + 0.5, "no request outlives BlogQueryTimeout by more than 0.5 s",
            "slowest %.2f s" % worst)
    T.check(not load.failures and not probe.failures,
            "every request is answered 200 or the 503 page",
            "%d: %s" % (len(load.failures + probe.failures),
                        (load.failures + probe.failures)[:2]))
    T.check(compute and max(compute) < 0.5,
            "/compute (no database) stays fast while PostgreSQL is frozen",
            "%d answers, slowest %.2f s" % (len(compute), max(compute or [0])))
    T.check(first_200 - t_thaw < 3.0 and not late_bad,
            "the pool recovers by itself after SIGCONT (200 within 3 s, only 200 from 5 s on)",
            "first 200 after %.2f s, %d non-200 later" % (first_200 - t_thaw, len(late_bad)))
    same_apache("PostgreSQL was frozen", apache)
    connections_bounded("after the frozen postmaster resumed")


# ------------------------------------------------------------------- (c)
def hostile_redis(mode, seconds):
    bound = conf_seconds("BlogRedisTimeout", 0.2) + 0.3
    with fakes.FakeRedis(mode="ok", trickle_for=12.0) as fake, \
            apache_with("BlogRedis 127.0.0.1:%d" % fake.port):
        stable_children()
        with Load(threads=4, routes=CACHED + ["/"], limit=100) as warm:
            warm.wait()
        before = child_rss()
        fake.mode = mode
        time.sleep(1.1)
        t0 = time.monotonic()
        with Load(threads=20, routes=CACHED, timeout=30) as load:
            peaks = sample(seconds, 0.25, child_rss)
        after = child_rss()
        sent = fake.sent
    n, p50, p99, worst = latency_figures(load, t0)
    grow = max([max(p.get(pid, 0) for p in peaks + [after]) - before[pid] for pid in before]
               or [0])
    figure("%d answers from 20 clients in %.0f s, slowest %.2f s (bound %.2f s); a child "
           "grew by at most %.1f MiB; fake sent %.1f MiB"
           % (n, seconds, worst, bound, grow / 1024.0, sent / 1048576.0))
    T.check(not load.failures, "fake Redis %s: every answer the right page" % mode,
            "%d: %s" % (len(load.failures), load.failures[:2]))
    T.check(worst <= bound, "fake Redis %s: no request held past BlogRedisTimeout + 0.3 s" % mode,
            "%.2f s" % worst)
    T.check(grow <= 4096, "fake Redis %s: no child grows by more than 4 MiB" % mode,
            "%.1f MiB" % (grow / 1024.0))


@case("redis-trickle", "fake Redis: $2000000000, then 64 KiB every 50 ms; 20 clients",
      long=True, loaded=True)
def redis_trickle():
    hostile_redis("trickle", 10.0)


@case("redis-stall", "fake Redis: $2000000000, 100 bytes, then silence; 20 clients",
      long=True, loaded=True)
def redis_stall():
    hostile_redis("stall", 5.0)


@case("redis-outlier", "a real 200 MB value, then a 6 MiB one, under blog:page:/",
      long=True, loaded=True)
def redis_outlier():
    bound = conf_seconds("BlogRedisTimeout", 0.2) + 0.3
    key = "blog:page:/"
    stable_children()
    spread(["/cached", "/", "/post/post-1/cached"], 16)
    before = child_rss()
    worst = 0.0
    try:
        bt.redis_cmd("DEL", key)
        bt.redis_cmd("SETRANGE", key, str(200 * 1024 * 1024 - 1), "x")
        bt.redis_cmd("EXPIRE", key, "120")
        for i in range(8):
            r = bt.get("/cached", timeout=30)
            worst = max(worst, r.elapsed)
            check("/cached with a 200 MB value", r, 200, expected("/cached")[1],
                  ("MISS", "BYPASS"), bound)
        peak = child_rss()
        # an outlier the module may read: just under the old 8 MiB cap
        big = b"<!-- outlier -->" + b"x" * (6 * 1024 * 1024)
        bt.redis_cmd("SET", key, big, "EX", "120")
        for i in range(8):
            r = bt.get("/cached", timeout=30)
            T.check(r.status == 200 and r.body in (big, expected("/cached")[1]),
                    "/cached with a 6 MiB value: that value or the page", r.brief()[:200])
        peak2 = child_rss()
    finally:
        bt.redis_cmd("DEL", key)
    spread(["/cached", "/", "/post/post-1/cached"], 16)
    time.sleep(2.0)
    after = child_rss()
    g200 = max([peak.get(p, 0) - before[p] for p in before] or [0])
    g6 = max([peak2.get(p, 0) - before[p] for p in before] or [0])
    gback = max([after.get(p, 0) - before[p] for p in before] or [0])
    figure("200 MB value: slowest /cached %.2f s (bound %.2f s), a child grew %.1f MiB; after the "
           "6 MiB value %.1f MiB; 2 s later %.1f MiB above the start"
           % (worst, bound, g200 / 1024.0, g6 / 1024.0, gback / 1024.0))
    T.check(g200 <= 4096, "a 200 MB value grows no child by more than 4 MiB",
            "%.1f MiB" % (g200 / 1024.0))
    T.check(gback <= 4096, "children give the memory back after the outlier (within 4 MiB)",
            "%.1f MiB above the start" % (gback / 1024.0))
    # whatever they kept must not weigh on the cases after this one
    bt.stack("restart", "httpd")
    healthy(20)


# ------------------------------------------------------------------- (d)
def wrk(path, seconds, connections=50, script=None, threads=2, port=None):
    cmd = ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds, "--latency",
           "--timeout", "10s"]
    if script:
        cmd += ["-s", script]
    cmd.append("http://127.0.0.1:%d%s" % (port or bt.HTTP_PORT, path))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def wrk_figures(text):
    def num(pattern, default=0):
        m = re.search(pattern, text)
        return int(m.group(1)) if m else default
    errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    e = [int(x) for x in errs.groups()] if errs else [0, 0, 0, 0]
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", text)
    p99s = float(p99.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1}[p99.group(2)] if p99 else 0.0
    return {"requests": num(r"(\d+) requests in"), "non2xx": num(r"Non-2xx or 3xx responses: (\d+)"),
            "connect": e[0], "read": e[1], "write": e[2], "timeout": e[3], "p99": p99s}


def gracefuls(n, every):
    for i in range(n):
        out = bt.stack("graceful")
        T.check(out.returncode == 0, "scripts/stack.sh graceful #%d" % (i + 1),
                out.stdout.decode()[-200:])
        time.sleep(every)


FAIR_MIX = """-- the fair run's cached and uncached pages in turn
local paths = {"/", "/post/post-31", "/cached", "/post/post-31/cached"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[i % #paths + 1])
end
"""


@contextlib.contextmanager
def static_site():
    """A virtual host of the same Apache on a port of its own that serves
    the cached index's bytes as a static file: what Apache itself loses."""
    root = os.path.join(bt.VAR, "faults-static")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "index.html"), "wb") as f:
        f.write(expected("/cached")[1])
    os.chmod(root, 0o755)
    os.chmod(os.path.join(root, "index.html"), 0o644)
    port = bt.free_port()
    with apache_with('Listen 127.0.0.1:%d\n<VirtualHost 127.0.0.1:%d>\n    BlogMount /not-here\n'
                     '    DocumentRoot "%s"\n    <Directory "%s">\n        Require all granted\n'
                     '    </Directory>\n</VirtualHost>' % (port, port, root, root)):
        yield port


@contextlib.contextmanager
def cpu_hog(n=2):
    """n processes spinning on the CPUs (as many as the machine has here),
    ended by their pid."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for h in hogs:
            h.kill()
            h.wait()


@case("graceful-x20", "20 graceful restarts, one a second, under load (retrying client; wrk on "
      "the blog beside a static file)", long=True, loaded=True)
def graceful_x20():
    graceful_restarts()


@case("graceful-x20-hog", "graceful-x20 beside a CPU hog (two processes spinning)",
      long=True, loaded=True)
def graceful_x20_hog():
    with cpu_hog():
        graceful_restarts()


def graceful_restarts():
    with Load(threads=8, routes=MIXED) as load:
        time.sleep(1.0)
        gracefuls(20, 1.0)
        time.sleep(1.0)
    connections_bounded("10 s after 20 graceful restarts", limit=32)
    stable_children(20)
    healthy(10)
    with static_site() as port, tempfile.NamedTemporaryFile("w", suffix=".lua") as mix:
        mix.write(FAIR_MIX)
        mix.flush()
        blog = wrk("/", 24, connections=25, script=mix.name, threads=1)
        static = wrk("/index.html", 24, connections=25, threads=1, port=port)
        time.sleep(1.0)
        gracefuls(20, 1.0)
        fb = wrk_figures(blog.communicate(timeout=60)[0].decode())
        fs = wrk_figures(static.communicate(timeout=60)[0].decode())
    errors = {k: f["connect"] + f["read"] + f["write"] + f["timeout"] for k, f in
              (("blog", fb), ("static", fs))}
    figure("retrying client: %d good, %d retried once, %d failed; wrk (no retry), 25 connections "
           "each: the blog %d requests, %d socket errors (read %d), %d non-2xx; a static file of "
           "the same Apache %d requests, %d socket errors (read %d)"
           % (load.ok, load.retried, len(load.failures), fb["requests"], errors["blog"],
              fb["read"], fb["non2xx"], fs["requests"], errors["static"], fs["read"]))
    T.check(not load.failures and load.ok > 1000,
            "a client that retries an idempotent GET once sees 0 failures",
            "%d: %s" % (len(load.failures), load.failures[:3]))
    T.check(fb["requests"] > 0 and fb["non2xx"] == 0, "wrk sees no wrong status on the blog")
    T.check(errors["blog"] <= errors["static"],
            "wrk loses no more requests on the blog than on a static file of the same Apache",
            "blog %d, static %d" % (errors["blog"], errors["static"]))
    stable_children(20)
    healthy(10)


def restarts_probed(n, slowloris, every=1.0):
    """n graceful restarts, one every `every` seconds, while `slowloris`
    connections trickle headers (each one closed opened again) and a
    client asks for / and /cached every 100 ms on new connections; the
    prober."""
    crowd = tls.Trickler(bt.HTTP_PORT, slowloris, what="header") if slowloris \
        else contextlib.nullcontext()
    with crowd:
        time.sleep(2.0 if slowloris else 0.0)
        with Prober() as probe:
            time.sleep(1.0)
            gracefuls(n, every)
            time.sleep(1.0)
    return probe


def restart_figures(probe):
    lat = probe.latencies()
    return len(probe.answers), len(probe.failures), pct(lat, 50), pct(lat, 99), max(lat or [0])


@case("graceful-slowloris", "20 graceful restarts, one a second, with 300 clients trickling "
      "headers; / and /cached every 100 ms (and the same without them)", long=True, loaded=True)
def graceful_slowloris():
    """A graceful restart keeps the listening socket: connections wait in
    its queue while the parent reads the configuration and the new
    children start, none is refused.  With slowloris connections holding
    old children's workers, the new ones must still start at once."""
    got = {}
    for crowd in (0, 300):
        stable_children(30)
        probe = restarts_probed(20, crowd)
        got[crowd] = probe
        n, nfail, p50, p99, worst = restart_figures(probe)
        figure("%d trickling headers: %d answers, %d failed, p50 %.1f ms, p99 %.1f ms, max %.2f s"
               % (crowd, n, nfail, 1000 * p50, 1000 * p99, worst))
    for crowd, probe in got.items():
        n, nfail, p50, p99, worst = restart_figures(probe)
        T.check(nfail == 0 and n >= 50, "20 graceful restarts, %d trickling headers: every "
                "answer of the prober is the page" % crowd,
                "%d answers, %d failed: %s" % (n, nfail, probe.failures[:2]))
        T.check(p99 <= 1.0, "20 graceful restarts, %d trickling headers: p99 <= 1 s" % crowd,
                "p99 %.1f ms" % (1000 * p99))
    stable_children(60)
    healthy(10)


def connections_of(pid):
    """Established connections to the stack's port that process pid holds."""
    out = subprocess.run(["ss", "-tnpH", "state", "established",
                          "( sport = :%d )" % bt.HTTP_PORT], stdout=subprocess.PIPE,
                         text=True).stdout
    return len(re.findall(r"pid=%d," % pid, out))


@case("child-killed-wrk", "SIGKILL one Apache child under the fair run's load (wrk, 50 "
      "connections, cached and uncached pages)", long=True, loaded=True)
def child_killed_wrk():
    """What a crashed child costs: the requests on its own connections,
    nothing on the others."""
    kids = stable_children()
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as mix:
        mix.write(FAIR_MIX)
        mix.flush()
        w = wrk("/", 10, connections=50, script=mix.name)
        time.sleep(3.0)
        victim = kids[0]
        held = connections_of(victim)
        os.kill(victim, signal.SIGKILL)
        f = wrk_figures(w.communicate(timeout=60)[0].decode())
    errors = f["connect"] + f["read"] + f["write"] + f["timeout"]
    figure("the killed child held %d of wrk's 50 connections; wrk: %d requests, %d socket errors "
           "(read %d, connect %d), %d non-2xx" % (held, f["requests"], errors, f["read"],
                                                  f["connect"], f["non2xx"]))
    T.check(f["non2xx"] == 0, "no wrong status")
    T.check(errors <= held, "wrk loses at most one request per connection of the killed child",
            "%d errors, %d connections" % (errors, held))
    stable_children(20)
    healthy(10)


@case("graceful-stop", "apachectl graceful-stop, then start, under load (retrying client)",
      long=True, loaded=True)
def graceful_stop():
    """While Apache is stopped nothing listens: connections are refused
    until it starts again.  What must not happen is an accepted request
    left without its answer."""
    with Load(threads=8, routes=MIXED, accept_503=True) as load:
        time.sleep(1.0)
        t0 = time.monotonic()
        out = bt.stack("graceful-stop")
        t1 = time.monotonic()
        T.check(out.returncode == 0, "scripts/stack.sh graceful-stop", out.stdout.decode()[-200:])
        out = bt.stack("start", "httpd")
        t2 = time.monotonic()
        T.check(out.returncode == 0, "scripts/stack.sh start httpd", out.stdout.decode()[-200:])
        time.sleep(2.0)
    refused = [f for f in load.failures if "Connection refused" in f or "ConnectionRefused" in f]
    # A connection the kernel completed but Apache never accepted is reset
    # when the stopping parent closes the listening socket: no byte of it
    # was read, as with a refused connect.
    queued = [f for f in load.failures
              if "on a new connection" in f and "Connection reset" in f]
    other = [f for f in load.failures if f not in refused and f not in queued]
    figure("stopped in %.2f s, serving again %.2f s later: %d good, %d retried once, %d refused "
           "while nothing listened, %d reset in the closed listen queue, %d other failures"
           % (t1 - t0, t2 - t1, load.ok, load.retried, len(refused), len(queued), len(other)))
    T.check(not other, "every request Apache accepted is answered (only connects refused, or "
            "reset unaccepted, while stopped)", "%d: %s" % (len(other), other[:3]))
    healthy(10)


@case("restart-httpd", "scripts/stack.sh restart httpd (SIGHUP) under load (retrying client)",
      long=True, loaded=True)
def restart_httpd():
    """apachectl's restart keeps the listening socket: connections wait in
    its queue while the parent re-reads its configuration and starts new
    children, none is refused.  The children end at once, as with stop:
    what they were answering is lost (the client sees its connection
    closed or reset)."""
    with Load(threads=8, routes=MIXED, accept_503=True) as load:
        time.sleep(1.0)
        pid = bt.httpd_pid()
        t0 = time.monotonic()
        out = bt.stack("restart", "httpd")
        took = time.monotonic() - t0
        T.check(out.returncode == 0, "scripts/stack.sh restart httpd", out.stdout.decode()[-200:])
        time.sleep(2.0)
    refused = [f for f in load.failures if "Connection refused" in f or "ConnectionRefused" in f]
    figure("restarted in %.2f s, the same parent: %s; %d good, %d retried once, %d refused, "
           "%d lost in flight" % (took, bt.httpd_pid() == pid, load.ok, load.retried,
                                  len(refused), len(load.failures) - len(refused)))
    T.check(bt.httpd_pid() == pid, "the parent stays (the listening socket with it)")
    T.check(not refused, "no connection is refused", "%d: %s" % (len(refused), refused[:2]))
    T.check(load.ok > 100, "the load was real", "%d requests" % load.ok)
    healthy(10)


# ------------------------------------------------------------------- (e)
def log_budget(seconds, kids):
    """What "a few lines per 10 s" allows: per child, one line and one
    summary ("... N more in the last 5 s") per 10 s window, plus one."""
    return kids * (2 * int(math.ceil(seconds / 10.0)) + 1)


def flood(what, seconds, routes, make_bad, make_good, settle=0.0):
    kids = len(bt.children())
    off = bt.error_log_size()
    make_bad()
    try:
        with Load(threads=4, routes=routes, accept_503=True) as load:
            time.sleep(seconds)
        bad_lines = log_lines_since(off)
    finally:
        off2 = bt.error_log_size()
        make_good()
    # A child retries its connects with a backoff capped at 1 s (docs/ARCHITECTURE.md,
    # "The pool"): healed means healed once that has run out.
    time.sleep(settle)
    with Load(threads=4, routes=routes) as load2:
        time.sleep(4.0)
    rec = log_lines_since(off2)
    budget = log_budget(seconds, kids)
    counted = [line for line in bad_lines if re.search(r"\d+ more in the last", line)]
    again = [line for line in rec if re.search(r"(?i)again|recover|reachable", line)]
    figure("%d requests in %.0f s -> %d error-log lines (budget %d, %d with a count); "
           "recovery: %d lines, %d saying so"
           % (load.ok + load.n503, seconds, len(bad_lines), budget, len(counted), len(rec),
              len(again)))
    T.check(len(bad_lines) <= budget, "%s: the error log gains at most %d lines in %.0f s"
            % (what, budget, seconds), "%d lines; first: %s" % (len(bad_lines), bad_lines[:2]))
    T.check(counted, "%s: repeated warnings are summarised with a count" % what,
            "no '... N more in the last 10 s' line")
    T.check(1 <= len(again) <= kids and len(rec) <= kids,
            "%s: recovery is logged once (per child at most)" % what,
            "%d lines, %d of them about recovery: %s" % (len(rec), len(again), rec[:2]))
    T.check(not load2.failures, "%s: pages are right after recovery" % what,
            "%s" % load2.failures[:2])


@case("log-redis-refusing", "Redis refuses writes (min-replicas-to-write 1) for 12 s under load",
      long=True, loaded=True)
def log_redis_refusing():
    flood("Redis refusing writes", 12.0, ["/post/post-%d/cached", "/cached"],
          lambda: bt.redis_cmd("CONFIG", "SET", "min-replicas-to-write", "1"),
          lambda: bt.redis_cmd("CONFIG", "SET", "min-replicas-to-write", "0"))


@case("log-redis-garbage", "a garbage-speaking fake Redis for 12 s under load",
      long=True, loaded=True)
def log_redis_garbage():
    with fakes.FakeRedis(mode="ok") as fake, apache_with("BlogRedis 127.0.0.1:%d" % fake.port):
        stable_children()

        def good():
            fake.mode = "ok"
        flood("fake Redis speaking garbage", 12.0, ["/post/post-%d/cached", "/cached"],
              lambda: setattr(fake, "mode", "garbage"), good)


@case("log-pg-down", "PostgreSQL stopped for 10 s under load, then started",
      long=True, loaded=True)
def log_pg_down():
    def down():
        out = bt.stack("stop", "pg")
        T.check(out.returncode == 0, "scripts/stack.sh stop pg")

    def up():
        out = bt.stack("start", "pg")
        T.check(out.returncode == 0, "scripts/stack.sh start pg")
    flood("PostgreSQL down", 10.0, DB_ROUTES, down, up, settle=1.5)


# ------------------------------------------------------------------- (f)
@case("pg-connect-hangs", "new PostgreSQL connects hang (postmaster stopped) while pooled ones work",
      long=True, loaded=True)
def pg_connect_hangs():
    acquire = conf_seconds("BlogPoolAcquireTimeout", 1.0)
    # a fresh generation: every child holds BlogPoolMin (1) connection
    out = bt.stack("restart", "httpd")
    T.check(out.returncode == 0, "httpd restarted")
    healthy(20)
    stable_children()
    spread(["/", "/post/post-1", "/tag/tag-1"], 12)
    pooled = blog_connections()
    pm = postmaster_pid()
    # frozen first: the 12 clients (3 a child) need more connections than
    # the pools hold, and every new one hangs for connect_timeout
    t0 = time.monotonic()
    try:
        freeze([pm])
        with Load(threads=12, accept_503=True, routes=DB_ROUTES, timeout=30) as load:
            time.sleep(6.0)
            t1 = time.monotonic()
    finally:
        thaw([pm])
    during = [(s, st) for t, s, st, _ in load.latencies if t0 <= t <= t1 + 30]
    ok_times = [s for s, st in during if st == 200]
    worst = max([s for s, _ in during] or [0.0])
    figure("%d pooled connections; connects hung %.0f s: %d answers (%d x 200, p50 of the 200s "
           "%.1f ms, %d x 503), slowest %.2f s (BlogPoolAcquireTimeout %.1f s)"
           % (pooled, t1 - t0, len(during), len(ok_times), 1000 * pct(ok_times, 50),
              len(during) - len(ok_times), worst, acquire))
    T.check(not load.failures, "every request is answered 200 or the 503 page",
            "%d: %s" % (len(load.failures), load.failures[:2]))
    T.check(worst <= acquire + 0.5, "no request waits past BlogPoolAcquireTimeout + 0.5 s "
            "while a connect hangs", "%.2f s" % worst)
    T.check(len(ok_times) >= 50 and pct(ok_times, 50) < 0.1,
            "requests with a pooled connection keep being answered in time",
            "%d x 200, p50 %.1f ms" % (len(ok_times), 1000 * pct(ok_times, 50)))
    # the child's opener thread waits on the connect, the requests on the
    # pool's queue, where each released connection serves the next
    T.check(len(ok_times) == len(during), "no page waits on the hung connect: "
            "the pooled connections serve every one", "%d x 503"
            % (len(during) - len(ok_times)))
    healthy(10)
    connections_bounded("after the connects hung")


# ------------------------------------------------------ what held before
@case("pg-terminated-x5", "pg_terminate_backend of every pooled backend 5 times under load",
      long=True, loaded=True)
def pg_terminated_x5():
    apache = apache_state()
    with Load(threads=6, routes=MIXED) as load:
        time.sleep(1.0)
        killed = 0
        for i in range(5):
            rows = bt.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                           " WHERE application_name = 'mod_blog'"
                           " AND backend_type = 'client backend'")
            killed += len(rows)
            time.sleep(1.5)
    figure("%d backends terminated in 5 rounds: %d good answers, %d failed"
           % (killed, load.ok, len(load.failures)))
    load.report("load while every backend is terminated 5 times")
    T.check(killed >= 5, "there were backends to terminate", "%d" % killed)
    same_apache("backends were terminated", apache)
    connections_bounded("after 5 rounds of pg_terminate_backend")


@case("pg-restart-fast", "pg_ctl stop -m fast + start under load: 503 while down, then 200",
      long=True, loaded=True)
def pg_restart_fast():
    apache = apache_state()
    with Load(threads=4, accept_503=True, routes=DB_ROUTES + ["/compute"]) as load:
        time.sleep(1.0)
        t0 = time.monotonic()
        out = bt.stack("restart", "pg")
        t_ready = time.monotonic()
        T.check(out.returncode == 0, "scripts/stack.sh restart pg", out.stdout.decode()[-200:])
        time.sleep(4.0)
    db = [(t, s, st) for t, s, st, _ in load.latencies if t >= t0]
    slow503 = max([s for t, s, st in db if st == 503] or [0.0])
    first = min([t for t, s, st in db if t >= t_ready and st == 200] or [1e18])
    figure("down %.1f s: %d x 503 (slowest %.0f ms), first 200 %.2f s after ready, %d failed"
           % (t_ready - t0, load.n503, 1000 * slow503, first - t_ready, len(load.failures)))
    load.report("load across the PostgreSQL restart")
    T.check(slow503 < 2.0, "503s come quickly while PostgreSQL is down", "%.2f s" % slow503)
    T.check(first - t_ready < 1.5, "the first 200 comes soon after PostgreSQL is ready",
            "%.2f s" % (first - t_ready))
    same_apache("PostgreSQL restarted", apache)


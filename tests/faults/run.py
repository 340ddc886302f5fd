#!/usr/bin/env python3
"""Fault tests of the blog against the running private stack.

    . scripts/env.sh && python3 tests/faults/run.py

Stops, kills, freezes and restarts pieces of the stack (PostgreSQL, its
mod_blog backends, Redis, Apache's children) while requests are served,
and checks the rules of SPEC section 2/3 and RESEARCH section 4: 503 with
Retry-After quickly while PostgreSQL is away and healing without an Apache
restart, the retry-once rule, a per-request deadline, BYPASS when Redis is
away, graceful restarts that lose nothing and leak no connection, memory
that stays flat.  Whatever happens, the stack is running and healthy when
this ends.  Prints one line per failed check, then `N passed, N failed`.
"""

import os
import re
import signal
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the checkout clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))

import blogtest as bt  # noqa: E402
import reference as ref  # noqa: E402
from blogtest import Conn, excerpt  # noqa: E402

T = bt.Tally("faults (MPM %s, fast path %s)" % (bt.ENV.get("BLOG_MPM"),
                                               bt.ENV.get("BLOG_FASTPATH")))
UNAVAILABLE = ref.render_unavailable()
FAST = 2.0                  # "quickly": a 503 or a BYPASS in under this
STOPPED = set()             # PIDs this suite froze; thawed whatever happens
_expected = {}


def expected(path):
    """(status, body) of a GET of any route, cached ones included."""
    if path not in _expected:
        base = path
        if path == "/cached":
            base = "/"
        elif path.endswith("/cached"):
            base = path[:-len("/cached")]
        _expected[path] = ref.render_path(base)
    return _expected[path]


def conf_seconds(directive, default):
    """A mod_blog timeout from the generated httpd.conf, in seconds (a bare
    number is milliseconds, as ap_timeout_parameter_parse reads it there),
    or the module's default when the directive is not given."""
    try:
        conf = open(os.path.join(bt.VAR, "httpd", "httpd.conf")).read()
    except OSError:
        return default
    m = re.search(r"(?mi)^\s*%s\s+([\d.]+)\s*(ms|s|mi|min|h)?\s*$" % directive, conf)
    if not m:
        return default
    scale = {None: 0.001, "ms": 0.001, "s": 1, "mi": 60, "min": 60, "h": 3600}
    return float(m.group(1)) * scale[m.group(2)]


def problems(r, status, body, xcache=False):
    p = []
    if r.status != status:
        p.append("status %d, want %d" % (r.status, status))
    if r.all("content-type") != [bt.CONTENT_TYPE]:
        p.append("Content-Type %r" % r.all("content-type"))
    if r.all("content-length") != [str(len(body))]:
        p.append("Content-Length %r, want %d" % (r.all("content-length"), len(body)))
    if r.body != body:
        p.append("body: " + excerpt(r.body, body))
    xc = r.all("x-cache")
    if xcache is None and xc:
        p.append("unexpected X-Cache %r" % xc)
    elif xcache is not None and xcache is not False:
        allowed = (xcache,) if isinstance(xcache, str) else xcache
        if len(xc) != 1 or xc[0] not in allowed:
            p.append("X-Cache %r, want %r" % (xc, xcache))
    return p


def check(what, r, status, body, xcache=False, within=None):
    p = problems(r, status, body, xcache)
    if within is not None and r.elapsed > within:
        p.append("took %.2f s, limit %.1f s" % (r.elapsed, within))
    return T.check(not p, what, "; ".join(p))


def unavailable_ok(what, r, within=FAST):
    p = problems(r, 503, UNAVAILABLE)
    if r.all("retry-after") != ["1"]:
        p.append("Retry-After %r" % r.all("retry-after"))
    if r.elapsed > within:
        p.append("took %.2f s, limit %.1f s" % (r.elapsed, within))
    return T.check(not p, what, "; ".join(p))


def healthy(seconds=30):
    st, body = expected("/")

    def ok():
        r = bt.get("/", timeout=5)
        return r.status == 200 and r.body == body
    return bt.wait_for(ok, seconds, 0.2)


def spread(paths, n=12):
    """n requests on fresh connections (so several children answer)."""
    out = []
    for i in range(n):
        path = paths[i % len(paths)]
        try:
            out.append((path, bt.get(path)))
        except Exception as e:
            out.append((path, e))
    return out


def all_ok(what, results, status=200):
    bad = []
    for path, r in results:
        if isinstance(r, Exception):
            bad.append("%s: %s: %s" % (path, type(r).__name__, r))
            continue
        p = problems(r, *expected(path))
        if p:
            bad.append("%s: %s" % (path, "; ".join(p)))
    return T.check(not bad, "%s (%d requests)" % (what, len(results)),
                   "%d bad; first: %s" % (len(bad), " | ".join(bad[:3])))


class Load:
    """Threads doing keep-alive GETs over the routes until stopped.

    A request sent on a reused connection that the server closed before
    the first byte of the answer is retried once on a new connection (what
    every HTTP client does; graceful restarts close idle keep-alive
    connections).  Everything else that is not the expected answer is a
    failure; `accept_503` also allows the unavailable page."""

    ROUTES = ["/", "/post/post-31", "/tag/tag-7", "/cached", "/post/post-31/cached",
              "/compute", "/post/post-%d", "/post/post-%d/cached", "/tag/tag-%d", "/post/nope"]

    def __init__(self, threads=4, accept_503=False, routes=None, limit=None, per_conn=None):
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.ok = self.retried = self.n503 = 0
        self.failures = []
        self.accept_503 = accept_503
        self.routes = routes or self.ROUTES
        self.limit = limit
        self.per_conn = per_conn    # requests per connection, None: unlimited
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True)
                        for i in range(threads)]

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(60)

    def wait(self):
        for t in self.threads:
            t.join(300)

    def fail(self, text):
        with self.lock:
            self.failures.append(text)

    def run(self, seed):
        c = None
        i = seed * 7
        done = 0
        while not self.stop.is_set() and (self.limit is None or done < self.limit):
            path = self.routes[i % len(self.routes)]
            if "%d" in path:
                path = path % (i % (1000 if path.startswith("/post") else 30) + 1)
            i += 1
            done += 1
            for attempt in (0, 1):
                fresh = c is None
                try:
                    if c is None:
                        c = Conn(timeout=15)
                    r = c.request("GET", path)
                except bt.ClosedEarly as e:
                    if c is not None:
                        c.close()
                    c = None
                    if not fresh and attempt == 0:
                        with self.lock:
                            self.retried += 1
                        continue
                    self.fail("%s on a %s connection: %s" % (path, "new" if fresh else "reused", e))
                    break
                except Exception as e:
                    if c is not None:
                        c.close()
                    c = None
                    self.fail("%s: %s: %s" % (path, type(e).__name__, e))
                    break
                st, body = expected(path)
                if self.accept_503 and r.status == 503 and r.body == UNAVAILABLE:
                    with self.lock:
                        self.n503 += 1
                elif r.status != st or r.body != body:
                    self.fail("%s: %d, %s" % (path, r.status, excerpt(r.body, body)))
                else:
                    with self.lock:
                        self.ok += 1
                if not r.keeps_alive() or (self.per_conn and c.used >= self.per_conn):
                    c.close()
                    c = None
                break
        if c is not None:
            c.close()

    def report(self, what):
        T.check(not self.failures and self.ok > 0,
                "%s: %d good answers, %d retried on a closed keep-alive connection, %d x 503"
                % (what, self.ok, self.retried, self.n503),
                "%d failures; first: %s" % (len(self.failures), " | ".join(self.failures[:3])))


def blog_connections():
    return len(bt.blog_backends())


def apache_state():
    return bt.httpd_pid(), bt.children()


def same_apache(what, before):
    now = apache_state()
    T.check(now == before, "%s without restarting Apache (same parent and children)" % what,
            "before %s, after %s" % (before, now))


def connections_bounded(what, limit=16):
    n = []
    ok = bt.wait_for(lambda: n.append(blog_connections()) or 0 < n[-1] <= limit, 10, 0.5)
    T.check(ok, "%s: mod_blog has between 1 and %d connections" % (what, limit), "%s" % n[-5:])


# ------------------------------------------------------------- the faults
def postgres_down():
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
    load.report("load while PostgreSQL stopped (200 or the 503 page, nothing else)")
    T.check(load.n503 > 0, "the load saw the outage (some 503s)", "%d" % load.n503)


def backends_terminated():
    spread(["/", "/post/post-1", "/tag/tag-1"], 16)
    for rnd in (1, 2):
        pids = bt.blog_backends()
        T.check(pids, "mod_blog has connections to terminate (round %d)" % rnd, "none")
        bt.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'mod_blog' AND backend_type = 'client backend'")
        gone = bt.wait_for(lambda: not set(pids) & set(bt.blog_backends()), 5)
        T.check(gone, "terminated backends are gone (round %d)" % rnd,
                "still there: %s" % (set(pids) & set(bt.blog_backends())))
        results = spread(["/", "/post/post-1", "/tag/tag-1", "/post/post-42"], 16)
        with Conn() as c:
            results += [(p, c.request("GET", p)) for p in ("/", "/tag/tag-2", "/post/post-2")]
        all_ok("every request after pg_terminate_backend is 200 (round %d)" % rnd, results)
        back = bt.wait_for(lambda: blog_connections() > 0, 5)
        T.check(back, "mod_blog connections come back (round %d)" % rnd,
                "%d" % blog_connections())


def backend_hung():
    deadline = conf_seconds("BlogQueryTimeout", 5.0)
    bound = deadline + 2.0
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
    T.note("with %d backends frozen: %d answers, %d x 503, slowest %.2f s (deadline %.1f s)"
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


def redis_down():
    apache = apache_state()
    out = bt.stack("stop", "redis")
    T.check(out.returncode == 0, "scripts/stack.sh stop redis", out.stdout.decode()[-300:])
    try:
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
        hit = bt.wait_for(lambda: c.request("GET", path).get("x-cache") == "HIT", 5, 0.1)
        T.check(hit, "%s: then a HIT" % when)

    def every_child_hits():
        return all(r.get("x-cache") == "HIT" for _, r in spread([path], 8))
    T.check(bt.wait_for(every_child_hits, 6, 0.2), "%s: every child hits again" % when)


def redis_hung():
    bound = conf_seconds("BlogRedisTimeout", 0.2) + 1.0
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


def graceful_under_load():
    with Load(threads=4) as load:
        time.sleep(0.7)
        for i in range(4):
            out = bt.stack("graceful")
            T.check(out.returncode == 0, "scripts/stack.sh graceful #%d" % (i + 1),
                    out.stdout.decode()[-300:])
            time.sleep(1.2)
        time.sleep(0.5)
    load.report("graceful restart x4 under load: no failed request, no wrong body")
    T.check(load.ok > 200, "the load was real", "%d requests" % load.ok)
    connections_bounded("within 10 s of the last graceful restart")
    healthy(10)


def stable_children(seconds=15):
    """Wait until old generations are gone and the children stay put."""
    last, since = None, time.monotonic()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        now = bt.children()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > 2:
            break
        time.sleep(0.2)
    return last


def memory_flat():
    kids = stable_children()
    routes = ["/", "/post/post-%d", "/tag/tag-%d", "/cached", "/post/post-%d/cached",
              "/compute", "/post/nope", "/post/Bad"]
    # Warm up until the children's memory is steady: every child and every
    # worker thread that will serve has touched its stack and per-thread
    # state.  Short connections spread the load over all the children.
    before = {}
    for rnd in range(6):
        with Load(threads=8, routes=routes, limit=500, per_conn=25) as warm:
            warm.wait()
        now = {p: bt.rss_kib(p) for p in bt.children()}
        steady = before and sum(now.values()) - sum(before.values()) < 256
        before = now
        if steady:
            break
    t0 = time.monotonic()
    with Load(threads=8, routes=routes, limit=2500, per_conn=50) as load:
        load.wait()
    took = time.monotonic() - t0
    after = {p: bt.rss_kib(p) for p in bt.children()}
    load.report("20000 requests for the memory check")
    same = sorted(before) == sorted(after) and sorted(before) == sorted(kids)
    T.check(same, "the same children before and after", "%s / %s / %s"
            % (kids, sorted(before), sorted(after)))
    grow = sum(after.get(p, 0) - before[p] for p in before if p in after)
    T.note("children RSS %d KiB -> %d KiB (%+d KiB) over %d requests in %.1f s,"
           " after %d warm-up rounds" % (sum(before.values()), sum(after.values()), grow,
                                         load.ok, took, rnd + 1))
    T.check(grow < 2048, "children's RSS grows < 2 MiB over 20000 requests",
            "%+d KiB: %s" % (grow, {p: after.get(p, 0) - before[p] for p in before}))


def restore():
    for pid in list(STOPPED):
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        STOPPED.discard(pid)
    bt.stack("start")
    ok = healthy(30)
    try:
        bt.flush_page_keys()
    except Exception:
        pass
    return ok


def main():
    log_start = bt.error_log_size()
    try:
        out = bt.stack("start")
        if not T.check(out.returncode == 0 and healthy(30), "the stack is up before the faults",
                       out.stdout.decode()[-500:]):
            return
        bt.flush_page_keys()
        for fn in (postgres_down, backends_terminated, backend_hung, redis_down, redis_hung,
                   graceful_under_load, memory_flat):
            try:
                fn()
            except Exception as e:
                T.crash(fn.__name__, e)
                restore()
    finally:
        ok = restore()
        T.check(ok, "the stack is running and healthy at the end")
        crashes = bt.crash_lines(bt.error_log_since(log_start))
        T.check(not crashes, "the error log has no crash lines",
                "%d lines, first: %s" % (len(crashes), crashes[:3]))
        T.finish()


if __name__ == "__main__":
    main()

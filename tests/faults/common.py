# SPDX-License-Identifier: Apache-2.0
"""What the fault cases share: the case registry and its table, the load
lock, test-only Apache settings, load generators, and the checks on answers.

A case is a function registered with @case(name, action, long=...).  It
makes any number of checks (T.check) and states its figure (figure(...)):
the case passes when none of its checks failed.  `run.py` runs the fast
cases (the README's test command runs those) or, with --all, every case
(`make faults`), and prints one table: case, action, figure, PASS/FAIL.
"""

import contextlib
import fcntl
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
from background import Background  # noqa: E402

T = bt.Tally("faults (MPM %s, fast path %s)" % (bt.ENV.get("BLOG_MPM"),
                                               bt.ENV.get("BLOG_FASTPATH")))
UNAVAILABLE = ref.render_unavailable()
NOT_FOUND = ref.render_not_found()
# "quickly": a 503 or a BYPASS without waiting for a dead server (the
# client's own timeout is 10 s); the margin of a loaded machine.
FAST = bt.MARGIN
STOPPED = set()             # PIDs this suite froze; thawed whatever happens
CONF_D = os.path.join(bt.VAR, "httpd", "conf.d")
_expected = {}


# ------------------------------------------------------------ the registry
class Case:
    def __init__(self, name, action, fn, long, loaded):
        self.name, self.action, self.fn = name, action, fn
        self.long, self.loaded = long, loaded
        self.figures = []
        self.result = None


CASES = []
_current = []


def case(name, action, long=False, loaded=False):
    """Register a case.  loaded: it sends load, so it runs under the lock."""
    def deco(fn):
        CASES.append(Case(name, action, fn, long, loaded))
        return fn
    return deco


def figure(text):
    """What the case measured, for its row of the table (and the log)."""
    if _current:
        _current[-1].figures.append(text)
    print("  %s: %s" % (_current[-1].name if _current else "-", text), flush=True)


@contextlib.contextmanager
def load_lock():
    """The machine is shared: loaded cases take BLOG_LOAD_LOCK (a flock(1)
    file) while they run, so no two load tests overlap.  Unset or empty:
    no lock (the caller holds it, or has the machine to itself)."""
    path = os.environ.get("BLOG_LOAD_LOCK", "")
    if not path:
        yield
        return
    try:
        # the tree's shared helper, when there is one: it also knows a lock
        # held by an ancestor (flock /tmp/blog-load.lock make faults) as ours
        import loadlock
    except ImportError:
        loadlock = None
    if loadlock is not None:
        with loadlock.held(say=lambda m: print("  (%s)" % m, flush=True), path=path):
            yield
        return
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("  (waiting for the load lock %s)" % path, flush=True)
            t0 = time.monotonic()
            fcntl.flock(f, fcntl.LOCK_EX)       # queued, like flock(1)
            print("  (got it after %.0f s)" % (time.monotonic() - t0), flush=True)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_cases(cases):
    for c in cases:
        _current.append(c)
        print("-- %s: %s" % (c.name, c.action), flush=True)
        passed, failed = T.passed, T.failed
        t0 = time.monotonic()
        try:
            with load_lock() if c.loaded else contextlib.nullcontext():
                c.fn()
        except Exception as e:
            T.crash(c.name, e)
            restore()
        c.result = T.failed == failed
        c.seconds = time.monotonic() - t0
        if not c.figures:
            c.figures.append("%d of %d checks passed" % (T.passed - passed,
                                                         T.passed - passed + T.failed - failed))
        _current.pop()


def print_table(cases):
    rows = [("case", "action", "figure", "result")]
    for c in cases:
        if c.result is None:    # interrupted before it ran
            rows.append((c.name, c.action, "not run", "FAIL"))
            continue
        rows.append((c.name, c.action, "; ".join(c.figures),
                     "PASS" if c.result else "FAIL"))
    w0 = max(len(r[0]) for r in rows)
    w1 = min(60, max(len(r[1]) for r in rows))
    print()
    print(T.name)
    for i, (a, b, f, res) in enumerate(rows):
        print("%-*s | %-*s | %-4s | %s" % (w0, a, w1, b, res, f))
        if i == 0:
            print("-" * (w0 + w1 + 20))
    passed = sum(1 for c in cases if c.result)
    print("%.1f s" % (time.monotonic() - T.start))
    print("%d passed, %d failed" % (passed, len(cases) - passed), flush=True)
    return passed == len(cases)


# ---------------------------------------------------- expected answers
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
    """A mod_blog timeout from the generated httpd.conf and the test-only
    settings it includes (the last one wins), in seconds (a bare number is
    milliseconds, as ap_timeout_parameter_parse reads it there), or the
    module's default when the directive is not given."""
    text = ""
    files = [os.path.join(bt.VAR, "httpd", "httpd.conf")]
    if os.path.isdir(CONF_D):
        files += sorted(os.path.join(CONF_D, f) for f in os.listdir(CONF_D)
                        if f.endswith(".conf"))
    for fn in files:
        try:
            text += open(fn).read() + "\n"
        except OSError:
            pass
    found = re.findall(r"(?mi)^\s*%s\s+([\d.]+)\s*(ms|s|mi|min|h)?\s*$" % directive, text)
    if not found:
        return default
    num, unit = found[-1]
    scale = {"": 0.001, "ms": 0.001, "s": 1, "mi": 60, "min": 60, "h": 3600}
    return float(num) * scale[unit.lower()]


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
    return p + bt.xcache_problems(r, xcache)


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


def pct(values, p):
    """The p-th percentile (nearest rank) of values; 0 for none."""
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(p / 100.0 * len(v) + 0.5)) - 1))]


class Load:
    """Threads doing keep-alive GETs over the routes until stopped.

    A request sent on a reused connection that the server closed before
    the first byte of the answer is retried once on a new connection (what
    every HTTP client does, RFC 9112 section 9.3.1; graceful restarts close
    idle keep-alive connections).  Everything else that is not the expected
    answer is a failure; `accept_503` also allows the unavailable page.
    Every answer's latency is kept (`latencies`, with its end time)."""

    ROUTES = ["/", "/post/post-31", "/tag/tag-7", "/cached", "/post/post-31/cached",
              "/compute", "/post/post-%d", "/post/post-%d/cached", "/tag/tag-%d", "/post/nope"]

    def __init__(self, threads=4, accept_503=False, routes=None, limit=None, per_conn=None,
                 timeout=15, check_body=True):
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.ok = self.retried = self.n503 = 0
        self.failures = []
        self.latencies = []         # (end time, seconds, status or 0, path)
        self.accept_503 = accept_503
        self.routes = routes or self.ROUTES
        self.limit = limit
        self.per_conn = per_conn    # requests per connection, None: unlimited
        self.timeout = timeout
        self.check_body = check_body
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
            t0 = time.monotonic()
            for attempt in (0, 1):
                fresh = c is None
                try:
                    if c is None:
                        c = Conn(timeout=self.timeout)
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
                    now = time.monotonic()
                    with self.lock:     # status 0: no answer (timed out, reset)
                        self.latencies.append((now, now - t0, 0, path))
                    self.fail("%s: %s: %s after %.2f s" % (path, type(e).__name__, e, now - t0))
                    break
                now = time.monotonic()
                with self.lock:
                    self.latencies.append((now, now - t0, r.status, path))
                st, body = expected(path)
                if self.accept_503 and r.status == 503 and r.body == UNAVAILABLE:
                    with self.lock:
                        self.n503 += 1
                elif r.status != st or (self.check_body and r.body != body):
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

    def slowest(self, since=0.0):
        return max([s for t, s, _, _ in self.latencies if t >= since] or [0.0])

    def report(self, what):
        return T.check(not self.failures and self.ok > 0,
                       "%s: %d good answers, %d retried on a closed keep-alive connection, "
                       "%d x 503" % (what, self.ok, self.retried, self.n503),
                       "%d failures; first: %s" % (len(self.failures),
                                                   " | ".join(self.failures[:3])))


# ------------------------------------------------------------- the stack
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
    ok = bt.wait_for(lambda: n.append(blog_connections()) or 0 < n[-1] <= limit, 10 + bt.MARGIN, 0.5)
    T.check(ok, "%s: mod_blog has between 1 and %d connections" % (what, limit), "%s" % n[-5:])


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


def child_rss():
    return {p: bt.rss_kib(p) for p in bt.children()}


def open_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return 0


def threads_reading(ppid=None):
    """Apache worker threads blocked in poll(): reading a client (or, for a
    moment, waiting on PostgreSQL or Redis).  Idle workers wait on a futex,
    the listener in epoll_wait.  The stack's Apache, or ppid's children."""
    n = 0
    for pid in bt.children(ppid):
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                w = open("/proc/%d/task/%s/wchan" % (pid, tid)).read()
            except OSError:
                continue
            if "poll" in w and "epoll" not in w:
                n += 1
    return n


def postmaster_pid():
    with open(os.path.join(bt.VAR, "pg", "postmaster.pid")) as f:
        return int(f.readline())


def redis_pid():
    return int(open(os.path.join(bt.VAR, "run", "redis.pid")).read().split()[0])


def freeze(pids):
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
        STOPPED.add(pid)


def thaw(pids):
    for pid in list(pids):
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        STOPPED.discard(pid)


@contextlib.contextmanager
def apache_with(settings):
    """Apache restarted with test-only settings (conf/httpd.conf.in includes
    var/httpd/conf.d/*.conf after the blog's own lines, so these win), and
    restarted without them afterwards, whatever happens."""
    os.makedirs(CONF_D, exist_ok=True)
    path = os.path.join(CONF_D, "faults.conf")
    with open(path, "w") as f:
        f.write("# written by tests/faults for one case; removed after it\n%s\n" % settings)
    try:
        out = bt.stack("restart", "httpd")
        if out.returncode != 0:
            raise RuntimeError("httpd did not restart with %r: %s"
                               % (settings, out.stdout.decode()[-300:]))
        healthy(20)
        yield
    finally:
        os.unlink(path)
        bt.stack("restart", "httpd")
        healthy(20)


def restore():
    thaw(STOPPED)
    stale = os.path.join(CONF_D, "faults.conf")
    if os.path.exists(stale):
        os.unlink(stale)
        bt.stack("restart", "httpd")
    bt.stack("start")
    ok = healthy(30)
    try:
        bt.redis_cmd("CONFIG", "SET", "min-replicas-to-write", "0")
        bt.redis_cmd("CONFIG", "SET", "maxmemory", "256mb")
        bt.redis_cmd("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
        bt.flush_page_keys()
    except Exception:
        pass
    return ok


def log_lines_since(offset, pattern=None):
    lines = bt.error_log_since(offset).splitlines()
    if pattern:
        lines = [line for line in lines if re.search(pattern, line)]
    return lines


class Prober(Background):
    """A client that asks for each of `paths` in turn every `every` seconds,
    each time on a new connection, until stopped: (end time, seconds,
    status or 0, path) of every answer in `answers`, failures in `failures`."""

    def __init__(self, paths=("/", "/cached"), every=0.1, timeout=30, port=None):
        super().__init__()
        self.paths, self.every, self.timeout, self.port = paths, every, timeout, port
        self.answers, self.failures = [], []
        self.join_for = timeout + 5

    def run(self):
        i = 0
        while not self.stopping.is_set():
            path = self.paths[i % len(self.paths)]
            i += 1
            t0 = time.monotonic()
            try:
                with Conn(timeout=self.timeout, port=self.port) as c:
                    r = c.request("GET", path, [("Connection", "close")])
                status, bad = r.status, problems(r, *expected(path))
            except Exception as e:
                status, bad = 0, ["%s: %s" % (type(e).__name__, e)]
            took = time.monotonic() - t0
            self.answers.append((time.monotonic(), took, status, path))
            if bad:
                self.failures.append("%s after %.2f s: %s" % (path, took, "; ".join(bad)))
            self.stopping.wait(max(0.0, self.every - took))

    def latencies(self):
        return [s for _, s, st, _ in self.answers if st == 200]


def siege(n_header, n_body, seconds, settle=2.0, port=None):
    """n_header connections trickling request headers (GET /, one header
    line a second) and n_body trickling a body to a blog route (POST
    /cached), then `seconds` of Prober; (prober, header crowd, body crowd)."""
    port = port or bt.HTTP_PORT
    import fakes
    import idle_conns
    idle_conns.raise_nofile(n_header + n_body + 256)
    with fakes.SlowClients(port, n=n_header) as heads, \
            fakes.SlowClients(port, n=n_body, path="/cached", body=True) as bodies:
        time.sleep(settle)
        with Prober(port=port) as probe:
            time.sleep(seconds)
    return probe, heads, bodies

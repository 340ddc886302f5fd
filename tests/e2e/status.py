#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mod_blog's figures on mod_status's /server-status page and its health
check (SetHandler blog-health), against the running private stack.
/health says only "ok", "PostgreSQL unavailable" or "Redis unavailable";
the reason goes to the error log and to mod_status.

    . scripts/env.sh && python3 tests/e2e/status.py

The stack's blog owns every path of its port (BlogMount /), so this test
adds, for its own run, a snippet in var/httpd/conf.d: mod_status with
ExtendedStatus On and a virtual host on a port of its own where the blog
is mounted under a prefix, leaving /server-status and /health to their
handlers.  It removes the snippet and restarts Apache after, pass or fail.

Checks: a known mix of requests (cached hits and misses, uncached pages,
404s, /compute) moves the ?auto counters by exactly what the client saw
(hits + misses + bypasses = cached requests, X-Cache by X-Cache; pool
queries = uncached pages that reach PostgreSQL + misses + bypasses); the
gauges agree with PostgreSQL's pg_stat_activity and the children with the
Apache process list; the HTML table says the same as ?auto; without
ExtendedStatus there is no mod_blog section; after a graceful restart the
new children start from zero and an old child finishing a request keeps
its row until it exits; a child killed with SIGKILL loses its row once
the parent has reaped it.  The health check: 200 "ok",
then 503 "Redis unavailable" or "PostgreSQL unavailable" and nothing else
(no socket path, host, port or role), quickly, with Redis stopped or frozen
and PostgreSQL stopped or frozen, and 200 again once each is back; with a
host name that does not resolve or a role the server refuses, the log and
mod_status's ?auto give libpq's reason; one outage is logged in one
phrasing, libpq's message on one line.
Ends with `N passed, N failed`.
"""

import html
import os
import re
import signal
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the checkout clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blogtest as bt  # noqa: E402
import loadlock  # noqa: E402
sys.path.insert(0, os.path.join(bt.ROOT, "tests", "faults"))
import common as faults  # noqa: E402  (freeze, thaw: the fault suite's)
from blogtest import Conn  # noqa: E402

T = bt.Tally("status and health (MPM %s, fast path %s)"
             % (bt.ENV.get("BLOG_MPM"), bt.ENV.get("BLOG_FASTPATH")))
CONF = os.path.join(bt.VAR, "httpd", "conf.d", "status.conf")
# Short enough that the frozen-PostgreSQL case stays brief; the health
# check must answer within it (plus scheduling slack).
QUERY_TIMEOUT_MS = 1500
REDIS_TIMEOUT_MS = 200      # BlogRedisTimeout's default

POOL = ["PoolOpen", "PoolIdle", "PoolBusy", "PoolQueries", "PoolWaits",
        "PoolAcquireTimeouts", "PoolConnects", "PoolConnectFailures",
        "PoolReconnects", "PoolQueryTimeouts", "PoolQueryErrors"]
CACHE = ["CacheHits", "CacheMisses", "CacheBypasses", "CacheErrors"]
FIELDS = POOL + CACHE


PORT = bt.free_port()


def snippet(extended, database=None):
    return """# written by tests/e2e/status.py for its run; removed after it
<IfModule !status_module>
    LoadModule status_module /usr/lib/apache2/modules/mod_status.so
</IfModule>
ExtendedStatus %s
BlogQueryTimeout %d
%s
Listen 127.0.0.1:%d
<VirtualHost 127.0.0.1:%d>
    # the blog under a prefix here, so the other locations are reachable
    BlogMount /blog
    <Location /server-status>
        SetHandler server-status
    </Location>
    <Location /health>
        SetHandler blog-health
    </Location>
</VirtualHost>
""" % ("On" if extended else "Off", QUERY_TIMEOUT_MS,
       'BlogDatabase "%s"' % database if database else "", PORT, PORT)


def apache_with_status(extended=True, database=None):
    with open(CONF, "w") as f:
        f.write(snippet(extended, database))
    out = bt.stack("restart", "httpd")
    if out.returncode != 0:
        raise RuntimeError("httpd did not restart with the status snippet: %s"
                           % out.stdout.decode()[-400:])
    if not bt.wait_for(lambda: sget("/health").status in (200, 503), 10):
        raise RuntimeError("the status port %d does not answer" % PORT)


def sget(path, method="GET", timeout=10.0):
    with Conn(timeout, port=PORT) as c:
        t0 = time.monotonic()
        r = c.request(method, path)
        r.elapsed = time.monotonic() - t0
        return r


def auto():
    """?auto as a dict; the Blog* lines as ints."""
    r = sget("/server-status?auto")
    if r.status != 200:
        raise RuntimeError("?auto answered %d" % r.status)
    out = {}
    for line in r.body.decode("latin-1").splitlines():
        k, sep, v = line.partition(": ")
        if sep and k.startswith("BlogHealth"):
            out[k] = v          # the reason /health withholds
        elif sep and k.startswith("Blog"):
            out[k] = int(v)
        elif sep:
            out[k] = v
    return out


def slots(a):
    """{slot: {"PID": .., "Generation": .., field: ..}} from ?auto."""
    out = {}
    for k, v in a.items():
        m = re.match(r"BlogSlot(\d+)([A-Za-z]+)$", k)
        if m:
            out.setdefault(int(m.group(1)), {})[m.group(2)] = v
    return out


def html_rows():
    """The mod_blog table of the HTML page: {slot or "all": [numbers]}."""
    r = sget("/server-status")
    page = r.body.decode("latin-1")
    i = page.find("<h2>mod_blog</h2>")
    if r.status != 200 or i < 0:
        return None
    rows = {}
    table = page[i:page.index("</table>", i)]
    for tr in re.findall(r"<tr>(.*?)</tr>", table):
        cells = [html.unescape(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr)]
        if cells and cells[0] == "all":
            rows["all"] = [int(c) for c in cells[1:]]
        elif cells and cells[0].isdigit():
            rows[int(cells[0])] = [int(c) for c in cells]
    return rows


# ------------------------------------------------------------ the load
CACHED = ["/cached"] + ["/post/post-%d/cached" % p for p in range(1, 10)]
# well formed, no row: a miss every time (nothing is stored), one query each
CACHED_NO_ROW = ["/post/no-such-post/cached"]
UNCACHED = ["/", "/post/post-31", "/post/post-500", "/tag/tag-7",
            "/post/no-such-post"]
NO_PG = ["/compute", "/post/Bad_Slug", "/nowhere"]


def plan():
    """(path, kind) pairs: about 1 500 requests, cached ones the most."""
    reqs = []
    for rnd in range(100):
        for p in CACHED:
            reqs.append((p, "cached"))
        if rnd % 10 == 0:
            reqs += [(p, "cached") for p in CACHED_NO_ROW]
        for p in UNCACHED:
            if p != "/tag/tag-7" or rnd % 6 == 0:
                reqs.append((p, "uncached"))
        if rnd % 5 == 0:
            reqs += [(p, "none") for p in NO_PG]
    return reqs


def send_all(reqs, threads=8):
    """Over keep-alive connections; what the client saw, by kind."""
    seen = {"HIT": 0, "MISS": 0, "BYPASS": 0, "uncached": 0, "none": 0,
            "cached": 0, "bad": []}
    lock = threading.Lock()
    shares = [reqs[i::threads] for i in range(threads)]

    def run(share):
        mine = {"HIT": 0, "MISS": 0, "BYPASS": 0, "uncached": 0, "none": 0,
                "cached": 0, "bad": []}
        c = Conn(10.0)
        try:
            for path, kind in share:
                r = c.request("GET", path)
                mine[kind] += 1
                xc = r.get("x-cache")
                if kind == "cached":
                    if xc in ("HIT", "MISS", "BYPASS"):
                        mine[xc] += 1
                    else:
                        mine["bad"].append("%s: X-Cache %r" % (path, xc))
                if r.status not in (200, 404):
                    mine["bad"].append("%s: %d" % (path, r.status))
                if not r.keeps_alive():
                    c.close()
                    c = Conn(10.0)
        except Exception as e:
            mine["bad"].append("exception %s" % e)
        finally:
            c.close()
        with lock:
            for k, v in mine.items():
                seen[k] += v

    ts = [threading.Thread(target=run, args=(s,)) for s in shares]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return seen


def delta(after, before, key):
    return after.get("Blog" + key, 0) - before.get("Blog" + key, 0)


def rows_are_children(last):
    """Whether the slots listed are the children running, the two lists
    kept in last ("rows", "kids") for the failure's message."""
    last["rows"] = sorted(s["PID"] for s in slots(auto()).values())
    last["kids"] = bt.children()
    return last["rows"] == last["kids"]


def every_child_has_its_slot():
    """Every child running holds a slot: one just started may not have
    taken its own yet, and its requests would not be counted."""
    return rows_are_children({})


def check_counts():
    bt.flush_page_keys()
    T.check(bt.wait_for(every_child_has_its_slot, 10 + bt.MARGIN, 0.05),
            "every Apache child holds its status slot before the count",
            "slots %r, children %r" % (sorted(s["PID"] for s in slots(auto()).values()),
                                       bt.children()))
    before = auto()
    T.check(before.get("BlogChildren", 0) >= 1, "?auto lists the children",
            "BlogChildren %r" % before.get("BlogChildren"))
    reqs = plan()
    with loadlock.held(say=T.note):
        t0 = time.monotonic()
        # prefork: a process per connection, 4 of them; leave one free
        seen = send_all(reqs, 3 if bt.ENV.get("BLOG_MPM") == "prefork" else 8)
        took = time.monotonic() - t0
    after = auto()
    T.note("%d requests in %.1f s: %d cached (%d HIT, %d MISS, %d BYPASS), "
           "%d uncached, %d touching neither" % (
               len(reqs), took, seen["cached"], seen["HIT"], seen["MISS"],
               seen["BYPASS"], seen["uncached"], seen["none"]))
    T.check(not seen["bad"], "every answer was 200 or 404 with its X-Cache",
            "; ".join(seen["bad"][:5]))
    figures = {k: delta(after, before, k) for k in FIELDS}
    T.note("?auto moved by: %s" % ", ".join("%s %d" % (k, v) for k, v in figures.items() if v))
    cached = figures["CacheHits"] + figures["CacheMisses"] + figures["CacheBypasses"]
    T.check(cached == seen["cached"],
            "hits + misses + bypasses = cached requests sent",
            "%d + %d + %d = %d, sent %d" % (figures["CacheHits"], figures["CacheMisses"],
                                            figures["CacheBypasses"], cached, seen["cached"]))
    for k, x in (("CacheHits", "HIT"), ("CacheMisses", "MISS"), ("CacheBypasses", "BYPASS")):
        T.check(figures[k] == seen[x], "%s = answers with X-Cache: %s" % (k, x),
                "%d vs %d" % (figures[k], seen[x]))
    T.check(seen["MISS"] >= len(CACHED) + seen_no_row(reqs),
            "a miss for each cached page at least once, and for each no-row request",
            "%d misses" % seen["MISS"])
    want_q = seen["uncached"] + seen["MISS"] + seen["BYPASS"]
    T.check(figures["PoolQueries"] == want_q,
            "pool queries = uncached pages + cache misses + bypasses",
            "%d queries, want %d + %d + %d = %d" % (figures["PoolQueries"], seen["uncached"],
                                                    seen["MISS"], seen["BYPASS"], want_q))
    for k in ("PoolAcquireTimeouts", "PoolReconnects", "PoolQueryTimeouts",
              "PoolQueryErrors", "PoolConnectFailures", "CacheErrors"):
        T.check(figures[k] == 0, "%s did not move under a healthy load" % k,
                "moved by %d" % figures[k])
    return after


def seen_no_row(reqs):
    return sum(1 for p, _ in reqs if p in CACHED_NO_ROW)


def check_gauges():
    def settled():
        a = auto()
        return a if a["BlogPoolBusy"] == 0 and a["BlogPoolOpen"] == len(bt.blog_backends()) else None

    a = None
    bt.wait_for(lambda: settled() is not None, 5, 0.2)
    a = auto()
    backends = len(bt.blog_backends())
    T.check(a["BlogPoolBusy"] == 0, "no connection is busy once the load is over",
            "BlogPoolBusy %d" % a["BlogPoolBusy"])
    T.check(a["BlogPoolOpen"] == backends,
            "BlogPoolOpen = mod_blog's sessions in pg_stat_activity",
            "%d vs %d" % (a["BlogPoolOpen"], backends))
    T.check(a["BlogPoolIdle"] == a["BlogPoolOpen"] - a["BlogPoolBusy"],
            "idle = open - busy", "%r" % {k: a["Blog" + k] for k in POOL[:3]})
    sl = slots(a)
    pids = sorted(s["PID"] for s in sl.values())
    kids = bt.children()
    T.check(pids == kids and a["BlogChildren"] == len(kids),
            "one slot per Apache child, with its PID", "slots %r, children %r" % (pids, kids))
    over = {i: s["PoolOpen"] for i, s in sl.items() if not 0 <= s["PoolOpen"] <= 4}
    T.check(not over, "each child holds 0 to BlogPoolMax (4) connections", "%r" % over)
    sums = {k: sum(s.get(k, 0) for s in sl.values()) for k in FIELDS}
    wrong = {k: (sums[k], a["Blog" + k]) for k in FIELDS if sums[k] != a["Blog" + k]}
    T.check(not wrong, "the totals are the sums of the children's figures", "%r" % wrong)
    return a


def check_html(a):
    rows = html_rows()
    again = auto()
    if not T.check(rows is not None, "the HTML page has the mod_blog section"):
        return
    stable = again == a or all(again.get(k) == a.get(k) for k in a if k.startswith("Blog"))
    if not stable:
        T.note("figures moved between the two reads; comparing with the second")
        a = again
    sl = slots(a)
    for i, s in sl.items():
        want = [i, s["PID"], s["Generation"]] + [s[k] for k in FIELDS]
        T.check(rows.get(i) == want, "HTML row of slot %d = its ?auto lines" % i,
                "%r vs %r" % (rows.get(i), want))
    want = [a["Blog" + k] for k in FIELDS]
    T.check(rows.get("all") == want, "HTML totals = ?auto totals",
            "%r vs %r" % (rows.get("all"), want))
    T.check(set(rows) - {"all"} == set(sl), "the HTML table lists the same slots",
            "%r vs %r" % (sorted(k for k in rows if k != "all"), sorted(sl)))


# ------------------------------------------------------------ health
def health_ok(what):
    r = sget("/health")
    return T.check(r.status == 200 and r.body == b"ok\n"
                   and r.get("content-type") == "text/plain; charset=utf-8",
                   "%s: /health is 200 \"ok\"" % what, r.brief() + " %r" % r.body[:200])


def health_down(what, service, within):
    r = sget("/health")
    body = r.body.decode("utf-8", "replace")
    T.check(r.status == 503, "%s: /health is 503" % what, r.brief())
    T.check(body == "%s unavailable\n" % service,
            "%s: says only \"%s unavailable\"" % (what, service), repr(body[:300]))
    leaks = [w for w in (bt.VAR, "/run", ".sock", "127.0.0.1", "localhost",
                         str(bt.ENV.get("BLOG_PG_PORT")),
                         str(bt.ENV.get("BLOG_REDIS_PORT")), "blog_web",
                         "role", "user", "port", "host")
             if w and w in body]
    T.check(not leaks, "%s: no socket path, host, port or role in the body"
            % what, "%r in %r" % (leaks, body[:300]))
    T.check(r.get("retry-after") == "1", "%s: Retry-After: 1" % what, r.brief())
    T.check(r.elapsed < within, "%s: answered within %.1f s" % (what, within),
            "took %.2f s" % r.elapsed)
    T.note("%s: 503 in %.3f s: %s" % (what, r.elapsed, body.strip()))


def back(what, seconds=15):
    ok = bt.wait_for(lambda: sget("/health", timeout=5).status == 200, seconds, 0.2)
    T.check(ok, "%s: /health is 200 again within %d s" % (what, seconds))


def pg_pids():
    pm = faults.postmaster_pid()
    return [pm] + bt.children(pm)



def check_health():
    health_ok("all up")
    r = sget("/health", method="HEAD")
    T.check(r.status == 200 and r.body == b"", "HEAD /health: 200, no body", r.brief())
    r = sget("/health", method="POST")
    T.check(r.status == 405, "POST /health: 405", r.brief())
    before = auto()

    bt.stack("stop", "redis")
    try:
        health_down("Redis stopped", "Redis", REDIS_TIMEOUT_MS / 1000.0 + bt.MARGIN)
        health_down("Redis stopped, asked again", "Redis",
                    REDIS_TIMEOUT_MS / 1000.0 + bt.MARGIN)
        r = bt.get("/cached")
        T.check(r.status == 200 and r.get("x-cache") == "BYPASS",
                "Redis stopped: the pages still come, X-Cache: BYPASS", r.brief())
    finally:
        bt.stack("start", "redis")
    back("Redis started")
    mid = auto()
    T.check(delta(mid, before, "CacheErrors") >= 1, "Redis stopped: CacheErrors moved",
            "moved by %d" % delta(mid, before, "CacheErrors"))
    T.check(delta(mid, before, "CacheBypasses") >= 1, "Redis stopped: CacheBypasses moved",
            "moved by %d" % delta(mid, before, "CacheBypasses"))

    faults.freeze([faults.redis_pid()])
    try:
        # per-thread contexts that were connected: each waits BlogRedisTimeout
        health_down("Redis frozen", "Redis", REDIS_TIMEOUT_MS / 1000.0 * 2 + bt.MARGIN)
    finally:
        faults.thaw(faults.STOPPED)
    back("Redis thawed")

    off = bt.error_log_size()
    bt.stack("stop", "pg")
    try:
        health_down("PostgreSQL stopped", "PostgreSQL",
                    QUERY_TIMEOUT_MS / 1000.0 + bt.MARGIN)
        health_down("PostgreSQL stopped, asked again", "PostgreSQL",
                    QUERY_TIMEOUT_MS / 1000.0 + bt.MARGIN)
        for _ in range(20):
            bt.get("/")
    finally:
        bt.stack("start", "pg")
    back("PostgreSQL started")
    check_outage_log(off)
    after = auto()
    T.check(delta(after, mid, "PoolConnectFailures") >= 1,
            "PostgreSQL stopped: PoolConnectFailures moved",
            "moved by %d" % delta(after, mid, "PoolConnectFailures"))

    # Every thread's pooled connection must be one the health check uses:
    # several asks, so that a connection of each child sees the freeze.
    faults.freeze(pg_pids())
    try:
        health_down("PostgreSQL frozen", "PostgreSQL", QUERY_TIMEOUT_MS / 1000.0 + bt.MARGIN)
    finally:
        faults.thaw(faults.STOPPED)
    back("PostgreSQL thawed")


def blog_lines(off):
    return [line for line in bt.error_log_since(off).splitlines() if "[blog:" in line]


def check_outage_log(off):
    """One outage, one phrasing (the connect's), libpq's message on one
    line, and its end said once per child."""
    lines = blog_lines(off)
    # the health check's own line (its reason, which /health withholds)
    # is not the pool's phrasing of the outage
    down = [l for l in lines if "reachable again" not in l
            and "health check failed" not in l]
    odd = [l for l in down if not re.search(r"BLOG\d{5}: cannot connect to PostgreSQL: ", l)]
    T.check(down and not odd, "PostgreSQL stopped: every warning says \"BLOGnnnnn: cannot "
            "connect to PostgreSQL: <libpq's message>\"", "%d lines, others: %r" % (len(down), odd[:2]))
    T.check(not [l for l in lines if "\t" in l or "\\n" in l or "  Is the" in l],
            "libpq's message is one line, its line breaks one space each", "%r" % lines[:2])
    T.note("outage log: %d lines, first: %s" % (len(lines), lines[0][-150:] if lines else ""))


def check_bad_conninfo():
    """The health check and the log name libpq's reason, not a guess."""
    for what, conninfo, want in (
            ("a host name that does not resolve",
             "host=nonexistent.invalid dbname=blog user=blog_web",
             "could not translate host name"),
            ("a role the server refuses",
             "host=%s port=%s dbname=blog user=no_such_role" % (
                 os.path.join(bt.VAR, "run"), bt.ENV["BLOG_PG_PORT"]),
             'role "no_such_role" does not exist')):
        off = bt.error_log_size()
        apache_with_status(database=conninfo)
        r = sget("/health")
        body = r.body.decode("utf-8", "replace")
        T.check(r.status == 503 and body == "PostgreSQL unavailable\n",
                "%s: /health is 503 and says only \"PostgreSQL unavailable\""
                % what, "%d %r" % (r.status, body))
        # the reason goes to mod_status, which admins protect; the child
        # that answers ?auto may not be the one that answered /health
        seen = bt.wait_for(lambda: want in (sget("/health") and auto().get(
            "BlogHealthLastPostgreSQLFailure", "")), 5, 0.1)
        T.check(seen, "%s: mod_status's ?auto says %r" % (what, want))
        # the previous configuration's children may still be logging
        kids = set(bt.children())
        lines = [l for l in blog_lines(off) if "PostgreSQL" in l
                 and "health check failed" not in l
                 and int((re.search(r"\[pid (\d+)", l) or [0, 0])[1]) in kids]
        T.check(lines and all(want in l and "cannot connect to PostgreSQL" in l
                              for l in lines),
                "%s: the log says %r" % (what, want), "%r" % lines[:2])


def check_graceful():
    """After a graceful restart the new children start from zero in the
    same segment, and an old child still finishing a request keeps its
    row, with its generation, until it exits."""
    if bt.ENV.get("BLOG_MPM") == "prefork":
        # the stack's prefork has ServerLimit 4: no slot for a new child
        # beside an old one
        T.note("graceful restart: not checked under prefork (ServerLimit 4)")
        return
    a = auto()
    old = {s["PID"]: s["Generation"] for s in slots(a).values()}
    gen = max(old.values())
    # a request whose header is not complete yet holds its old child
    slow = socket.create_connection((bt.HOST, bt.HTTP_PORT), timeout=10)
    done = threading.Event()

    def trickle():
        """One more header line a second, so that the request outlives the
        stack's Timeout (5 s between two reads) however long the restart
        and the checks take; mod_reqtimeout allows a header 20 s."""
        while not done.wait(1.0):
            slow.sendall(b"X-Slow: 1\r\n")
    sender = threading.Thread(target=trickle, daemon=True)
    try:
        slow.sendall(b"GET /compute HTTP/1.1\r\nHost: x\r\n")
        sender.start()
        time.sleep(0.3)
        bt.stack("graceful")

        # A new child beside the old one is what the rows below are about.
        # Not all four: worker starts the new generation in free scoreboard
        # slots only (worker.c, startup_children), and MaxRequestWorkers
        # allows 4, one of them the old child's; the fourth comes once the
        # old child's threads are dead, which on a loaded machine once took
        # longer than this wait (CI, after the fault suite).
        def both():
            kids = set(bt.children())
            return kids - set(old) and kids & set(old)
        T.check(bt.wait_for(both, 15 + bt.MARGIN, 0.1), "graceful restart: new children beside an old one")
        # A child the parent is just starting, or stopping as a spare
        # beyond MaxSpareThreads, is in the process table without a row
        # for a moment (longer in `make coverage`, where an exiting child
        # writes its counts): compare until both agree, within 3 s and the
        # margin (well inside mod_reqtimeout's 20 s for the slow header).
        seen = {"rows": {}, "kids": set()}

        def agree():
            seen["rows"] = {s["PID"]: s for s in slots(auto()).values()}
            seen["kids"] = set(bt.children())
            return set(seen["rows"]) == seen["kids"]
        time.sleep(0.5)
        same = bt.wait_for(agree, 3 + bt.MARGIN, 0.2)
        listed, kids = seen["rows"], seen["kids"]
        T.check(same, "graceful restart: one row per child, old and new",
                "rows %r, children %r" % (sorted(listed), sorted(kids)))
        olds = [p for p in listed if p in old]
        news = [p for p in listed if p not in old]
        T.check(olds and all(listed[p]["Generation"] == gen for p in olds),
                "graceful restart: the old child's row keeps its generation (%d)" % gen,
                "%r" % {p: listed[p]["Generation"] for p in olds})
        T.check(news and all(listed[p]["Generation"] == gen + 1 for p in news),
                "graceful restart: the new children are generation %d" % (gen + 1),
                "%r" % {p: listed[p]["Generation"] for p in news})
        fresh = {p: listed[p]["PoolQueries"] + listed[p]["CacheHits"] for p in news}
        T.check(not any(fresh.values()), "graceful restart: a new child's slot starts from zero",
                "%r" % fresh)
        done.set()
        sender.join()
        slow.sendall(b"\r\n")
        r = bt.Conn.__new__(bt.Conn)
        r.sock, r.buf, r.used, r.timeout, r.port = slow, b"", 0, 10, bt.HTTP_PORT
        T.check(r.read_response().status == 200, "graceful restart: the old child answers its request")
    finally:
        done.set()
        if sender.is_alive():
            sender.join()
        slow.close()
    gone = bt.wait_for(lambda: not set(bt.children()) & set(old), 15 + bt.MARGIN, 0.2)
    # The old child's exit can make the parent start another child, which
    # is in the process table before it has a row: compare until they
    # agree, as above.
    last = {"rows": [], "kids": []}
    T.check(gone and bt.wait_for(lambda: rows_are_children(last), 3 + bt.MARGIN, 0.2),
            "graceful restart: the old row goes with its child",
            "%r vs %r" % (last["rows"], last["kids"]))


def check_killed_child():
    """A child killed with SIGKILL frees no slot itself: the parent frees
    it as it reaps the child (the MPM's child_status hook)."""
    T.check(bt.wait_for(every_child_has_its_slot, 10 + bt.MARGIN, 0.2),
            "before the kill: a row for every child")
    victim = bt.children()[0]
    os.kill(victim, signal.SIGKILL)
    last = {"rows": [], "kids": []}
    T.check(bt.wait_for(lambda: rows_are_children(last) and victim not in last["kids"],
                        10 + bt.MARGIN, 0.2),
            "a child killed with SIGKILL: its row goes, its successor's comes",
            "killed %d; rows %r vs children %r"
            % (victim, last["rows"], last["kids"]))


def check_not_extended():
    apache_with_status(extended=False)
    a = auto()
    T.check(not any(k.startswith("Blog") for k in a),
            "ExtendedStatus Off: ?auto has no Blog lines",
            "%r" % [k for k in a if k.startswith("Blog")][:3])
    T.check(html_rows() is None, "ExtendedStatus Off: no mod_blog section in the HTML")
    health_ok("ExtendedStatus Off")


def main():
    os.makedirs(os.path.dirname(CONF), exist_ok=True)
    T.note("status and health on 127.0.0.1:%d" % PORT)
    try:
        apache_with_status()
        check_counts()
        a = check_gauges()
        check_html(a)
        check_graceful()
        check_killed_child()
        check_health()
        check_bad_conninfo()
        check_not_extended()
    except Exception as e:
        T.crash("status test", e)
    finally:
        faults.thaw(faults.STOPPED)
        if os.path.exists(CONF):
            os.unlink(CONF)
        bt.stack("start")
        bt.stack("restart", "httpd")
    T.finish()


if __name__ == "__main__":
    main()

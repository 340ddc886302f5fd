#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the blog against the running private stack.

    . scripts/env.sh && python3 tests/e2e/run.py

Checks docs/CONTRACT.md sections 2-5 over real HTTP: every golden page, every
page the seed implies (against an independent renderer, reference.py, first
proven
against tests/golden), consistency with the database, the Redis cache,
methods, HEAD, bad paths and malformed requests, keep-alive and pipelining.
Prints one line per failed check and ends with `N passed, N failed`.
Nothing here depends on the MPM: the same suite runs under event and worker,
with the ordinary handler or the quick_handler opt-in (BLOG_MPM, BLOG_FASTPATH say which).
"""

import os
import re
import socket
import sys
import time

sys.dont_write_bytecode = True  # keep the checkout clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blogtest as bt  # noqa: E402
import reference as ref  # noqa: E402
from blogtest import Conn, excerpt  # noqa: E402

T = bt.Tally("e2e (MPM %s, fast path %s)" % (bt.ENV.get("BLOG_MPM"),
                                            bt.ENV.get("BLOG_FASTPATH")))
NOT_FOUND = ref.render_not_found()
_expected = {}


def expected(path):
    if path not in _expected:
        _expected[path] = ref.render_path(path)
    return _expected[path]


def page_problems(r, status, body, xcache=None, head=False):
    """What is wrong with a response, as a list of short strings.

    xcache: None means "must have no X-Cache header"; a string or a tuple
    of strings is the allowed value(s); False means "don't look"."""
    p = []
    if r.status != status:
        p.append("status %d, want %d" % (r.status, status))
    ct = r.all("content-type")
    if ct != [bt.CONTENT_TYPE]:
        p.append("Content-Type %r, want exactly [%r]" % (ct, bt.CONTENT_TYPE))
    cl = r.all("content-length")
    if cl != [str(len(body))]:
        p.append("Content-Length %r, want [%r]" % (cl, str(len(body))))
    if r.chunked or r.get("transfer-encoding") is not None:
        p.append("Transfer-Encoding %r" % r.get("transfer-encoding"))
    if not head and r.body != body:
        p.append("body differs: " + excerpt(r.body, body))
    if head and r.body:
        p.append("HEAD answered with %d body bytes" % len(r.body))
    return p + bt.xcache_problems(r, xcache)


def check_page(what, r, status, body, xcache=None, head=False):
    p = page_problems(r, status, body, xcache, head)
    return T.check(not p, what, "; ".join(p))


class Group:
    """Many similar checks counted as one, reporting the first failures."""

    def __init__(self, what):
        self.what = what
        self.n = 0
        self.bad = []

    def add(self, label, problems):
        self.n += 1
        if problems:
            self.bad.append((label, "%s: %s" % (label, "; ".join(problems))))

    def done(self):
        detail = "%d failed: %s; first: %s" % (
            len(self.bad), ", ".join(l for l, _ in self.bad[:20]),
            " | ".join(b[:400] for _, b in self.bad[:2]))
        T.check(not self.bad, "%s (%d checked)" % (self.what, self.n), detail)


def section(fn):
    """Run one part of the suite; an exception is one failed check."""
    try:
        fn()
    except Exception as e:  # keep going: later sections still tell something
        T.crash(fn.__name__, e)


# ---------------------------------------------------------------- checks
def preflight():
    r = bt.get("/compute")
    if not T.check(r.status == 200, "server answers /compute", r.brief()):
        T.finish()
    conf = open(os.path.join(bt.VAR, "httpd", "httpd.conf")).read()
    mpm = bt.ENV.get("BLOG_MPM", "event")
    fast = "On" if bt.ENV.get("BLOG_FASTPATH", "off").lower() == "on" else "Off"
    T.check("mpm_%s_module" % mpm in conf, "httpd.conf loads the %s MPM" % mpm)
    T.check(re.search(r"(?mi)^\s*BlogFastPath\s+%s\b" % fast, conf) is not None,
            "httpd.conf has BlogFastPath %s" % fast)
    kids = bt.children()
    T.check(kids, "Apache has children", "none under %d" % bt.httpd_pid())
    # the MPM the running children really use, not just the file
    maps = open("/proc/%d/maps" % kids[0]).read() if kids else ""
    T.check("mod_mpm_%s.so" % mpm in maps, "running children use the %s MPM" % mpm,
            ", ".join(sorted(set(re.findall(r"mod_mpm_\w+\.so", maps)))))
    sched = bt.ENV["BLOG_SCHED"]
    want = os.SCHED_BATCH if sched == "batch" else os.SCHED_OTHER
    found = policies([bt.httpd_pid()] + kids)
    T.check(found == {want}, "every Apache thread runs under BLOG_SCHED=%s" % sched,
            "policies found: %s" % sorted(found))


def policies(pids):
    """The scheduling policies of every thread of the processes pids."""
    found = set()
    for pid in pids:
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:         # a child that ended meanwhile
            continue
        for tid in tids:
            try:
                found.add(os.sched_getscheduler(int(tid)))
            except OSError:     # a thread that ended meanwhile
                pass
    return found


def reference_vs_golden():
    probs = ref.check_golden()
    T.check(not probs, "reference renderer reproduces every golden file",
            "; ".join(probs))
    if probs:
        T.note("the reference renderer is wrong; its comparisons below are void")


def golden_pages():
    """Each MANIFEST page read to EOF: the exact bytes, length and headers."""
    for status, path, name, digest in ref.manifest():
        gold = open(os.path.join(ref.golden_dir(), name), "rb").read()
        with Conn() as c:
            c.send(bt.build("GET", path, [("Connection", "close")]))
            raw = c.read_all()
        head, sep, body = raw.partition(b"\r\n\r\n")
        fake = Conn.__new__(Conn)
        fake.buf, fake.used, fake.sock = raw, 0, None
        try:
            r = fake.read_response()
        except Exception as e:
            T.check(False, "golden %s" % path, "unparsable response %r: %s" % (raw[:200], e))
            continue
        p = page_problems(r, status, gold, xcache=None)
        if len(body) != len(gold):
            p.append("%d bytes after the headers until EOF, want %d" % (len(body), len(gold)))
        if bt.sha(body) != digest:
            p.append("sha256 %s, MANIFEST %s" % (bt.sha(body)[:16], digest[:16]))
        T.check(not p, "golden %s (%s)" % (path, name), "; ".join(p))


def all_pages():
    """Every page the seed implies, uncached and cached, byte for byte."""
    bt.flush_page_keys()
    with Conn() as c:
        for what, paths in (
                ("detail pages /post/post-1..1000",
                 ["/post/post-%d" % p for p in range(1, ref.NPOSTS + 1)]),
                ("tag pages /tag/tag-1..30",
                 ["/tag/tag-%d" % t for t in range(1, ref.NTAGS + 1)]),
                ("index and compute", ["/", "/compute"])):
            g = Group(what)
            for path in paths:
                st, body = expected(path)
                g.add(path, page_problems(c.request("GET", path), st, body))
            g.done()
        misses = Group("cached variants /cached and /post/post-N/cached, all MISS")
        hits = Group("cached variants /cached and /post/post-N/cached, then all HIT")
        canary = DropCanary()
        dropped = 0
        for path in ["/"] + ["/post/post-%d" % p for p in range(1, ref.NPOSTS + 1)]:
            cpath = "/cached" if path == "/" else path + "/cached"
            st, body = expected(path)
            misses.add(cpath, page_problems(c.request("GET", cpath), st, body, "MISS"))
            hit = c.request("GET", cpath)
            # the invalidation listener dropped every page key in between
            # (its drop when Apache started, repeated BlogQueryTimeout +
            # BlogRedisTimeout later; another after Redis timed out on a
            # busy machine): stored again, then a hit
            while hit.get("x-cache") == "MISS" and canary.dropped() and dropped < 50:
                dropped += 1
                canary.plant()
                c.request("GET", cpath)
                hit = c.request("GET", cpath)
            hits.add(cpath, page_problems(hit, st, body, "HIT"))
        canary.remove()
        misses.done()
        hits.done()
        if dropped:
            T.note("cached variants: %d asked again after the listener dropped every page key"
                   % dropped)


class DropCanary:
    """A page key of no page: the invalidation listener's drop of every
    page key takes it too, so its absence says that a drop happened."""

    KEY = "blog:page:/post/zz-drop-canary"

    def __init__(self):
        self.plant()

    def plant(self):
        bt.redis_cmd("SET", self.KEY, "canary", "EX", "600")

    def dropped(self):
        return bt.redis_cmd("EXISTS", self.KEY) == 0

    def remove(self):
        bt.redis_cmd("DEL", self.KEY)


def database_consistency():
    want = ref.totals()
    row = bt.psql("SELECT (SELECT count(*) FROM blog.authors), (SELECT count(*) FROM blog.tags),"
                  " (SELECT count(*) FROM blog.posts), (SELECT count(*) FROM blog.post_tags),"
                  " (SELECT count(*) FROM blog.comments)")[0]
    got = dict(zip(("authors", "tags", "posts", "post_tags", "comments"), map(int, row)))
    T.check(got == want, "database counts match the seed", "%r vs %r" % (got, want))

    # comments per post, from the database, against what the pages show
    rows = bt.psql("SELECT p.slug, count(c.id) FROM blog.posts p LEFT JOIN blog.comments c"
                   " ON c.post_id = p.id WHERE p.id IN (1,2,20,21,22,31,42,100,399,500,777,"
                   "998,999,1000) GROUP BY p.slug")
    g = Group("comment counts of sampled detail pages equal the database's")
    with Conn() as c:
        for slug, n in rows:
            body = c.request("GET", "/post/" + slug).body.decode("utf-8", "replace")
            shown = body.count('<div class="comment">')
            h2 = re.search(r"<h2>(\d+) comments?</h2>", body)
            p = []
            if shown != int(n) or not h2 or int(h2.group(1)) != int(n):
                p.append("page shows %d comments (h2 %r), database has %s"
                         % (shown, h2 and h2.group(0), n))
            g.add(slug, p)
        g.done()

        rows = bt.psql("SELECT t.slug, count(*) FROM blog.tags t JOIN blog.post_tags pt"
                       " ON pt.tag_id = t.id GROUP BY t.slug")
        g = Group("post counts of every tag page equal the database's")
        for slug, n in rows:
            body = c.request("GET", "/tag/" + slug).body.decode("utf-8", "replace")
            g.add(slug, [] if body.count("<article>") == int(n) else
                  ["%d cards, database has %s" % (body.count("<article>"), n)])
        g.done()

        latest = [r[0] for r in bt.psql("SELECT slug FROM blog.posts ORDER BY published_at DESC,"
                                         " id DESC LIMIT 20")]
        shown = re.findall(r'<h2><a href="/post/([^"]+)">',
                           c.request("GET", "/").body.decode("utf-8", "replace"))
        T.check(shown == latest, "index lists the database's 20 latest posts in order",
                "%r vs %r" % (shown, latest))


def reads_database_every_request():
    """Change a title in PostgreSQL: uncached pages show it at once; the
    cached one too once the invalidation listener deleted its key (within
    1 s), or, with BlogInvalidate Off, keeps the stored bytes until the key
    goes."""
    p = 990
    slug = "post-%d" % p
    key = "blog:page:/post/" + slug
    orig = bt.psql("SELECT title FROM blog.posts WHERE id = %d" % p)[0][0]
    T.check(orig == ref.post(p)["title"], "title of %s in the database is the seed's" % slug,
            "%r" % orig)
    edited = orig + ' <e2e & "edit">'
    bt.redis_cmd("DEL", key)
    before = bt.get("/post/%s/cached" % slug)
    check_page("/post/%s/cached before the edit" % slug, before, 200, ref.render_post(p), "MISS")
    try:
        bt.psql("UPDATE blog.posts SET title = :'t' WHERE id = %d" % p, {"t": edited})
        titles = {p: edited}
        check_page("/post/%s shows the edited title at once" % slug,
                   bt.get("/post/" + slug), 200, ref.render_post(p, edited))
        check_page("/ shows the edited title at once", bt.get("/"), 200,
                   ref.render_index(titles))
        t = ref.post_tags(p)[0]
        check_page("/tag/tag-%d shows the edited title at once" % t,
                   bt.get("/tag/tag-%d" % t), 200, ref.render_tag(t, titles))
        if bt.invalidating():
            T.check(bt.wait_for(lambda: bt.get("/post/%s/cached" % slug).body
                                == ref.render_post(p, edited), 1.0 + bt.MARGIN, 0.01),
                    "/post/%s/cached shows the edited title within %.0f s "
                    "(the listener deleted its key)" % (slug, 1.0 + bt.MARGIN))
        else:
            check_page("/post/%s/cached still serves the stored page" % slug,
                       bt.get("/post/%s/cached" % slug), 200, ref.render_post(p), "HIT")
            bt.redis_cmd("DEL", key)
            check_page("/post/%s/cached after DEL rebuilds from the edit" % slug,
                       bt.get("/post/%s/cached" % slug), 200, ref.render_post(p, edited),
                       "MISS")
    finally:
        bt.psql("UPDATE blog.posts SET title = :'t' WHERE id = %d" % p, {"t": orig})
        bt.redis_cmd("DEL", key)
        bt.settle_invalidation()
    check_page("/post/%s after restoring the title" % slug, bt.get("/post/" + slug), 200,
               ref.render_post(p))


def cache_semantics():
    for path, cpath in (("/post/post-7", "/post/post-7/cached"), ("/", "/cached")):
        key = "blog:page:" + path
        body = expected(path)[1]
        bt.redis_cmd("DEL", key)
        check_page("%s first request after DEL" % cpath, bt.get(cpath), 200, body, "MISS")
        check_page("%s second request" % cpath, bt.get(cpath), 200, body, "HIT")
        ttl = bt.redis_cmd("TTL", key)
        T.check(isinstance(ttl, int) and 0 < ttl <= 60, "%s has a TTL in (0, 60]" % key,
                "TTL %r" % ttl)
        stored = bt.redis_cmd("GET", key)
        T.check(stored == body, "%s holds the exact body bytes" % key,
                excerpt(stored, body))
    # the stored bytes are what a hit serves, whatever they are
    key = "blog:page:/post/post-8"
    planted = ref.render_post(8).replace(b"Post 8:", b"Post 8 (planted):")
    bt.redis_cmd("SET", key, planted, "EX", "60")
    try:
        check_page("a hit serves the stored bytes as they are", bt.get("/post/post-8/cached"),
                   200, planted, "HIT")
    finally:
        bt.redis_cmd("DEL", key)

    slug = "no-such-post-e2e"
    key = "blog:page:/post/" + slug
    bt.redis_cmd("DEL", key)
    check_page("well-formed unknown slug on /cached", bt.get("/post/%s/cached" % slug),
               404, NOT_FOUND, "MISS")
    T.check(bt.redis_cmd("EXISTS", key) == 0, "a 404 is not stored", key)
    for bad in ("/post/Bad_Slug/cached", "/post/%s/cached" % ("a" * 65),
                "/post/post-1%27/cached"):
        check_page("malformed slug %s" % bad, bt.get(bad), 404, NOT_FOUND, None)
    keys = bt.redis_cmd("KEYS", "blog:page:*Bad*") + bt.redis_cmd("KEYS", "blog:page:*aaaa*")
    T.check(not keys, "malformed slugs store nothing", repr(keys))
    for path in ("/", "/post/post-1", "/tag/tag-1", "/compute", "/post/nope", "/nope"):
        r = bt.get(path)
        T.check(r.get("x-cache") is None, "uncached route %s has no X-Cache" % path,
                repr(r.all("x-cache")))
    # the query string is no part of the key
    bt.redis_cmd("DEL", "blog:page:/post/post-2")
    r = bt.get("/post/post-2/cached?utm=x&a=b")
    check_page("/post/post-2/cached?utm=x&a=b", r, 200, expected("/post/post-2")[1], "MISS")
    T.check(bt.redis_cmd("EXISTS", "blog:page:/post/post-2") == 1,
            "the key of a request with a query string is the bare path",
            repr(bt.redis_cmd("KEYS", "blog:page:/post/post-2*")))


def methods():
    bt.redis_cmd("DEL", "blog:page:/post/post-9")
    for path in ("/", "/post/post-1", "/tag/tag-1", "/cached", "/post/post-9/cached",
                 "/compute"):
        for m in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW"):
            body = b"a=1&b=2" if m in ("POST", "PUT", "PATCH") else b""
            with Conn() as c:
                r = c.request(m, path, body=body)
                p = []
                want = 200 if m == "OPTIONS" else 405
                if r.status != want:
                    p.append("status %d" % r.status)
                if r.all("allow") != ["GET, HEAD"]:
                    p.append("Allow %r" % r.all("allow"))
                if r.all("content-length") != ["0"] or r.body:
                    p.append("Content-Length %r, %d body bytes"
                             % (r.all("content-length"), len(r.body)))
                if r.chunked:
                    p.append("chunked")
                # the body sent must not be read as the next request
                if r.keeps_alive():
                    nxt = c.request("GET", "/compute")
                    if nxt.status != 200 or nxt.body != expected("/compute")[1]:
                        p.append("next request on the connection: " + nxt.brief())
                T.check(not p, "%s %s -> %d, Allow: GET, HEAD" % (m, path, want),
                        "; ".join(p))
    T.check(bt.redis_cmd("EXISTS", "blog:page:/post/post-9") == 0,
            "other methods on a cached route touch no cache", "blog:page:/post/post-9")


def head_requests():
    bt.get("/cached")
    bt.get("/post/post-1/cached")
    skip = {"date", "keep-alive", "connection"}
    for path in ("/", "/post/post-1", "/tag/tag-5", "/compute", "/cached",
                 "/post/post-1/cached", "/post/nope", "/post/Bad"):
        with Conn() as c:
            g = c.request("GET", path)
            c.send(bt.build("HEAD", path) + bt.build("GET", "/compute"))
            h = c.read_response(head=True)
            # if HEAD sent a body, the next "response" starts with it
            try:
                nxt = c.read_response()
                nxt_ok = nxt.status == 200 and nxt.body == expected("/compute")[1]
                nxt_txt = nxt.brief()
            except Exception as e:
                nxt_ok, nxt_txt = False, "%s: %s" % (type(e).__name__, e)
            gh = [(k, v) for k, v in g.headers if k not in skip]
            hh = [(k, v) for k, v in h.headers if k not in skip]
            p = []
            if h.status != g.status:
                p.append("status %d, GET %d" % (h.status, g.status))
            if sorted(hh) != sorted(gh):
                p.append("headers %r, GET %r" % (hh, gh))
            if h.get("content-length") != str(len(g.body)):
                p.append("Content-Length %r, GET body %d" % (h.get("content-length"), len(g.body)))
            if not nxt_ok:
                p.append("HEAD leaked a body: the next response was " + nxt_txt)
            T.check(not p, "HEAD %s matches GET, no body" % path, "; ".join(p))


def query_strings():
    g = Group("query strings are ignored")
    for path, q in (("/", "?a=1"), ("/", "?"), ("/post/post-3", "?x=y&z"),
                    ("/tag/tag-3", "?page=2"), ("/compute", "?limit=10"),
                    ("/post/nope", "?q=1"), ("/post/post-3", "?%00%2F../x")):
        st, body = expected(path)
        g.add(path + q, page_problems(bt.get(path + q), st, body))
    g.done()


def body_on_get():
    """A GET with a body (docs/CONTRACT.md section 2.1): answered without
    reading it, with Connection: close, and nothing after: neither the body
    nor a request pipelined behind it is ever parsed as a request."""
    chunked = b"5\r\nhello\r\n0\r\n\r\n"
    for label, headers, body in (
            ("5-byte body", [("Content-Length", "5")], b"hello"),
            ("body that looks like a request",
             [("Content-Length", str(len(bt.build("GET", "/tag/tag-2"))))],
             bt.build("GET", "/tag/tag-2")),
            ("chunked body", [("Transfer-Encoding", "chunked")], chunked)):
        with Conn() as c:
            c.send(bt.build("GET", "/post/post-1", headers) + body
                   + bt.build("GET", "/compute"))
            rs = []
            try:
                while True:
                    rs.append(c.read_response())
            except (bt.ClosedEarly, ConnectionError, socket.timeout, ValueError):
                pass
            p = []
            if len(rs) != 1:
                p.append("%d responses, want 1: %s" % (len(rs), [r.status for r in rs]))
            if rs:
                p += page_problems(rs[0], 200, expected("/post/post-1")[1])
                if rs[0].keeps_alive():
                    p.append("Connection: %r, want close" % rs[0].get("connection"))
            T.check(not p, "GET with a %s, then a pipelined GET: one answer, then closed"
                    % label, "; ".join(p))


BAD_PATHS = [
    "/compute/", "/cached/", "/post/post-1/", "/tag/tag-1/", "/post/post-1/cached/",
    "//", "//compute", "/post//post-1", "/post/post-1//cached",
    "/post/", "/post", "/tag/", "/tag", "/post/post-1/x", "/post/post-1/cached/x",
    "/cachedx", "/computex", "/index.html", "/post/post-1.html",
    "/POST/post-1", "/post/Post-1", "/Compute", "/CACHED", "/Post/post-1/cached",
    "/post/" + "a" * 65, "/tag/" + "b" * 65,
    "/post/%2e%2e", "/post/%2e%2e/compute", "/%2e%2e/compute", "/post/%2E%2E/%2E%2E/compute",
    "/post%2Fpost-1", "/post/post-1%2Fcached", "/post/post-1%2fcached",
    "/post/post-1%00", "/post/%00", "/compute%00",
    "/post/%70ost-1", "/%70ost/post-1", "/c%61ched", "/%63ompute", "/tag/tag%2D1",
    "/post/../compute", "/post/./post-1", "/./compute", "/tag/../cached",
    "/post/caf\u00e9", "/post/caf%C3%A9", "/tag/tag-1\u200b", "/post/\u6570\u636e",
    "/post/post-1'", "/post/post-1'%20OR%20'1'='1", "/post/'%3B%20DROP%20TABLE%20blog.posts%3B--",
    "/post/post-1%22", "/tag/tag-1';--", "/post/post-1;x", "/post/post-1\\",
    "/post/post-1%", "/post/post-1%zz", "/post/post-1%20", "/post/-1%0d%0aX-Injected:%201",
    "/post/post-1/../post-2", "/post/post_1", "/post/post-1.", "/tag/tag-1,tag-2",
]
# well formed, but no row: these do reach the database, and must be 404 too
UNKNOWN = ["/post/" + "a" * 64, "/post/post-0", "/post/post-01", "/post/post-1001",
           "/post/-", "/post/--", "/tag/tag-0", "/tag/tag-31", "/tag/" + "9" * 64,
           "/post/post-99999999999999999999", "/tag/post-1", "/post/tag-1"]


def bad_paths():
    before = db_and_redis_activity()
    g = Group("malformed paths -> the 404 page, no X-Cache")
    for path in BAD_PATHS:
        raw = path.encode("utf-8")
        try:
            r = bt.fetch("GET", raw)
        except Exception as e:
            g.add(repr(path), ["%s: %s" % (type(e).__name__, e)])
            continue
        g.add(repr(path), page_problems(r, 404, NOT_FOUND, None))
    g.done()
    after = db_and_redis_activity()
    T.check(after[0] == before[0],
            "malformed paths never reach PostgreSQL (mod_blog backends' last query_start)",
            "%s -> %s" % (before[0], after[0]))
    T.check(after[1] - before[1] <= 1,
            "malformed paths never reach Redis (commands processed)",
            "%d commands between the two readings" % (after[1] - before[1] - 1))

    g = Group("well-formed unknown slugs -> the 404 page")
    for path in UNKNOWN:
        g.add(path, page_problems(bt.get(path), 404, NOT_FOUND, None))
        if path.startswith("/post/"):
            g.add(path + "/cached", page_problems(bt.get(path + "/cached"), 404, NOT_FOUND, "MISS"))
    g.done()

    # A slug past 64 characters is the blog's 404, as long as the request
    # line fits Apache's LimitRequestLine (8190 bytes by default); past it
    # core answers 414 before any module sees the request.
    check_page("65-character slug", bt.get("/post/" + "x" * 65), 404, NOT_FOUND, None)
    check_page("8000-character slug", bt.get("/post/" + "x" * 8000), 404, NOT_FOUND, None)
    r = bt.get("/post/" + "x" * 10000)
    T.check(r.status == 414, "10000-character slug (request line over LimitRequestLine) -> 414",
            r.brief())


def db_and_redis_activity():
    q = bt.psql("SELECT coalesce(max(query_start)::text, '') FROM pg_stat_activity"
                " WHERE application_name = 'mod_blog'")[0][0]
    info = bt.redis_cmd("INFO", "stats").decode()
    n = int(re.search(r"total_commands_processed:(\d+)", info).group(1))
    return q, n


ODD_REQUESTS = [
    # (label, raw bytes, allowed statuses; "0.9" allows an HTTP/0.9 answer)
    ("bare LF line ends", b"GET / HTTP/1.1\nHost: x\n\n", {200, 400}),
    ("missing version", b"GET /\r\n\r\n", {400, "0.9"}),
    ("method only", b"GET\r\n\r\n", {400}),
    ("HTTP/1.1 without Host", b"GET / HTTP/1.1\r\n\r\n", {400}),
    ("unknown protocol", b"GET / FOO/1.1\r\nHost: x\r\n\r\n", {400}),
    ("HTTP/9.9", b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", {400, 505, 200}),
    ("double spaces", b"GET  /  HTTP/1.1\r\nHost: x\r\n\r\n", {400, 200}),
    ("header without colon", b"GET / HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", {400}),
    ("header name with space", b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n", {400}),
    ("negative Content-Length", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", {400}),
    ("two Content-Lengths", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
     b"Content-Length: 2\r\n\r\nab", {400}),
    ("binary garbage", b"\x00\x01\x02\xff\xfe garbage\r\n\r\n", {400, 405, 501}),
    ("lower-case method", b"get / HTTP/1.1\r\nHost: x\r\n\r\n", {400, 405, 501}),
    ("20000-byte request line", b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
     {414}),
    ("10000-byte header", b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 10000 +
     b"\r\n\r\n", {400, 431}),
    ("200 headers", b"GET / HTTP/1.1\r\nHost: x\r\n" +
     b"".join(b"X-H%d: v\r\n" % i for i in range(200)) + b"\r\n", {400, 431}),
    ("100000-byte header block", b"GET / HTTP/1.1\r\nHost: x\r\n" +
     b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 1000) for i in range(100)) + b"\r\n",
     {400, 431}),
]


def odd_requests():
    index = expected("/")[1]
    for label, raw, allowed in ODD_REQUESTS:
        t0 = time.monotonic()
        try:
            with Conn(timeout=10) as c:
                c.send(raw)
                data = c.read_all() if "0.9" in allowed else b""
                if data and not data.startswith(b"HTTP/"):
                    ok = data == index
                    T.note("%s: answered as HTTP/0.9 (%d bytes)" % (label, len(data)))
                    T.check(ok, "odd request: %s" % label, "0.9 body " + excerpt(data, index))
                    continue
                if data:
                    fake = Conn.__new__(Conn)
                    fake.buf, fake.used, fake.sock = data, 0, None
                    r = fake.read_response()
                else:
                    r = c.read_response()
        except (bt.ClosedEarly, ConnectionError, socket.timeout, ValueError, OSError) as e:
            T.check(False, "odd request: %s" % label, "no valid answer after %.1f s: %s: %s"
                    % (time.monotonic() - t0, type(e).__name__, e))
            continue
        ok = r.status in allowed
        if ok and r.status == 200:
            ok = r.body == index
        T.check(ok, "odd request: %s -> %s" % (label, sorted(map(str, allowed))), r.brief()[:300])
    # half a request, then the client goes away
    for part in (b"GET / HT", b"GET /post/post-1 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab"):
        with Conn() as c:
            c.send(part)


def keep_alive():
    paths = ["/", "/post/post-%d", "/tag/tag-%d", "/compute", "/cached",
             "/post/post-%d/cached", "/post/nope", "/nope"]
    g = Group("200 requests on one keep-alive connection")
    with Conn() as c:
        sock = c.sock.fileno()
        for i in range(200):
            path = paths[i % len(paths)]
            if "%d" in path:
                path = path % (i % 30 + 1)
            base = path[:-len("/cached")] if path.endswith("/cached") else path
            base = "/" if path == "/cached" else base
            st, body = expected(base)
            xc = ("HIT", "MISS") if path.endswith("cached") else None
            try:
                r = c.request("GET", path)
            except Exception as e:
                g.add("#%d %s" % (i, path), ["connection lost: %s" % e])
                break
            p = page_problems(r, st, body, xc)
            if not r.keeps_alive():
                p.append("server closes the connection (Connection: %r)" % r.get("connection"))
            g.add("#%d %s" % (i, path), p)
        g.done()
        T.check(c.used == 200 and c.sock.fileno() == sock, "all 200 answered on the one connection",
                "%d answered" % c.used)

    reqs = [("GET", "/"), ("GET", "/post/post-5"), ("HEAD", "/tag/tag-5"), ("GET", "/nope"),
            ("POST", "/compute"), ("GET", "/tag/tag-21"), ("GET", "/cached"),
            ("HEAD", "/post/post-6"), ("GET", "/post/post-6/cached"), ("GET", "/compute"),
            ("GET", "/post/Bad"), ("GET", "/post/post-1000")]
    with Conn() as c:
        c.send(b"".join(bt.build(m, p) for m, p in reqs))
        g = Group("12 pipelined requests answered in order")
        for m, path in reqs:
            try:
                r = c.read_response(head=(m == "HEAD"))
            except Exception as e:
                g.add("%s %s" % (m, path), ["no response: %s" % e])
                break
            if m == "POST":
                p = [] if r.status == 405 and r.get("content-length") == "0" else [r.brief()]
            else:
                base = "/" if path == "/cached" else path.replace("/cached", "")
                st, body = expected(base)
                xc = ("HIT", "MISS") if path.endswith("cached") else None
                p = page_problems(r, st, body, xc, head=(m == "HEAD"))
            g.add("%s %s" % (m, path), p)
        g.done()
        T.check(not c.pending(), "nothing after the last pipelined response",
                repr(c.buf[:100]))


def validators():
    """Every 200 page carries a strong ETag made from its
    bytes (the same on a cache hit and a miss), a matching If-None-Match
    (or "*") gets a 304 with the ETag and no body, a stale one the page."""
    import re as _re
    for path in ("/", "/post/post-31", "/tag/tag-7", "/compute", "/cached",
                 "/post/post-31/cached"):
        a = bt.get(path)
        b = bt.get(path)
        tag = a.get("etag")
        T.check(a.status == 200 and tag is not None
                and _re.fullmatch(r'"[0-9a-f]{16}"', tag) is not None,
                "%s: a strong ETag" % path, a.brief())
        T.check(b.get("etag") == tag and b.body == a.body,
                "%s: the same ETag for the same bytes (X-Cache %s then %s)"
                % (path, a.get("x-cache"), b.get("x-cache")),
                "%r then %r" % (tag, b.get("etag")))
        for inm in (tag, '"0000000000000000", %s' % tag, "*"):
            r = bt.fetch("GET", path, headers=[("If-None-Match", inm)])
            T.check(r.status == 304 and r.body == b"" and r.get("etag") == tag,
                    "%s: If-None-Match %s -> 304 with the ETag" % (path, inm),
                    r.brief())
        r = bt.fetch("HEAD", path, headers=[("If-None-Match", tag)])
        T.check(r.status == 304, "%s: HEAD with If-None-Match -> 304" % path,
                r.brief())
        r = bt.fetch("GET", path, headers=[("If-None-Match", '"0000000000000000"')])
        T.check(r.status == 200 and r.body == a.body,
                "%s: a stale If-None-Match gets the page" % path, r.brief())
        r = bt.fetch("GET", path, headers=[("If-Match", '"0000000000000000"')])
        T.check(r.status == 412, "%s: a failed If-Match -> 412" % path,
                r.brief())
    r = bt.get("/post/nope")
    T.check(r.status == 404 and r.get("etag") is None,
            "the 404 page carries no ETag", r.brief())


def conditionals():
    """RFC 9110 13.1.3 and 13.1.4: the blog sends no Last-Modified, so
    If-Modified-Since and If-Unmodified-Since are ignored on every route,
    cached or not (httpd's ap_meets_conditions would take now as the page's
    modification time: 304 for a date in the current second, 412 for any
    past one); tried on a page that changes between the two requests, a
    cache revalidating with the first answer's Date (RFC 9111 4.3.1)."""
    past = "Sat, 01 Jan 2000 00:00:00 GMT"
    for path in ("/", "/post/post-31", "/tag/tag-7", "/compute", "/cached",
                 "/post/post-31/cached"):
        a = bt.get(path)
        T.check(a.status == 200 and a.get("last-modified") is None,
                "%s: 200 without a Last-Modified" % path, a.brief())
        for name, value in (("If-Modified-Since", a.get("date")),
                            ("If-Unmodified-Since", past)):
            for m in ("GET", "HEAD"):
                r = bt.fetch(m, path, headers=[(name, value)])
                T.check(r.status == 200 and (m == "HEAD" or r.body == a.body),
                        "%s %s with %s: %s -> 200 and the page (ignored)"
                        % (m, path, name, value), r.brief())
    p, text = 31, "e2e conditional comment"
    paths = ("/post/post-%d" % p, "/post/post-%d/cached" % p)
    first = {path: bt.get(path) for path in paths}
    try:
        bt.psql("INSERT INTO blog.comments VALUES (20031, %d, 'E2e', '%s', now())"
                % (p, text))
        if not bt.invalidating():
            bt.redis_cmd("DEL", "blog:page:/post/post-%d" % p)
        for path in paths:
            date, etag = first[path].get("date"), first[path].get("etag")
            seen = []

            def fresh():
                r = bt.fetch("GET", path, headers=[("If-Modified-Since", date)])
                seen.append(r.status)
                return r.status != 200 or text.encode() in r.body
            ok = bt.wait_for(fresh, 1.0 + bt.MARGIN, 0.01)
            T.check(ok and set(seen) == {200},
                    "%s changed: If-Modified-Since its first Date (%s) gets the "
                    "new page, never a 304" % (path, date), "statuses %s" % seen[:10])
            r = bt.fetch("GET", path, headers=[("If-None-Match", etag)])
            T.check(r.status == 200 and text.encode() in r.body
                    and r.get("etag") != etag,
                    "%s changed: If-None-Match its first ETag gets the new page"
                    % path, r.brief())
    finally:
        bt.psql("DELETE FROM blog.comments WHERE id = 20031")
        bt.redis_cmd("DEL", "blog:page:/post/post-%d" % p)
        bt.settle_invalidation()


def ranges():
    """Range over the blog's pages is httpd's byterange filter's: a range
    inside the page is a 206 with one Content-Range; one past its end a 416
    that says the page's length, Content-Range: bytes */length (RFC 9110
    15.5.17; httpd's own 416 carries none)."""
    for path in ("/", "/post/post-31", "/tag/tag-7", "/compute", "/cached",
                 "/post/post-31/cached"):
        full = bt.get(path)
        n = len(full.body)
        r = bt.fetch("GET", path, headers=[("Range", "bytes=10-19")])
        T.check(r.status == 206 and r.body == full.body[10:20]
                and r.all("content-range") == ["bytes 10-19/%d" % n],
                "%s: Range bytes=10-19 -> 206, that slice, one Content-Range" % path,
                r.brief())
        r = bt.fetch("GET", path, headers=[("Range", "bytes=%d-" % (n + 10))])
        T.check(r.status == 416 and r.all("content-range") == ["bytes */%d" % n],
                "%s: Range past the end -> 416 with Content-Range: bytes */%d"
                % (path, n), r.brief())


def main():
    log_start = bt.error_log_size()
    section(preflight)
    try:
        kids = bt.children()
    except OSError:
        kids = []
    section(reference_vs_golden)
    section(golden_pages)
    section(all_pages)
    section(database_consistency)
    section(reads_database_every_request)
    section(cache_semantics)
    section(methods)
    section(head_requests)
    section(validators)
    section(conditionals)
    section(ranges)
    section(query_strings)
    section(body_on_get)
    section(bad_paths)
    section(odd_requests)
    section(keep_alive)

    def survived():
        check_page("after everything, / is still served", bt.get("/"), 200, expected("/")[1])
        now = bt.children()
        T.check(set(kids) <= set(now), "no Apache child died during the suite",
                "before %s, after %s" % (kids, now))
        crashes = bt.crash_lines(bt.error_log_since(log_start))
        T.check(not crashes, "the error log has no crash lines",
                "%d lines, first: %s" % (len(crashes), crashes[:3]))
    section(survived)
    T.finish()


if __name__ == "__main__":
    main()

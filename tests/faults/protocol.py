# SPDX-License-Identifier: Apache-2.0
"""What an attacker sends over HTTP: smuggling, limits, pipelining, odd
request lines, paths outside the routes, and what the error pages and
headers give away.  All fast; they run in the README's test command."""

import importlib.util
import os
import re
import socket
import threading
import time

from common import (NOT_FOUND, T, bt, case, expected, figure, problems)
from blogtest import Conn

CANARY = b"GET /post/smuggled-canary HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
LEAKS = [b"Apache/", b"Debian", b"PostgreSQL", b"postgres", b"libpq", b"hiredis",
         b"mod_blog", b"pg_blog", b"/var/", b"/usr/", b"/etc/", b"/work", b"/tmp",
         b"ERROR:", b"SQLSTATE", b"at line", b"Traceback", b"127.0.0.1", b"Port "]


def e2e():
    """tests/e2e/run.py as a module, for its lists of odd requests and paths."""
    path = os.path.join(bt.HERE, "run.py")
    spec = importlib.util.spec_from_file_location("e2e_run", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def statuses(data):
    return [int(s) for s in re.findall(rb"(?:^|\n)HTTP/1\.[01] (\d{3}) ", data)]


def exchange(raw, timeout=2.0, first=None, first_timeout=None):
    """Send raw bytes on a new connection; everything the server sends until
    it closes or is quiet for `timeout`.  first: a list that gets the
    seconds until the first byte of the answer, waited for up to
    first_timeout (default: timeout)."""
    with Conn(timeout=first_timeout or timeout) as c:
        t0 = time.monotonic()
        try:
            c.send(raw)
        except OSError:
            pass
        try:
            c._fill()
        except (OSError, socket.timeout):
            pass
        if first is not None:
            first.append(time.monotonic() - t0)
        c.sock.settimeout(timeout)
        return c.read_all()     # what _fill read is in c.buf, read_all adds the rest


def head(version=b"HTTP/1.1", path=b"/compute"):
    return b"GET " + path + b" " + version + b"\r\nHost: x\r\n"


def smuggling_variants():
    z = b"0\r\n\r\n" + CANARY
    chunk = b"%x\r\n" % len(CANARY) + CANARY + b"\r\n0\r\n\r\n"
    v = [
        ("CL.TE", head() + b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n" % len(z) + z),
        ("TE.CL", head() + b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n\r\n"
         % (len(b"%x" % len(CANARY)) + 2) + chunk),
        ("TE xchunked", head() + b"Transfer-Encoding: xchunked\r\nContent-Length: %d\r\n\r\n"
         % len(z) + z),
        ("TE chunked, identity", head() + b"Transfer-Encoding: chunked, identity\r\n"
         b"Content-Length: %d\r\n\r\n" % len(z) + z),
        ("two TE headers", head() + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n"
         b"Content-Length: %d\r\n\r\n" % len(z) + z),
        ("space before colon", head() + b"Transfer-Encoding : chunked\r\nContent-Length: %d\r\n\r\n"
         % len(z) + z),
        ("obs-fold TE", head() + b"Transfer-Encoding:\r\n chunked\r\nContent-Length: %d\r\n\r\n"
         % len(z) + z),
        ("two CLs", head() + b"Content-Length: 0\r\nContent-Length: %d\r\n\r\n" % len(CANARY)
         + CANARY),
        ("CL with a sign", head() + b"Content-Length: +%d\r\n\r\n" % len(CANARY) + CANARY),
        ("CL list", head() + b"Content-Length: %d, 0\r\n\r\n" % len(CANARY) + CANARY),
        ("TE in HTTP/1.0", head(b"HTTP/1.0") + b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n\r\n"
         % len(z) + z),
        ("bare CR in a header", head() + b"X-A: 1\rTransfer-Encoding: chunked\r\n"
         b"Content-Length: %d\r\n\r\n" % len(z) + z),
        ("chunk-size overflow", head() + b"Transfer-Encoding: chunked\r\n\r\n"
         b"10000000000000000001\r\n" + CANARY + b"\r\n0\r\n\r\n"),
        ("NUL in a header", head() + b"X-A: a\x00b\r\nContent-Length: %d\r\n\r\n" % len(z) + z),
    ]
    return v


@case("smuggling", "14 variants: CL.TE, TE.CL, odd TE and CL, folding, CR, NUL")
def smuggling():
    results = {}

    def one(label, raw):
        try:
            results[label] = statuses(exchange(raw))
        except Exception as e:
            results[label] = e

    threads = [threading.Thread(target=one, args=v, daemon=True) for v in smuggling_variants()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    tally = {}
    for label, _ in smuggling_variants():
        got = results.get(label)
        if isinstance(got, Exception) or got is None:
            T.check(False, "smuggling %s" % label, "no answer: %r" % got)
            continue
        smuggled = len(got) > 1 or 404 in got
        T.check(got and not smuggled and got[0] in (200, 400, 411, 413, 501),
                "smuggling %s: one answer, the hidden request never served" % label,
                "statuses %s" % got)
        tally[got[0] if got else 0] = tally.get(got[0] if got else 0, 0) + 1
    figure("%d variants: %s; no hidden request answered"
           % (len(results), ", ".join("%d x%d" % (s, n) for s, n in sorted(tally.items()))))


@case("limits", "line > 8190, header > 8190, 101 fields; 100 fields")
def limits():
    tests = [
        ("8200-byte path", b"GET /" + b"a" * 8200 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        ("8200-byte header", b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 8200 + b"\r\n\r\n",
         400),
        ("101 header fields", b"GET / HTTP/1.1\r\nHost: x\r\n"
         + b"".join(b"X-H%d: v\r\n" % i for i in range(100)) + b"\r\n", 400),
        ("100 header fields", b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         + b"".join(b"X-H%d: v\r\n" % i for i in range(98)) + b"\r\n", 200),
    ]
    got = []
    for label, raw, want in tests:
        t0 = time.monotonic()
        # quiet for longer than the bound: a server that did not close
        # fails the check below
        data = exchange(raw, timeout=bt.MARGIN + 1.0)
        st = statuses(data)
        got.append("%s %s" % (label, st[0] if st else "-"))
        T.check(st == [want], "%s -> %d, once" % (label, want), "statuses %s" % st)
        T.check(time.monotonic() - t0 < bt.MARGIN, "%s: the server closes, not waits" % label,
                "%.1f s" % (time.monotonic() - t0))
    figure(", ".join(got))


@case("pipeline-200", "200 pipelined GETs over every route in one write")
def pipeline_200():
    paths = []
    for i in range(200):
        paths.append(["/", "/post/post-%d" % (i % 1000 + 1), "/tag/tag-%d" % (i % 30 + 1),
                      "/cached", "/post/post-%d/cached" % (i % 50 + 1), "/compute",
                      "/post/nope", "/nope"][i % 8])
    raw = b"".join(bt.build("GET", p) for p in paths)
    bad = []
    t0 = time.monotonic()
    with Conn(timeout=20) as c:
        c.send(raw)
        for i, p in enumerate(paths):
            try:
                r = c.read_response()
            except Exception as e:
                bad.append("#%d %s: %s" % (i, p, e))
                break
            want = (404, NOT_FOUND) if p == "/nope" else expected(p)
            pr = problems(r, *want)
            if pr:
                bad.append("#%d %s: %s" % (i, p, "; ".join(pr)))
        took = time.monotonic() - t0
        extra = c.pending()
    T.check(not bad, "200 pipelined answers, in order, exact", "%d bad: %s" % (len(bad), bad[:3]))
    T.check(extra == b"", "nothing after the last answer", repr(extra[:100]))
    figure("%d of 200 right in %.0f ms" % (200 - len(bad), 1000 * took))


@case("unread-body", "a body that never ends, on GET and POST: answered at once, then closed")
def unread_body():
    """No route takes a body: the blog answers without reading one and closes
    the connection (docs/CONTRACT.md section 2.1), so that a client trickling a
    body holds no worker.  Core reads a body until mod_reqtimeout's body limit
    (10 s in the stack) before it answers; each case here waits 8 s at most
    for the first byte."""
    cases = [
        ("POST /cached, Content-Length", b"POST /cached HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 100000\r\n\r\nabc", 405, "/cached"),
        ("GET /post/post-31, Content-Length", b"GET /post/post-31 HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 100000\r\n\r\nabc", 200, "/post/post-31"),
        ("GET /compute, chunked", b"GET /compute HTTP/1.1\r\nHost: x\r\n"
         b"Transfer-Encoding: chunked\r\n\r\n100\r\nabc", 200, "/compute"),
        ("POST /, Expect: 100-continue", b"POST / HTTP/1.1\r\nHost: x\r\n"
         b"Expect: 100-continue\r\nContent-Length: 100000\r\n\r\n", 405, "/"),
    ]
    slowest = 0.0
    for label, raw, status, path in cases:
        first = []
        got = exchange(raw, timeout=3.0, first=first, first_timeout=8.0)
        slowest = max(slowest, first[0])
        head_end = got.find(b"\r\n\r\n")
        head = got[:head_end].lower()
        T.check(statuses(got)[:1] == [status] and len(statuses(got)) == 1,
                "%s: one answer, %d, before the body has come" % (label, status),
                "statuses %s after %.2f s: %r" % (statuses(got), first[0], got[:120]))
        T.check(b"\r\nconnection: close" in head and b" 100 continue" not in head,
                "%s: the answer says Connection: close (no 100 Continue)" % label, repr(head[:300]))
        if status == 200:
            want = expected(path)[1]
            T.check(got[head_end + 4:] == want, "%s: the page, exact" % label,
                    "%d bytes" % (len(got) - head_end - 4))
    figure("%d requests with a body that never ends: slowest first byte %.0f ms"
           % (len(cases), 1000 * slowest))


@case("odd-lines", "the e2e suite's odd request lines and headers")
def odd_lines():
    odd = e2e().ODD_REQUESTS
    index = expected("/")[1]
    seen = {}
    slowest = 0.0
    for label, raw, allowed in odd:
        firsts = []
        try:
            data = exchange(raw, timeout=1.5, first=firsts, first_timeout=bt.MARGIN + 1)
        except OSError as e:
            data = b""
            T.check(False, "odd request %s" % label, "%s" % e)
        took = firsts[0] if firsts else 99.0
        slowest = max(slowest, took)
        st = statuses(data)
        if not st and "0.9" in allowed and data == index:
            seen["0.9"] = seen.get("0.9", 0) + 1
            continue
        T.check(len(st) == 1 and st[0] in allowed and took < bt.MARGIN,
                "odd request %s -> %s" % (label, sorted(map(str, allowed))),
                "statuses %s after %.1f s" % (st, took))
        if st:
            seen[st[0]] = seen.get(st[0], 0) + 1
    figure("%d requests: %s; slowest first byte %.0f ms" % (len(odd), ", ".join(
        "%s x%d" % (k, v) for k, v in sorted(seen.items(), key=str)), 1000 * slowest))


TRAVERSAL = ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/post/..%2f..%2fetc%2fpasswd",
             "/post/post-1/../../../etc/passwd", "//etc/passwd", "/templates/layout.html",
             "/.git/config", "/server-status", "/server-info", "/cgi-bin/test-cgi", "/.htaccess",
             "/var/log/httpd-error.log", "/mod_blog.so", "/%5c..%5c..%5cetc%5cpasswd",
             "/post/%252e%252e%252fetc", "/icons/", "/manual/", "/?x=../../etc/passwd",
             "/post/post-1?../../etc/passwd", "/tag/tag-1%3F"]


@case("paths", "malformed paths, traversal, files, Apache's own URLs")
def paths():
    mod = e2e()
    seen = {}
    bad = []
    for path in mod.BAD_PATHS + mod.UNKNOWN + TRAVERSAL:
        try:
            r = bt.fetch("GET", path.encode("utf-8"))
        except Exception as e:
            bad.append("%r: %s" % (path, e))
            continue
        seen[r.status] = seen.get(r.status, 0) + 1
        if b"root:" in r.body or b"{{" in r.body or b"[core" in r.body or b"ELF" in r.body[:4]:
            bad.append("%r: a file's content" % path)
        elif "?" in path and path.split("?")[0] in ("/", "/post/post-1"):
            if r.status != 200 or r.body != expected(path.split("?")[0])[1]:
                bad.append("%r: %s" % (path, r.brief()[:120]))
        elif r.status == 400:
            pass
        elif problems(r, 404, NOT_FOUND, None):
            bad.append("%r: %s" % (path, "; ".join(problems(r, 404, NOT_FOUND, None))))
    T.check(not bad, "paths outside the routes: the 404 page (or 400), never a file",
            "%d bad: %s" % (len(bad), " | ".join(bad[:3])))
    figure("%d paths: %s" % (sum(seen.values()), ", ".join(
        "%d x%d" % kv for kv in sorted(seen.items()))))


def error_answers():
    """(label, raw answer) of every kind of error the blog or Apache gives."""
    out = []
    for label, raw in [
            ("404", bt.build("GET", "/nope", [("Connection", "close")])),
            ("405", bt.build("POST", "/", [("Connection", "close")], b"x=1")),
            ("400 no Host", b"GET / HTTP/1.1\r\n\r\n"),
            ("400 bad header", b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n"),
            ("414", b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("501", b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"),
            ("400 bad chunk", b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
             b"zz\r\n\r\n")]:
        out.append((label, exchange(raw)))
    return out


def split(data):
    hdr, _, body = data.partition(b"\r\n\r\n")
    headers = {}
    for line in hdr.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        headers.setdefault(k.strip().lower().decode("latin-1"), []).append(
            v.strip().decode("latin-1"))
    return headers, body


@case("error-pages", "404, 405, 400s, 414, 501: no internals; charset true to the bytes")
def error_pages():
    n = 0
    charsets = set()
    for label, data in error_answers():
        headers, body = split(data)
        n += 1
        # the Server header is the server-header case's business
        rest = b"\r\n".join(line for line in data.split(b"\r\n")[1:]
                             if not line.lower().startswith(b"server:"))
        leaks = [x.decode() for x in LEAKS if x in rest]
        T.check(not leaks, "%s: the answer names no internals" % label, "%s" % leaks)
        ct = (headers.get("content-type") or [""])[0]
        m = re.search(r"charset=([\w-]+)", ct)
        T.check(m is not None, "%s: Content-Type names a charset" % label, ct)
        if m:
            charsets.add(m.group(1).lower())
            try:
                body.decode(m.group(1))
                ok = m.group(1).lower() == "utf-8" or all(b < 0x80 for b in body)
            except (LookupError, UnicodeDecodeError):
                ok = False
            T.check(ok, "%s: the body is what its charset says (or plain ASCII)" % label,
                    "%s, %d bytes" % (ct, len(body)))
    figure("%d error answers, charsets %s, none names an internal" % (n, sorted(charsets)))


@case("server-header", "the Server header of pages and errors (ServerTokens Prod)")
def server_header():
    seen = set()
    for label, data in error_answers() + [("200", exchange(bt.build("GET", "/compute", [
            ("Connection", "close")])))]:
        headers, _ = split(data)
        for v in headers.get("server", []):
            seen.add(v)
        T.check(headers.get("server", ["Apache"]) == ["Apache"],
                "%s: Server says no version or OS" % label, "%s" % headers.get("server"))
        T.check("x-powered-by" not in headers, "%s: no X-Powered-By" % label)
    figure("Server: %s" % " / ".join(sorted(seen)))


@case("options", "OPTIONS * and OPTIONS / : Allow says GET, HEAD")
def options():
    got = []
    for target in (b"*", b"/", b"/post/post-1"):
        data = exchange(b"OPTIONS " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        st = statuses(data)
        headers, body = split(data)
        allow = headers.get("allow", [])
        got.append("%s -> %s Allow %s" % (target.decode(), st[0] if st else "-",
                                          allow[0] if allow else "none"))
        T.check(len(st) == 1 and st[0] in (200, 204, 405, 501),
                "OPTIONS %s answered once" % target.decode(), "%s" % st)
        T.check(allow and re.sub(r"\s", "", allow[0]).split(",")[:2] == ["GET", "HEAD"]
                and len(allow) == 1,
                "OPTIONS %s names the methods the blog answers (Allow: GET, HEAD)"
                % target.decode(), "Allow %s" % allow)
        if body:
            T.check("content-type" in headers, "OPTIONS %s: a body has a Content-Type"
                    % target.decode())
    figure("; ".join(got))


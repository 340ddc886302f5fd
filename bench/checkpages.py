#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The check before any load (docs/CONTRACT.md section 6): every page of the
blog is fetched and compared, byte for byte, with tests/e2e/reference.py, the
project's independent renderer of docs/CONTRACT.md (itself checked against
tests/golden first).  The first difference stops the run with exit status 1.

Redis must have been flushed just before: each cached page is fetched twice
and must answer MISS, then HIT, with the uncached page's exact body.

    checkpages.py HOST PORT
"""

import http.client
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import reference  # noqa: E402

HTML = "text/html; charset=utf-8"
NOT_FOUND = ["/post/no-such-post", "/post/post-0", "/post/post-1001",
             "/post/Post-1", "/post/post-1/", "/tag/tag-31", "/tag/",
             "/nope", "/cached/", "/post/no-such-post/cached",
             "/post/post-1%31", "/post/" + "a" * 65]


class Mismatch(Exception):
    pass


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def fetch(conn, path):
    conn.request("GET", path)
    resp = conn.getresponse()
    return resp.status, resp.headers, resp.read()


def expect(conn, path, status, body, xcache=None):
    got_status, headers, got = fetch(conn, path)
    problems = []
    if got_status != status:
        problems.append("status %d, expected %d" % (got_status, status))
    if got != body:
        i = first_difference(got, body)
        problems.append("body differs at byte %d (%d bytes, expected %d): "
                        "got %r, expected %r" % (i, len(got), len(body),
                                                 got[i:i + 40], body[i:i + 40]))
    if headers.get("Content-Type") != HTML:
        problems.append("Content-Type %r" % headers.get("Content-Type"))
    if headers.get("Content-Length") != str(len(got)):
        problems.append("Content-Length %r for %d bytes"
                        % (headers.get("Content-Length"), len(got)))
    if headers.get("Transfer-Encoding"):
        problems.append("Transfer-Encoding %r" % headers["Transfer-Encoding"])
    if xcache is not None and headers.get("X-Cache") != xcache:
        problems.append("X-Cache %r, expected %r" % (headers.get("X-Cache"),
                                                   xcache))
    if problems:
        raise Mismatch("GET %s: %s" % (path, "; ".join(problems)))


def uncached_paths():
    yield "/"
    for p in range(1, reference.NPOSTS + 1):
        yield "/post/post-%d" % p
    for t in range(1, reference.NTAGS + 1):
        yield "/tag/tag-%d" % t
    yield "/compute"


def cached_path(path):
    return "/cached" if path == "/" else path + "/cached"


def check(host, port):
    problems = reference.check_golden()
    if problems:
        raise Mismatch("the reference renderer disagrees with tests/golden: "
                       + problems[0])
    conn = http.client.HTTPConnection(host, port, timeout=10)
    count = 0
    for path in uncached_paths():
        status, body = reference.render_path(path)
        expect(conn, path, status, body)
        count += 1
        if path.startswith("/post/") or path == "/":
            expect(conn, cached_path(path), status, body, "MISS")
            expect(conn, cached_path(path), status, body, "HIT")
            count += 2
    not_found = reference.render_not_found()
    for path in NOT_FOUND:
        expect(conn, path, 404, not_found)
        count += 1
    conn.close()
    return count


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: checkpages.py HOST PORT")
    try:
        n = check(sys.argv[1], int(sys.argv[2]))
    except (Mismatch, OSError, http.client.HTTPException) as e:
        print("page check FAILED: %s" % e, file=sys.stderr)
        sys.exit(1)
    print("page check: %d responses identical to the reference" % n)


if __name__ == "__main__":
    main()

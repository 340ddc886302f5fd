#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Load on a site while it is upgraded: every answer must be the golden page.

    load.py BASE_URL GOLDEN_DIR STOP_FILE [--clients N] [--max-seconds S]

N clients (default 8), each on a kept-alive HTTP/1.1 connection, GET the
pages of GOLDEN_DIR/MANIFEST in turn until STOP_FILE exists (or S seconds,
default 300, have passed) and compare each answer's status and body with
the golden page, byte for byte.

A request whose connection closed before any byte of its answer came is
sent once more on a new connection: a server may close a kept-alive
connection at any time (a graceful restart does), and an HTTP client may
retry an idempotent request then (RFC 9112, section 9.3.1).  Anything else
is a failure: an error status, a different body, a connection closed or
reset after the answer began, a retry that fails too.

Prints one line per failure (the first 20) and a last line
`requests N retried N failed N`; exits 1 when a request failed.
"""
import argparse
import http.client
import os
import sys
import threading
import time
import urllib.parse


class Client:
    def __init__(self, host, port, pages, stats, lock):
        self.host, self.port, self.pages = host, port, pages
        self.stats, self.lock = stats, lock
        self.conn = None

    def connect(self):
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=10)

    def fetch(self, path):
        """(status, body), or None when the connection closed before any
        byte of the answer; other errors raise."""
        if self.conn is None:
            self.connect()
        try:
            self.conn.request("GET", path)
        except (BrokenPipeError, ConnectionResetError):
            self.conn.close()
            self.conn = None
            return None
        try:
            resp = self.conn.getresponse()
        except http.client.RemoteDisconnected:
            # closed with no byte of a status line: http.client's own test
            self.conn.close()
            self.conn = None
            return None
        except ConnectionResetError:
            self.conn.close()
            self.conn = None
            return None
        body = resp.read()
        if resp.will_close:
            self.conn.close()
            self.conn = None
        return resp.status, body

    def one(self, status, path, golden):
        got = None
        retried = False
        try:
            got = self.fetch(path)
            if got is None:
                retried = True
                got = self.fetch(path)
        except Exception as e:      # noqa: BLE001 - any error is a failure
            got = ("error", repr(e).encode())
            if self.conn is not None:
                self.conn.close()
                self.conn = None
        with self.lock:
            self.stats["requests"] += 1
            self.stats["retried"] += retried
            if got is None:
                failure = "closed before the answer, twice"
            elif got[0] != status:
                failure = f"status {got[0]} (want {status}): {got[1][:120]!r}"
            elif got[1] != golden:
                failure = f"body of {len(got[1])} bytes differs from the golden page"
            else:
                return
            self.stats["failed"] += 1
            if self.stats["failed"] <= 20:
                print(f"FAIL {time.strftime('%H:%M:%S')} GET {path}: {failure}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("golden")
    ap.add_argument("stop_file")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--max-seconds", type=float, default=300)
    a = ap.parse_args()
    url = urllib.parse.urlsplit(a.base)
    pages = []
    with open(os.path.join(a.golden, "MANIFEST")) as f:
        for line in f:
            if line.strip():
                status, path, name = line.split()[:3]
                with open(os.path.join(a.golden, name), "rb") as g:
                    pages.append((int(status), path, g.read()))
    stats = {"requests": 0, "retried": 0, "failed": 0}
    lock = threading.Lock()
    deadline = time.monotonic() + a.max_seconds

    def run(k):
        c = Client(url.hostname, url.port or 80, pages, stats, lock)
        i = k
        while not os.path.exists(a.stop_file) and time.monotonic() < deadline:
            c.one(*pages[i % len(pages)])
            i += 1

    threads = [threading.Thread(target=run, args=(k,)) for k in range(a.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"requests {stats['requests']} retried {stats['retried']} failed {stats['failed']}")
    sys.exit(1 if stats["failed"] or not stats["requests"] else 0)


if __name__ == "__main__":
    main()

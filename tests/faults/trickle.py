#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Slow clients in a process of their own (so that they do not take the
prober's interpreter lock): N connections to 127.0.0.1:PORT, each sending
what it sends one piece a second and never finishing, and each one the
server closes opened again, so that N are trickling all along.

    trickle.py --port P --n 3000 --what hello|header --seconds S

hello: a TLS ClientHello (made by this Python's ssl module), one byte a
second; header: `GET / HTTP/1.1`, `Host:`, then a header line a second
(a slowloris).  Runs for S seconds or until SIGTERM, then prints one JSON
line: connections opened, closed by the server, the longest a connection
lived until the server closed it (seconds), how many bytes the longest-
lived sent, and how many were open at the end."""

import argparse
import json
import os
import resource
import select
import signal
import socket
import ssl
import sys
import time


def client_hello():
    """The first flight of a TLS client, as bytes."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    out = ssl.MemoryBIO()
    tls = ctx.wrap_bio(ssl.MemoryBIO(), out, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


class Trickler:
    def __init__(self, port, n, what, interval):
        self.port, self.n, self.interval = port, n, interval
        if what == "hello":
            hello = client_hello()
            self.pieces = [hello[i:i + 1] for i in range(len(hello))]
        else:
            self.pieces = [b"GET / HTTP/1.1\r\nHost: slow\r\n"] + \
                [b"X-Slow-%d: %d\r\n" % (i, i) for i in range(1, 100000)]
        self.conns = {}             # fd -> [socket, opened at, pieces sent]
        self.poller = select.poll()
        self.opened = self.closed = 0
        self.longest = 0.0
        self.longest_sent = 0
        self.stop = False

    def open_one(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", self.port))
        self.conns[s.fileno()] = [s, time.monotonic(), 0]
        self.poller.register(s.fileno(), select.POLLIN)
        self.opened += 1

    def drop(self, fd, by_server):
        s, t0, sent = self.conns.pop(fd)
        self.poller.unregister(fd)
        s.close()
        if by_server:
            self.closed += 1
            lived = time.monotonic() - t0
            if lived > self.longest:
                self.longest, self.longest_sent = lived, sent

    def send_round(self):
        for fd, c in list(self.conns.items()):
            s, _, sent = c
            if sent >= len(self.pieces):
                continue
            try:
                s.send(self.pieces[sent])
                c[2] += 1
            except (BlockingIOError, InterruptedError):
                pass            # not connected yet: the kernel's queue is full
            except OSError:
                self.drop(fd, True)

    def run(self, seconds):
        end = time.monotonic() + seconds
        while len(self.conns) < self.n:
            self.open_one()
        next_send = time.monotonic()
        while not self.stop and time.monotonic() < end:
            now = time.monotonic()
            if now >= next_send:
                self.send_round()
                next_send = now + self.interval
            for fd, ev in self.poller.poll(1000 * max(0.0, min(0.2, next_send - now))):
                if fd not in self.conns:
                    continue
                try:
                    data = self.conns[fd][0].recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    self.drop(fd, True)
            while len(self.conns) < self.n and not self.stop:
                self.open_one()
        return {"opened": self.opened, "closed_by_server": self.closed,
                "longest_s": round(self.longest, 2), "longest_sent": self.longest_sent,
                "pieces": len(self.pieces), "open_at_end": len(self.conns)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--what", choices=("hello", "header"), default="hello")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=1.0)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.n + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
    t = Trickler(a.port, a.n, a.what, a.interval)

    def stop(*_):
        t.stop = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(json.dumps(t.run(a.seconds)), flush=True)
    os._exit(0)     # the sockets go with the process


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""Hostile peers for the fault cases: a fake Redis that misbehaves on
command, and a crowd of slow HTTP clients.  Both listen or connect on
loopback only."""

import os
import select
import socket
import threading
import time

from background import Background

# Several checkouts on one machine each give their own (BLOG_FAKE_REDIS_PORT).
FAKE_REDIS_PORT = int(os.environ.get("BLOG_FAKE_REDIS_PORT", "63901"))


def _close(*socks):
    """Close each socket; one the other side or a test closed first is fine."""
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


class FakeRedis(Background):
    """A TCP server that reads RESP commands and answers as `mode` says:

    ok       GET -> nil, SCAN -> the last page of an empty keyspace, DEL -> 0,
             SET/anything else -> +OK (a well-behaved Redis: the cache
             invalidation listener SCANs and DELs after any gap)
    silent   reads, never answers
    garbage  answers bytes that are no RESP at all
    trickle  declares a 2 000 000 000-byte bulk, then sends 64 KiB every
             50 ms (each read well inside any per-read timeout) for up to
             `trickle_for` seconds, or until the client goes away
    stall    declares the same bulk, sends 100 bytes of it, then nothing

    The mode can change at any time; it applies from the next command.
    `served` counts commands seen, `sent` bytes sent."""

    OK_REPLIES = {b"GET": b"$-1\r\n", b"SCAN": b"*2\r\n$1\r\n0\r\n*0\r\n",
                  b"DEL": b":0\r\n"}

    def __init__(self, port=FAKE_REDIS_PORT, mode="ok", trickle_for=12.0):
        super().__init__()
        self.mode = mode
        self.trickle_for = trickle_for
        self.served = 0
        self.sent = 0
        self.lock = threading.Lock()
        self.conns = []
        self.ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", port))
        self.ls.listen(256)
        self.port = port

    def wake(self):
        try:
            # shutdown wakes the thread blocked in accept(); close alone does not
            self.ls.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        _close(self.ls)
        with self.lock:
            _close(*self.conns)

    def run(self):
        """Accepts connections, each served on a thread of its own."""
        while not self.stopping.is_set():
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _send(self, c, data):
        c.sendall(data)
        with self.lock:
            self.sent += len(data)

    @staticmethod
    def _command(c, buf):
        """One RESP array command from buf (reading more as needed)."""
        def need(cond):
            nonlocal buf
            while not cond():
                chunk = c.recv(65536)
                if not chunk:
                    raise EOFError
                buf += chunk

        need(lambda: b"\r\n" in buf)
        line, buf = buf.split(b"\r\n", 1)
        if not line.startswith(b"*"):
            return [line], buf
        args = []
        for _ in range(int(line[1:])):
            need(lambda: b"\r\n" in buf)
            hdr, buf = buf.split(b"\r\n", 1)
            n = int(hdr[1:])
            need(lambda: len(buf) >= n + 2)
            args.append(buf[:n])
            buf = buf[n + 2:]
        return args, buf

    def _serve(self, c):
        buf = b""
        try:
            while not self.stopping.is_set():
                args, buf = self._command(c, buf)
                with self.lock:
                    self.served += 1
                mode = self.mode
                name = args[0].upper() if args else b""
                if mode == "ok":
                    self._send(c, self.OK_REPLIES.get(name, b"+OK\r\n"))
                elif mode == "silent":
                    continue
                elif mode == "garbage":
                    self._send(c, b"\x00\xffthis is not RESP\x01\r\n%%%\r\n")
                elif mode == "stall":
                    self._send(c, b"$2000000000\r\n" + b"x" * 100)
                elif mode == "trickle":
                    self._send(c, b"$2000000000\r\n")
                    end = time.monotonic() + self.trickle_for
                    chunk = b"x" * 65536
                    while time.monotonic() < end and not self.stopping.is_set():
                        self._send(c, chunk)
                        time.sleep(0.05)
        except (EOFError, OSError, ValueError):
            pass
        finally:
            _close(c)


class SlowClients(Background):
    """n connections that each send a request's first lines, then one more
    line a second (a header field, or with body=True a line of a body its
    Content-Length says is far longer), and never finish the request: what
    a slowloris attacker does.  `open_count()` says how many the server has
    not closed yet, `answered` how many got an answer (a status line)."""

    def __init__(self, port, n=300, interval=1.0, path="/", body=False):
        super().__init__()
        self.port, self.n, self.interval = port, n, interval
        self.first = (b"POST %s HTTP/1.1\r\nHost: slow\r\nContent-Length: 1000000\r\n\r\n"
                      % path.encode() if body
                      else b"GET %s HTTP/1.1\r\nHost: slow\r\n" % path.encode())
        self.body = body
        self.socks = []
        self.closed = self.answered = 0

    def __enter__(self):
        for i in range(self.n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", self.port))
            self.socks.append(s)
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        _close(*self.socks)

    def open_count(self):
        return len(self.socks) - self.closed

    def _line(self, line):
        return (b"x" * 20 + b"\r\n") if self.body else b"X-Slow-%d: %d\r\n" % (line, line)

    def run(self):
        line = 0
        alive = set(self.socks)
        while not self.stopping.is_set() and alive:
            for s in list(alive):
                try:
                    s.send(self.first if line == 0 else self._line(line))
                except BlockingIOError:
                    pass
                except OSError:
                    alive.discard(s)
                    self.closed += 1
            line += 1
            # notice the server answering or closing a connection (poll:
            # select cannot take descriptors above 1023)
            end = time.monotonic() + self.interval
            while time.monotonic() < end and alive:
                poller = select.poll()
                by_fd = {s.fileno(): s for s in alive}
                for fd in by_fd:
                    poller.register(fd, select.POLLIN)
                ready = poller.poll(1000 * max(0, min(0.2, end - time.monotonic())))
                for fd, _ in ready:
                    s = by_fd[fd]
                    try:
                        data = s.recv(65536)
                    except OSError:
                        data = b""
                    if data.startswith(b"HTTP/"):
                        self.answered += 1
                    if not data:
                        alive.discard(s)
                        self.closed += 1

# SPDX-License-Identifier: Apache-2.0
"""What the end-to-end and fault suites share: the stack's environment, a
raw HTTP/1.1 client (so nothing is hidden or normalised by a library), a
tiny Redis client, psql, the Apache processes, and the pass/fail tally."""

import hashlib
import os
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
HOST = "127.0.0.1"
# What a loaded machine may add to any deadline a test checks: a bound is
# the deadline that is the fact (BlogQueryTimeout, BlogRedisTimeout, a
# listener's poll) plus this, never a speed.  `make bench` measures speeds.
MARGIN = 5.0


# ------------------------------------------------------------ environment
def load_env():
    """The variables scripts/env.sh exports, the caller's values winning."""
    out = subprocess.run(
        ["bash", "-c", '. "$1/scripts/env.sh" && env -0', "env", ROOT],
        check=True, stdout=subprocess.PIPE).stdout
    for item in out.split(b"\0"):
        if b"=" in item:
            k, v = item.decode().split("=", 1)
            os.environ.setdefault(k, v)
    return os.environ


ENV = load_env()
HTTP_PORT = int(ENV["BLOG_HTTP_PORT"])
REDIS_PORT = int(ENV["BLOG_REDIS_PORT"])
VAR = ENV["BLOG_VAR"]
CONTENT_TYPE = "text/html; charset=utf-8"


# ------------------------------------------------------------------ tally
class Tally:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.start = time.monotonic()

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            msg = "FAIL %s" % what
            if detail:
                msg += ": " + detail
            print(msg, flush=True)
        return ok

    def note(self, text):
        print("note: %s" % text, flush=True)

    def crash(self, what, exc):
        where = ""
        tb = traceback.extract_tb(exc.__traceback__)
        if tb:
            where = " at %s:%d" % (os.path.basename(tb[-1].filename), tb[-1].lineno)
            mine = [f for f in tb if f.filename.endswith("run.py")]
            if mine and mine[-1] is not tb[-1]:
                where += " (from %s:%d)" % (os.path.basename(mine[-1].filename), mine[-1].lineno)
        self.check(False, what, "exception %s: %s%s" % (type(exc).__name__, exc, where))

    def finish(self):
        print("%s: %.1f s" % (self.name, time.monotonic() - self.start))
        print("%d passed, %d failed" % (self.passed, self.failed), flush=True)
        sys.exit(1 if self.failed else 0)


def excerpt(got, want, width=120):
    """Where two byte strings first differ, with a little context."""
    if got is None:
        return "no body"
    n = 0
    while n < min(len(got), len(want)) and got[n] == want[n]:
        n += 1
    lo = max(0, n - 40)
    return ("%d vs %d bytes, sha256 %s vs %s; first difference at byte %d: "
            "got %r, want %r" % (len(got), len(want), sha(got)[:12],
                                 sha(want)[:12], n, got[lo:n + width - 40],
                                 want[lo:n + width - 40]))


def xcache_problems(r, xcache):
    """What is wrong with r's X-Cache: xcache None means none may be
    sent, False that any is fine, a value or a tuple of values the one
    that must be sent."""
    xc = r.all("x-cache")
    if xcache is None:
        return ["unexpected X-Cache %r" % xc] if xc else []
    if xcache is False:
        return []
    allowed = (xcache,) if isinstance(xcache, str) else tuple(xcache)
    if len(xc) != 1 or xc[0] not in allowed:
        return ["X-Cache %r, want one of %r" % (xc, allowed)]
    return []


def sha(b):
    return hashlib.sha256(b).hexdigest()


# ------------------------------------------------------------------- HTTP
class Response:
    def __init__(self):
        self.version = ""
        self.status = 0
        self.reason = ""
        self.headers = []       # [(lower-case name, value)] in order
        self.body = b""
        self.chunked = False
        self.head_bytes = b""
        self.elapsed = 0.0

    def get(self, name):
        vals = self.all(name)
        return vals[0] if vals else None

    def all(self, name):
        name = name.lower()
        return [v for k, v in self.headers if k == name]

    def keeps_alive(self):
        conn = (self.get("connection") or "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in conn
        return "close" not in conn

    def brief(self):
        return "%d %s, headers %s, %d body bytes" % (
            self.status, self.reason, self.headers, len(self.body))


class ClosedEarly(Exception):
    """The server closed the connection before the first byte of a response."""


class Conn:
    def __init__(self, timeout=10.0, port=None):
        self.port = port or HTTP_PORT
        self.timeout = timeout
        self.sock = socket.create_connection((HOST, self.port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.used = 0           # responses read on this connection

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def _line(self):
        while b"\n" not in self.buf:
            if not self._fill():
                raise ConnectionError("connection closed inside headers")
        line, self.buf = self.buf.split(b"\n", 1)
        return line + b"\n"

    def _exact(self, n):
        while len(self.buf) < n:
            if not self._fill():
                raise ConnectionError("connection closed after %d of %d body "
                                      "bytes" % (len(self.buf), n))
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def read_all(self):
        """Everything until the server closes the connection."""
        try:
            while self._fill():
                pass
        except socket.timeout:
            pass
        data, self.buf = self.buf, b""
        return data

    def pending(self, wait=0.3):
        """Bytes the server sends without being asked (should be none)."""
        self.sock.settimeout(wait)
        try:
            self._fill()
        except (socket.timeout, ConnectionError, OSError):
            pass
        finally:
            self.sock.settimeout(self.timeout)
        return self.buf

    def read_response(self, head=False):
        r = Response()
        t0 = time.monotonic()
        try:
            while not self.buf:
                if not self._fill():
                    raise ClosedEarly("connection closed before a response")
        except ConnectionResetError as e:
            raise ClosedEarly(str(e))
        status_line = self._line()
        raw = [status_line]
        parts = status_line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/"):
            raise ValueError("not a status line: %r" % status_line[:200])
        r.version = parts[0]
        r.status = int(parts[1])
        r.reason = parts[2] if len(parts) > 2 else ""
        while True:
            line = self._line()
            raw.append(line)
            if line in (b"\r\n", b"\n"):
                break
            k, _, v = line.decode("latin-1").partition(":")
            r.headers.append((k.strip().lower(), v.strip()))
        r.head_bytes = b"".join(raw)
        te = (r.get("transfer-encoding") or "").lower()
        if head or r.status in (204, 304) or 100 <= r.status < 200:
            pass
        elif "chunked" in te:
            r.chunked = True
            body = b""
            while True:
                size = int(self._line().split(b";")[0].strip(), 16)
                if size == 0:
                    while self._line() not in (b"\r\n", b"\n"):
                        pass
                    break
                body += self._exact(size)
                self._line()
            r.body = body
        elif r.get("content-length") is not None:
            r.body = self._exact(int(r.get("content-length")))
        else:
            r.body = self.read_all()
        r.elapsed = time.monotonic() - t0
        self.used += 1
        return r

    def request(self, method, path, headers=None, body=b"", head=None):
        self.send(build(method, path, headers, body))
        return self.read_response(head=(method == "HEAD") if head is None else head)


def build(method, path, headers=None, body=b"", version="HTTP/1.1"):
    if isinstance(path, str):
        path = path.encode()
    h = [("Host", "%s:%d" % (HOST, HTTP_PORT))]
    if body:
        h.append(("Content-Length", str(len(body))))
    h += list(headers or [])
    out = method.encode() + b" " + path + b" " + version.encode() + b"\r\n"
    for k, v in h:
        out += ("%s: %s\r\n" % (k, v)).encode()
    return out + b"\r\n" + body


def fetch(method, path, headers=None, body=b"", timeout=10.0):
    """One request on a fresh connection."""
    with Conn(timeout) as c:
        t0 = time.monotonic()
        r = c.request(method, path, headers, body)
        r.elapsed = time.monotonic() - t0
        return r


def get(path, timeout=10.0):
    return fetch("GET", path, timeout=timeout)


# ------------------------------------------------------------------ Redis
class Redis:
    """Just enough RESP for the tests: DEL, EXISTS, TTL, GET, KEYS."""

    def __init__(self, timeout=5.0):
        self.sock = socket.create_connection((HOST, REDIS_PORT), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError("redis error: %s" % rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError("redis closed the connection")
                self.buf += chunk
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise ValueError("bad RESP line %r" % line)

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self._reply()


def free_port():
    """A TCP port of HOST that nothing listens on now."""
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def redis_cmd(*args):
    r = Redis()
    try:
        return r.cmd(*args)
    finally:
        r.close()


def flush_page_keys():
    """Forget every cached page, so a test starts from known state."""
    r = Redis()
    try:
        keys = r.cmd("KEYS", "blog:page:*") or []
        if keys:
            r.cmd("DEL", *keys)
        return len(keys)
    finally:
        r.close()


# ------------------------------------------------------------- PostgreSQL
def psql(sql, variables=None, timeout=30):
    """Run SQL as the cluster's superuser; rows as lists of strings."""
    cmd = ["psql", "-X", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-q"]
    for k, v in (variables or {}).items():
        cmd += ["-v", "%s=%s" % (k, v)]
    p = subprocess.run(cmd + ["-f", "-"], input=sql.encode(), timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("psql failed: %s" % p.stderr.decode().strip())
    text = p.stdout.decode()
    return [line.split("\t") for line in text.splitlines() if line != ""]


def blog_backends():
    """PIDs of mod_blog's PostgreSQL connections."""
    rows = psql("SELECT pid FROM pg_stat_activity "
                "WHERE application_name = 'mod_blog' "
                "AND backend_type = 'client backend'")
    return [int(r[0]) for r in rows]


# ----------------------------------------------------------------- Apache
def httpd_pid():
    with open(os.path.join(VAR, "run", "httpd.pid")) as f:
        return int(f.read().split()[0])


def proc_stat(pid):
    """The fields of /proc/PID/stat after the command's name (state,
    ppid, ...: proc(5)'s third on), or None for a process gone."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def children(ppid=None):
    """PIDs of the Apache parent's children."""
    ppid = ppid or httpd_pid()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        fields = proc_stat(d)
        if fields is not None and int(fields[1]) == ppid:
            out.append(int(d))
    return sorted(out)


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def error_log_path():
    return os.path.join(VAR, "log", "httpd-error.log")


def error_log_size():
    try:
        return os.path.getsize(error_log_path())
    except OSError:
        return 0


def error_log_since(offset):
    try:
        with open(error_log_path(), "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def crash_lines(text):
    bad = ("segfault", "exit signal", "Segmentation", "AH00052", "AH00060",
           "double free", "corrupted")
    return [l for l in text.splitlines() if any(b in l for b in bad)]


def stack(*args, timeout=120):
    return subprocess.run([os.path.join(ROOT, "scripts", "stack.sh")] + list(args),
                          timeout=timeout, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)


def wait_for(pred, seconds, step=0.1):
    end = time.monotonic() + seconds
    while True:
        try:
            if pred():
                return True
        except Exception:
            pass
        if time.monotonic() >= end:
            return False
        time.sleep(step)


# ------------------------------------------------------ cache invalidation
def invalidating():
    """Whether the stack's Apache runs the invalidation listener."""
    return ENV.get("BLOG_INVALIDATE", "on").lower() == "on"


def settle_invalidation():
    """After a test's writes: the listener deletes each named key again
    50 ms later and once more after BlogQueryTimeout + BlogRedisTimeout
    (5 s + 0.2 s in the stack; mod_blog/invalidate.c says why); wait for
    those, so that they cannot turn a later test's HIT into a MISS."""
    if invalidating():
        time.sleep(5.4)

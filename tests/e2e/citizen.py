#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The citizen suite: what an Apache admin configures still applies to the
blog, and nothing else on the server changes.

    . scripts/env.sh && python3 tests/e2e/citizen.py [--mpm event|worker]

Needs the private stack's PostgreSQL and Redis (scripts/stack.sh start),
not its Apache: every case runs against Apache instances of its own,
each from an httpd.conf generated under var/citizen/, on ports
BLOG_CITIZEN_PORT (8150) to BLOG_CITIZEN_PORT + 4, started with
`apache2 -k start` and stopped by its PID.  The MPM is --mpm, else
BLOG_MPM, else event.  Each case asserts facts (statuses, bytes, headers,
a timeout that fires within its configured time and a generous margin,
CPU time that stays flat, a worker's state in mod_status's scoreboard); a
case that cannot run fails, none is skipped or expected to fail; a check
of what happens within a time retries when the client saw the time pass
(a note says when it never could tell).  Ends with "N passed, N failed"."""

import argparse
import atexit
import base64
import concurrent.futures
import gzip
import os
import re
import select
import shutil
import socket
import ssl
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # keep the checkout clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blogtest as bt  # noqa: E402
import echo  # noqa: E402

try:
    import h2.connection  # python3-h2: the h2c Upgrade of any page size
    import h2.events
except ImportError:
    # Debian's python3-h2 is pure Python, in Debian's path, which a python3
    # of another install (pyenv, a venv) does not search.
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import h2.connection
        import h2.events
    except ImportError:
        h2 = None

MODULES = "/usr/lib/apache2/modules"
# BLOG_CITIZEN_MODULE: another build of the module to try the suite on
MODULE = os.environ.get("BLOG_CITIZEN_MODULE") or os.path.join(
    bt.ROOT, "mod_blog", ".libs", "mod_blog.so")
BASE_PORT = int(os.environ.get("BLOG_CITIZEN_PORT", "8150"))
PORT_A = BASE_PORT          # the blog's virtual hosts, and the static one
PORT_TLS = BASE_PORT + 1    # the blog over TLS (h2 and http/1.1)
PORT_TUNNEL = BASE_PORT + 2  # CONNECT and WebSocket through mod_proxy
PORT_UNMOUNTED = BASE_PORT + 3  # the module loaded, nothing mounted
PORT_BARE = BASE_PORT + 4   # the same server without the module
KEEPALIVE_TIMEOUT = 3
HEADER_TIMEOUT = (2, 3)     # RequestReadTimeout header=2-3
MARGIN = 3.0                # on every deadline: a noisy, shared machine
CLK_TCK = os.sysconf("SC_CLK_TCK")
HOLD = 1.0                  # BlogConnectionHold of hold.test and tls.test
CREDENTIALS = ("citizen", "citizen-secret")

# The pages every case reads, and the golden file each must equal.
PAGES = [("/", "index.html"), ("/cached", "index.html"),
         ("/post/post-1", "post-1.html"), ("/post/post-1/cached", "post-1.html"),
         ("/tag/tag-7", "tag-7.html"), ("/compute", "compute.html")]

T = None


def golden(name):
    with open(os.path.join(bt.ROOT, "tests", "golden", name), "rb") as f:
        return f.read()


GOLD = {path: golden(name) for path, name in PAGES}


# ------------------------------------------------------------------- Apache
def load(*names):
    return "".join("LoadModule %s_module %s/mod_%s.so\n" % (n, MODULES, n) for n in names)


def blog_server_conf(database=None, redis=None):
    """mod_blog's server-wide directives, pointed at the private stack."""
    database = database or ("host=%s/run port=%s dbname=blog user=blog_web "
                            "application_name=mod_blog_citizen"
                            % (bt.VAR, bt.ENV["BLOG_PG_PORT"]))
    redis = redis or bt.ENV["BLOG_REDIS"]
    return """LoadModule blog_module "{module}"
BlogDatabase "{db}"
BlogRedis {redis}
BlogTemplates "{root}/templates"
BlogInvalidate Off
""".format(module=MODULE, db=database, redis=redis, root=bt.ROOT)


def blog_vhost(port, name, extra="", require="Require all granted"):
    """A name-based virtual host with the blog mounted at /."""
    return """
<VirtualHost 127.0.0.1:{port}>
    ServerName {name}
    DocumentRoot "{{dir}}/empty"
    BlogMount /
    <Location />
        # How today's module is made the handler; harmless once BlogMount
        # maps the mount to it by itself.
        SetHandler blog
        {require}
    </Location>
{extra}
</VirtualHost>
""".format(port=port, name=name, extra=extra, require=require)


class Apache:
    """One Apache of the suite's own, under var/citizen/<mpm>-<name>/."""

    def __init__(self, mpm, name, ports, body):
        self.name = name
        self.dir = os.path.join(bt.VAR, "citizen", "%s-%s" % (mpm, name))
        self.conf = os.path.join(self.dir, "httpd.conf")
        self.pidfile = os.path.join(self.dir, "httpd.pid")
        self.pid = None
        self._stop_leftover()
        shutil.rmtree(self.dir, ignore_errors=True)
        for sub in ("", "empty", "static", "cache"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
            os.chmod(os.path.join(self.dir, sub), 0o755)
        self.error_log = os.path.join(self.dir, "error.log")
        self.ports = ports
        user = "User www-data\nGroup www-data\n" if os.getuid() == 0 else ""
        head = """ServerRoot "{dir}"
ServerName 127.0.0.1
{listen}
PidFile "{dir}/httpd.pid"
DefaultRuntimeDir "{dir}"
ErrorLog "{dir}/error.log"
LogLevel warn
{user}
{mpm_module}
# A fixed two children of 8 threads: figures per child stay comparable.
StartServers            2
ServerLimit             4
ThreadsPerChild         8
MaxRequestWorkers       16
MinSpareThreads         16
MaxSpareThreads         16
MaxConnectionsPerChild  0
KeepAlive On
KeepAliveTimeout {kat}
Timeout 10
ServerTokens Prod
<Directory />
    AllowOverride None
    Require all denied
</Directory>
""".format(dir=self.dir, user=user, kat=KEEPALIVE_TIMEOUT,
           listen="".join("Listen 127.0.0.1:%d\n" % p for p in ports),
           mpm_module=load("mpm_" + mpm))
        with open(self.conf, "w") as f:
            f.write(head + body.replace("{dir}", self.dir))
        if os.getuid() == 0:
            shutil.chown(os.path.join(self.dir, "cache"), "www-data", "www-data")

    def _stop_leftover(self):
        """An instance of this name that a killed run left running: its
        pid file's process, if that is Apache with this very config."""
        try:
            with open(self.pidfile) as f:
                pid = int(f.read().split()[0])
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                mine = self.conf.encode() in f.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            return
        if mine:
            self.pid = pid
            self.stop()

    def start(self):
        """Start; None when it answers on its ports, else why not."""
        p = subprocess.run(["/usr/sbin/apache2", "-d", self.dir, "-f", self.conf,
                            "-k", "start"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        if p.returncode != 0:
            return "apache2 -k start: exit %d: %s %s" % (
                p.returncode, p.stdout.decode(errors="replace")[-600:], self.log_tail())
        _RUNNING.append(self)

        def up():
            with open(self.pidfile) as f:
                self.pid = int(f.read().split()[0])
            for port in self.ports:
                socket.create_connection((bt.HOST, port), timeout=1).close()
            return True
        if not bt.wait_for(up, 15):
            return "Apache %s does not answer on %s: %s" % (self.name, self.ports, self.log_tail())
        return None

    def stop(self):
        if self.pid is None:
            return
        try:
            os.kill(self.pid, 15)
        except ProcessLookupError:
            pass
        if not bt.wait_for(lambda: not os.path.exists("/proc/%d" % self.pid), 20):
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
        self.pid = None

    def children(self):
        return bt.children(self.pid)

    def log(self):
        try:
            with open(self.error_log, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, n=6):
        return " | ".join(self.log().splitlines()[-n:])

    def cpu_seconds(self):
        """utime + stime of every child (all threads), in seconds."""
        total = 0
        for pid in self.children():
            fields = bt.proc_stat(pid)
            if fields is not None:
                total += int(fields[11]) + int(fields[12])
        return total / CLK_TCK

    def threads(self):
        """Threads of the parent, and of each child (sorted)."""
        def count(pid):
            try:
                return len(os.listdir("/proc/%d/task" % pid))
            except OSError:
                return -1
        return count(self.pid), sorted(count(p) for p in self.children())


_RUNNING = []


@atexit.register
def _stop_all():
    for a in _RUNNING:
        a.stop()


def started(apache):
    """Start apache; False (one failed check) if it does not come up."""
    why = apache.start()
    return T.check(why is None, "Apache '%s' starts" % apache.name, why or "")


def no_crash(apache):
    crashes = bt.crash_lines(apache.log())
    T.check(not crashes, "Apache '%s': no crash in its error log" % apache.name,
            "; ".join(crashes[:3]))


# --------------------------------------------------------------------- HTTP
def request(port, host, method, path, headers=(), timeout=8.0, conn=None):
    """One request (on conn, else a fresh connection); the Response."""
    raw = "%s %s HTTP/1.1\r\nHost: %s\r\n" % (method, path, host)
    raw += "".join("%s: %s\r\n" % h for h in headers) + "\r\n"
    if conn is not None:
        conn.send(raw.encode())
        return conn.read_response(head=(method == "HEAD"))
    with bt.Conn(timeout, port=port) as c:
        c.send(raw.encode())
        return c.read_response(head=(method == "HEAD"))


def page_problem(r, path, status=200):
    """What is wrong with r as the golden page of path ('' if nothing)."""
    if r.status != status:
        return "status %d, want %d" % (r.status, status)
    if r.body != GOLD[path]:
        return "body differs: " + bt.excerpt(r.body, GOLD[path])
    return ""


def curl(args, urls):
    """[(HTTP version, status, body)] of curl's requests for urls, made on
    one connection where curl can, and curl's complaint (or '')."""
    # Each body to a file of its own: one stream would run them together.
    paths = [os.path.join(bt.VAR, "citizen", "curl-body.%d.%d" % (os.getpid(), i))
             for i in range(len(urls))]
    # (a -w format starting with @ would name a file)
    cmd = ["curl", "-sS", "--max-time", "10", "-w", "## %{http_version} %{http_code}\n"]
    cmd += list(args)
    for url, path in zip(urls, paths):
        cmd += ["-o", path, url]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    done = re.findall(r"## (\S+) (\d+)", p.stdout.decode("latin-1"))
    out = []
    for i, path in enumerate(paths):
        try:
            with open(path, "rb") as f:
                body = f.read()
            os.unlink(path)
        except OSError:
            body = b""
        ver, status = done[i] if i < len(done) else (None, "0")
        out.append((ver, int(status), body))
    return out, p.stderr.decode(errors="replace").strip()


def h2c_upgrade(port, host, path):
    """GET path with "Upgrade: h2c" (RFC 7540, 3.2) and read the answer
    to it on stream 1 of the upgraded connection: (what came back before
    the switch, the :status, the body).  curl 7.88 cannot take more than
    32 KiB of frames along with the 101 (its error 16), hence a client of
    our own for this one."""
    conn = h2.connection.H2Connection()
    settings = conn.initiate_upgrade_connection()
    with socket.create_connection((bt.HOST, port), timeout=8) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                   "Upgrade: h2c\r\nHTTP2-Settings: %s\r\n\r\n"
                   % (path, host, settings.decode())).encode())
        data = echo.read_head(s)
        if b"\r\n\r\n" not in data:
            return data, 0, b""
        head, rest = data.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            return head, 0, b""
        s.sendall(conn.data_to_send())
        status, body = 0, b""
        while True:
            for ev in conn.receive_data(rest):
                if isinstance(ev, h2.events.ResponseReceived) and ev.stream_id == 1:
                    status = int(dict(ev.headers)[b":status"])
                elif isinstance(ev, h2.events.DataReceived) and ev.stream_id == 1:
                    body += ev.data
                    conn.acknowledge_received_data(ev.flow_controlled_length, 1)
                elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)) \
                        and ev.stream_id == 1:
                    return head, status, body
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    return head, status, body
            s.sendall(conn.data_to_send())
            rest = s.recv(65536)
            if not rest:
                return head, status, body


def trickle(port, host, after_request):
    """Send a request header one byte every 0.25 s and never end it (on a
    fresh connection, or after one whole request on it); (what the server
    did: '408', 'close' or '<status>', seconds since the trickle began)."""
    s = socket.create_connection((bt.HOST, port), timeout=5)
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if after_request:
            c = bt.Conn.__new__(bt.Conn)
            c.sock, c.buf, c.used, c.timeout = s, b"", 0, 5
            r = request(port, host, "GET", "/", conn=c)
            if r.status != 200 or c.buf:
                return "first request: %s" % r.brief(), 0.0
        t0 = time.monotonic()
        s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nX-Trickle: " % host).encode())
        data, closed = b"", False
        # Past the bound nothing more is learnt: stop (today's private
        # loop would hold the connection 20 s).
        while time.monotonic() - t0 < HEADER_TIMEOUT[1] + MARGIN + 3:
            ready, _, _ = select.select([s], [], [], 0.25)
            if ready:
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    chunk = b""
                if not chunk:
                    closed = True
                    break
                data += chunk
                continue
            try:
                s.send(b"x")
            except OSError:
                closed = True
                break
        elapsed = time.monotonic() - t0
        if not data:
            return ("close" if closed else "no answer, still open"), elapsed
        m = re.match(rb"HTTP/1\.\d (\d{3})", data)
        return (m.group(1).decode() if m else repr(data[:60])), elapsed
    finally:
        s.close()


def idle_close(port, host):
    """Seconds a kept-alive connection stays open, idle, after a response
    (None if the response was wrong or it was not closed within 15 s)."""
    with bt.Conn(15, port=port) as c:
        r = request(port, host, "GET", "/", conn=c)
        if r.status != 200 or not r.keeps_alive():
            return None
        t0 = time.monotonic()
        try:
            extra = c.sock.recv(1)
        except (socket.timeout, OSError):
            return None
        return time.monotonic() - t0 if extra == b"" else None


def http09(port, path="/"):
    """What the server sends for a GET of HTTP/0.9, and how fast."""
    with bt.Conn(6, port=port) as c:
        t0 = time.monotonic()
        c.send(b"GET %s\r\n" % path.encode())
        data = c.read_all()
        return data, time.monotonic() - t0


# -------------------------------------------------------------- scenarios
def main_server(mpm, tls_dir):
    """The blog beside Apache's own features: one virtual host per feature,
    so that each case sees only its own configuration."""
    auth = """AuthType Basic
        AuthName "citizen"
        AuthBasicProvider file
        AuthUserFile "{dir}/htpasswd"
        Require valid-user"""
    body = load("authz_core", "authz_host", "authz_user", "authn_core",
                "authn_file", "auth_basic", "reqtimeout", "headers", "filter",
                "deflate", "cache", "cache_disk", "socache_shmcb", "ssl",
                "http2", "mime", "dir", "status")
    body += """
TypesConfig /etc/mime.types
RequestReadTimeout header=%d-%d,MinRate=500
Protocols h2 h2c http/1.1
CacheRoot "{dir}/cache"
""" % HEADER_TIMEOUT
    body += blog_server_conf()
    # The first virtual host on the port is the default: the one HTTP/0.9
    # (no Host header) reaches.
    body += blog_vhost(PORT_A, "plain.test")
    body += blog_vhost(PORT_A, "denied.test", require="Require all denied")
    body += blog_vhost(PORT_A, "ip.test", require="Require ip 10.9.9.9")
    body += blog_vhost(PORT_A, "quick.test", require="Require all denied",
                       extra="    BlogFastPath On")
    body += blog_vhost(PORT_A, "auth.test", require=auth)
    body += blog_vhost(PORT_A, "hsts.test", extra='    Header always set '
                       'Strict-Transport-Security "max-age=63072000"')
    body += blog_vhost(PORT_A, "gzip.test",
                       extra="    AddOutputFilterByType DEFLATE text/html")
    body += blog_vhost(PORT_A, "cache.test", extra="""    CacheEnable disk /
    CacheHeader on
    CacheDetailHeader on""")
    body += """
<VirtualHost 127.0.0.1:{port}>
    ServerName static.test
    DocumentRoot "{{dir}}/static"
    <Directory "{{dir}}/static">
        Require all granted
    </Directory>
</VirtualHost>
""".format(port=PORT_A)
    # BlogConnectionHold at its maximum, where the hold case looks: the
    # blog shares its host with static files and mod_status, and an idle
    # connection outlives the hold in the keep-alive queue.
    body += """
<VirtualHost 127.0.0.1:{port}>
    ServerName hold.test
    DocumentRoot "{{dir}}/static"
    BlogMount / shared
    BlogConnectionHold 1s
    KeepAliveTimeout 10
    <Location />
        Require all granted
    </Location>
    <Location /server-status>
        SetHandler server-status
    </Location>
</VirtualHost>
""".format(port=PORT_A)
    body += blog_vhost(PORT_A, "holdoff.test",
                       extra="    BlogConnectionHold Off")
    body += blog_vhost(PORT_TLS, "tls.test", extra="""    SSLEngine on
    SSLCertificateFile "{tls}/cert.pem"
    SSLCertificateKeyFile "{tls}/key.pem"
    Protocols h2 http/1.1
    BlogConnectionHold 1s""".format(tls=tls_dir))
    a = Apache(mpm, "main", [PORT_A, PORT_TLS], body)
    with open(os.path.join(a.dir, "static", "index.html"), "wb") as f:
        f.write(STATIC_INDEX)
    with open(os.path.join(a.dir, "static", "a.txt"), "wb") as f:
        f.write(STATIC_TXT)
    for n in ("index.html", "a.txt"):
        os.chmod(os.path.join(a.dir, "static", n), 0o644)
    htpasswd = os.path.join(a.dir, "htpasswd")
    subprocess.run(["htpasswd", "-cbB", "-C", "4", htpasswd] + list(CREDENTIALS),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(htpasswd, 0o644)
    return a


STATIC_INDEX = b"<!doctype html><title>static</title><p>static vhost</p>\n"
STATIC_TXT = b"a static file, served by core\n" * 10


def make_certificate(d):
    """A self-signed certificate for 127.0.0.1, made for this run."""
    os.makedirs(d, exist_ok=True)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", os.path.join(d, "key.pem"),
                    "-out", os.path.join(d, "cert.pem")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=30)


# ------------------------------------------------------------------- cases
def case(fn):
    """Run one case; an exception is one failed check, the suite goes on."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any failure is a finding
        T.crash(fn.__name__, e)


def access_control():
    """Require all denied, Require ip and Basic auth over the mount."""
    for host, want in (("denied.test", 403), ("ip.test", 403), ("auth.test", 401)):
        for path in GOLD:
            r = request(PORT_A, host, "GET", path)
            T.check(r.status == want, "%s (Require of %s): GET %s -> %d" % (host, host, path, want),
                    "got %d, %d body bytes%s" % (r.status, len(r.body),
                                                 " (the page itself)" if r.body == GOLD[path] else ""))
    # Dot segments, "//" and escapes that core accepts go through access
    # control like any path; only what core rejects before it (a bad escape,
    # %2F, %00, a path above the root) is the blog's 404 from quick_handler.
    for path in ("/post/../post-1", "//", "/post/%41", "/./compute"):
        r = request(PORT_A, "denied.test", "GET", path)
        T.check(r.status == 403, "denied.test: GET %s -> 403, access control first" % path,
                "got %d" % r.status)
    for path in ("/post%2Fpost-1", "/post/post-1%00", "/post/post-1%zz", "/%2e%2e/compute"):
        r = request(PORT_A, "denied.test", "GET", path)
        T.check(r.status == 404 and r.body == golden("not-found.html"),
                "denied.test: GET %s (core rejects it before access control) -> "
                "the blog's 404 page" % path, "got %d, %d bytes" % (r.status, len(r.body)))
    good = "Basic " + base64.b64encode(("%s:%s" % CREDENTIALS).encode()).decode()
    bad = "Basic " + base64.b64encode(b"citizen:wrong").decode()
    for path in GOLD:
        r = request(PORT_A, "auth.test", "GET", path, [("Authorization", good)])
        p = page_problem(r, path)
        T.check(not p, "auth.test: GET %s with valid credentials -> 200 and the golden page" % path, p)
        r = request(PORT_A, "auth.test", "GET", path, [("Authorization", bad)])
        T.check(r.status == 401, "auth.test: GET %s with a wrong password -> 401" % path,
                "got %d" % r.status)


def fast_path_warning(apache):
    """BlogFastPath On, the documented opt-in, answers from quick_handler
    before access control; where Require covers the mount it says so in
    the error log, once per child, not per request."""
    for _ in range(6):
        r = request(PORT_A, "quick.test", "GET", "/")
        T.check(r.status == 200 and r.body == GOLD["/"],
                "quick.test (BlogFastPath On, Require all denied): GET / -> the page, "
                "as documented", r.brief()[:200])
    def warned():
        return [l for l in apache.log().splitlines()
                if "BLOG00006" in l and "(a request for it would get 403)" in l]
    bt.wait_for(warned, 5)
    n = len(warned())
    T.check(1 <= n <= len(apache.children()) + 1,
            "quick.test: BLOG00006 warns that access control covers the fast path, "
            "at most once per child", "%d such lines: %s" % (n, apache.log_tail()))


def header_always_set():
    for path in list(GOLD) + ["/post/no-such-post"]:
        r = request(PORT_A, "hsts.test", "GET", path)
        hsts = r.all("strict-transport-security")
        T.check(hsts == ["max-age=63072000"],
                "Header always set: GET %s carries Strict-Transport-Security" % path,
                "got %r (status %d)" % (hsts, r.status))


def deflate():
    for path in GOLD:
        r = request(PORT_A, "gzip.test", "GET", path, [("Accept-Encoding", "gzip")])
        ce = r.all("content-encoding")
        if not T.check(r.status == 200 and ce == ["gzip"],
                       "mod_deflate: GET %s -> 200, Content-Encoding gzip" % path,
                       "status %d, Content-Encoding %r" % (r.status, ce)):
            continue
        try:
            plain = gzip.decompress(r.body)
        except (OSError, EOFError) as e:
            plain = b"(not gzip: %s)" % str(e).encode()
        T.check(plain == GOLD[path],
                "mod_deflate: GET %s gunzips to the golden page byte for byte (%d -> %d bytes)"
                % (path, len(GOLD[path]), len(r.body)), bt.excerpt(plain, GOLD[path]))
        vary = ",".join(r.all("vary")).lower()
        T.check("accept-encoding" in vary, "mod_deflate: GET %s says Vary: Accept-Encoding" % path,
                "Vary %r" % r.all("vary"))
    r = request(PORT_A, "gzip.test", "GET", "/")
    p = page_problem(r, "/") or ("Content-Encoding %r" % r.get("content-encoding")
                                 if r.get("content-encoding") else "")
    T.check(not p, "mod_deflate: without Accept-Encoding / is the golden page, not encoded", p)


def disk_cache():
    for path in ("/", "/post/post-1", "/tag/tag-7", "/compute"):
        first = request(PORT_A, "cache.test", "GET", path)
        p = page_problem(first, path)
        T.check(not p, "mod_cache: first GET %s -> the golden page" % path, p)
        # mod_cache_disk commits the entity after the response: give it a beat
        second = None
        for _ in range(10):
            second = request(PORT_A, "cache.test", "GET", path)
            if "cache hit" in (second.get("x-cache-detail") or ""):
                break
            time.sleep(0.1)
        T.check("cache hit" in (second.get("x-cache-detail") or ""),
                "mod_cache: a later GET %s is a disk cache hit" % path,
                "first X-Cache-Detail %r, last %r; X-Cache %r" % (
                    first.get("x-cache-detail"), second.get("x-cache-detail"),
                    second.all("x-cache")))
        p = page_problem(second, path)
        T.check(not p, "mod_cache: the cached GET %s has the same bytes" % path, p)


def range_head_conditional():
    for path in ("/", "/post/post-1", "/cached", "/post/post-1/cached"):
        gold = GOLD[path]
        r = request(PORT_A, "plain.test", "GET", path, [("Range", "bytes=100-199")])
        want = "bytes 100-199/%d" % len(gold)
        T.check(r.status == 206 and r.body == gold[100:200] and r.get("content-range") == want,
                "Range: GET %s bytes=100-199 -> 206 and that slice" % path,
                "status %d, Content-Range %r, body %s" % (r.status, r.get("content-range"),
                                                          bt.excerpt(r.body, gold[100:200])))
        r = request(PORT_A, "plain.test", "GET", path, [("Range", "bytes=-50")])
        T.check(r.status == 206 and r.body == gold[-50:],
                "Range: GET %s bytes=-50 -> 206 and the last 50 bytes" % path,
                "status %d, %d bytes" % (r.status, len(r.body)))
        r = request(PORT_A, "plain.test", "HEAD", path)
        T.check(r.status == 200 and r.get("content-length") == str(len(gold)) and not r.body,
                "HEAD %s -> 200, Content-Length of the page, no body" % path,
                "status %d, Content-Length %r, want %d" % (r.status, r.get("content-length"),
                                                          len(gold)))
        # After HEAD nothing may follow on the connection: read_response
        # above did not consume a body, so a stray one would show as a
        # second response's garbage; a fresh GET proves the server sane.
        full = request(PORT_A, "plain.test", "GET", path)
        p = page_problem(full, path)
        T.check(not p, "GET %s on plain.test -> the golden page" % path, p)
        etag = full.get("etag")
        T.check(etag is not None and etag.startswith('"') and etag.endswith('"'),
                "GET %s carries a strong ETag" % path, "ETag %r" % etag)
        if etag:
            r = request(PORT_A, "plain.test", "GET", path, [("If-None-Match", etag)])
            T.check(r.status == 304 and not r.body and r.get("etag") == etag,
                    "If-None-Match: the page's ETag on %s -> 304, no body, same ETag" % path,
                    "status %d, ETag %r, %d body bytes" % (r.status, r.get("etag"), len(r.body)))
            r = request(PORT_A, "plain.test", "GET", path, [("If-None-Match", '"not-it"')])
            p = page_problem(r, path)
            T.check(not p, "If-None-Match: another ETag on %s -> 200 and the page" % path, p)
        r = request(PORT_A, "plain.test", "GET", path, [("If-None-Match", "*")])
        T.check(r.status == 304 and not r.body,
                "If-None-Match: * on %s -> 304 (RFC 9110 13.1.2)" % path,
                "status %d, %d body bytes" % (r.status, len(r.body)))
        lm = full.get("last-modified")
        if lm:
            r = request(PORT_A, "plain.test", "GET", path, [("If-Modified-Since", lm)])
            T.check(r.status == 304, "If-Modified-Since its Last-Modified on %s -> 304" % path,
                    "status %d" % r.status)
    T.check(request(PORT_A, "plain.test", "GET", "/").get("etag")
            != request(PORT_A, "plain.test", "GET", "/post/post-1").get("etag")
            or request(PORT_A, "plain.test", "GET", "/").get("etag") is None,
            "two different pages have different ETags")


def http2():
    """h2c (prior knowledge, Upgrade) and h2 over TLS: the bytes of
    HTTP/1.1 and of the golden pages."""
    resolve = "plain.test:%d:127.0.0.1" % PORT_A
    for path in GOLD:
        h1 = request(PORT_A, "plain.test", "GET", path)
        p = page_problem(h1, path)
        T.check(not p, "HTTP/1.1 GET %s -> the golden page" % path, p)
        url = "http://plain.test:%d%s" % (PORT_A, path)
        got, err = curl(["--http2-prior-knowledge", "--resolve", resolve], [url])
        ver, status, body = got[0]
        T.check(ver == "2" and status == 200 and body == h1.body == GOLD[path],
                "h2c, prior knowledge: GET %s over HTTP/2, 200, the HTTP/1.1 bytes" % path,
                "HTTP version %r, status %d, %s; curl: %s" % (
                    ver, status, bt.excerpt(body, GOLD[path]), err[-200:]))
        if h2 is None:
            T.check(False, "h2c, Upgrade: GET %s" % path,
                    "python3-h2 is not installed (scripts/deps.sh test)")
        else:
            head, status, body = h2c_upgrade(PORT_A, "plain.test", path)
            T.check(head.startswith(b"HTTP/1.1 101") and status == 200
                    and body == h1.body == GOLD[path],
                    "h2c, Upgrade: GET %s switches to HTTP/2, 200 on stream 1, the HTTP/1.1 bytes"
                    % path, "before the switch %r; :status %d, %s" % (
                        head[:120], status, bt.excerpt(body, GOLD[path])))
        if len(GOLD[path]) < 30000:
            # curl's own Upgrade too, where curl can take the page
            got, err = curl(["--http2", "--resolve", resolve], [url])
            ver, status, body = got[0]
            T.check(ver == "2" and status == 200 and body == GOLD[path],
                    "h2c, Upgrade (curl --http2): GET %s over HTTP/2, 200, the golden bytes"
                    % path, "HTTP version %r, status %d, %s; curl: %s" % (
                        ver, status, bt.excerpt(body, GOLD[path]), err[-200:]))
        url = "https://127.0.0.1:%d%s" % (PORT_TLS, path)
        for how, args, want in (("h2 over TLS", ["--http2"], "2"),
                                ("http/1.1 over TLS", ["--http1.1"], "1.1")):
            got, err = curl(args + ["--cacert", CERT], [url])
            ver, status, body = got[0]
            T.check(ver == want and status == 200 and body == GOLD[path],
                    "%s: GET %s, 200, the golden bytes" % (how, path),
                    "HTTP version %r, status %d, %s; curl: %s" % (
                        ver, status, bt.excerpt(body, GOLD[path]), err[-200:]))


def request_read_timeout():
    """A trickled header: 408 (or a close) at RequestReadTimeout's time, on
    a new connection and on a kept-alive one, for the blog's virtual host
    and the static one beside it; an idle kept-alive connection closed at
    KeepAliveTimeout."""
    lo, hi = HEADER_TIMEOUT[0] - 1.0, HEADER_TIMEOUT[1] + MARGIN
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(6) as ex:
        for host in ("plain.test", "static.test"):
            for after in (False, True):
                jobs[(host, after)] = ex.submit(trickle, PORT_A, host, after)
            jobs[(host, "idle")] = ex.submit(idle_close, PORT_A, host)
        for (host, kind), fut in jobs.items():
            if kind == "idle":
                t = fut.result()
                T.check(t is not None and KEEPALIVE_TIMEOUT - 1 <= t <= KEEPALIVE_TIMEOUT + MARGIN,
                        "%s: an idle kept-alive connection closes at KeepAliveTimeout (%d s)"
                        % (host, KEEPALIVE_TIMEOUT),
                        "closed after %s s" % ("%.2f" % t if t is not None else "never (15 s) or bad response"))
                continue
            what, t = fut.result()
            T.check(what in ("408", "close") and lo <= t <= hi,
                    "%s: a trickled header on a %s connection gets 408 within "
                    "RequestReadTimeout header=%d-%d (%.1f-%.1f s)"
                    % (host, "kept-alive" if kind else "new", HEADER_TIMEOUT[0],
                       HEADER_TIMEOUT[1], lo, hi),
                    "%s after %.2f s" % (what, t))


def static_vhost():
    for path, body, ctype in (("/a.txt", STATIC_TXT, "text/plain"),
                              ("/", STATIC_INDEX, "text/html")):
        r = request(PORT_A, "static.test", "GET", path)
        T.check(r.status == 200 and r.body == body
                and (r.get("content-type") or "").startswith(ctype),
                "static.test (no BlogMount): GET %s is its file, from core" % path,
                "status %d, Content-Type %r, %s" % (r.status, r.get("content-type"),
                                                     bt.excerpt(r.body, body)))
    with bt.Conn(8, port=PORT_A) as c:
        codes = [request(PORT_A, "static.test", "GET", "/a.txt", conn=c).status
                 for _ in range(3)]
    T.check(codes == [200] * 3, "static.test: three requests on one kept-alive connection",
            "statuses %r" % codes)
    r = request(PORT_A, "static.test", "GET", "/post/post-1")
    T.check(r.status == 404 and r.body != GOLD["/post/post-1"],
            "static.test: /post/post-1 is core's 404, not the blog's page", r.brief()[:300])


def http_09(core_answer):
    """GET / of HTTP/0.9 to the blog's (default) virtual host, answered as
    core answers "GET /a.txt" of HTTP/0.9 on the same Apache without the
    module: with HttpProtocolOptions' default (Allow0.9) core serves the
    body alone and closes; were it to refuse, the blog must refuse alike."""
    if core_answer is None:
        T.check(False, "HTTP/0.9: core's answer to compare with", "the bare Apache did not run")
        return
    core, _ = core_answer
    data, t = http09(PORT_A)
    m_core = re.match(rb"HTTP/1\.\d (\d{3})", core)
    m_blog = re.match(rb"HTTP/1\.\d (\d{3})", data)
    if m_core:
        ok = m_blog is not None and m_blog.group(1) == m_core.group(1)
        want = "HTTP/1.x %s, as core" % m_core.group(1).decode()
    elif core == STATIC_TXT:
        ok = data == GOLD["/"]
        want = "the page alone, without status line or headers, as core serves HTTP/0.9"
    else:
        T.check(False, "HTTP/0.9: core answers GET /a.txt with the file or a status",
                "core: %r" % core[:120])
        return
    T.check(ok and t < 2.0, "HTTP/0.9 GET / to the blog: answered at once as core answers it (%s)" % want,
            "after %.2f s: %r (core: %r)" % (t, data[:80], core[:80]))


def scoreboard():
    """The main Apache's scoreboard from mod_status, asked on a connection
    of its own: a character per worker thread, the one answering it W."""
    r = request(PORT_A, "hold.test", "GET", "/server-status?auto",
                [("Connection", "close")])
    m = re.search(rb"^Scoreboard: (\S+)$", r.body, re.M)
    return m.group(1).decode() if m else "?"


def released(board, mpm):
    """No worker is busy but mod_status's own and, under worker, one
    waiting for a connection's next request (K): under event, a kept-alive
    connection no worker holds is in the listener's keep-alive queue."""
    return (re.sub("[_.K]", "", board) == "W"
            and (mpm == "event" or board.count("K") == 1))


def hold_probe(mpm, raw, port, tls):
    """Send raw on a connection of its own, then read the scoreboard until
    its worker is released or the answer is 0.5 s old: (the Response,
    whether it was released, the connection still open).  Only what is
    seen within HOLD of the request tells a hold from none, and a busy
    worker only once the server had time to release it: else the machine
    was too slow and it tries again; after three such tries, None."""
    for _ in range(3):
        bt.wait_for(lambda: re.sub("[_.]", "", scoreboard()) == "W", 10)
        conn = bt.Conn(8, port=port)
        if tls:
            conn.sock = ssl.create_default_context(cafile=CERT).wrap_socket(
                conn.sock, server_hostname="127.0.0.1")
        t0 = time.monotonic()
        conn.send(raw)
        r = conn.read_response()
        answered = time.monotonic()
        while True:
            asked = time.monotonic()
            free = released(scoreboard(), mpm)
            if time.monotonic() - t0 >= HOLD:
                break
            if free or asked - answered >= 0.5:
                return r, free, conn
            time.sleep(0.1)
        conn.close()
    return r, None, None


def connection_hold(mpm):
    """BlogConnectionHold 1s: under event, after the blog's answer on a
    kept-alive HTTP/1.1 connection, its worker waits there for the next
    request (state L) until the hold is over, then leaves the connection
    to the listener; after any other answer, and under worker (a thread
    reading the connection, K), it is released at once.  The scoreboard
    tells it, not ConnsAsyncKeepAlive: the listener refreshes that one
    only when a timeout of its queues expires, seconds later."""
    def get(host, path="/", version="HTTP/1.1", headers=""):
        return ("GET %s %s\r\nHost: %s\r\n%s\r\n"
                % (path, version, host, headers)).encode()
    probes = (
        ("hold.test (1s): the blog's answer", get("hold.test"), False,
         mpm == "event"),
        ("hold.test (1s): a static file", get("hold.test", "/a.txt"),
         False, False),
        ("hold.test (1s): HTTP/1.0 keep-alive",
         get("hold.test", version="HTTP/1.0",
             headers="Connection: keep-alive\r\n"), False, False),
        ("hold.test (1s): an Upgrade header", get("hold.test", headers=(
            "Upgrade: websocket\r\nConnection: Upgrade\r\n")), False, False),
        ("tls.test (1s): the blog's answer over TLS", get("tls.test"), True,
         False),
        ("holdoff.test (Off): the blog's answer", get("holdoff.test"), False,
         False))
    for what, raw, tls, held in probes:
        r, free, conn = hold_probe(mpm, raw, PORT_TLS if tls else PORT_A, tls)
        name = "BlogConnectionHold, %s (%s)" % (what, mpm)
        T.check(r.status == 200 and r.keeps_alive(),
                "%s: 200 on a kept-alive connection" % name, r.brief()[:200])
        if free is None:
            T.note("%s: the machine was too slow to tell, thrice" % name)
            continue
        T.check(free != held, "%s: %s" % (name, (
            "its worker stays on the connection < 1 s after the answer"
            if held else "its worker is released at once")),
            "released" if free else "a worker still busy 0.5 s later")
        if held and not free:
            after = bt.wait_for(lambda: released(scoreboard(), mpm), 5)
            try:
                again = request(PORT_A, "hold.test", "GET", "/a.txt",
                                conn=conn).status
            except (OSError, bt.ClosedEarly) as e:
                again = repr(e)
            T.check(after and again == 200,
                    "%s: after the hold its worker is released, the "
                    "connection kept alive answers its next request" % name,
                    "released %s, then %s" % (after, again))
        conn.close()


def tunnel_cpu(apache, what, open_tunnel, exchange):
    """Data both ways through a tunnel, then the children's CPU time flat
    while it idles and after the client has gone."""
    with open_tunnel() as (sock, backend):
        try:
            if not exchange(sock, backend):
                return      # no tunnel: nothing to idle
        except OSError as e:
            # The tunnel is open but the data stopped: idle it all the same,
            # the spin of a broken tunnel is what the CPU checks are for.
            T.check(False, "%s: data both ways" % what, "%s: %s" % (type(e).__name__, e))
        c0 = apache.cpu_seconds()
        time.sleep(3.0)
        used = apache.cpu_seconds() - c0
        T.check(used < 0.5, "%s idle 3 s: the children's CPU time grows < 0.5 s" % what,
                "%.2f s" % used)
        backend.closed.clear()
    T.check(backend.closed.wait(5), "%s: the backend connection ends after the client closes" % what)
    time.sleep(0.5)
    c0 = apache.cpu_seconds()
    time.sleep(2.0)
    used = apache.cpu_seconds() - c0
    T.check(used < 0.3, "%s closed: no thread spins (children's CPU < 0.3 s in 2 s)" % what,
            "%.2f s" % used)


class _Tunnel:
    def __init__(self, sock, backend):
        self.sock, self.backend = sock, backend

    def __enter__(self):
        return self.sock, self.backend

    def __exit__(self, *exc):
        self.sock.close()


def tunnels(apache, tcp, ws):
    def connect():
        s = socket.create_connection((bt.HOST, PORT_TUNNEL), timeout=5)
        s.sendall(("CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"
                   % (tcp.port, tcp.port)).encode())
        return _Tunnel(s, tcp)

    def connect_exchange(s, backend):
        head = echo.read_head(s)
        if not T.check(head.startswith(b"HTTP/1.1 200") or head.startswith(b"HTTP/1.0 200"),
                       "CONNECT 127.0.0.1:%d through mod_proxy_connect -> 200" % tcp.port,
                       repr(head[:200])):
            return False
        rest = head.split(b"\r\n\r\n", 1)[1]
        got = rest
        msgs = [b"ping %d\n" % i for i in range(3)]
        for m in msgs:
            s.sendall(m)
            t_end = time.monotonic() + 5
            while not got.endswith(m) and time.monotonic() < t_end:
                try:
                    chunk = s.recv(4096)
                except socket.timeout:
                    chunk = b""
                if not chunk:
                    break
                got += chunk
        want = b"".join(msgs)
        T.check(backend.received == want, "CONNECT tunnel: the client's bytes reach the backend",
                "backend got %r" % backend.received)
        T.check(got == want, "CONNECT tunnel: the backend's bytes reach the client",
                "client got %r" % got)
        return True

    ws_key = [None]

    def websocket():
        s = socket.create_connection((bt.HOST, PORT_TUNNEL), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(("GET /ws HTTP/1.1\r\nHost: ws.test\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n" % key).encode())
        ws_key[0] = key
        return _Tunnel(s, ws)

    def ws_exchange(s, backend):
        head = echo.read_head(s)
        accept = echo.ws_accept(ws_key[0]).encode()
        if not T.check(head.startswith(b"HTTP/1.1 101") and accept in head,
                       "WebSocket through mod_proxy_wstunnel -> 101 with the right "
                       "Sec-WebSocket-Accept", repr(head[:300])):
            return False
        buf = [head.split(b"\r\n\r\n", 1)[1]]
        msgs = [b"hello %d" % i for i in range(3)]
        got = []
        for m in msgs:
            s.sendall(echo.ws_frame(m))
            try:
                got.append(echo.ws_read(s, buf)[1])
            except OSError as e:
                got.append("(%s)" % type(e).__name__)
                break
        T.check(backend.received == b"".join(msgs),
                "WebSocket: the client's messages reach the backend",
                "backend got %r" % backend.received)
        T.check(got == msgs, "WebSocket: the backend's messages reach the client",
                "client got %r" % got)
        return True

    def connect_tunnel():
        tunnel_cpu(apache, "CONNECT tunnel", connect, connect_exchange)

    def blog_beside_tunnels():
        p = page_problem(request(PORT_TUNNEL, "plain.test", "GET", "/"), "/")
        T.check(not p, "the tunnel server's blog answers / with the golden page", p)

    def websocket_tunnel():
        tunnel_cpu(apache, "WebSocket", websocket, ws_exchange)

    for fn in (connect_tunnel, blog_beside_tunnels, websocket_tunnel):
        case(fn)


def tunnel_server(mpm, tcp, ws):
    body = load("authz_core", "authz_host", "reqtimeout", "proxy",
                "proxy_connect", "proxy_wstunnel")
    body += blog_server_conf()
    # CONNECT names no virtual host: it reaches the first, the blog's.
    body += blog_vhost(PORT_TUNNEL, "plain.test", extra="""    ProxyRequests On
    AllowCONNECT {tcp}
    <Proxy "*">
        Require ip 127.0.0.1
    </Proxy>""".format(tcp=tcp.port))
    # The WebSocket in a virtual host of its own beside the blog's: under
    # "BlogMount /" the blog owns every path of its host, /ws included.
    body += """
<VirtualHost 127.0.0.1:{port}>
    ServerName ws.test
    DocumentRoot "{{dir}}/empty"
    ProxyPass /ws ws://127.0.0.1:{ws}/
</VirtualHost>
""".format(port=PORT_TUNNEL, ws=ws.port)
    return Apache(mpm, "tunnel", [PORT_TUNNEL], body)


def unmounted_pair(mpm, fake_pg, fake_redis):
    """The same static server with and without the module loaded (no
    BlogMount anywhere; PostgreSQL and Redis are listeners that count)."""
    common = load("authz_core", "reqtimeout", "mime", "dir") + """
TypesConfig /etc/mime.types
DocumentRoot "{dir}/static"
<Directory "{dir}/static">
    Require all granted
</Directory>
"""
    db = ("host=127.0.0.1 port=%d dbname=blog user=blog_web connect_timeout=2 "
          "application_name=mod_blog_citizen_unmounted" % fake_pg.port)
    with_module = common + blog_server_conf(db, "127.0.0.1:%d" % fake_redis.port)
    # No BlogInvalidate line: its default is what an admin gets.
    with_module = with_module.replace("BlogInvalidate Off\n", "")
    a = Apache(mpm, "unmounted", [PORT_UNMOUNTED], with_module)
    b = Apache(mpm, "bare", [PORT_BARE], common)
    for x in (a, b):
        with open(os.path.join(x.dir, "static", "a.txt"), "wb") as f:
            f.write(STATIC_TXT)
        os.chmod(os.path.join(x.dir, "static", "a.txt"), 0o644)
    return a, b


def unmounted(a, b, fake_pg, fake_redis):
    for x, port in ((a, PORT_UNMOUNTED), (b, PORT_BARE)):
        r = request(port, "127.0.0.1", "GET", "/a.txt")
        T.check(r.status == 200 and r.body == STATIC_TXT,
                "Apache '%s' serves its static file" % x.name, r.brief()[:300])
    # Every child has started its threads (and would have opened its pool)
    # by now; give a slow machine time to agree.
    bt.wait_for(lambda: a.threads() == b.threads(), 5)
    ta, tb = a.threads(), b.threads()
    T.check(ta == tb, "module loaded, nothing mounted: the same threads as without it "
            "(parent, each child)", "with %r, without %r" % (ta, tb))
    time.sleep(0.5)
    T.check(fake_pg.accepted == 0,
            "module loaded, nothing mounted: no connection to PostgreSQL",
            "%d connections" % fake_pg.accepted)
    T.check(fake_redis.accepted == 0,
            "module loaded, nothing mounted: no connection to Redis",
            "%d connections" % fake_redis.accepted)
    lines = [l for l in a.log().splitlines() if "[blog" in l]
    T.check(not lines, "module loaded, nothing mounted: no error log line from the module",
            "%d lines: %s" % (len(lines), " | ".join(lines[:3])))


# -------------------------------------------------------------------- main
CERT = None


def main():
    global T, CERT
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpm", default=os.environ.get("BLOG_MPM", "event"),
                    choices=("event", "worker"))
    mpm = ap.parse_args().mpm
    T = bt.Tally("citizen (MPM %s)" % mpm)
    if not T.check(os.path.exists(MODULE), "mod_blog is built", MODULE + " is missing: run make"):
        T.finish()
    root = os.path.join(bt.VAR, "citizen")
    os.makedirs(root, exist_ok=True)
    os.chmod(root, 0o755)
    tls_dir = os.path.join(root, "%s-tls" % mpm)
    make_certificate(tls_dir)
    CERT = os.path.join(tls_dir, "cert.pem")

    # The module loaded with nothing mounted, beside the same server
    # without it; the latter also shows how core answers HTTP/0.9.
    core_09 = None
    with echo.Server() as fake_pg, echo.Server() as fake_redis:
        a, b = unmounted_pair(mpm, fake_pg, fake_redis)
        if started(a) & started(b):
            def nothing_mounted():
                unmounted(a, b, fake_pg, fake_redis)
            case(nothing_mounted)
            try:
                core_09 = http09(PORT_BARE, "/a.txt")
            except OSError as e:
                T.check(False, "HTTP/0.9 to core (bare Apache)", str(e))
        for x in (a, b):
            no_crash(x)
            x.stop()

    main_apache = main_server(mpm, tls_dir)
    if started(main_apache):
        for fn in (access_control, header_always_set, deflate, disk_cache,
                   range_head_conditional, http2, static_vhost, request_read_timeout):
            case(fn)
        def http_09_case():
            http_09(core_09)
        case(http_09_case)
        def fast_path_case():
            fast_path_warning(main_apache)
        case(fast_path_case)
        def hold_case():
            connection_hold(mpm)
        case(hold_case)
        no_crash(main_apache)
    main_apache.stop()

    with echo.TcpEcho() as tcp, echo.WsEcho() as ws:
        t = tunnel_server(mpm, tcp, ws)
        if started(t):
            tunnels(t, tcp, ws)
            no_crash(t)
        t.stop()
    T.finish()


if __name__ == "__main__":
    main()

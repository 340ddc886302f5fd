#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Redis with AUTH, an ACL user, and cache entries that cannot be forged
(BlogRedisAuth, BlogCacheKey), against a Redis and an Apache of the test's
own beside the stack (its PostgreSQL), on free ports; the stack's Apache
and Redis are not touched.

    . scripts/env.sh && python3 tests/e2e/redis_secure.py

Checks: a Redis with requirepass; an ACL user limited to GET, SET, DEL and
SCAN on blog:page:* (the cache, /health and the invalidation listener all
work with it, and Redis's ACL LOG stays empty); a wrong password and no
password while Redis wants one (pages BYPASS with the real body, /health
503, the reason in the error log, rate-limited); a secret file others can
read refused at start-up; with BlogCacheKey, each forged SET (a wrong MAC,
truncated, no envelope, another page's valid entry, one sealed under
another key file) answered MISS with the real page and stored again
sealed, and so is a page sealed earlier and written back after its
BlogCacheTTL (a replay), or 1 s after a write made it stale; rediss://
with a certificate verified against the host name (the cache and the
listener work; another CA's certificate, another
name's, and no client certificate where Redis wants one, are BYPASS).
Ends with `N passed, N failed`.
"""

import atexit
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blogtest as bt  # noqa: E402
from blogtest import Conn  # noqa: E402

T = bt.Tally("redis AUTH, ACL and BlogCacheKey")
ADMIN_PW = "admin-pw-for-the-test"
ACL = "~blog:page:* -@all +get +set +del +scan"
MAGIC = b"BLS3"
HEAD = 40
SEAL_SKEW = 5       # mod_blog/seal.h's BLOG_SEAL_SKEW


DIR = tempfile.mkdtemp(prefix="blog-secure-", dir=bt.VAR)
os.chmod(DIR, 0o755)
atexit.register(shutil.rmtree, DIR, True)
REDIS_PORT = bt.free_port()
TLS_PORT = bt.free_port()
HTTP_PORT = bt.free_port()


def openssl(*args):
    subprocess.run(["openssl"] + list(args), cwd=DIR, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_certificates():
    """A CA, Redis's certificate for "localhost" and 127.0.0.2 only, a
    client's, and a CA that signed neither."""
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-subj", "/CN=blog test %s" % ca, "-keyout", ca + ".key",
                "-out", ca + ".pem")
    for name, ext in (("server", "subjectAltName=DNS:localhost,IP:127.0.0.2"),
                      ("client", "extendedKeyUsage=clientAuth")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name,
                "-keyout", name + ".key", "-out", name + ".csr")
        with open(os.path.join(DIR, name + ".ext"), "w") as f:
            f.write(ext + "\n")
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey",
                "ca.key", "-CAcreateserial", "-days", "2", "-extfile", name + ".ext",
                "-out", name + ".pem")
    with open(os.path.join(DIR, "client-both.pem"), "w") as f:
        for part in ("client.pem", "client.key"):
            with open(os.path.join(DIR, part)) as g:
                f.write(g.read())
    os.chmod(os.path.join(DIR, "client-both.pem"), 0o600)


make_certificates()


# ------------------------------------------------------------------ Redis
class Admin(bt.Redis):
    """The test's own Redis, as its default user."""

    def __init__(self, password=None):
        self.sock = socket.create_connection((bt.HOST, REDIS_PORT), timeout=5)
        self.buf = b""
        if password:
            self.cmd("AUTH", password)


redis_proc = subprocess.Popen(
    ["redis-server", "--port", str(REDIS_PORT), "--bind", bt.HOST, "127.0.0.2",
     "--tls-port", str(TLS_PORT), "--tls-cert-file", os.path.join(DIR, "server.pem"),
     "--tls-key-file", os.path.join(DIR, "server.key"),
     "--tls-ca-cert-file", os.path.join(DIR, "ca.pem"), "--tls-auth-clients", "optional",
     "--save", "", "--appendonly", "no", "--dir", DIR,
     "--logfile", os.path.join(DIR, "redis.log")],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@atexit.register
def _stop_redis():
    redis_proc.terminate()
    try:
        redis_proc.wait(10)
    except subprocess.TimeoutExpired:
        redis_proc.kill()


def _redis_up():
    try:
        Admin().close()
        return True
    except OSError:
        return False


if not bt.wait_for(_redis_up, 10):
    T.check(False, "the test's redis-server starts on port %d" % REDIS_PORT)
    T.finish()
admin = Admin()
admin.cmd("CONFIG", "SET", "requirepass", ADMIN_PW)
admin.cmd("ACL", "SETUSER", "blog", "reset", "on", ">blog-pw", *ACL.split())


def redis(*args):
    a = Admin(ADMIN_PW)
    try:
        return a.cmd(*args)
    finally:
        a.close()


# ----------------------------------------------------------------- Apache
CONF = os.path.join(DIR, "httpd.conf")
LOG = os.path.join(DIR, "error.log")
PIDFILE = os.path.join(DIR, "httpd.pid")


def secret(name, text, mode=0o600):
    path = os.path.join(DIR, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def conf_text(extra, redis_url=None):
    """The stack's httpd.conf on the test's ports, files and Redis."""
    redis_url = redis_url or "%s:%d" % (bt.HOST, REDIS_PORT)
    with open(os.path.join(bt.VAR, "httpd", "httpd.conf")) as f:
        text = f.read()
    subs = [(r"^Listen .*$", "Listen %s:%d" % (bt.HOST, HTTP_PORT)),
            (r"^PidFile .*$", 'PidFile "%s"' % PIDFILE),
            (r"^DefaultRuntimeDir .*$", 'DefaultRuntimeDir "%s"' % DIR),
            (r"^ErrorLog .*$", 'ErrorLog "%s"' % LOG),
            (r"^BlogRedis .*$", "BlogRedis " + redis_url),
            (r"^BlogMount .*$", "BlogMount / shared"),
            (r"^BlogInvalidate .*$", "BlogInvalidate on"),
            (r"^IncludeOptional .*$", "")]
    for pat, rep in subs:
        text, n = re.subn(pat, lambda _m, r=rep: r, text, count=1, flags=re.M)
        assert n == 1 or pat.startswith("^Include"), pat
    return text + """
# tests/e2e/redis_secure.py: deadlines that a loaded machine's TLS
# handshake never misses (no case here waits on a silent Redis)
BlogRedisConnectTimeout %(t)ds
BlogRedisTimeout %(t)ds
<Location /health>
    SetHandler blog-health
</Location>
%(extra)s
""" % {"t": int(1 + bt.MARGIN), "extra": extra}


def apache(*args):
    return subprocess.run(["/usr/sbin/apache2", "-d", os.path.join(bt.VAR, "httpd"),
                           "-f", CONF] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=60)


def pid():
    try:
        with open(PIDFILE) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def stop():
    p = pid()
    if p is None:
        return
    try:
        os.kill(p, 15)
    except ProcessLookupError:
        return
    if not bt.wait_for(lambda: not os.path.exists("/proc/%d" % p), 20):
        os.kill(p, 9)


atexit.register(stop)


def start(extra, what, redis_url=None):
    """Apache with extra directives; whether it answers."""
    stop()
    with open(CONF, "w") as f:
        f.write(conf_text(extra, redis_url))
    open(LOG, "w").close()
    out = apache("-k", "start")
    ok = out.returncode == 0 and bt.wait_for(
        lambda: get("/compute", timeout=2).status == 200, 20)
    # the listener flushes the page keys when it starts listening
    time.sleep(0.5)
    return T.check(ok, "%s: Apache starts" % what,
                   out.stdout.decode(errors="replace")[-300:] + log()[-300:])


def log():
    try:
        with open(LOG, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def get(path, timeout=10.0):
    try:
        with Conn(timeout, port=HTTP_PORT) as c:
            return c.request("GET", path)
    except OSError as e:
        r = bt.Response()
        r.status, r.headers, r.body = 0, [], repr(e).encode()
        return r


def xcache(r):
    return r.get("x-cache")


def real(path):
    """The uncached page of a cached route, from the test's Apache."""
    return get(path[:-len("/cached")] or "/").body


def served(path, want, what):
    r = get(path)
    return T.check(r.status == 200 and xcache(r) in want and r.body == real(path),
                   "%s: %s is X-Cache %s with the real page" % (what, path, "/".join(want)),
                   "status %d, X-Cache %r, body %r" % (r.status, xcache(r), r.body[:80]))


def bypassed(what, n=100):
    """n requests of /cached: each BYPASS with the real page, never an error."""
    bad = []
    for _ in range(n):
        r = get("/cached")
        if r.status != 200 or xcache(r) != "BYPASS" or r.body != real("/cached"):
            bad.append("%d %r" % (r.status, xcache(r)))
    T.check(not bad, "%s: %d requests of /cached are each BYPASS with the real "
            "page" % (what, n), "%d bad: %s" % (len(bad), bad[:3]))


def health(status, what):
    r = get("/health")
    T.check(r.status == status, "%s: /health is %d" % (what, status),
            "%d %r" % (r.status, r.body[:60]))


def cached_then_invalidated(what):
    """Two pages stored and served from Redis, then a write: the listener
    deletes the page it names, with the blog's Redis user's rights."""
    for path in ("/cached", "/post/post-31/cached"):
        served(path, ("MISS",), what)
        served(path, ("HIT",), what)
    health(200, what)
    bt.psql("SET ROLE pgblog_writer;\nSELECT blog.add_comment('post-31', "
            "'Tester', 'redis_secure');")
    gone = bt.wait_for(lambda: redis("EXISTS", "blog:page:/post/post-31") == 0,
                       1.0 + bt.MARGIN)
    T.check(gone, "%s: the listener deleted the page a write named" % what)


def no_crash(what):
    crashes = bt.crash_lines(log())
    T.check(not crashes, "%s: no crash in the error log" % what, "; ".join(crashes[:3]))


# ------------------------------------------------------------------ cases
def requirepass():
    what = "requirepass"
    if not start("BlogRedisAuth %s" % secret("auth", ADMIN_PW + "\n"), what):
        return
    redis("DEL", "blog:page:/")
    served("/cached", ("MISS",), what)
    served("/cached", ("HIT",), what)
    # BlogCacheKey unset: the contract's raw bytes
    T.check(redis("GET", "blog:page:/") == real("/cached"),
            "%s: the stored value is the raw page" % what)
    health(200, what)


def acl_user():
    what = "ACL user (%s)" % ACL
    redis("ACL", "LOG", "RESET")
    if not start("BlogRedisAuth %s" % secret("auth", "blog blog-pw"), what):
        return
    cached_then_invalidated(what)
    served("/post/post-31/cached", ("MISS",), what)
    denied = redis("ACL", "LOG")
    T.check(not denied, "%s: Redis denied the blog nothing (ACL LOG)" % what,
            repr(denied)[:300])
    T.check("BLOG00026" not in log(),
            "%s: the listener logged no Redis failure" % what, log()[-300:])
    bt.psql("DELETE FROM blog.comments WHERE body = 'redis_secure';")


def refused(auth_line, what, needle):
    if not start("BlogRedisAuth %s" % secret("auth", auth_line), what):
        return
    bypassed(what)
    health(503, what)
    r = get("/health")
    T.check(r.body == b"Redis unavailable\n", "%s: /health says Redis unavailable" % what,
            repr(r.body))
    lines = [l for l in log().splitlines() if needle in l]
    # rate-limited: a line per child per 5 s, not one per request
    T.check(0 < len(lines) <= 12, "%s: %r logged, rate-limited (%d lines for "
            "100 requests)" % (what, needle, len(lines)), log()[-300:])
    no_crash(what)


def wrong_password():
    refused("blog wrong-pw", "a wrong password", "WRONGPASS")


def no_password():
    what = "no password while Redis wants one"
    if not start("", what):
        return
    bypassed(what)
    health(503, what)
    lines = [l for l in log().splitlines() if "NOAUTH" in l]
    T.check(0 < len(lines) <= 12, "%s: NOAUTH logged, rate-limited (%d lines)"
            % (what, len(lines)), log()[-300:])
    no_crash(what)


def loose_secret():
    """Start-up refuses a secret file that others can read (apache2 -t)."""
    for directive, name in (("BlogRedisAuth", "auth"), ("BlogCacheKey", "key")):
        path = secret(name + "-loose", "x" * 40, 0o644)
        with open(CONF, "w") as f:
            f.write(conf_text("%s %s" % (directive, path)))
        out = apache("-t")
        text = out.stdout.decode(errors="replace")
        T.check(out.returncode != 0 and "mode 0644" in text and path in text,
                "%s with a file others can read: Apache refuses to start" % directive,
                text[-300:])


def forgeries():
    what = "BlogCacheKey"
    auth = "BlogRedisAuth %s\n" % secret("auth", "blog blog-pw")
    # an entry sealed under another key file, for later
    if not start(auth + "BlogCacheKey %s" % secret("key2", os.urandom(32).hex()), what):
        return
    redis("DEL", "blog:page:/")
    served("/cached", ("MISS",), what + " (another key)")
    other_key = redis("GET", "blog:page:/")
    if not start(auth + "BlogCacheKey %s" % secret("key", os.urandom(32).hex()), what):
        return
    served("/cached", ("MISS",), what + " (a page sealed under another key)")
    served("/cached", ("HIT",), what)
    good = redis("GET", "blog:page:/")
    page = real("/cached")
    T.check(good[:4] == MAGIC and len(good) == HEAD + len(page) and good[HEAD:] == page,
            "%s: the stored value is the page after a %d-byte seal" % (what, HEAD),
            repr(good[:40]))
    served("/post/post-31/cached", ("MISS", "HIT"), what)
    post = redis("GET", "blog:page:/post/post-31")
    tag = bytearray(good)
    tag[20] ^= 1
    body = bytearray(good)
    body[-1] ^= 1
    forged = [
        ("a wrong MAC", bytes(tag)),
        ("a changed byte of the page", bytes(body)),
        ("a truncated entry", good[:-100]),
        ("a head alone", good[:HEAD]),
        ("no envelope (raw HTML)", b"<script>alert(1)</script>"),
        ("no envelope (the raw page)", page),
        ("another page's valid entry", post),
        ("an entry sealed under another key file", other_key),
    ]
    for name, value in forged:
        redis("SET", "blog:page:/", value)
        served("/cached", ("MISS",), "%s: %s" % (what, name))
        again = redis("GET", "blog:page:/")
        T.check(again is not None and again[:4] == MAGIC and again != value,
                "%s: %s: the page is stored again, sealed" % (what, name))
        served("/cached", ("HIT",), "%s: after %s" % (what, name))
    T.check("BLOG00061" in log(), "%s: a failed MAC is logged" % what, log()[-300:])
    health(200, what)
    no_crash(what)


def replayed():
    """A page sealed earlier (a comment since deleted, say), written back
    after its BlogCacheTTL with no expiry by whoever can write Redis: a
    MISS, rebuilt and sealed anew, not a HIT for ever."""
    what = "BlogCacheKey, BlogCacheTTL 1"
    key = "blog:page:/post/post-31"
    if not start("BlogRedisAuth %s\nBlogCacheKey %s\nBlogCacheTTL 1\n"
                 % (secret("auth", "blog blog-pw"), secret("key3", os.urandom(32).hex())),
                 what):
        return
    redis("DEL", key)
    served("/post/post-31/cached", ("MISS",), what)
    old = redis("GET", key)
    T.check(old is not None and old[:4] == MAGIC, "%s: the page is stored sealed" % what,
            repr((old or b"")[:40]))
    time.sleep(1 + SEAL_SKEW + 1.5)
    redis("SET", key, old)
    served("/post/post-31/cached", ("MISS",),
           "%s: the value sealed %.1f s before, written back" % (what, 1 + SEAL_SKEW + 1.5))
    again = redis("GET", key)
    T.check(again is not None and again[:4] == MAGIC and again != old,
            "%s: the replayed value is replaced, sealed anew" % what)
    no_crash(what)


def replayed_after_write():
    """A page sealed before a write, written back into Redis 1 s after the
    write's invalidation (within BlogCacheTTL, so the seal's age alone lets
    it through): a MISS with the page as written, not the old one as a
    HIT, as the listener heard when the page was made stale."""
    what = "BlogCacheKey, a copy from before a write"
    key = "blog:page:/post/post-31"
    path = "/post/post-31/cached"
    note = "redis_secure replay"
    if not start("BlogRedisAuth %s\nBlogCacheKey %s\n"
                 % (secret("auth", "blog blog-pw"), secret("key4", os.urandom(32).hex())),
                 what):
        return
    redis("DEL", key)
    served(path, ("MISS",), what)
    served(path, ("HIT",), what)
    old = redis("GET", key)
    try:
        bt.psql("SET ROLE pgblog_writer;\nSELECT blog.add_comment('post-31', "
                "'Tester', '%s');" % note)
        gone = bt.wait_for(lambda: redis("EXISTS", key) == 0, 1.0 + bt.MARGIN)
        T.check(gone, "%s: the listener deleted the page the write named" % what)
        time.sleep(1.0)
        redis("SET", key, old)
        r = get(path)
        T.check(r.status == 200 and xcache(r) == "MISS" and note.encode() in r.body
                and r.body == real(path),
                "%s: the old copy written back 1 s after the write is a MISS with "
                "the page as written" % what,
                "status %d, X-Cache %r, the write %s" % (
                    r.status, xcache(r), "shown" if note.encode() in r.body else "missing"))
        again = redis("GET", key)
        T.check(again is not None and again[:4] == MAGIC and again != old,
                "%s: the copy is replaced, sealed anew" % what)
    finally:
        bt.psql("DELETE FROM blog.comments WHERE body = '%s';" % note)
    no_crash(what)


def tls():
    auth = "BlogRedisAuth %s\n" % secret("auth", "blog blog-pw")
    ca = "BlogRedisTLSCA %s\n" % os.path.join(DIR, "ca.pem")
    url = "rediss://localhost:%d" % TLS_PORT
    what = "TLS (%s)" % url
    if start(auth + ca, what, url):
        redis("DEL", "blog:page:/", "blog:page:/post/post-31")
        cached_then_invalidated(what)
        bt.psql("DELETE FROM blog.comments WHERE body = 'redis_secure';")
        no_crash(what)
    # an address in the certificate's subjectAltName
    url2 = "rediss://127.0.0.2:%d" % TLS_PORT
    if start(auth + ca, "TLS (%s)" % url2, url2):
        served("/cached", ("MISS", "HIT"), "TLS (%s)" % url2)
        served("/cached", ("HIT",), "TLS (%s)" % url2)
    # refused: a certificate from another CA, one that names another host,
    # none where Redis wants one from its clients
    for name, extra, u, needle in (
            ("a CA that did not sign Redis's certificate",
             auth + "BlogRedisTLSCA %s" % os.path.join(DIR, "other-ca.pem"), url,
             "Redis's certificate"),
            ("a certificate for another name (127.0.0.1)", auth + ca,
             "rediss://%s:%d" % (bt.HOST, TLS_PORT), "Redis's certificate")):
        if start(extra, "TLS: " + name, u):
            bypassed("TLS: " + name, 20)
            health(503, "TLS: " + name)
            T.check(needle in log(), "TLS: %s: the log says why" % name, log()[-300:])
    redis("CONFIG", "SET", "tls-auth-clients", "yes")
    try:
        what = "TLS, tls-auth-clients yes"
        if start(auth + ca, what + ", no client certificate", url):
            bypassed(what + ", no client certificate", 20)
        cert = "BlogRedisTLSCert %s\n" % os.path.join(DIR, "client-both.pem")
        if start(auth + ca + cert, what + ", BlogRedisTLSCert", url):
            served("/cached", ("MISS", "HIT"), what + ", BlogRedisTLSCert")
            served("/cached", ("HIT",), what + ", BlogRedisTLSCert")
            health(200, what + ", BlogRedisTLSCert")
    finally:
        redis("CONFIG", "SET", "tls-auth-clients", "optional")


def main():
    if not os.path.exists(os.path.join(bt.VAR, "httpd", "httpd.conf")):
        T.check(False, "the stack's httpd.conf exists: start the stack first")
        T.finish()
    loose_secret()
    requirepass()
    acl_user()
    wrong_password()
    no_password()
    forgeries()
    replayed()
    replayed_after_write()
    tls()
    stop()
    T.finish()


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0
"""The page cache through the loss of its Redis master, for
tests/cluster/checks.py (which passes itself as `c`: its tally, HTTP client,
reference pages and hosts): the web nodes find the master through three
Redis Sentinels (BlogRedisSentinels), and the master is lost twice under
load on both cached routes of both web nodes, once killed (kill -9) and
once cut off the network (its link on the bridge down).  Each time:

  - no request fails, and X-Cache is BYPASS only between the loss and the
    promotion (none before, none later than 5 s after it);
  - every cached route of both nodes hits again within 5 s of the
    promotion (+switch-master, seen by a subscriber on the client host);
  - mod_status and the error log of each node name the new master, and the
    log the time its cache ran without one;
  - a post written after the switch reaches the cached pages of both nodes
    (the listener deletes on the new master);
  - the old master comes back as a replica of the new one, and no page is
    served stale from it: from before its return until it is a replica
    every cached index has the new post, and it has no connection of the
    web nodes' user.

The sentinels' own timeline (+sdown, +odown, +promoted-slave,
+switch-master) is read from their logs.  CLUSTER_REDIS_ROUNDS=N repeats
both losses N times (1 by default).
"""

import datetime
import os
import re
import signal
import socket
import ssl
import subprocess
import threading
import time

MASTER = "blogcache"
ROUTES = ("/cached", "/post/post-31/cached")
SETTLE = 6.0        # past the listener's repeated deletes (50 ms, 5.2 s)


class Hosts:
    def __init__(self, c):
        self.c = c
        self.redis = {"redis": c.NET + ".20", "redis2": c.NET + ".21"}
        self.sentinels = {"sen1": c.NET + ".24", "sen2": c.NET + ".25", "sen3": c.NET + ".26"}
        self.name_of = {ip: n for n, ip in self.redis.items()}


def cli(c, ip, *args, port=6379, sentinel=False, timeout=10):
    """redis-cli over TLS: as the default (admin) user of a Redis, or as the
    sentinels' peer user; its lines, or None when it failed."""
    auth = (["--user", "peer", "--pass", os.environ["CLUSTER_SENTINEL_PEER_PW"]] if sentinel
            else ["--pass", os.environ["CLUSTER_REDIS_ADMIN_PW"]])
    try:
        r = subprocess.run(["redis-cli", "--tls", "--cacert", c.CA, "-h", ip, "-p", str(port)]
                           + auth + ["--no-auth-warning"] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if r.returncode != 0:
        return None
    return r.stdout.splitlines()


def master_of(h):
    """The master the sentinels name (the first that answers): its host name."""
    for ip in h.sentinels.values():
        out = cli(h.c, ip, "SENTINEL", "get-master-addr-by-name", MASTER, port=26379,
                  sentinel=True, timeout=5)
        if out and len(out) == 2:
            return h.name_of.get(out[0])
    return None


def role(h, name):
    """ROLE of a Redis: ["master", ...] or ["slave", ip, port, state, offset]."""
    return cli(h.c, h.redis[name], "ROLE", timeout=5)


def ready(h, master, replica, wait=60):
    """The replica streams from the master and every sentinel knows both and
    the two others: a failover can happen."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < wait:
        r = role(h, replica)
        ok = r is not None and r[:2] == ["slave", h.redis[master]] and "connected" in r
        for ip in h.sentinels.values():
            out = cli(h.c, ip, "SENTINEL", "master", MASTER, port=26379, sentinel=True,
                      timeout=5) or []
            kv = dict(zip(out[::2], out[1::2]))
            ok = ok and kv.get("ip") == h.redis[master] and kv.get("num-slaves") == "1" \
                and kv.get("num-other-sentinels") == "2" and "s_down" not in kv.get("flags", "")
        if ok:
            return True
        time.sleep(0.5)
    return False


class SwitchWatch:
    """A subscriber to +switch-master on one sentinel, over TLS, as the web
    nodes' sentinel user: when each event came (monotonic clock)."""

    def __init__(self, c, ip):
        ctx = ssl.create_default_context(cafile=c.CA)
        raw = socket.create_connection((ip, 26379), timeout=5)
        self.sock = ctx.wrap_socket(raw, server_hostname=ip)
        self.buf = b""
        self.events = []
        self.send("AUTH", "blog", os.environ["CLUSTER_SENTINEL_BLOG_PW"])
        if self.reply() != b"OK":
            raise RuntimeError("sentinel %s refused AUTH" % ip)
        self.send("SUBSCRIBE", "+switch-master")
        self.reply()
        self.sock.settimeout(None)
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        ln, self.buf = self.buf.split(b"\r\n", 1)
        return ln

    def reply(self):
        ln = self.line()
        kind, rest = ln[:1], ln[1:]
        if kind in (b"+", b"-", b":"):
            return rest
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                chunk = self.sock.recv(4096)
                if not chunk:
                    raise ConnectionError("closed")
                self.buf += chunk
            s, self.buf = self.buf[:n], self.buf[n + 2:]
            return s
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise ValueError("not RESP: %r" % ln)

    def run(self):
        try:
            while True:
                r = self.reply()
                if isinstance(r, list) and r and r[0] == b"message":
                    self.events.append((time.monotonic(), r[2].decode()))
        except (OSError, ValueError):
            pass

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class CacheLoad:
    """One thread per web node and cached route, keep-alive GETs at a steady
    pace; each answer kept with its time, X-Cache and what its body is:
    "ref" (the seeded page), "fresh" (an index with the post `marker`),
    or "wrong"."""

    PER_THREAD = 150            # requests/s

    def __init__(self, c):
        self.c = c
        self.events = []        # (t, web, route, ok, what, x-cache, kind)
        self.lock = threading.Lock()
        self.stop = False
        self.marker = None
        self.ref = {"/cached": c.expected("/")[1],
                    "/post/post-31/cached": c.expected("/post/post-31")[1]}
        self.threads = [threading.Thread(target=self.run, args=(w, r), daemon=True)
                        for w in c.WEB for r in ROUTES]

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop = True
        for t in self.threads:
            t.join(20)

    def kind(self, route, body):
        if body == self.ref[route]:
            return "ref"
        if route == "/cached" and self.marker and self.marker in body \
                and body.startswith(self.ref[route][:200]):
            return "fresh"
        return "wrong"

    def run(self, web, route):
        conn = self.c.Http(self.c.WEB[web], timeout=15)
        pace = time.monotonic()
        while not self.stop:
            pace += 1.0 / self.PER_THREAD
            lag = pace - time.monotonic()
            if lag > 0:
                time.sleep(lag)
            elif lag < -1:
                pace = time.monotonic()
            try:
                st, hd, body = conn.get(route)
                kind = self.kind(route, body) if st == 200 else "wrong"
                ev = (time.monotonic(), web, route, st == 200 and kind != "wrong",
                      str(st), hd.get("x-cache", ""), kind)
            except OSError as e:
                ev = (time.monotonic(), web, route, False, "connection: %s" % e, "", "wrong")
            with self.lock:
                self.events.append(ev)
            if not ev[3]:
                time.sleep(0.01)

    def between(self, t0, t1=None):
        with self.lock:
            return [e for e in self.events if e[0] >= t0 and (t1 is None or e[0] < t1)]


class HealthPoll:
    """/health of each node every 100 ms: (t, web, status)."""

    def __init__(self, c):
        self.c = c
        self.events = []
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            for w, ip in self.c.WEB.items():
                try:
                    s = socket.create_connection((ip, 8081), timeout=5)
                    s.sendall(b"GET /health HTTP/1.0\r\nHost: x\r\n\r\n")
                    head = s.recv(64)
                    s.close()
                    st = int(head.split()[1])
                except (OSError, ValueError, IndexError):
                    st = 0
                self.events.append((time.monotonic(), w, st))
            time.sleep(0.1)

    def finish(self):
        self.stop = True
        self.thread.join(10)


def log_size(c, web):
    try:
        return os.path.getsize("%s/%s/log/httpd-error.log" % (c.TMP, web))
    except OSError:
        return 0


def log_since(c, web, offset):
    try:
        with open("%s/%s/log/httpd-error.log" % (c.TMP, web), errors="replace") as f:
            f.seek(offset)
            return f.read()
    except OSError:
        return ""


def status_masters(c, web, n=8):
    """BlogRedisMaster and BlogRedisLastSwitch of n answers of the node's
    mod_status (new connections: several children answer)."""
    out = []
    for _ in range(n):
        s = socket.create_connection((c.WEB[web], 8081), timeout=5)
        try:
            s.sendall(b"GET /server-status?auto HTTP/1.0\r\nHost: x\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            s.close()
        text = data.decode("latin-1")
        m = re.search(r"^BlogRedisMaster: (.*)$", text, re.M)
        sw = re.search(r"^BlogRedisLastSwitch: (.*)$", text, re.M)
        out.append((m.group(1).strip() if m else None, sw.group(1).strip() if sw else None))
    return out


EVENTS = ("+sdown master", "+odown master", "+selected-slave", "+promoted-slave",
          "+switch-master")
LOG_TIME = re.compile(r"^\d+:X (\d+ \w+ \d+ [\d:.]+) [#*-] (\S+ ?\S*)")


def sentinel_timeline(c, h, since_wall):
    """The first time (wall clock) each of EVENTS is in any sentinel's log
    after since_wall."""
    first = {}
    for n in h.sentinels:
        try:
            with open("%s/%s/log/sentinel.log" % (c.TMP, n), errors="replace") as f:
                lines = f.readlines()
        except OSError:
            continue
        for ln in lines:
            m = LOG_TIME.match(ln)
            if not m:
                continue
            try:
                t = datetime.datetime.strptime(m.group(1), "%d %b %Y %H:%M:%S.%f").timestamp()
            except ValueError:
                continue
            if t < since_wall - 0.5:
                continue
            for ev in EVENTS:
                if ln[m.start(2):].startswith(ev) and (ev not in first or t < first[ev]):
                    first[ev] = t
    return first


def lose(c, h, name, how):
    """Lose Redis `name`: kill -9 its process, or take its link down."""
    if how == "kill":
        pid = int(open("%s/%s/redis.pid" % (c.TMP, name)).read().split()[0])
        os.kill(pid, signal.SIGKILL)
        return True
    return c.in_ns("switch", "ip", "link", "set", name, "down").returncode == 0


def bring_back(c, h, name, how):
    if how == "kill":
        return c.in_ns(name, "redis-server", "%s/%s/redis.conf" % (c.TMP, name)).returncode == 0
    return c.in_ns("switch", "ip", "link", "set", name, "up").returncode == 0


def blog_clients(h, name):
    """Connections of the web nodes' Redis user on a Redis (CLIENT LIST)."""
    out = cli(h.c, h.redis[name], "CLIENT", "LIST", timeout=5)
    if out is None:
        return None
    return sum(1 for ln in out if " user=blog " in ln)


def one_loss(c, h, how, round_no):
    T = c.T
    old = master_of(h)
    new = {"redis": "redis2", "redis2": "redis"}.get(old)
    label = "Redis master %s lost (%s)" % (old, "kill -9" if how == "kill" else "cut off the network")
    if new is None or not T.check(ready(h, old, new), "%s: replica and sentinels ready before" % label):
        return
    post = 100500 + round_no * 10 + (1 if how == "kill" else 2)
    offsets = {w: log_size(c, w) for w in c.WEB}
    watch = SwitchWatch(c, h.sentinels["sen2"])
    load = CacheLoad(c)
    T.check(wait_pages(c, lambda route, body: body == load.ref[route]),
            "%s: both nodes' cached pages are the reference's before" % label)
    load.start()
    health = HealthPoll(c)
    time.sleep(3)
    t_loss, wall_loss = time.monotonic(), time.time()
    T.check(lose(c, h, old, how), "%s: done" % label)
    while not watch.events and time.monotonic() - t_loss < 40:
        time.sleep(0.05)
    t_promo = watch.events[0][0] if watch.events else None
    if not T.check(t_promo is not None, "%s: the sentinels promoted the replica" % label,
                   "after %.2f s" % (t_promo - t_loss) if t_promo else
                   "no +switch-master within 40 s"):
        load.finish()
        health.finish()
        watch.close()
        bring_back(c, h, old, how)
        return
    promo_msg = watch.events[0][1]
    # hits again on every route of both nodes, and 6 s past the promotion
    while time.monotonic() - t_promo < SETTLE:
        time.sleep(0.2)
    t_measured = time.monotonic()

    # a write after the switch: its pages fresh from the new master (the
    # load knows the post before it can be served)
    load.marker = b'/post/fresh-%d"' % post
    rows = c.psql(c.PG["pg1"], c.insert_sql(post))
    t_commit = time.monotonic()
    fresh_at = {}
    while len(fresh_at) < len(c.WEB) and time.monotonic() - t_commit < 15:
        for w, ip in c.WEB.items():
            if w in fresh_at:
                continue
            conn = c.Http(ip)
            try:
                st, hd, body = conn.get("/cached")
                if st == 200 and load.marker in body:
                    fresh_at[w] = time.monotonic()
            except OSError:
                pass
            conn.close()
        time.sleep(0.05)
    time.sleep(SETTLE)
    t_stale_from = time.monotonic()
    # the old master back, under the load: a replica of the new one
    T.check(bring_back(c, h, old, how), "%s: brought back" % label)
    t_back = time.monotonic()
    as_replica = None
    while time.monotonic() - t_back < 90:
        r = role(h, old)
        if r and r[:2] == ["slave", h.redis[new]] and "connected" in r:
            as_replica = time.monotonic()
            break
        time.sleep(0.25)
    time.sleep(2)
    load.finish()
    health.finish()
    watch.close()
    wall_end = time.time()

    # ---- figures
    during = load.between(t_loss - 3, t_measured)
    base = load.between(t_loss - 3, t_loss)
    failed = [e for e in load.between(t_loss - 3) if not e[3]]
    kinds = {}
    for e in failed:
        kinds[e[4] + "/" + e[6]] = kinds.get(e[4] + "/" + e[6], 0) + 1
    byp = [e[0] for e in during if e[5] == "BYPASS"]
    before = sum(1 for e in base if e[5] == "BYPASS")
    late = [e for e in load.between(t_promo + 5) if e[5] == "BYPASS"]
    hit_after = {}
    for e in load.between(t_promo):
        k = (e[1], e[2])
        if e[5] == "HIT" and k not in hit_after:
            hit_after[k] = e[0] - t_promo
    worst_hit = max(hit_after.values()) if len(hit_after) == len(c.WEB) * len(ROUTES) else None
    misses = sum(1 for e in during if e[5] == "MISS")
    stale = [e for e in load.between(t_stale_from) if e[2] == "/cached" and e[6] != "fresh"]
    tl = sentinel_timeline(c, h, wall_loss)
    without = {}
    for w in c.WEB:
        text = log_since(c, w, offsets[w])
        without[w] = [float(x) for x in re.findall(
            r"BLOG00074: the cache's Redis is now %s:6379.*?ran without a master for ([\d.]+) s"
            % re.escape(h.redis[new]), text)]
        without[w + " 00070"] = "BLOG00070: Redis Sentinel: the master of %s is %s:6379" \
            % (MASTER, h.redis[new]) in text
    shown = {w: status_masters(c, w) for w in c.WEB}
    unhealthy = [e for e in health.events if e[0] >= t_loss - 3 and e[2] != 200]
    health_late = [e for e in unhealthy if e[0] > t_promo + 5 or e[0] < t_loss]

    c.note("%s, round %d: %d requests on %s from both nodes (%d/s), %d failed%s; "
           "+switch-master after %.2f s (%s)"
           % (label, round_no, len(load.between(t_loss - 3)), " and ".join(ROUTES),
              len(during) / max(t_measured - t_loss + 3, 1), len(failed),
              " %r" % kinds if kinds else "", t_promo - t_loss, promo_msg))
    c.note("  sentinels' timeline from the loss: %s" % ", ".join(
        "%s %.2f s" % (ev, tl[ev] - wall_loss) for ev in EVENTS if ev in tl))
    c.note("  BYPASS: %d answers, from %s to %s after the loss (the promotion at %.2f s); "
           "%d MISS after it (the listener's drop on the new master)"
           % (len(byp), "%.2f s" % (byp[0] - t_loss) if byp else "-",
              "%.2f s" % (byp[-1] - t_loss) if byp else "-", t_promo - t_loss, misses))
    c.note("  /health (every 100 ms on each node): %d answers not 200 (%s), from %s to %s "
           "after the loss" % (len(unhealthy), ", ".join(sorted({str(e[2]) for e in unhealthy})),
                               "%.2f s" % (unhealthy[0][0] - t_loss) if unhealthy else "-",
                               "%.2f s" % (unhealthy[-1][0] - t_loss) if unhealthy else "-"))
    c.note("  first HIT after the promotion: %s" % ", ".join(
        "%s %s %.3f s" % (k[0], k[1], v) for k, v in sorted(hit_after.items())))
    c.note("  the module's time without a master (BLOG00074): %s" % ", ".join(
        "%s %s" % (w, " ".join("%.2f s" % x for x in without[w]) or "none") for w in c.WEB))
    c.note("  a post written %.1f s after the promotion on both nodes' /cached after %s; the old "
           "master a replica of %s %s after its return"
           % (t_commit - t_promo, ", ".join("%s %.2f s" % (w, t - t_commit)
                                             for w, t in sorted(fresh_at.items())) or "-",
              new, "%.1f s" % (as_replica - t_back) if as_replica else "NOT"))

    # ---- checks
    T.check(not failed, "%s: no failed request" % label,
            "%d of %d failed %r%s" % (len(failed), len(load.between(t_loss - 3)), kinds,
                                      ", the first %s %s %.2f s after the loss"
                                      % (failed[0][1], failed[0][2], failed[0][0] - t_loss)
                                      if failed else ""))
    T.check(before == 0 and not late,
            "%s: BYPASS only during the switch (none before the loss, none from 5 s after "
            "the promotion to the end, the old master's return included)" % label,
            "%d BYPASS before, %d later than 5 s after" % (before, len(late)))
    T.check(not health_late, "%s: /health 200 on both nodes but during the switch" % label,
            "%d answers not 200 before the loss or 5 s after the promotion" % len(health_late))
    T.check(worst_hit is not None and worst_hit < 5,
            "%s: both cached routes of both nodes hit again within 5 s of the promotion" % label,
            "slowest %s" % ("%.3f s" % worst_hit if worst_hit is not None else
                            "never (%d of 4)" % len(hit_after)))
    # every child knows the master; a child that served the load reports its switch
    T.check(all(m == h.redis[new] + ":6379" for w in c.WEB for m, _ in shown[w])
            and all(any(sw and ("to %s:6379" % h.redis[new]) in sw for _, sw in shown[w])
                    for w in c.WEB),
            "%s: mod_status of both nodes names %s the master, and the switch" % (label, new),
            repr(shown))
    T.check(all(without[w] for w in c.WEB) and all(without[w + " 00070"] for w in c.WEB),
            "%s: each node's log names the new master and its time without one" % label,
            repr(without))
    T.check(rows is not None and len(fresh_at) == len(c.WEB),
            "%s: a post written after the switch is on both nodes' cached index" % label,
            repr(fresh_at))
    T.check(as_replica is not None, "%s: the old master came back as a replica of %s"
            % (label, new), repr(role(h, old)))
    clients = blog_clients(h, old)
    T.check(not stale and clients == 0,
            "%s: no page stale from the old master: every cached index fresh from before its "
            "return until after it is a replica; none of the web nodes' connections on it"
            % label, "%d stale answers, %r connections of user blog" % (len(stale), clients))
    # the post goes again, and the cached index with it
    c.psql(c.PG["pg1"], "DELETE FROM blog.posts WHERE id >= 100000")
    T.check(wait_pages(c, lambda route, body: body == load.ref[route]),
            "%s: the post deleted, both nodes' cached pages are the reference's again" % label)
    return wall_end


def wait_pages(c, good, wait=15):
    """Until both cached routes of both nodes answer a body good(route, body)
    twice in a row (a miss stores, the next read hits)."""
    t0 = time.monotonic()
    streak = 0
    while time.monotonic() - t0 < wait:
        ok = True
        for ip in c.WEB.values():
            conn = c.Http(ip)
            for route in ROUTES:
                try:
                    st, _, body = conn.get(route)
                    ok = ok and st == 200 and good(route, body)
                except OSError:
                    ok = False
            conn.close()
        streak = streak + 1 if ok else 0
        if streak == 2:
            return True
        time.sleep(0.1)
    return False


def check(c):
    """Each loss under the load lock (each well under 3 minutes)."""
    h = Hosts(c)
    T = c.T
    # least privilege: the web nodes' sentinel user asks and subscribes, no more
    denied = []
    for args in (("SENTINEL", "masters"), ("SENTINEL", "failover", MASTER),
                 ("SENTINEL", "set", MASTER, "quorum", "1")):
        r = subprocess.run(["redis-cli", "--tls", "--cacert", c.CA, "-h", h.sentinels["sen1"],
                            "-p", "26379", "--user", "blog", "--pass",
                            os.environ["CLUSTER_SENTINEL_BLOG_PW"], "--no-auth-warning"]
                           + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=10)
        if "NOPERM" not in r.stdout:
            denied.append("%s: %s" % (" ".join(args), r.stdout.strip()[:80]))
    T.check(not denied, "the web nodes' sentinel user may not list, fail over or reconfigure",
            "; ".join(denied))
    for n in range(int(os.environ.get("CLUSTER_REDIS_ROUNDS", "1"))):
        for how in ("kill", "cut"):
            with c.load_lock():
                one_loss(c, h, how, n)

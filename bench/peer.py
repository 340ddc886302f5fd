# SPDX-License-Identifier: Apache-2.0
"""A peer in `make bench` (PEER_URL): another implementation of
docs/CONTRACT.md, measured beside the blog in the same run.

What the peer is: PEER_NAME (the user's words), its URL, the Server header
it sends, and its server process (PEER_PID, or the process holding the
socket that listens on its port, found through /proc/net/tcp's inode and
/proc/PID/fd) with that process's command line.  Before any load its
pages go through checkpages.py like the blog's (bench.py).

The measurement (alternate): under the event MPM, for each endpoint,
PEER_ROUNDS rounds of blog, peer, peer, blog, so that a drift linear in
time weighs on both alike; each run a PEER_WARMUP s warm-up, then a
DURATION s wrk run with CONNECTIONS and THREADS, the counters of every
side read just before and after it (loads.timed_run).  Both serve the
cached routes from the contract's keys `blog:page:*` on the same Redis,
so the keys are deleted before each side's first run of a route in a
round: each side fills the cache itself, in its own warm-up.

summary() turns the runs of one endpoint into the report's figures; it
and the helpers above it are pure (tests/bench/peer.py).
"""

import http.client
import ipaddress
import os
import socket
import statistics
import urllib.parse

import loads
import procstat
import sweep

# One round: the blog, the peer twice, the blog again.
ROUND = ("blog", "peer", "peer", "blog")
TCP_LISTEN = "0A"          # st of a listening socket in /proc/net/tcp
SIDES = ("server", "pg", "redis", "wrk")


class PeerError(Exception):
    pass


# ------------------------------------------------------------ pure helpers
def parse_url(url):
    """(host, port) of PEER_URL.  Plain HTTP at the root only: the page
    check and wrk ask for the contract's absolute paths."""
    try:
        u = urllib.parse.urlsplit(url)
        port = u.port or 80
    except ValueError as e:
        raise PeerError("PEER_URL %r: %s" % (url, e))
    if u.scheme != "http" or not u.hostname:
        raise PeerError("PEER_URL %r: expected http://HOST:PORT" % url)
    if u.path not in ("", "/") or u.query or u.fragment:
        raise PeerError("PEER_URL %r: the contract's routes are at the "
                        "root, give http://HOST:PORT" % url)
    return u.hostname, port


def listening_inodes(table, port):
    """Inodes of the sockets listening on TCP port, from the text of
    /proc/net/tcp or /proc/net/tcp6 (any local address)."""
    out = set()
    for line in table.splitlines()[1:]:
        f = line.split()
        if len(f) < 10 or f[3] != TCP_LISTEN:
            continue
        if int(f[1].rsplit(":", 1)[1], 16) == port:
            out.add(int(f[9]))
    return out


def topmost(holders):
    """Of {pid: ppid}, the processes whose parent holds none of the
    sockets (a prefork server's parent, not its children), lowest first."""
    return sorted(p for p, pp in holders.items() if pp not in holders)


def rounds_order(rounds):
    """(round, side) of every run, in order."""
    return [(r, side) for r in range(rounds) for side in ROUND]


def size_ok(want, got, requests, connections):
    """Whether wrk's bytes per response fit a response of want bytes:
    responses cut off when wrk stops (at most one per connection) add
    bytes, a page of another size (an error page, a redirect) does not
    fit."""
    slack = want * connections / max(requests, 1)
    return want * 0.99 <= got <= want * 1.01 + slack


def summary(runs, connections):
    """The report's figures for one endpoint from its runs ({"blog":
    [...], "peer": [...]}, as alternate() records them): per side the
    median over the rounds of the round's mean req/s, the medians over
    the runs of p50, p99 and p99/p50, the errors summed, the runs whose
    bytes per response did not fit the page, CPU microseconds per request
    of each side, the server's context switches and run-queue wait per
    request (summed counters over summed requests), its largest Pss and
    Redis commands per request; and the per-round ratios blog / peer with
    their median and its 95 % bootstrap interval (sweep.ratio_stats), over
    the rounds where both sides ran and answered no error: wrk counts an
    error page or a reset among its requests, and a contract's page
    against an error is no ratio.  A run that could not be made
    ("failed": why) is listed, and left out of the figures."""
    out = {}
    per_round = {}
    erring = set()
    for side in ("blog", "peer"):
        rs = [r for r in runs[side] if not r.get("failed")]
        by_round = {}
        for r in rs:
            by_round.setdefault(r["round"], []).append(r["rps"])
            if r["non2xx"] or r["socket_errors"]:
                erring.add(r["round"])
        per_round[side] = {k: statistics.mean(v) for k, v in by_round.items()}
        n = sum(r["requests"] for r in rs)
        us = {s: sum(r["us"].get(s, 0.0) for r in rs) for s in SIDES
              if any(s in r["us"] for r in rs)}
        ctxsw = [r["ctxsw"] for r in rs if r.get("ctxsw") is not None]
        runq = [r["runq_us"] for r in rs if r.get("runq_us") is not None]
        pss = [r["pss_kib"] for r in rs if r.get("pss_kib")]
        # a run that only failed has no latency to divide by
        tails = [r["p99_ms"] / r["p50_ms"] for r in rs if r["p50_ms"]]
        out[side] = {
            "rps": statistics.median(per_round[side].values())
            if rs else None,
            "p50_ms": statistics.median(r["p50_ms"] for r in rs)
            if rs else None,
            "p99_ms": statistics.median(r["p99_ms"] for r in rs)
            if rs else None,
            "tail": statistics.median(tails) if tails else None,
            "non2xx": sum(r["non2xx"] for r in rs),
            "socket_errors": sum(r["socket_errors"] for r in rs),
            "bad_sizes": sum(1 for r in rs if not size_ok(
                r["response_bytes"], r["bytes_per_response"],
                r["requests"], connections)),
            "runs": len(rs),
            "failed": [r["failed"] for r in runs[side] if r.get("failed")],
            "requests": n,
            "us": {s: v / n for s, v in us.items()} if n else {},
            "ctxsw": sum(ctxsw) / n if n and len(ctxsw) == len(rs)
            else None,
            "runq_us": sum(runq) / n if n and len(runq) == len(rs)
            else None,
            "pss_kib": max(pss) if pss else None,
            "redis_per_req": sum(r["redis_calls"] for r in rs) / n
            if n else None,
        }
    ran = set(per_round["blog"]) & set(per_round["peer"])
    both = sorted(ran - erring)
    out["rounds_with_errors"] = sorted(ran & erring)
    ratios, mid, (lo, hi) = sweep.ratio_stats(
        [per_round["blog"][k] for k in both],
        [per_round["peer"][k] for k in both])
    out["ratios"], out["ratio"], out["interval"] = ratios, mid, (lo, hi)
    return out


# ------------------------------------------------------------ what it is
def is_loopback(host):
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    return any(ipaddress.ip_address(i[4][0].split("%")[0]).is_loopback
               for i in infos)


def socket_holders(inodes):
    """{pid: ppid} of every process with one of the sockets open."""
    want = {"socket:[%d]" % i for i in inodes}
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fds = os.listdir("/proc/%s/fd" % name)
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink("/proc/%s/fd/%s" % (name, fd))
            except OSError:
                continue
            if link in want:
                out[int(name)] = procstat.ppid(int(name))
                break
    return out


def find_pid(host, port):
    """(pid, how it was found) of the process serving a local port, or
    (None, why not)."""
    if not is_loopback(host):
        return None, "%s is not this machine's loopback" % host
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                inodes |= listening_inodes(f.read(), port)
        except OSError:
            pass
    if not inodes:
        return None, "no socket listens on port %d" % port
    tops = topmost(socket_holders(inodes))
    if not tops:
        return None, "no process of ours holds the socket on port %d " \
            "(another user's, or in another namespace)" % port
    how = "the process holding the socket listening on port %d" % port
    if len(tops) > 1:
        how += " (%d unrelated processes hold it; the first is measured: " \
            "%s)" % (len(tops), ", ".join(map(str, tops)))
    return tops[0], how


def server_header(host, port):
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", "/")
        resp = conn.getresponse()
        resp.read()
        return resp.getheader("Server")
    finally:
        conn.close()


def describe(cfg):
    """What the bench can say of the peer, before any load."""
    host, port = cfg.peer
    try:
        header = server_header(host, port)
    except (OSError, http.client.HTTPException) as e:
        raise PeerError("the peer at %s does not answer GET /: %s"
                        % (cfg.peer_url, e))
    out = {"name": cfg.peer_name, "url": cfg.peer_url, "host": host,
           "port": port, "server_header": header}
    if cfg.peer_pid:
        pid, how = cfg.peer_pid, "PEER_PID"
        if not os.path.exists("/proc/%d" % pid):
            raise PeerError("PEER_PID %d: no such process" % pid)
    else:
        pid, how = find_pid(host, port)
    out.update(pid=pid, pid_from=how,
               cmdline=procstat.cmdline(pid) if pid else None,
               policy=procstat.policy(pid) if pid else None)
    return out


def about_line(about):
    """One sentence for the report: who the peer was."""
    parts = ["%s at %s" % (about["name"] or "(PEER_NAME not given)",
                           about["url"])]
    parts.append("Server header %s" % ('"%s"' % about["server_header"]
                                       if about["server_header"]
                                       else "none"))
    if about["pid"]:
        parts.append("pid %d (%s): `%s`" % (about["pid"], about["pid_from"],
                                             about["cmdline"] or "?"))
        parts.append("scheduling policy %s" % (about.get("policy") or "?"))
    else:
        parts.append("its process unknown (%s): no CPU, context switches "
                     "or Pss of its own" % about["pid_from"])
    return "; ".join(parts)


# ------------------------------------------------------------ the runs
def record(rnd, r, d_sides, d_redis, size):
    """One run as summary() reads it."""
    srv = d_sides.get("server")
    return {"round": rnd, "rps": r["rps"],
            "p50_ms": r["p50_us"] / 1000.0, "p99_ms": r["p99_us"] / 1000.0,
            "requests": r["requests"], "non2xx": r["status"],
            "socket_errors": r["socket_errors"],
            "response_bytes": size,
            "bytes_per_response": r["bytes"] / r["requests"]
            if r["requests"] else 0.0,
            "us": {s: d["user_us"] + d["sys_us"]
                   for s, d in d_sides.items()},
            "ctxsw": srv["ctxsw"] if srv else None,
            "runq_us": srv["runq_us"] if srv else None,
            "pss_kib": r["sample"],
            "redis_calls": sum(c for c, _ in d_redis.values())}


def failure(e):
    """A run's failure in one line: wrk's last words (loads.LoadError
    carries its whole output), or the error."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return lines[-1][:200] if lines else type(e).__name__


def one_run(cfg, rnd, side, path, target, sizes):
    """A warm-up and a timed run of one side on one endpoint, recorded;
    sizes keeps each side's response size (its first GET)."""
    host, port, sides = target
    if side not in sizes:
        status, sizes[side] = loads.response_size(port, path, host=host)
        if status != 200:
            raise PeerError("GET %s answers %d before the load"
                            % (path, status))
    if cfg.peer_warmup:
        loads.wrk(cfg, port, path, cfg.peer_warmup, host=host)
    raw = "wrk-peer-%s-%s.txt" % (
        side, path.strip("/").replace("/", "_") or "index")
    r, d_sides, _, d_redis = loads.timed_run(
        cfg, port, path, cfg.duration, sides, raw, redis_port=cfg.redis_port,
        pss_pid=sides["server"][0] if "server" in sides else None, host=host)
    return record(rnd, r, d_sides, d_redis, sizes[side])


def alternate(cfg, blog_sides, about, say):
    """The blog and the peer on every endpoint, ROUND by ROUND (see the
    module's docstring).  blog_sides: bench.sides()'s, the blog's Apache
    as "server".  {"about": about, "routes": {path: {"blog": [runs],
    "peer": [runs]}}}."""
    host, port = cfg.peer
    peer_sides = dict(blog_sides)
    if about["pid"]:
        peer_sides["server"] = (about["pid"], True)
    else:
        del peer_sides["server"]
    target = {"blog": ("127.0.0.1", cfg.blog_port, blog_sides),
              "peer": (host, port, peer_sides)}
    per_run = cfg.peer_warmup + cfg.duration + 1
    say("event: against the peer, %d endpoints x %d rounds of blog, peer, "
        "peer, blog (about %.0f min)" % (
            len(cfg.endpoints), cfg.peer_rounds,
            len(cfg.endpoints) * cfg.peer_rounds * len(ROUND) * per_run
            / 60.0))
    out = {"about": about, "routes": {}}
    for path in cfg.endpoints:
        runs = {"blog": [], "peer": []}
        sizes = {}
        last = None
        for rnd, side in rounds_order(cfg.peer_rounds):
            h, p, sides = target[side]
            if side != last:
                sweep.flush_pages()
                last = side
            try:
                runs[side].append(one_run(cfg, rnd, side, path, target[side],
                                          sizes))
            except (loads.LoadError, PeerError, OSError) as e:
                # the blog's failures stop the bench; the peer's are its
                # own and are reported
                if side == "blog":
                    raise
                why = failure(e)
                runs[side].append({"round": rnd, "failed": why})
                say("round %d peer %-22s FAILED: %s" % (rnd + 1, path, why))
                continue
            r = runs[side][-1]
            say("round %d %-4s %-22s %8.0f req/s, p99 %.2f ms, %d errors"
                % (rnd + 1, side, path, r["rps"], r["p99_ms"],
                   r["non2xx"] + r["socket_errors"]))
        out["routes"][path] = runs
    return out

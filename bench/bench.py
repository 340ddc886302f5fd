#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make bench`: docs/CONTRACT.md section 6's fair run of the blog under
Apache's event MPM (the reference) and worker MPM, each beside its ceilings and
floor.
Run through bench/run.sh, which starts the stack and builds what is needed.

Environment (bench/README.md says more): DURATION (seconds per run, 5),
WARMUP (seconds, 2), CONNECTIONS (50), THREADS (wrk and pgbench threads,
2), RUNS (3), MPMS ("event worker"), ENDPOINTS (comma- or space-separated,
all six by default), BENCH_CEILING_PORT (the ceiling Apache, 8081),
PG_CLIENTS (pgbench clients, 50), PERF (auto: count syscalls with perf over
each warm-up), STRACE (auto: a separate strace run per route only when perf
cannot count; 1 always, 0 never), STRACE_SECONDS (2), IDLE (1000 idle
keep-alive connections beside the /cached load under event; 0: skip),
IDLE_SECONDS (3), CHECK (1: compare every page first), BENCH_ONLY=ceilings
(skip everything that needs the blog), BENCH_BASE (a commit: its module,
which bench/run.sh builds, in BENCH_BASE_SPEC's configuration, alternated
with the tree's under the event MPM on every endpoint: BASE_ROUNDS rounds
(6), each base, new, new, base, with runs of BASE_SECONDS (3) after
BASE_WARMUP (1)), PEER_URL (another implementation of the contract,
whose pages are checked like the blog's and which bench/peer.py runs
alternated with the blog under the event MPM: PEER_ROUNDS rounds (4) of
blog, peer, peer, blog on every endpoint, each run a PEER_WARMUP (1) s
warm-up and a DURATION s run; PEER_NAME says what it is, PEER_PID which
process serves it when the bench cannot find it from its port),
MEMORY_ROUNDS (2: rounds of bench/memory.py's step, both Apaches
restarted and given the same runs; 0: skip), MEMORY_SECONDS (3).
"""

import datetime
import json
import os
import platform
import subprocess
import sys
import time
import urllib.request

sys.dont_write_bytecode = True  # keep the checkout clean
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

import idle_conns  # noqa: E402
import procs  # noqa: E402
import loads  # noqa: E402
import memory  # noqa: E402
import procstat  # noqa: E402
import peer  # noqa: E402
import report  # noqa: E402
import reference  # noqa: E402
import sweep  # noqa: E402
from ceiling_httpd import SCHED, CeilingApache, server_settings  # noqa: E402

ENDPOINTS = ["/", "/post/post-31", "/tag/tag-7", "/cached",
             "/post/post-31/cached", "/compute"]
DB_ROUTES = {"/", "/post/post-31", "/tag/tag-7"}
CACHED_ROUTES = {"/cached", "/post/post-31/cached"}
# (what serves it, path): each uncached page is followed by a load that
# never reads PostgreSQL, long enough for the page's statistics to reach
# pg_stat_database before its window closes (see FLUSH_LAG).
SEQUENCE = [("static", "/index.html"), ("blog", "/compute"),
            ("blog", "/"), ("floor", "/floor/quick"),
            ("blog", "/post/post-31"), ("floor", "/floor/handler"),
            ("blog", "/tag/tag-7"), ("static", "/post-31.html"),
            ("blog", "/cached"), ("blog", "/post/post-31/cached")]
# A PostgreSQL 15 backend flushes its counters at most once a second while
# busy, and within 10 s (PGSTAT_IDLE_INTERVAL) once idle.
FLUSH_LAG = 11.0
# BENCH_BASE's default configuration: the stack's own, as the tree's side
# runs (an older commit that needs other directives is given its spec).
BASE_SPEC = ""


class Config:
    def __init__(self, env):
        def num(name, default):
            return int(env.get(name, default))
        self.duration = num("DURATION", 5)
        self.warmup = num("WARMUP", 2)
        self.connections = num("CONNECTIONS", 50)
        self.threads = num("THREADS", 2)
        self.runs = num("RUNS", 3)
        self.pg_clients = num("PG_CLIENTS", 50)
        self.mpms = env.get("MPMS", "event worker").replace(",", " ").split()
        self.endpoints = env.get("ENDPOINTS", " ".join(ENDPOINTS)).replace(
            ",", " ").split()
        unknown = [p for p in self.endpoints if p not in ENDPOINTS]
        if unknown:
            raise SystemExit("bench: unknown endpoints %s (ENDPOINTS is a "
                             "subset of %s)" % (unknown, " ".join(ENDPOINTS)))
        self.all_endpoints = set(self.endpoints) == set(ENDPOINTS)
        perf = env.get("PERF", "auto")
        self.perf = perf != "0" and loads.perf_usable()
        self.syscall_events = loads.syscall_events() if self.perf else []
        if perf == "1" and not self.perf:
            raise SystemExit("bench: PERF=1 but perf cannot count %s here"
                             % loads.SYSCALL_EVENT)
        strace = env.get("STRACE", "auto")
        self.strace = strace == "1" or (strace == "auto" and not self.perf)
        self.strace_seconds = num("STRACE_SECONDS", 2)
        self.idle = num("IDLE", 1000)
        self.idle_seconds = num("IDLE_SECONDS", 3)
        self.idle_rounds = num("IDLE_ROUNDS", 1)
        self.memory_rounds = num("MEMORY_ROUNDS", 2)
        self.memory_seconds = num("MEMORY_SECONDS", 3)
        self.check = env.get("CHECK", "1") == "1"
        self.port = int(env.get("BENCH_CEILING_PORT",
                                env.get("BENCH_PORT", 8081)))
        self.only_ceilings = env.get("BENCH_ONLY") == "ceilings"
        # bench/run.sh builds BENCH_BASE's module and names it here
        self.base = env.get("BENCH_BASE") or None
        self.base_module = env.get("BENCH_BASE_MODULE")
        self.base_spec = env.get("BENCH_BASE_SPEC", BASE_SPEC)
        self.base_rounds = num("BASE_ROUNDS", 6)
        self.base_seconds = num("BASE_SECONDS", 3)
        self.base_warmup = num("BASE_WARMUP", 1)
        if self.base and not self.base_module:
            raise SystemExit("bench: BENCH_BASE needs bench/run.sh, which "
                             "builds its module")
        self.peer_url = env.get("PEER_URL") or None
        self.peer_name = env.get("PEER_NAME") or None
        self.peer_pid = num("PEER_PID", 0) or None
        self.peer_rounds = num("PEER_ROUNDS", 4)
        self.peer_warmup = num("PEER_WARMUP", 1)
        self.peer = None
        if self.peer_url:
            try:
                self.peer = peer.parse_url(self.peer_url)
            except peer.PeerError as e:
                raise SystemExit("bench: %s" % e)
            if "event" not in self.mpms or env.get("BENCH_ONLY"):
                raise SystemExit("bench: PEER_URL is measured beside the "
                                 "blog under the event MPM: MPMS must "
                                 "name event, and BENCH_ONLY be unset")
            if self.peer_rounds < 1:
                raise SystemExit("bench: PEER_ROUNDS must be 1 or more")
        self.blog_port = num("BLOG_HTTP_PORT", 8080)
        self.redis_port = num("BLOG_REDIS_PORT", 63790)
        self.var = env["BLOG_VAR"]
        self.pg_user = env.get("BENCH_PG_USER", "blog_web")
        self.fastpath = env.get("BLOG_FASTPATH", "off")
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.results = os.path.join(ROOT, "results")
        self.out_dir = os.path.join(self.results, stamp)
        self.raw_dir = os.path.join(self.out_dir, "raw")
        self.stamp = stamp

    def public(self):
        return {k: getattr(self, k) for k in (
            "duration", "warmup", "connections", "threads", "runs",
            "pg_clients", "strace", "strace_seconds", "mpms", "port",
            "blog_port", "pg_user", "fastpath", "only_ceilings",
            "endpoints", "perf", "idle", "idle_seconds", "check",
            "syscall_events", "base", "base_spec", "base_rounds",
            "base_seconds", "base_warmup", "peer_url", "peer_name",
            "peer_rounds", "peer_warmup", "memory_rounds",
            "memory_seconds")}


T0 = time.time()


def say(msg):
    print("bench: %5.1f s %s" % (time.time() - T0, msg), flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                          text=True, **kw).stdout.strip()


def xacts():
    """Transactions committed and rolled back in the database blog, from
    the server's own counters (read from another database, so that the
    reading adds nothing to them)."""
    return int(run(["psql", "-XAtq", "-d", "postgres", "-c",
                    "SELECT xact_commit + xact_rollback FROM pg_stat_database"
                    " WHERE datname = 'blog'"]))


def fetch(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                timeout=10) as r:
        return r.read()


def blog_pid(cfg):
    return procs.pid_from(os.path.join(cfg.var, "run", "httpd.pid"))


def sides(cfg, apache_pid):
    """The processes of each side of a run for the CPU profile: the Apache
    under test (parent and children), PostgreSQL (the postmaster and every
    backend), Redis."""
    out = procstat.stack_sides(
        lambda name: procs.pid_from(os.path.join(cfg.var, name)))
    out["apache"] = (apache_pid, True)
    return out


def restart_blog(cfg, mpm):
    env = dict(os.environ, BLOG_MPM=mpm)
    subprocess.run([os.path.join(ROOT, "scripts", "stack.sh"), "restart",
                    "httpd"], check=True, env=env)
    with open(os.path.join(cfg.var, "httpd", "httpd.conf")) as f:
        if "mpm_%s_module" % mpm not in f.read():
            raise RuntimeError("the blog's Apache did not restart with %s" % mpm)


def cached_pages(cfg):
    """The exact bytes the blog serves for its two cached endpoints; the
    page check has just proved them equal to the reference."""
    if cfg.only_ceilings:
        return {"index.html": reference.render_path("/")[1],
                "post-31.html": reference.render_path("/post/post-31")[1]}
    return {"index.html": fetch(cfg.blog_port, "/cached"),
            "post-31.html": fetch(cfg.blog_port, "/post/post-31/cached")}


# ------------------------------------------------------------------ ceilings
def db_ceilings(cfg):
    """pgbench, one page-function call per transaction, the extension
    engineer's scripts (pg_blog_ext/bench/*_function.sql)."""
    scripts = os.path.join(ROOT, "pg_blog_ext", "bench")
    defines = {"n": 20, "post_slug": "post-31", "tag_slug": "tag-7"}
    out = {}
    for path, name in (("/", "index"), ("/post/post-31", "post"),
                       ("/tag/tag-7", "tag")):
        if path not in cfg.endpoints:
            continue
        script = os.path.join(scripts, "%s_function.sql" % name)
        say("pgbench %s (%d clients, -M prepared)" % (name, cfg.pg_clients))
        med, values = loads.median_of(cfg, lambda: loads.pgbench(
            cfg, script, defines, "pgbench-%s.txt" % name))
        with open(script) as f:
            sql = f.read().strip()
        out[path] = {"tps": med, "runs": values, "sql": sql}
    return out


def compute_ceiling(cfg):
    """The ceiling is what every CPU of the machine can do running the
    loop alone (the 4 Apache children use them all), from the CPU time per
    call in one process, so that other load on a shared machine does not
    lower it; the wall-clock figures of 1 and 2 processes are kept beside
    it as a check."""
    say("the /compute loop alone, 1 and 2 processes")
    one = loads.compute(cfg, 1)
    cpus = os.cpu_count() or 1
    return {"one": one, "two": loads.compute(cfg, 2), "cpus": cpus,
            "ceiling": cpus * 1e6 / one["cpu_us_per_call"]}


# ------------------------------------------------------------------ per MPM
def run_mpm(cfg, mpm, ceiling):
    say("=== %s MPM ===" % mpm)
    if not cfg.only_ceilings:
        restart_blog(cfg, mpm)
    ceiling.start(mpm)
    ports = {"static": cfg.port, "floor": cfg.port, "blog": cfg.blog_port}
    out = {"blog": {}, "static": {}, "floor": {}, "syscalls": {}}
    state = {"pending": None, "last_db": time.time()}

    def settle():
        wait = FLUSH_LAG - (time.time() - state["last_db"])
        if wait > 0:
            time.sleep(wait)
        return xacts(), time.time()

    def close_window(x1, t1):
        ep, x0, t0 = state["pending"]
        ep["xacts"] = x1 - x0
        ep["window_s"] = t1 - t0
        state["pending"] = None

    for kind, path in sequence(cfg):
        if kind == "blog" and cfg.only_ceilings:
            continue
        pid = ceiling.pid() if kind != "blog" else blog_pid(cfg)
        if kind == "blog":
            x0, t0 = settle()
            if state["pending"]:
                close_window(x0, t0)
        say("%s %s%s" % (mpm, "" if kind == "blog" else kind + " ", path))
        ep = loads.endpoint(cfg, ports[kind], path, sides(cfg, pid),
                            "wrk-%s-%s%s.txt" % (
                                mpm, "" if kind == "blog" else kind + "-",
                                path.strip("/").replace("/", "_") or "index"),
                            redis_port=cfg.redis_port,
                            beside=floor_beside(cfg, mpm, ports["floor"], path)
                            if kind == "blog" else None)
        out[kind][path if kind != "floor" else path.rsplit("/", 1)[1]] = ep
        if kind == "blog" and path in DB_ROUTES:
            state["pending"] = (ep, x0, t0)
            state["last_db"] = time.time()
        elif kind == "blog":
            ep["xacts"] = xacts() - x0
            ep["window_s"] = time.time() - t0
    if state["pending"]:
        close_window(*settle())
    if mpm == "event" and cfg.base and not cfg.only_ceilings:
        out["base"] = against_base(cfg)
    if mpm == "event" and cfg.peer:
        blog_sides = sides(cfg, blog_pid(cfg))
        blog_sides["server"] = blog_sides.pop("apache")
        out["peer"] = peer.alternate(cfg, blog_sides, cfg.peer_about, say)
    if cfg.memory_rounds and not cfg.only_ceilings:
        out["memory"] = memory_alike(cfg, mpm, ceiling)
    # last: a thousand connections leave Apache's memory larger (MaxMemFree
    # 0 keeps it), which would show in the next endpoint's Pss
    if mpm == "event" and cfg.idle and "/cached" in cfg.endpoints \
            and not cfg.only_ceilings:
        out["idle"] = idle_figure(cfg)
    if cfg.strace:
        targets = [("blog", p) for p in cfg.endpoints
                   if not cfg.only_ceilings]
        targets += [("floor", p) for k, p in sequence(cfg) if k == "floor"]
        for kind, path in targets:
            pid = ceiling.pid() if kind == "floor" else blog_pid(cfg)
            say("%s strace %s" % (mpm, path))
            per_req, top = loads.strace_syscalls(
                cfg, ports[kind], path, pid, "strace-%s-%s.txt"
                % (mpm, path.strip("/").replace("/", "_") or "index"))
            out["syscalls"][path] = {"per_req": per_req, "top": top}
    ceiling.stop()
    return out


def against_base(cfg):
    """The tree's module and stack against BENCH_BASE's module in
    BENCH_BASE_SPEC's configuration, alternated base, new, new, base
    within each of BASE_ROUNDS rounds (bench/sweep.py), every endpoint;
    each round's req/s and each side's CPU."""
    say("event: against %s, %d rounds of base, new, new, base"
        % (cfg.base, cfg.base_rounds))
    env, lines = sweep.parse("base:" + cfg.base_spec)[1]
    specs = [("base", (dict(env, BLOG_MODULE=cfg.base_module,
                            BLOG_MPM="event"), lines)),
             ("new", ({"BLOG_MPM": "event"}, []))]
    r = sweep.alternate(specs, cfg.endpoints, cfg.base_rounds,
                        cfg.base_seconds, cfg.base_warmup,
                        raw_dir=cfg.raw_dir, log=say)
    return {"commit": cfg.base, "spec": cfg.base_spec,
            "routes": {p: {n: r[n, p] for n in ("base", "new")}
                       for p in cfg.endpoints}}


def floor_beside(cfg, mpm, port, path):
    """For a cached route: one run of the quick_handler floor, to alternate
    with the route's own runs (loads.endpoint's beside)."""
    if path not in CACHED_ROUTES:
        return None
    raw = "wrk-%s-floor-beside-%s.txt" % (mpm, path.strip("/").replace("/", "_"))
    return lambda: loads.wrk(cfg, port, "/floor/quick", cfg.duration, raw)["rps"]


def sequence(cfg):
    """SEQUENCE for the chosen endpoints: a ceiling only when its endpoint
    runs, the quick_handler floor always (the cached routes' bar), the
    handler floor with the full set."""
    need = {"/index.html": "/cached", "/post-31.html": "/post/post-31/cached"}
    out = []
    for kind, path in SEQUENCE:
        if kind == "blog" and path not in cfg.endpoints:
            continue
        if kind == "static" and need[path] not in cfg.endpoints:
            continue
        if path == "/floor/handler" and not cfg.all_endpoints:
            continue
        out.append((kind, path))
    return out


def memory_alike(cfg, mpm, ceiling):
    """bench/memory.py's step: both Apaches restarted, then the same runs,
    alternated; each side's Pss at rest and half-way through each run."""
    say("%s: Apache's memory after the same load (%d rounds, both restarted)"
        % (mpm, cfg.memory_rounds))
    restart_blog(cfg, mpm)
    ceiling.start(mpm)
    ports = {"blog": cfg.blog_port, "stock": cfg.port}
    pids = {"blog": blog_pid(cfg), "stock": ceiling.pid()}
    time.sleep(1.0)
    idle = {side: procstat.pss_kib(pid) for side, pid in pids.items()}

    def run(side, path, during):
        return loads.wrk(cfg, ports[side], path, cfg.memory_seconds,
                         "wrk-%s-memory.txt" % mpm, during=during)

    runs = memory.measure(memory.plan(cfg.endpoints, cfg.memory_rounds), run,
                          lambda side: procstat.pss_kib(pids[side]))
    return memory.summary(idle, runs)


def idle_figure(cfg):
    """tests/e2e/idle_conns.py's measurement as a bench figure: /cached
    alone, then beside cfg.idle idle keep-alive connections."""
    say("event /cached beside %d idle keep-alive connections" % cfg.idle)
    r = idle_conns.measure(
        cfg.blog_port, "/cached", cfg.idle, cfg.idle_seconds,
        cfg.connections, cfg.threads, apache_pid=blog_pid(cfg),
        kat=idle_conns.keepalive_timeout(cfg.var), rounds=cfg.idle_rounds)
    keep = ("requests", "rps", "p50_us", "p99_us", "status", "socket_errors")
    for k in ("base", "loaded"):
        if r.get(k):
            r[k] = {f: r[k][f] for f in keep}
    return r


def round_trips(res):
    """PostgreSQL round trips per page: the transactions the database
    counted in each page's window, less the background rate seen while
    /compute (which never reads PostgreSQL) ran, over the requests sent."""
    for mpm, m in res["mpm"].items():
        comp = m["blog"].get("/compute")
        noise = comp["xacts"] / comp["window_s"] if comp else 0.0
        m["noise_xacts_per_s"] = noise
        for path, ep in m["blog"].items():
            if "xacts" not in ep:
                continue
            extra = noise * ep["window_s"] if path != "/compute" else 0.0
            ep["round_trips"] = max(ep["xacts"] - extra, 0) / ep["requests"]


def check_failures(res, cfg):
    fails = []
    for mpm, m in res["mpm"].items():
        # the peer's own errors are reported, not failures of the blog
        for path, runs in m.get("peer", {}).get("routes", {}).items():
            s = peer.summary(runs, cfg.connections)["blog"]
            if s["non2xx"] or s["socket_errors"] or s["bad_sizes"]:
                fails.append("%s %s beside the peer: %d non-2xx, %d socket "
                             "errors, %d runs of the wrong size" % (
                                 mpm, path, s["non2xx"], s["socket_errors"],
                                 s["bad_sizes"]))
        for path, pair in m.get("base", {}).get("routes", {}).items():
            for name, o in pair.items():
                if o["errors"]:
                    fails.append("%s %s against %s (%s): %d socket errors "
                                 "+ non-2xx" % (mpm, path, m["base"]["commit"],
                                                name, o["errors"]))
        for r in m.get("memory", {}).get("runs", []):
            if r["side"] == "blog" and (r["socket_errors"] or r["status_errors"]):
                fails.append("%s %s in the memory step: %d socket errors, %d "
                             "answers above 399" % (mpm, r["path"], r["socket_errors"],
                                                    r["status_errors"]))
        idle = m.get("idle")
        if idle:
            for k in ("base", "loaded"):
                if idle[k]["status"] or idle[k]["socket_errors"]:
                    fails.append("%s /cached %s idle connections: %d "
                                 "non-2xx, %d socket errors" % (
                                     mpm, "with" if k == "loaded"
                                     else "before", idle[k]["status"],
                                     idle[k]["socket_errors"]))
            if idle["answered"] != idle["idle"]:
                fails.append("%s: %d of %d idle connections were not "
                             "answered" % (mpm, idle["idle"] - idle["answered"],
                                           idle["idle"]))
        for kind in ("blog", "static", "floor"):
            for name, ep in m[kind].items():
                where = "%s %s %s" % (mpm, kind, name)
                if ep["non2xx"] or ep["socket_errors"]:
                    fails.append("%s: %d non-2xx, %d socket errors"
                                 % (where, ep["non2xx"], ep["socket_errors"]))
                # wrk counts status >= 400 only: a response of another size
                # (a redirect, a 404 page) shows in the bytes per response.
                # Responses cut off when wrk stops only add bytes.
                want = ep["response_bytes"]
                slack = want * cfg.connections * cfg.runs / max(
                    ep["timed_requests"], 1)
                got = ep["bytes_per_response"]
                if got < want * 0.99 or got > want * 1.01 + slack:
                    fails.append("%s: %.0f bytes per response, expected %d"
                                 % (where, got, want))
    return fails


def meta(cfg, started):
    def first_line(cmd):
        try:
            # wrk -v prints its version and exits 1
            return subprocess.run(cmd, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT,
                                  text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            return "unknown"
    return {
        "stamp": cfg.stamp,
        "started": datetime.datetime.fromtimestamp(started).isoformat(
            timespec="seconds"),
        "elapsed_s": time.time() - started,
        "cpus": os.cpu_count(),
        "cpu_model": next((line.split(":", 1)[1].strip() for line in
                           open("/proc/cpuinfo") if line.startswith(
                               "model name")), "unknown"),
        "kernel": platform.release(),
        "apache": first_line(["/usr/sbin/apache2", "-v"]),
        "postgresql": first_line(["psql", "-XAtq", "-d", "postgres", "-c",
                                  "SELECT version()"]),
        "wrk": first_line(["wrk", "-v"]),
        "loadavg_at_start": cfg.loadavg,
        "apache_settings": server_settings().replace("\n", " "),
        "apache_sched": SCHED,
        "ceiling_apache_settings": server_settings(
            connections=cfg.connections).replace("\n", " "),
        "config": cfg.public(),
    }


def main():
    started = time.time()
    cfg = Config(os.environ)
    # perf holds a descriptor per event and thread (some 40 x 200 for
    # Apache), idle_conns one per connection
    idle_conns.raise_nofile(65536)
    with open("/proc/loadavg") as f:
        cfg.loadavg = " ".join(f.read().split()[:3])
    os.makedirs(cfg.raw_dir)
    res = {"mpm": {}}
    if not cfg.only_ceilings and not cfg.check:
        run(["redis-cli", "-p", str(cfg.redis_port), "FLUSHALL"])
    elif not cfg.only_ceilings:
        say("flushing Redis, then checking every page")
        run(["redis-cli", "-p", str(cfg.redis_port), "FLUSHALL"])
        check = subprocess.run([sys.executable,
                                os.path.join(HERE, "checkpages.py"),
                                "127.0.0.1", str(cfg.blog_port)])
        if check.returncode != 0:
            say("the page check failed: no load is sent")
            return 1
    if cfg.peer:
        try:
            cfg.peer_about = peer.describe(cfg)
        except peer.PeerError as e:
            say("%s: no load is sent" % e)
            return 1
        say("the peer: " + peer.about_line(cfg.peer_about))
        if cfg.check:
            # the blog's check has just filled the keys both serve from
            sweep.flush_pages()
            check = subprocess.run([sys.executable,
                                    os.path.join(HERE, "checkpages.py"),
                                    cfg.peer[0], str(cfg.peer[1])])
            if check.returncode != 0:
                say("the peer's page check failed: it is not measured, "
                    "and no load is sent")
                return 1
    ceiling = CeilingApache(cfg.var, cfg.port, cfg.connections)
    ceiling.write_pages(cached_pages(cfg))
    res["db"] = db_ceilings(cfg)
    if "/compute" in cfg.endpoints:
        res["compute"] = compute_ceiling(cfg)
    last = None
    try:
        for mpm in cfg.mpms:
            last = mpm
            res["mpm"][mpm] = run_mpm(cfg, mpm, ceiling)
    finally:
        ceiling.stop()
        if last and last != "event" and not cfg.only_ceilings:
            say("back to the event MPM")
            restart_blog(cfg, "event")
    round_trips(res)
    res["failures"] = check_failures(res, cfg)
    res["meta"] = meta(cfg, started)
    with open(os.path.join(cfg.out_dir, "results.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    report.write(res, cfg.out_dir)
    latest = os.path.join(cfg.results, "latest")
    if os.path.islink(latest) or not os.path.exists(latest):
        tmp = latest + ".new"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(cfg.stamp, tmp)
        os.replace(tmp, latest)
    print(report.terminal(res))
    say("report: %s" % os.path.join(cfg.out_dir, "report.md"))
    if res["failures"]:
        for f in res["failures"]:
            say("FAILED: " + f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

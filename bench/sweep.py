#!/usr/bin/env python3
"""A short alternated comparison of Apache configurations of the private
stack (bench/LEVERS.md's tables): each round restarts Apache once per
configuration and runs wrk (50 connections, 2 threads, like `make bench`)
on each path; the configurations alternate within every round, so the
machine's drift moves them alike.  Prints a Markdown table of the median
req/s per path (and the ratio to the first configuration), with every
socket error and non-2xx response summed over the rounds, and Redis's
own CPU per GET (its process's user + system time over the GETs it ran,
from /proc and INFO commandstats; all runs of the path together), and
Apache's context switches per request (its processes' voluntary and
involuntary switches over the timed runs).

    flock -o /tmp/blog-load.lock python3 bench/sweep.py SPEC...

(-o: the Apache it restarts must not inherit the lock's descriptor, or it
holds the load lock for as long as it runs.)

SPEC is "name:VAR=value,VAR=value|Directive args|..." (the scripts/env.sh
variables, and BLOG_MODULE for another build of the module; each "|" adds
a line to the stack's httpd configuration for that configuration, through
var/httpd/conf.d/sweep.conf, e.g. an older module's own directives).  Environment: PATHS
(comma-separated, "/cached,/post/post-31/cached"), ROUNDS (3),
SECONDS_PER_RUN (3), WARMUP (1), FLUSH (1: every cached page is deleted
after each restart, so that configurations storing different values, such
as BlogCacheKey on and off, each start from their own misses).  A speed report, never a test: nothing
here passes or fails.
"""

import os
import statistics
import subprocess
import sys
import types

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import loads  # noqa: E402
import procstat  # noqa: E402


def redis_reading(port):
    """(Redis's CPU microseconds, GET calls so far), or None."""
    var = os.environ.get("BLOG_VAR", os.path.join(ROOT, "var"))
    try:
        with open(os.path.join(var, "run", "redis.pid")) as f:
            proc = procstat._proc(int(f.read()))
        gets = procstat.redis_commandstats(port).get("get", (0, 0))[0]
    except (OSError, ValueError):
        return None
    return (proc[1] + proc[2], gets) if proc else None


def apache_counters():
    """procstat.counters() of the stack's Apache, or None."""
    var = os.environ.get("BLOG_VAR", os.path.join(ROOT, "var"))
    try:
        with open(os.path.join(var, "run", "httpd.pid")) as f:
            return procstat.counters(int(f.read()))
    except (OSError, ValueError):
        return None


def parse(spec):
    name, _, rest = spec.partition(":")
    kv, *lines = rest.split("|")
    env = dict(x.split("=", 1) for x in kv.split(",") if x)
    return name, (env, lines)


def write_extra(lines):
    var = os.environ.get("BLOG_VAR", os.path.join(ROOT, "var"))
    path = os.path.join(var, "httpd", "conf.d", "sweep.conf")
    if lines:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
    elif os.path.exists(path):
        os.unlink(path)


def flush_pages():
    sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
    import blogtest
    blogtest.flush_page_keys()


def restart_with(lines, env=None, flush=True):
    """Apache restarted with lines in its configuration (none: as
    scripts/env.sh configures it), the cached pages deleted if flush."""
    write_extra(lines)
    subprocess.run([os.path.join(ROOT, "scripts/stack.sh"), "restart",
                    "httpd"], env=env, check=True, stdout=subprocess.DEVNULL)
    if flush:
        flush_pages()


def alternate(specs, paths, rounds, seconds, warmup, flush=True,
              raw_dir=None, log=None):
    """Run each configuration of specs ((name, (env, lines)) pairs) on
    every path, alternated within each round; Apache is left as
    scripts/env.sh configures it.  {(name, path): {"rps": [per round],
    "errors", "redis_us", "gets", "ctxsw", "requests"}}."""
    port = int(os.environ.get("BLOG_HTTP_PORT", "8080"))
    rport = int(os.environ.get("BLOG_REDIS_PORT", "63790"))
    cfg = types.SimpleNamespace(threads=2, connections=50, raw_dir=raw_dir)
    out = {(n, p): dict(rps=[], errors=0, redis_us=0, gets=0, ctxsw=0,
                        requests=0) for n, _ in specs for p in paths}
    try:
        for rnd in range(rounds):
            for name, (env, lines) in specs:
                restart_with(lines, dict(os.environ, **env), flush)
                for p in paths:
                    raw = raw_dir and "wrk-alt-%s-%s.txt" % (
                        name, p.strip("/").replace("/", "_") or "index")
                    loads.wrk(cfg, port, p, warmup)
                    r0, a0 = redis_reading(rport), apache_counters()
                    r = loads.wrk(cfg, port, p, seconds, raw)
                    r1, a1 = redis_reading(rport), apache_counters()
                    o = out[name, p]
                    if r0 and r1:
                        o["redis_us"] += r1[0] - r0[0]
                        o["gets"] += r1[1] - r0[1]
                    if a0 and a1:
                        o["ctxsw"] += procstat.delta(a0, a1)[1]
                        o["requests"] += r["requests"]
                    o["rps"].append(r["rps"])
                    o["errors"] += r["socket_errors"] + r["status"]
                    if log:
                        log("round %d %-24s %-22s %8.0f req/s %d errors"
                            % (rnd + 1, name, p, r["rps"],
                               r["socket_errors"] + r["status"]))
    finally:
        # leave the stack as scripts/env.sh configures it
        restart_with([], flush=False)
    return out


def main():
    specs = [parse(s) for s in sys.argv[1:]]
    if not specs:
        sys.exit(__doc__)
    paths = os.environ.get("PATHS", "/cached,/post/post-31/cached").split(",")
    res = alternate(specs, paths, int(os.environ.get("ROUNDS", "3")),
                    int(os.environ.get("SECONDS_PER_RUN", "3")),
                    int(os.environ.get("WARMUP", "1")),
                    flush=os.environ.get("FLUSH", "1") == "1",
                    log=lambda m: print(m, file=sys.stderr, flush=True))
    first = specs[0][0]
    print("| configuration | " + " | ".join(paths) + " |")
    print("|---|" + "---:|" * len(paths))
    for name, _ in specs:
        cells = []
        for p in paths:
            o = res[name, p]
            med = statistics.median(o["rps"])
            ratio = med / statistics.median(res[first, p]["rps"])
            cells.append("%.0f (%.2f) %d err%s%s"
                         % (med, ratio, o["errors"],
                            ", %.2f ctxsw/req" % (o["ctxsw"] / o["requests"])
                            if o["requests"] else "",
                            ", Redis %.1f us/GET" % (o["redis_us"] / o["gets"])
                            if o["gets"] > 1000 else ""))
        print("| %s | %s |" % (name, " | ".join(cells)))


if __name__ == "__main__":
    main()

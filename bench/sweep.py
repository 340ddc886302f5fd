#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A short alternated comparison of Apache configurations of the private
stack (the figures of docs/DECISIONS.md): each round runs the
configurations in order then in reverse (A B B A; ABBA=0: once, in order), Apache restarted
before each, and wrk (50 connections, 2 threads, like `make bench`) on
each path, so that a drift linear in time weighs on every configuration
alike.  Prints a Markdown table, a column per path: the median req/s and, against
the first configuration, the median of the per-round ratios with a 95 %
bootstrap interval; socket errors + non-2xx summed over the rounds; the
CPU per request of Apache (parent and children) and PostgreSQL (the
postmaster and its backends), from /proc over the timed runs, which moves
less than req/s on a shared machine; Apache's minor faults and context
switches per request; Redis's own CPU per GET; and each run's p99 / p50
(wrk's), in the order run.

    flock -o /tmp/blog-load.lock python3 bench/sweep.py SPEC...

(-o: the Apache it restarts must not inherit the lock's descriptor, or it
holds the load lock for as long as it runs.)

SPEC is "name:VAR=value,VAR=value|Directive args|..." (the scripts/env.sh
variables, BLOG_MODULE for another build of the module, and CPUS for the
CPUs each side may run on, bench/placement.py's spec; each "|" adds
a line to the stack's httpd configuration for that configuration, through
var/httpd/conf.d/sweep.conf, e.g. an older module's own directives).  Environment: PATHS
(comma-separated, "/cached,/post/post-31/cached"), ROUNDS (3),
SECONDS_PER_RUN (3), WARMUP (1), ABBA (1), FLUSH (1: every cached page is deleted
after each restart, so that configurations storing different values, such
as BlogCacheKey on and off, each start from their own misses).  A speed report, never a test: nothing
here passes or fails.
"""

import os
import random
import statistics
import subprocess
import sys
import types

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import loads  # noqa: E402
import placement  # noqa: E402
import procs  # noqa: E402
import procstat  # noqa: E402


def _pid(name):
    """The pid in the stack's pid file name (under BLOG_VAR), or None."""
    var = os.environ.get("BLOG_VAR", os.path.join(ROOT, "var"))
    return procs.pid_from(os.path.join(var, name))


def sides():
    """The stack's servers for procstat.snapshot."""
    return procstat.stack_sides(_pid)


def gets(port):
    """GET calls Redis has run so far, or None."""
    try:
        return procstat.redis_commandstats(port).get("get", (0, 0))[0]
    except OSError:
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


SIDES = ("apache", "pg", "redis")


def alternate(specs, paths, rounds, seconds, warmup, flush=True,
              raw_dir=None, log=None, abba=True):
    """Run each configuration of specs ((name, (env, lines)) pairs) on
    every path, alternated within each round: with abba, each round runs
    the configurations in order then in reverse (A B B A), Apache
    restarted before each, so that a drift linear in time weighs on every
    configuration alike within the round.  Apache is left as
    scripts/env.sh configures it.  {(name, path): {"rps": [per round, the
    mean of its runs], "errors", "requests", "ctxsw", "minflt", "us":
    {side: CPU us summed}, "redis_us", "gets", "tails": each run's p99 /
    p50}}; divide the sums by "requests" (Redis's us by "gets")."""
    port = int(os.environ.get("BLOG_HTTP_PORT", "8080"))
    rport = int(os.environ.get("BLOG_REDIS_PORT", "63790"))
    cfg = types.SimpleNamespace(threads=2, connections=50, raw_dir=raw_dir)
    out = {(n, p): dict(rps=[], tails=[], errors=0, requests=0, ctxsw=0,
                        minflt=0,
                        us=dict.fromkeys(SIDES, 0.0), redis_us=0.0, gets=0)
           for n, _ in specs for p in paths}
    order = specs + specs[::-1] if abba else specs
    # only when asked: PostgreSQL and Redis keep a placement across restarts
    placing = any("CPUS" in env for _, (env, _) in specs)
    try:
        for rnd in range(rounds):
            runs = {}
            for name, (env, lines) in order:
                restart_with(lines, dict(os.environ, **env), flush)
                for p in paths:
                    raw = raw_dir and "wrk-alt-%s-%s.txt" % (
                        name, p.strip("/").replace("/", "_") or "index")
                    loads.wrk(cfg, port, p, warmup)
                    if placing:
                        # after the warm-up, which opens the pools'
                        # connections
                        placement.place(env.get("CPUS", ""), _pid)
                    g0, s0 = gets(rport), procstat.snapshot(sides())
                    r = loads.wrk(cfg, port, p, seconds, raw)
                    s1, g1 = procstat.snapshot(sides()), gets(rport)
                    d, _ = procstat.delta_all(s0, s1)
                    o = out[name, p]
                    for side in SIDES:
                        if side in d:
                            o["us"][side] += d[side]["user_us"] + \
                                d[side]["sys_us"]
                    if "apache" in d:
                        o["ctxsw"] += d["apache"]["ctxsw"]
                        o["minflt"] += d["apache"]["minflt"]
                    if g0 is not None and g1 is not None and "redis" in d:
                        o["redis_us"] += d["redis"]["user_us"] + \
                            d["redis"]["sys_us"]
                        o["gets"] += g1 - g0
                    o["requests"] += r["requests"]
                    if r.get("p50_us"):
                        o["tails"].append(r["p99_us"] / r["p50_us"])
                    o["errors"] += r["socket_errors"] + r["status"]
                    runs.setdefault((name, p), []).append(r["rps"])
                    if log:
                        log("round %d %-24s %-22s %8.0f req/s %d errors, "
                            "Apache %.1f us/req"
                            % (rnd + 1, name, p, r["rps"],
                               r["socket_errors"] + r["status"],
                               (d.get("apache", {}).get("user_us", 0)
                                + d.get("apache", {}).get("sys_us", 0))
                               / max(r["requests"], 1)))
            for key, v in runs.items():
                out[key]["rps"].append(statistics.mean(v))
    finally:
        # leave the stack as scripts/env.sh configures it
        restart_with([], flush=False)
        if placing:
            placement.reset(_pid)
    return out


def ratio_stats(new, base, resamples=4000):
    """Per-round ratios new / base (lists of per-round req/s), their
    median and a 95 % percentile-bootstrap interval of that median."""
    ratios = [n / b for n, b in zip(new, base) if b]
    if not ratios:
        return [], 0.0, (0.0, 0.0)
    rng = random.Random(20)
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                  for _ in range(resamples))
    return (ratios, statistics.median(ratios),
            (meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]))


def main():
    specs = [parse(s) for s in sys.argv[1:]]
    if not specs:
        sys.exit(__doc__)
    paths = os.environ.get("PATHS", "/cached,/post/post-31/cached").split(",")
    res = alternate(specs, paths, int(os.environ.get("ROUNDS", "3")),
                    int(os.environ.get("SECONDS_PER_RUN", "3")),
                    int(os.environ.get("WARMUP", "1")),
                    flush=os.environ.get("FLUSH", "1") == "1",
                    abba=os.environ.get("ABBA", "1") == "1",
                    log=lambda m: print(m, file=sys.stderr, flush=True))
    first = specs[0][0]
    print("| configuration | " + " | ".join(paths) + " |")
    print("|---|" + "---:|" * len(paths))
    for name, _ in specs:
        cells = []
        for p in paths:
            o = res[name, p]
            med = statistics.median(o["rps"])
            _, ratio, (lo, hi) = ratio_stats(o["rps"], res[first, p]["rps"])
            n = max(o["requests"], 1)
            cells.append("%.0f (%.2f [%.2f, %.2f]) %d err, Apache %.1f us, "
                         "PG %.1f us, %.3f minflt%s%s, p99/p50 %s"
                         % (med, ratio, lo, hi, o["errors"],
                            o["us"]["apache"] / n, o["us"]["pg"] / n,
                            o["minflt"] / n,
                            ", %.2f ctxsw/req" % (o["ctxsw"] / o["requests"])
                            if o["requests"] else "",
                            ", Redis %.1f us/GET" % (o["redis_us"] / o["gets"])
                            if o["gets"] > 1000 else "",
                            " ".join("%.1f" % t for t in o["tails"])))
        print("| %s | %s |" % (name, " | ".join(cells)))


if __name__ == "__main__":
    main()

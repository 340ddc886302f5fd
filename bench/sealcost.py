#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What BlogCacheKey costs on the cached routes (its bar: at most 5 % of
req/s), measured two ways in one run of the private stack.

Each round restarts Apache with the key off and with it on (the order
swapped every other round, so that a drift during a round weighs on both
alike), deletes the cached pages (each configuration stores its own
values), and runs wrk (50 connections, 2 threads, as `make bench`) on each
path.  Per run it records req/s and the CPU each side spent per request:
Apache's children (utime + stime from /proc), Redis's process, and wrk's
own rusage.  req/s on a saturated machine goes as 1 / (CPU per request),
and CPU per request moves far less than req/s with whatever else loads
the machine, so the ratio of CPU per request (key on / key off) is the
estimator that resolves a few per cent; the ratio of req/s is shown
beside it.  Both as the geometric mean of the per-round ratios, with a
95 % interval (Student's t over the rounds' log ratios).  Before the
timed runs it checks that the key is what it claims: every stored page
starts with the seal's magic with the key on, and none with it off.

Then, with PERF=1 (the default; linux-perf installed), a third estimator that no other load
can move: one run per path with the key on under `perf record` (CPU
clock samples of Apache's processes only), and the share of those
samples in libcrypto and seal.c, which on a cache hit run for the seal
alone (no TLS on the stack's connections).  That share of Apache's CPU
per request is the seal's cost in microseconds per request.

    flock -o /tmp/blog-load.lock python3 bench/sealcost.py

Environment: PATHS ("/cached,/post/post-31/cached"), ROUNDS (12),
SECONDS_PER_RUN (3), WARMUP (1), PERF (1), PERF_SECONDS (8).  A speed report, never a test.
"""

import math
import os
import shutil
import statistics
import subprocess
import sys
import types

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import blogtest  # noqa: E402
import loads  # noqa: E402
import procstat  # noqa: E402
import sweep  # noqa: E402

# two-sided 95 % quantiles of Student's t, by degrees of freedom
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36,
       8: 2.31, 9: 2.26, 10: 2.23, 11: 2.20, 12: 2.18, 13: 2.16, 14: 2.14,
       15: 2.13, 16: 2.12, 17: 2.11, 18: 2.10, 19: 2.09, 20: 2.09}


def key_file():
    var = os.environ.get("BLOG_VAR", os.path.join(ROOT, "var"))
    path = os.path.join(var, "sealcost.key")
    if not os.path.exists(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(32))
        os.close(fd)
    return path


def pid_of(name):
    var = os.environ.get("BLOG_VAR", os.path.join(ROOT, "var"))
    with open(os.path.join(var, "run", name + ".pid")) as f:
        return int(f.read())


def sealed_values(paths):
    """How many of the paths' stored pages carry the seal's magic (a
    cached route stores the page of its path less "/cached")."""
    r = blogtest.Redis()
    try:
        vals = [r.cmd("GET", "blog:page:" + (p[:-len("/cached")] or "/"))
                for p in paths]
    finally:
        r.close()
    if any(v is None for v in vals):
        raise SystemExit("a page was not stored after its warm-up")
    return sum(1 for v in vals if v[:4] == b"BLS1")


def one_run(cfg, port, path, seconds):
    sides = {"apache": (pid_of("httpd"), True), "redis": (pid_of("redis"),
                                                          False)}
    before = procstat.snapshot(sides)
    r = loads.wrk(cfg, port, path, seconds)
    after = procstat.snapshot(sides)
    d, _ = procstat.delta_all(before, after)
    n = max(r["requests"], 1)
    cpu = {s: (d[s]["user_us"] + d[s]["sys_us"]) / n for s in d}
    cpu["wrk"] = (r["rusage"]["user_us"] + r["rusage"]["sys_us"]) / n
    cpu["all"] = sum(cpu.values())
    return r["rps"], r["socket_errors"] + r["status"], cpu


def perf_share(cfg, port, path, seconds):
    """(share of Apache's CPU samples in the seal, samples, Apache CPU us
    per request) over one run of path."""
    var = os.environ.get("BLOG_VAR", os.path.join(ROOT, "var"))
    data = os.path.join(var, "sealcost.perf")
    pids = procstat.tree(pid_of("httpd"))
    perf = subprocess.Popen(["perf", "record", "-F", "1999", "-o", data,
                             "-p", ",".join(map(str, pids)), "--", "sleep",
                             str(seconds)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, _, cpu = one_run(cfg, port, path, seconds)
    perf.wait()
    out = subprocess.run(["perf", "report", "-i", data, "--stdio", "-q",
                          "--sort", "dso,sym", "--show-nr-samples"],
                         capture_output=True, text=True, check=True).stdout
    total = seal = 0
    for line in out.splitlines():
        f = line.split()
        # "  1.23%  456  libcrypto.so.3  [.] gcm_ghash_avx"
        if len(f) < 5 or not f[0].endswith("%"):
            continue
        n = int(f[1])
        total += n
        if f[2].startswith("libcrypto") or "seal" in f[4]:
            seal += n
    os.unlink(data)
    return seal / max(total, 1), total, cpu["apache"]


def gmean_ci(ratios):
    logs = [math.log(x) for x in ratios]
    m = statistics.mean(logs)
    if len(logs) < 2:
        return math.exp(m), float("nan"), float("nan")
    h = T95.get(len(logs) - 1, 2.0) * statistics.stdev(logs) / math.sqrt(
        len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def main():
    paths = os.environ.get("PATHS", "/cached,/post/post-31/cached").split(",")
    rounds = int(os.environ.get("ROUNDS", "12"))
    seconds = int(os.environ.get("SECONDS_PER_RUN", "3"))
    warmup = int(os.environ.get("WARMUP", "1"))
    port = int(os.environ.get("BLOG_HTTP_PORT", "8080"))
    cfg = types.SimpleNamespace(threads=2, connections=50, raw_dir=None)
    confs = {"off": [], "on": ["BlogCacheKey " + key_file()]}
    runs = {(c, p): [] for c in confs for p in paths}
    for rnd in range(rounds):
        order = ["off", "on"] if rnd % 2 == 0 else ["on", "off"]
        for name in order:
            sweep.restart_with(confs[name])
            for p in paths:
                loads.wrk(cfg, port, p, warmup)
            sealed = sealed_values(paths)
            if sealed != (len(paths) if name == "on" else 0):
                raise SystemExit("key %s but %d of %d pages sealed"
                                 % (name, sealed, len(paths)))
            for p in paths:
                rps, err, cpu = one_run(cfg, port, p, seconds)
                runs[name, p].append((rps, err, cpu))
                print("round %2d key %-3s %-22s %7.0f req/s %d err, CPU us/req:"
                      " Apache %.1f Redis %.1f wrk %.1f" %
                      (rnd + 1, name, p, rps, err, cpu["apache"],
                       cpu["redis"], cpu["wrk"]), file=sys.stderr, flush=True)
    shares = {}
    if os.environ.get("PERF", "1") == "1" and shutil.which("perf"):
        pseconds = int(os.environ.get("PERF_SECONDS", "8"))
        sweep.restart_with(confs["on"])
        for p in paths:
            loads.wrk(cfg, port, p, warmup)
            shares[p] = perf_share(cfg, port, p, pseconds)
    sweep.restart_with([], flush=False)

    print("Medians over %d rounds (%d s runs); CPU in us per request:\n"
          % (rounds, seconds))
    print("| path | key | req/s | errors | Apache | Redis | wrk | all |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for p in paths:
        for c in confs:
            rs = runs[c, p]
            med = lambda k: statistics.median(x[2][k] for x in rs)  # noqa
            print("| %s | %s | %.0f | %d | %.1f | %.1f | %.1f | %.1f |"
                  % (p, c, statistics.median(x[0] for x in rs),
                     sum(x[1] for x in rs), med("apache"), med("redis"),
                     med("wrk"), med("all")))
    print("\nKey on / key off, geometric mean of the per-round ratios "
          "[95 % interval]:\n")
    print("| path | req/s | Apache CPU/req | all CPU/req | rounds req/s "
          "on < 0.95 off |")
    print("|---|---:|---:|---:|---:|")
    for p in paths:
        on, off = runs["on", p], runs["off", p]
        rq = gmean_ci([a[0] / b[0] for a, b in zip(on, off)])
        ap = gmean_ci([a[2]["apache"] / b[2]["apache"]
                       for a, b in zip(on, off)])
        al = gmean_ci([a[2]["all"] / b[2]["all"] for a, b in zip(on, off)])
        low = sum(1 for a, b in zip(on, off) if a[0] < 0.95 * b[0])
        print("| %s | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] | "
              "%.3f [%.3f, %.3f] | %d of %d |" % ((p,) + rq + ap + al
                                                 + (low, rounds)))
    if shares:
        print("\nKey on under perf record: Apache's CPU samples in "
              "libcrypto and seal.c:\n")
        print("| path | samples | seal's share | Apache CPU/req | seal "
              "us/req |")
        print("|---|---:|---:|---:|---:|")
        for p, (share, n, ap) in shares.items():
            print("| %s | %d | %.2f %% | %.1f us | %.2f us |"
                  % (p, n, 100 * share, ap, share * ap))


if __name__ == "__main__":
    main()

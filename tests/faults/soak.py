#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make soak`: at least 1 000 000 mixed requests (tests/faults/soak.lua:
every route, 1 000 posts, 30 tags, 404s with and without the
database) against the private stack, in wrk runs of SOAK_SEGMENT seconds.
Before, between the runs and after, prints each Apache child's RSS and
open fds and mod_blog's PostgreSQL connections; passes when they stay flat
after the first run (the warm-up): RSS growth under 2 MiB per child, fds
and connections unchanged, the same children throughout, and no status but
200 and the 404s the rotation asks for.  Each run takes the load lock
(BLOG_LOAD_LOCK).  Ends with `N passed, N failed`.
"""

import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import (T, bt, child_rss, healthy, load_lock, open_fds,  # noqa: E402
                    stable_children, blog_connections)

TARGET = int(os.environ.get("SOAK_REQUESTS", "1000000"))
SEGMENT = int(os.environ.get("SOAK_SEGMENT", "20"))
MAX_SECONDS = int(os.environ.get("SOAK_MAX_SECONDS", "600"))
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "soak.lua")


def reading(label, total):
    rss = child_rss()
    fds = {p: open_fds(p) for p in rss}
    conns = blog_connections()
    print("%-10s %9d  %s  %s  %3d" % (
        label, total, " ".join("%7d" % (rss[p] // 1) for p in sorted(rss)),
        " ".join("%4d" % fds[p] for p in sorted(fds)), conns), flush=True)
    return rss, fds, conns


def cpu_seconds(pid):
    """User + system CPU time of a process (all its threads)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))
    except (OSError, IndexError, ValueError):
        return 0.0


def segment(seconds):
    with load_lock():
        p = subprocess.run(["wrk", "-t2", "-c32", "-d%ds" % seconds, "--timeout", "10s",
                            "--latency", "-s", SCRIPT,
                            "http://127.0.0.1:%d/" % bt.HTTP_PORT],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=seconds + 60)
    text = p.stdout.decode()
    n = int((re.search(r"(\d+) requests in", text) or [0, 0])[1])
    m = re.search(r"soak-statuses 200=(\d+) 404=(\d+) other=(\d+) expected404share=([\d.]+)", text)
    errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    p99 = re.search(r"99%\s+(\S+)", text)
    return {"requests": n, "ok": int(m[1]) if m else 0, "n404": int(m[2]) if m else 0,
            "other": int(m[3]) if m else -1, "share404": float(m[4]) if m else 0.0,
            "errors": sum(int(x) for x in errs.groups()) if errs else 0,
            "p99": p99[1] if p99 else "?", "text": text}


def main():
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    out = bt.stack("start")
    if not T.check(out.returncode == 0 and healthy(30), "the stack is up"):
        T.finish()
    kids = stable_children()
    print("soak: %d requests in wrk runs of %d s (soak.lua); children %s"
          % (TARGET, SEGMENT, kids))
    print("%-10s %9s  %s  %s  %s" % ("when", "requests", "RSS KiB per child".ljust(8 * len(kids) - 1),
                                   "fds per child".ljust(5 * len(kids) - 1), "PG"))
    before = reading("before", 0)
    cpu0 = {p: cpu_seconds(p) for p in kids}
    total = ok = n404 = other = errors = 0
    share = 0.0
    t0 = time.monotonic()
    warm = None
    runs = warm_runs = 0
    while total < TARGET and time.monotonic() - t0 < MAX_SECONDS:
        seconds = 10 if warm is None else SEGMENT
        r = segment(seconds)
        runs += 1
        total += r["requests"]
        ok, n404, other = ok + r["ok"], n404 + r["n404"], other + max(r["other"], 0)
        errors += r["errors"]
        share = r["share404"]
        if r["other"] < 0:
            T.check(False, "wrk ran the soak script", r["text"][-500:])
            break
        label = "warm-up" if warm is None else "run %d" % (runs - warm_runs)
        now = reading(label, total)
        print("%-10s %s req/s, p99 %s" % ("", round(r["requests"] / seconds), r["p99"]),
              flush=True)
        # warm once every child has served a share (a second of CPU since
        # the start): wrk's connections do not reach every child at once
        if warm is None and all(cpu_seconds(p) - cpu0.get(p, 0) >= 1.0 for p in kids):
            warm, warm_runs = now, runs
    took = time.monotonic() - t0
    time.sleep(2)
    after = reading("after", total)
    print("soak: %d requests in %.0f s: %d x 200, %d x 404, %d other, %d socket errors"
          % (total, took, ok, n404, other, errors))
    T.check(total >= TARGET, "at least %d requests" % TARGET, "%d" % total)
    T.check(other == 0 and errors == 0, "only 200 and 404 answers, no socket error",
            "%d other, %d socket errors" % (other, errors))
    got = n404 / float(max(1, ok + n404))
    T.check(abs(got - share) < 0.01, "404s are the rotation's share (%.2f%%)" % (100 * share),
            "%.2f%%" % (100 * got))
    T.check(sorted(after[0]) == sorted(before[0]) == sorted(kids),
            "the same children before, during and after", "%s -> %s" % (kids, sorted(after[0])))
    T.check(warm is not None, "every child served during the soak", "fds %s" % after[1])
    if warm:
        grow = {p: after[0].get(p, 0) - warm[0][p] for p in warm[0]}
        T.check(max(grow.values()) < 2048, "RSS growth after warm-up under 2 MiB per child",
                "%s KiB" % grow)
        # the pools may close idle connections above BlogPoolKeep meanwhile:
        # flat means no growth, not the same count
        T.check(all(after[1].get(p, 0) <= warm[1][p] + 2 for p in warm[1]),
                "open fds flat after warm-up (no child gains more than 2)",
                "%s -> %s" % (warm[1], after[1]))
        T.check(after[2] <= max(warm[2], 16), "PostgreSQL connections flat (at most 16)",
                "%d -> %d" % (warm[2], after[2]))
        print("soak: RSS growth after warm-up per child (KiB): %s; fds %s -> %s; PG %d -> %d"
              % (" ".join("%+d" % grow[p] for p in sorted(grow)),
                 sum(warm[1].values()), sum(after[1].values()), warm[2], after[2]))
    T.finish()


if __name__ == "__main__":
    main()

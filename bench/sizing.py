#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make sizing`: the figures of docs/OPERATIONS.md, "Sizing", measured on
this machine for several ThreadsPerChild (4 children, the stack's other
settings): Apache's memory (the sum of Pss over the parent and children)
idle and under the fair run's load, beside a stock Apache with the same
MPM settings (bench/ceiling_httpd.py: the cached index as a static file,
the same wrk load); the blog's req/s under that load; and how many clients
trickling request headers the blog takes while a client asking for / and
/cached every 100 ms still gets every answer quickly (tests/faults'
siege, at workers - 100 tricklers, 1 000 at most).

    make sizing          # the stack started first; takes the load lock
    SIZING_THREADS="25 50 300" SIZING_SECONDS=8 make sizing
    SIZING_HOLDS="off 2ms 100ms" make sizing    # the hold's table only

Then the hold (BlogConnectionHold) where workers are scarce: 4 x 25
threads, SIZING_SLOW (50) clients trickling headers, wrk with 500
connections on the six routes, for each hold in SIZING_HOLDS ("off 2ms
20ms 100ms"; set SIZING_THREADS="" for this table alone).  With 300
trickling clients the 100 workers are all theirs and nothing is answered
within the run, whatever the hold.

A report, never a test: nothing passes or fails.  The stack's Apache is
restarted with each setting and left with the stack's own at the end.
"""

import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "faults"))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import loadlock  # noqa: E402
import procstat  # noqa: E402
from ceiling_httpd import CeilingApache  # noqa: E402
import common  # noqa: E402  (tests/faults: the siege and its prober)

MIX = """local paths = {"/", "/post/post-31", "/tag/tag-7", "/cached",
                "/post/post-31/cached", "/compute"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[i % #paths + 1])
end
"""
VAR = os.environ["BLOG_VAR"]
PORT = int(os.environ.get("BLOG_HTTP_PORT", "8080"))
STOCK_PORT = int(os.environ.get("BENCH_CEILING_PORT", "8081"))


def stack(threads, hold=None):
    env = dict(os.environ, BLOG_INVALIDATE="off")
    if threads:
        env["BLOG_THREADS"] = str(threads)
    if hold:
        env["BLOG_HOLD"] = hold
    subprocess.run([os.path.join(ROOT, "scripts", "stack.sh"), "restart", "httpd"],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    with open(os.path.join(VAR, "run", "httpd.pid")) as f:
        return int(f.read().split()[0])


def loaded_pss(pid, url, seconds, script=None):
    """wrk (50 connections, 2 threads) for `seconds`; Pss sampled half-way
    and at three quarters (the larger); req/s."""
    cmd = ["wrk", "-t2", "-c50", "-d%ds" % seconds]
    if script:
        cmd += ["-s", script]
    w = subprocess.Popen(cmd + [url], stdout=subprocess.PIPE, text=True)
    time.sleep(seconds / 2.0)
    pss = procstat.pss_kib(pid)
    time.sleep(seconds / 4.0)
    pss = max(pss, procstat.pss_kib(pid))
    out = w.communicate()[0]
    rps = next((float(line.split()[1]) for line in out.splitlines()
                if line.startswith("Requests/sec")), 0.0)
    return pss, rps


def slow_capacity(threads):
    n = max(0, min(1000, 4 * threads - 100))
    probe, heads, _ = common.siege(n, 0, 5.0)
    lat = probe.latencies()
    return n, len(probe.answers), len(probe.failures), common.pct(lat, 50), common.pct(lat, 99)


def one(threads, seconds, mix):
    row = {"threads": threads}
    pid = stack(threads)
    time.sleep(1.0)
    row["blog_idle"] = procstat.pss_kib(pid)
    row["blog_load"], row["rps"] = loaded_pss(pid, "http://127.0.0.1:%d/" % PORT, seconds, mix)
    stock = CeilingApache(VAR, STOCK_PORT)
    with open(os.path.join(ROOT, "tests", "golden", "index.html"), "rb") as f:
        stock.write_pages({"index.html": f.read()})
    spid = stock.start("event")
    try:
        time.sleep(1.0)
        row["stock_idle"] = procstat.pss_kib(spid)
        row["stock_load"], _ = loaded_pss(spid, "http://127.0.0.1:%d/index.html" % STOCK_PORT,
                                          seconds)
    finally:
        stock.stop()
    row["slow"], row["answers"], row["failed"], row["p50"], row["p99"] = slow_capacity(threads)
    return row


def wrk_figures(out):
    """req/s, p50 and p99 in ms, socket errors and non-2xx of wrk --latency."""
    def ms(v):
        return float(v[:-2]) if v.endswith("ms") else (
            float(v[:-2]) / 1000.0 if v.endswith("us") else float(v[:-1]) * 1000.0)
    f = {"rps": 0.0, "p50": 0.0, "p99": 0.0, "errors": 0, "non2xx": 0}
    for line in out.splitlines():
        w = line.split()
        if line.startswith("Requests/sec"):
            f["rps"] = float(w[1])
        elif len(w) == 2 and w[0] in ("50%", "99%"):
            f["p" + w[0][:-1]] = ms(w[1])
        elif line.strip().startswith("Socket errors"):
            f["errors"] = sum(int(x.strip(",")) for x in w[3::2])
        elif line.strip().startswith("Non-2xx"):
            f["non2xx"] = int(w[-1])
    return f


def scarce(hold, seconds, mix, slow):
    """4 x 25 threads, `slow` trickling clients, wrk -c500 over the six routes."""
    import fakes
    import idle_conns
    stack(25, hold)
    idle_conns.raise_nofile(slow + 500 + 256)
    with fakes.SlowClients(PORT, n=slow):
        time.sleep(2.0)
        with common.Prober(port=PORT) as probe:
            out = subprocess.run(["wrk", "-t2", "-c500", "-d%ds" % seconds, "--latency",
                                  "-s", mix, "http://127.0.0.1:%d/" % PORT],
                                 stdout=subprocess.PIPE, text=True).stdout
    row = wrk_figures(out)
    lat = probe.latencies()
    row.update(hold=hold, answers=len(probe.answers), failed=len(probe.failures),
               pp50=1000 * common.pct(lat, 50), pp99=1000 * common.pct(lat, 99))
    return row


def scarce_table(rows):
    out = ["| BlogConnectionHold | wrk req/s | wrk p50 / p99 ms | wrk socket errors, "
           "non-2xx | prober: answers, failed, p50 / p99 ms |", "|---|---:|---:|---:|---|"]
    for r in rows:
        out.append("| %s | %.0f | %.1f / %.1f | %d, %d | %d, %d, %.1f / %.1f |" % (
            r["hold"], r["rps"], r["p50"], r["p99"], r["errors"], r["non2xx"],
            r["answers"], r["failed"], r["pp50"], r["pp99"]))
    return "\n".join(out)


def table(rows):
    out = ["| ThreadsPerChild (workers) | blog Pss idle / under load, MiB | stock Apache, "
           "MiB | blog / stock under load | blog req/s (mix) | trickling clients: "
           "prober's answers, failed, p50, p99 |",
           "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        out.append("| %d (%d) | %.1f / %.1f | %.1f / %.1f | %.2f | %.0f | %d: %d, %d, %.1f ms, "
                   "%.1f ms |" % (
                       r["threads"], 4 * r["threads"], r["blog_idle"] / 1024.0,
                       r["blog_load"] / 1024.0, r["stock_idle"] / 1024.0,
                       r["stock_load"] / 1024.0, r["blog_load"] / max(r["stock_load"], 1),
                       r["rps"], r["slow"], r["answers"], r["failed"], 1000 * r["p50"],
                       1000 * r["p99"]))
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        dt = 4.0 * (b["threads"] - a["threads"])
        out.append("")
        out.append("Per worker thread, under load: the blog %.1f KiB, stock Apache %.1f KiB."
                   % ((b["blog_load"] - a["blog_load"]) / dt,
                      (b["stock_load"] - a["stock_load"]) / dt))
    return "\n".join(out)


def main():
    threads = [int(t) for t in os.environ.get("SIZING_THREADS", "25 50 100 300").split()]
    holds = os.environ.get("SIZING_HOLDS", "off 2ms 20ms 100ms").split()
    slow = int(os.environ.get("SIZING_SLOW", "50"))
    seconds = int(os.environ.get("SIZING_SECONDS", "8"))
    rows, hold_rows = [], []
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as mix:
        mix.write(MIX)
        mix.flush()
        with loadlock.held(lambda m: print("sizing: " + m, flush=True)):
            try:
                for t in threads:
                    print("sizing: %d threads per child" % t, flush=True)
                    rows.append(one(t, seconds, mix.name))
                for h in holds:
                    print("sizing: 4 x 25 threads, %d trickling, BlogConnectionHold %s"
                          % (slow, h), flush=True)
                    hold_rows.append(scarce(h, seconds, mix.name, slow))
            finally:
                stack(None)
    if rows:
        print(table(rows))
    if hold_rows:
        print()
        print("Workers scarce (4 x 25 threads, %d clients trickling headers, wrk -c500 "
              "over the six routes for %d s, a prober asking / and /cached every 100 ms):"
              % (slow, seconds))
        print(scarce_table(hold_rows))


if __name__ == "__main__":
    sys.exit(main())

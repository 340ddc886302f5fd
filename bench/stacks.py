#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The workers' stack pages by route: for each route given, the stack's
Apache restarted, then 12 s of wrk (50 connections, `Connection: close`,
so that every worker serves in turn), then the Rss of each thread's stack
mapping (an anonymous 8 MiB one in /proc/PID/smaps) over the children.
A report, never a test; takes the load lock.

    . scripts/env.sh && python3 bench/stacks.py / /cached /tag/tag-7
"""

import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import blogtest as bt  # noqa: E402
import loadlock  # noqa: E402

MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(.*)$")


def stack_rss(pid):
    """Rss in KiB of each thread stack of pid (8 MiB anonymous mappings)."""
    out, inside = [], False
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            m = MAPPING.match(line)
            if m:
                kib = (int(m.group(2), 16) - int(m.group(1), 16)) // 1024
                inside = (m.group(5) == "" and m.group(3).startswith("rw")
                          and 8000 <= kib <= 8200)
            elif inside and line.startswith("Rss:"):
                out.append(int(line.split()[1]))
    return out


def measure(route):
    bt.stack("restart", "httpd")
    time.sleep(1)
    url = "http://%s:%d%s" % (bt.HOST, bt.HTTP_PORT, route)
    subprocess.run(["curl", "-s", "-o", "/dev/null", url], check=False)
    out = subprocess.run(["wrk", "-t2", "-c50", "-d12s", "-H", "Connection: close",
                          url], stdout=subprocess.PIPE, text=True, check=False).stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    rss = [k for c in bt.children() for k in stack_rss(c)]
    used = [k for k in rss if k > 4]
    print("%-24s %8s req/s  %4d stacks, %4d used: %.1f MiB, %.1f KiB a used one"
          % (route, rate.group(1) if rate else "?", len(rss), len(used),
             sum(rss) / 1024.0, sum(used) / len(used) if used else 0.0),
          flush=True)


def main():
    routes = sys.argv[1:] or ["/compute", "/", "/cached", "/tag/tag-7"]
    with loadlock.held():
        for route in routes:
            measure(route)
    bt.stack("restart", "httpd")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/memory.py's step (both Apaches given the same runs) and the
report's memory table, on made-up runs.  No stack, no load.

    python3 tests/bench/memory.py        (ends with "N passed, N failed")
"""

import os
import sys
import types

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import bench  # noqa: E402
import memory  # noqa: E402
import report  # noqa: E402
from cases import main, test  # noqa: E402

ROUTES = ["/", "/post/post-31", "/cached"]


@test
def both_sides_get_the_same_runs_alternated():
    p = memory.plan(ROUTES, 2)
    assert len(p) == 12
    assert [side for side, _ in p] == ["blog", "stock"] * 6
    assert [path for side, path in p if side == "blog"] == ROUTES * 2
    # the stock Apache's files in turn
    assert [path for side, path in p if side == "stock"] == \
        ["/index.html", "/post-31.html"] * 3
    assert memory.plan(ROUTES, 0) == []


@test
def each_run_sampled_on_its_own_side():
    asked = []

    def run(side, path, during):
        return {"sample": during(), "rps": 10.0, "socket_errors": 0, "status": 0}

    def pss(side):
        asked.append(side)
        return {"blog": 300, "stock": 200}[side]

    runs = memory.measure(memory.plan(ROUTES, 1), run, pss)
    assert asked == ["blog", "stock"] * 3
    assert [r["pss_kib"] for r in runs] == [300, 200] * 3


def runs_of(blog, stock):
    out = []
    for b, s in zip(blog, stock):
        out.append({"side": "blog", "path": "/", "pss_kib": b, "rps": 1.0,
                    "socket_errors": 0, "status_errors": 0})
        out.append({"side": "stock", "path": "/index.html", "pss_kib": s,
                    "rps": 1.0, "socket_errors": 0, "status_errors": 0})
    return out


@test
def the_largest_of_each_side_and_their_ratio():
    s = memory.summary({"blog": 100, "stock": 90},
                       runs_of([1000, 1200, 1100], [1000, 800, None]))
    assert s["blog_max_kib"] == 1200 and s["stock_max_kib"] == 1000
    assert abs(s["ratio"] - 1.2) < 1e-9
    # a run whose sample failed is not counted as a run
    assert s["blog_runs"] == 3 and s["stock_runs"] == 2
    assert memory.summary({}, [])["ratio"] is None


def result(step):
    m = {"blog": {"/": {"pss_kib": 2048}, "/cached": {"pss_kib": 3072}},
         "static": {"/index.html": {"pss_kib": 1024}}, "floor": {}}
    if step:
        m["memory"] = step
    return {"mpm": {"event": m}}


@test
def report_shows_both_figures():
    step = memory.summary({}, runs_of([2048, 2560], [2048, 2048]))
    rows = report.memory_table(result(step))
    assert rows == [["event", "3.0", "1.0", "3.00", "2.5", "2.0", "1.25", "2 / 2"]], rows


@test
def report_without_the_step():
    rows = report.memory_table(result(None))
    assert rows == [["event", "3.0", "1.0", "3.00", "-", "-", "-", "-"]], rows


@test
def the_blogs_errors_in_the_step_fail_the_bench():
    runs = runs_of([1000, 1000], [900, 900])
    runs[0].update(status_errors=3)
    runs[3].update(socket_errors=5)        # the stock Apache's: not the blog's
    res = {"mpm": {"event": {"blog": {}, "static": {}, "floor": {},
                             "memory": memory.summary({}, runs)}}}
    fails = bench.check_failures(res, types.SimpleNamespace(connections=50))
    assert fails == ["event / in the memory step: 0 socket errors, "
                     "3 answers above 399"], fails


if __name__ == "__main__":
    sys.exit(main())

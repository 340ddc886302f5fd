# SPDX-License-Identifier: Apache-2.0
"""Apache's memory after the same load: the blog's Apache and the stock
one (the ceiling Apache, same MPM settings) both restarted, then handed
the same number of connection sets, alternated run by run.

Why a step of its own: an Apache's Pss grows with every new set of
connections it is handed (each set wakes workers that had not served,
and a served thread keeps its stack pages and its allocator's block), so
the largest Pss over each side's own runs compares two servers after
different histories: in the fair run the blog serves six routes, the
stock Apache two files and two floor answers.  Here both start from a
restart and each run of the blog (one of its routes, in turn) is followed
by one of the stock Apache (one of its static files, in turn), with the
same connections and length; Pss is sampled half-way through each run."""

STOCK_FILES = ["/index.html", "/post-31.html"]


def plan(blog_routes, rounds, stock_paths=STOCK_FILES):
    """[(side, path)]: each round every blog route once, each followed by
    one stock run on its files in turn; as many runs on either side."""
    out = []
    for i, route in enumerate(list(blog_routes) * rounds):
        out += [("blog", route), ("stock", stock_paths[i % len(stock_paths)])]
    return out


def summary(idle, runs):
    """The step's figures from each side's Pss at rest after the restart
    (`idle`: {side: KiB}) and its runs ([{side, path, pss_kib, ...}]):
    the largest Pss of each side, their ratio, the runs each had."""
    out = {"idle_kib": dict(idle), "runs": runs}
    for side in ("blog", "stock"):
        mine = [r for r in runs if r["side"] == side and r["pss_kib"]]
        out[side + "_runs"] = len(mine)
        out[side + "_max_kib"] = max((r["pss_kib"] for r in mine), default=0)
    out["ratio"] = (out["blog_max_kib"] / out["stock_max_kib"]
                    if out["stock_max_kib"] else None)
    return out


def measure(plan_runs, run, pss):
    """Each planned run through `run(side, path)` (a wrk result carrying
    `sample`, taken half-way through by `pss(side)`), in order."""
    runs = []
    for side, path in plan_runs:
        r = run(side, path, lambda s=side: pss(s))
        runs.append({"side": side, "path": path, "pss_kib": r["sample"],
                     "rps": r["rps"], "socket_errors": r["socket_errors"],
                     "status_errors": r.get("status", 0)})
    return runs

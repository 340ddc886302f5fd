# SPDX-License-Identifier: Apache-2.0
"""The bench's output: the terminal table, results/<stamp>/report.md and
the chart (bench/chart.gp drawn by gnuplot), all from results.json's dict."""

import math
import os
import statistics
import subprocess

import peer
import sweep

HERE = os.path.dirname(os.path.abspath(__file__))
ENDPOINTS = ["/", "/post/post-31", "/tag/tag-7", "/cached",
             "/post/post-31/cached", "/compute"]



def memory(m):
    """(the blog's max Pss, the stock Apache's max Pss over its static and
    floor runs, their ratio) of one MPM, as text."""
    blog = max([ep["pss_kib"] for ep in m["blog"].values()] or [0])
    stock = max([ep["pss_kib"] for kind in ("static", "floor")
                 for ep in m.get(kind, {}).values()] or [0])
    return mib(blog), mib(stock), "%.2f" % (blog / stock) if stock else "-"


def memory_alike(m):
    """(the blog's max Pss, the stock Apache's, their ratio, runs each) of
    bench/memory.py's step, both restarted and given the same runs; None
    when the step did not run."""
    a = m.get("memory")
    if not a or not a.get("stock_max_kib"):
        return None
    return (mib(a["blog_max_kib"]), mib(a["stock_max_kib"]),
            "%.2f" % a["ratio"], "%d / %d" % (a["blog_runs"], a["stock_runs"]))


def memory_table(res):
    """One row an MPM: its figures over each side's own runs, then after
    the same load (bench/memory.py)."""
    rows = []
    for mpm, m in res["mpm"].items():
        if not m["blog"]:
            continue
        alike = memory_alike(m) or ("-",) * 4
        rows.append([mpm] + list(memory(m)) + list(alike))
    return rows


def ceiling(res, mpm, path):
    """(requests/s, what it is) this endpoint cannot beat on this machine."""
    if path in res.get("db", {}):
        return res["db"][path]["tps"], "pgbench, page function"
    static = res["mpm"][mpm]["static"]
    if path == "/cached" and "/index.html" in static:
        return static["/index.html"]["rps"], "static file"
    if path == "/post/post-31/cached" and "/post-31.html" in static:
        return static["/post-31.html"]["rps"], "static file"
    if path == "/compute" and res.get("compute"):
        return res["compute"]["ceiling"], "loop alone, all CPUs"
    return None, ""


def fmt(v, spec="%.0f", none="-"):
    return none if v is None else spec % v


def mib(kib):
    return "%.1f" % (kib / 1024.0)


TAIL_LIMIT = 5.0       # p99 at most 5 x p50


def tail(ep):
    """p99/p50, with a ! when above TAIL_LIMIT."""
    if not ep["p50_ms"]:
        return "-"
    t = ep["p99_ms"] / ep["p50_ms"]
    return "%.1f%s" % (t, " !" if t > TAIL_LIMIT else "")


def alternated_floor(res, mpm):
    """The cached routes against the floor run between their own runs."""
    parts = []
    for path in ENDPOINTS:
        ep = res["mpm"][mpm]["blog"].get(path)
        if ep and ep.get("beside_rps_runs"):
            parts.append("%s %s against %s" % (
                path, " / ".join(fmt(v) for v in ep["rps_runs"]),
                " / ".join(fmt(v) for v in ep["beside_rps_runs"])))
    if not parts:
        return None
    return ("`x floor alt`: each timed run of a cached route came right after "
            "a run of the quick_handler floor, and the column divides the "
            "medians of the two, so that the machine's drift over the run "
            "moves both alike (`x floor` uses the floor's own endpoint, "
            "measured once earlier). req/s of each run, route against "
            "floor: " + "; ".join(parts) + ".")


def floor_rps(res, mpm):
    ep = res["mpm"][mpm]["floor"].get("quick")
    return ep["rps"] if ep else None


def blog_rows(res, mpm):
    m = res["mpm"][mpm]
    rows = []
    fl = floor_rps(res, mpm)
    for path in ENDPOINTS:
        ep = m["blog"].get(path)
        if not ep:
            continue
        ceil, _ = ceiling(res, mpm, path)
        rd = ep.get("redis") or {}
        rows.append([path, fmt(ep["rps"]), fmt(ep["p50_ms"], "%.2f"),
                     fmt(ep["p99_ms"], "%.2f"), tail(ep), str(ep["non2xx"]),
                     str(ep["socket_errors"]),
                     fmt(ep.get("round_trips"), "%.3f"),
                     fmt(rd.get("get"), "%.3f"), fmt(rd.get("set"), "%.3f"),
                     fmt(ceil),
                     fmt(ep["rps"] / ceil if ceil else None, "%.2f"),
                     fmt(ep["rps"] / fl if fl else None, "%.2f"),
                     fmt(ep["rps"] / ep["beside_rps"]
                         if ep.get("beside_rps") else None, "%.2f"),
                     mib(ep["pss_kib"])])
    return rows


def measured(res, mpm):
    """(label, endpoint dict, strace key) of every run of an MPM: the
    blog's endpoints, then the ceilings and the floor."""
    m = res["mpm"][mpm]
    out = [(p, m["blog"][p], p) for p in ENDPOINTS if p in m["blog"]]
    for name, ep in m["static"].items():
        out.append(("static %s" % name, ep, None))
    for name, ep in m["floor"].items():
        out.append(("floor %s" % name, ep, "/floor/" + name))
    return out


SIDES = ("apache", "pg", "redis", "wrk")
SIDE_NAMES = {"apache": "Apache", "pg": "PG", "redis": "Redis",
              "wrk": "wrk"}

COUNTER_HEAD = (["endpoint", "minflt/req"]
                + ["ctxsw %s" % SIDE_NAMES[s] for s in SIDES]
                + ["sysc %s" % SIDE_NAMES[s] for s in SIDES]
                + ["runq us %s" % SIDE_NAMES[s] for s in SIDES[:3]]
                + ["strace sysc", "Redis other/req", "Redis us/GET"])


def counter_rows(res, mpm):
    m = res["mpm"][mpm]
    rows = []
    for label, ep, skey in measured(res, mpm):
        prof = (ep.get("profile") or {}).get("sides", {})
        sc = ep.get("syscalls_per_req") or {}
        st = m["syscalls"].get(skey, {}).get("per_req") if skey else None
        rd = ep.get("redis") or {}
        rows.append([label, fmt(ep["minflt_per_req"], "%.3f")]
                    + [fmt(prof.get(s, {}).get("ctxsw"), "%.2f")
                       for s in SIDES]
                    + [fmt(sc.get(s), "%.1f") for s in SIDES]
                    + [fmt(prof.get(s, {}).get("runq_us"), "%.1f")
                       for s in SIDES[:3]]
                    + [fmt(st, "%.1f"), fmt(rd.get("other"), "%.3f"),
                       fmt(rd.get("get_usec"), "%.2f")])
    return rows


CPU_HEAD = (["endpoint"]
            + ["%s %s" % (SIDE_NAMES[s], k) for s in SIDES
               for k in ("usr", "sys")]
            + ["all sides", "irq+si in sys", "other", "busy", "kernel %"])


def cpu_rows(res, mpm):
    rows = []
    for label, ep, _ in measured(res, mpm):
        prof = ep.get("profile")
        if not prof:
            continue
        cells = [label]
        for s in SIDES:
            d = prof["sides"].get(s, {})
            cells += [fmt(d.get("user_us"), "%.1f"),
                      fmt(d.get("sys_us"), "%.1f")]
        cells += [fmt(prof.get("sides_us"), "%.1f"),
                  fmt(prof["irq_us"], "%.1f"), fmt(prof["other_us"], "%.1f"),
                  fmt(prof["busy_us"], "%.1f"),
                  fmt(prof["kernel_share"] and 100 * prof["kernel_share"],
                      "%.0f")]
        rows.append(cells)
    return rows


def top_names(names, n=8):
    return ", ".join("%s %.2f" % (k, v) for k, v in
                     sorted(names.items(), key=lambda kv: -kv[1])[:n]
                     if v >= 0.005)


def syscall_name_rows(res, mpm):
    rows = []
    for label, ep, _ in measured(res, mpm):
        by = ep.get("syscalls_by_name") or {}
        for s in SIDES:
            if by.get(s) and top_names(by[s]):
                total = (ep.get("syscalls_per_req") or {}).get(s)
                rows.append([label, SIDE_NAMES[s], fmt(total, "%.2f"),
                             top_names(by[s])])
    return rows


SUMMARY_HEAD = (["MPM", "endpoint", "req/s", "p50 ms", "p99 ms", "Pss MiB",
                 "ctxsw/req", "runq us/req", "sysc/req"]
                + ["%s us" % SIDE_NAMES[s] for s in SIDES])


def summary_rows(res):
    """One line per endpoint and MPM with what a lever changes: the
    blog's endpoints and the quick_handler floor; ctxsw and syscalls are
    Apache's, CPU is each side's user + system."""
    rows = []
    for mpm, m in res["mpm"].items():
        items = [(p, m["blog"][p]) for p in ENDPOINTS if p in m["blog"]]
        if "quick" in m["floor"]:
            items.append(("floor quick", m["floor"]["quick"]))
        for label, ep in items:
            prof = (ep.get("profile") or {}).get("sides", {})
            cpu = []
            for s in SIDES:
                d = prof.get(s)
                cpu.append(fmt(d["user_us"] + d["sys_us"], "%.1f")
                           if d and d["user_us"] is not None else "-")
            rows.append([mpm, label, fmt(ep["rps"]),
                         fmt(ep["p50_ms"], "%.2f"), fmt(ep["p99_ms"], "%.2f"),
                         mib(ep["pss_kib"]), fmt(ep["ctxsw_per_req"], "%.2f"),
                         fmt(prof.get("apache", {}).get("runq_us"), "%.0f"),
                         fmt(apache_syscalls(m, ep, label if label.startswith(
                             "/") else "/floor/quick"), "%.1f")] + cpu)
    return rows


def idle_line(res, mpm):
    r = res["mpm"][mpm].get("idle")
    if not r:
        return None
    b, lo = r["base"], r["loaded"]
    return ("/cached beside %d idle keep-alive connections (%d answered in "
            "%.2f s, %d within 1 s%s): %.0f req/s against %.0f alone "
            "(%.2f), p99 %.2f ms against %.2f, %d non-2xx, %d socket errors; "
            "the server closed %d of them during the %d s run, %d before "
            "KeepAliveTimeout; Apache Pss %s MiB"
            % (r["idle"], r["answered"], r["open_s"], r["answered_1s"],
               "" if r["fits"] else ", too slow to hold them all open "
               "through the run", lo["rps"], b["rps"],
               r["ratio"], lo["p99_us"] / 1e3, b["p99_us"] / 1e3,
               lo["status"], lo["socket_errors"], r["closed"], r["run_s"],
               r["closed_early"], mib(r.get("pss_kib") or 0)))


PG_NAMES = {"/": "blog.index_page(20)",
            "/post/post-31": "blog.post_page('post-31')",
            "/tag/tag-7": "blog.tag_page('tag-7')"}

BLOG_HEAD = ["endpoint", "req/s", "p50 ms", "p99 ms", "p99/p50", "non-2xx",
             "sock err", "PG rt/page", "Redis GET/req", "Redis SET/req",
             "ceiling", "ratio", "x floor", "x floor alt", "Pss MiB"]


def ceiling_rows(res):
    mpms = list(res["mpm"])
    rows = []
    for name, key, sub in (("static file, cached index bytes", "static",
                            "/index.html"),
                           ("static file, cached post-31 bytes", "static",
                            "/post-31.html"),
                           ("floor: quick_handler, index from memory",
                            "floor", "quick"),
                           ("floor: handler hook, index from memory",
                            "floor", "handler")):
        cells = []
        for mpm in mpms:
            ep = res["mpm"][mpm][key].get(sub)
            cells.append(fmt(ep["rps"]) if ep else "-")
        rows.append([name] + cells)
    for path, ep in res.get("db", {}).items():
        rows.append(["pgbench: %s (pages/s)" % PG_NAMES.get(path, path)]
                    + [fmt(ep["tps"])] * len(mpms))
    c = res.get("compute")
    if c:
        rows.append(["compute loop: %d CPUs x 1 / CPU time per call"
                     % c["cpus"]] + [fmt(c["ceiling"])] * len(mpms))
        rows.append(["compute loop, 1 process, wall clock (calls/s)"]
                    + [fmt(c["one"]["calls_per_s"])] * len(mpms))
        rows.append(["compute loop, 2 processes, wall clock (calls/s)"]
                    + [fmt(c["two"]["calls_per_s"])] * len(mpms))
    return ["ceiling / floor (req/s)"] + mpms, rows


def floor_rows(res):
    rows = []
    for mpm, m in res["mpm"].items():
        for label, key, sub in (("quick_handler", "floor", "quick"),
                                ("handler", "floor", "handler"),
                                ("static file", "static", "/index.html")):
            ep = m[key].get(sub)
            if not ep:
                continue
            sc = apache_syscalls(m, ep, "/floor/" + sub)
            rows.append([mpm, label, fmt(ep["rps"]), fmt(ep["p50_ms"], "%.2f"),
                         fmt(ep["p99_ms"], "%.2f"),
                         fmt(ep["minflt_per_req"], "%.3f"),
                         fmt(ep["ctxsw_per_req"], "%.2f"), fmt(sc, "%.1f")])
        ep = m["blog"].get("/cached")
        if ep:
            sc = apache_syscalls(m, ep, "/cached")
            rows.append([mpm, "the blog's /cached", fmt(ep["rps"]),
                         fmt(ep["p50_ms"], "%.2f"), fmt(ep["p99_ms"], "%.2f"),
                         fmt(ep["minflt_per_req"], "%.3f"),
                         fmt(ep["ctxsw_per_req"], "%.2f"), fmt(sc, "%.1f")])
    return ["MPM", "answered by", "req/s", "p50 ms", "p99 ms", "minflt/req",
            "ctxsw/req", "syscalls/req"], rows


def apache_syscalls(m, ep, strace_key):
    """Apache's syscalls per request: perf's count over the warm-up, else
    the strace run's."""
    sc = (ep.get("syscalls_per_req") or {}).get("apache")
    if sc is None:
        sc = m["syscalls"].get(strace_key, {}).get("per_req")
    return sc


def text_table(head, rows):
    widths = [max(len(str(r[i])) for r in [head] + rows)
              for i in range(len(head))]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(head), line(["-" * w for w in widths])]
                     + [line(r) for r in rows])


def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" if i == 0 else "---:"
                          for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values))


def fastest(res):
    """Which MPM serves this blog fastest here, and the measurements that
    say why; None when fewer than two MPMs ran."""
    mpms = [m for m in res["mpm"] if res["mpm"][m]["blog"]]
    if len(mpms) < 2:
        return None
    paths = [p for p in ENDPOINTS if all(p in res["mpm"][m]["blog"]
                                         for m in mpms)]
    score = {m: geomean([res["mpm"][m]["blog"][p]["rps"] for p in paths])
             for m in mpms}
    best = max(mpms, key=lambda m: score[m])
    other = min(mpms, key=lambda m: score[m])
    wins = sum(1 for p in paths if res["mpm"][best]["blog"][p]["rps"]
               >= res["mpm"][other]["blog"][p]["rps"])
    lines = ["**%s** is the fastest MPM for this blog on this machine: the "
             "geometric mean of the six endpoints' medians is %.0f req/s "
             "against %.0f for %s (%+.0f%%), and it is ahead on %d of %d "
             "endpoints (fast path %s)."
             % (best, score[best], score[other], other,
                100.0 * (score[best] / score[other] - 1), wins, len(paths),
                res["meta"]["config"]["fastpath"])]
    per = []
    for p in paths:
        b = res["mpm"][best]["blog"][p]
        o = res["mpm"][other]["blog"][p]
        per.append("`%s` %.0f vs %.0f req/s, %.2f vs %.2f context switches "
                   "per request" % (p, b["rps"], o["rps"], b["ctxsw_per_req"],
                                    o["ctxsw_per_req"]))
    lines.append("Per endpoint (%s vs %s): %s." % (best, other,
                                                  "; ".join(per)))
    lines += floor_verdict(res, mpms)
    lines += hop_verdict(res, best)
    return "\n\n".join(lines)


def floor_verdict(res, mpms):
    """What the floor module says about the hook to answer from."""
    out = []
    fq = {m: res["mpm"][m]["floor"].get("quick") for m in mpms}
    fh = {m: res["mpm"][m]["floor"].get("handler") for m in mpms}
    if not (all(fq.values()) and all(fh.values())):
        return out
    out.append(
        "Apache's floor (the cached index from memory): quick_handler %s; "
        "the handler hook %s (req/s)."
        % (", ".join("%.0f under %s" % (fq[m]["rps"], m) for m in mpms),
           ", ".join("%.0f under %s" % (fh[m]["rps"], m) for m in mpms)))
    ahead = [m for m in mpms if fq[m]["rps"] > fh[m]["rps"]]
    if len(ahead) == len(mpms):
        sc = {m: (res["mpm"][m]["syscalls"].get("/floor/quick", {})
                  .get("per_req"),
                  res["mpm"][m]["syscalls"].get("/floor/handler", {})
                  .get("per_req")) for m in mpms}
        detail = "; ".join("%s %s vs %s syscalls per request" % (
            m, fmt(sc[m][0], "%.1f"), fmt(sc[m][1], "%.1f"))
            for m in mpms if None not in sc[m])
        out.append(
            "quick_handler is ahead under every MPM: it skips translation, "
            "map_to_storage's directory walk (the stat calls), access, auth, "
            "type checking, fixups and the output filters%s.  That is why "
            "`BlogFastPath On` exists, as an opt-in: it bypasses whatever "
            "an admin configures for the mount, so the blog's default is "
            "the handler hook." % (" (%s)" % detail if detail else ""))
    return out


def hop_verdict(res, best):
    """The event MPM's listener hand-off, as the context switches show it."""
    ev = res["mpm"].get("event", {}).get("blog", {}).get("/cached")
    wo = res["mpm"].get("worker", {}).get("blog", {}).get("/cached")
    if not (ev and wo):
        return []
    out = ["Context switches per request on `/cached`: %.2f under event, "
           "%.2f under worker." % (ev["ctxsw_per_req"], wo["ctxsw_per_req"])]
    if best == "worker" and ev["ctxsw_per_req"] > wo["ctxsw_per_req"]:
        out.append(
            "Why worker: under the event MPM a keep-alive connection goes "
            "back to the listener thread after every response, and the next "
            "request is handed from the listener to a worker thread; the "
            "worker MPM keeps each connection on one thread, which reads "
            "the next request itself.  The difference in context switches "
            "above is that hop, and on 2 vCPUs where a wake-up costs tens "
            "of microseconds it is a large part of a cached page.  The "
            "price: worker holds a thread per open connection, so "
            "ThreadsPerChild x children must cover the connections (%d "
            "here), while event can hold many idle keep-alive clients with "
            "few threads." % res["meta"]["config"]["connections"])
    elif best == "event":
        out.append(
            "Event came out ahead in this run although the worker MPM "
            "saves the listener-to-worker hop on every keep-alive request; "
            "check the load average in \"How it was run\": on a shared "
            "machine a busy neighbour can outweigh that difference.")
    return out


def tail_flags(res, mpm):
    return ["`%s` %.1f" % (p, ep["p99_ms"] / ep["p50_ms"])
            for p, ep in res["mpm"][mpm]["blog"].items()
            if ep["p50_ms"] and ep["p99_ms"] / ep["p50_ms"] > TAIL_LIMIT]


def stock_tails(res, mpm):
    """p99/p50 of the stock Apache's own runs under the same load (the
    quick_handler floor, the static files), the bar the blog's tail is
    read against, as a sentence, or ""."""
    m = res["mpm"][mpm]
    runs = [("the quick_handler floor", m["floor"].get("quick"))]
    runs += [("the static `%s`" % p, ep) for p, ep in m["static"].items()]
    got = ["%s %.1f" % (name, ep["p99_ms"] / ep["p50_ms"])
           for name, ep in runs if ep and ep["p50_ms"]]
    if not got:
        return ""
    return (" The stock Apache beside it, same MPM settings and load, "
            "p99/p50: %s." % ", ".join(got))


BASE_BAR = 0.90


def base_section(res):
    """(markdown lines, terminal lines) of the alternated run against
    BENCH_BASE, or ([], [])."""
    b = res["mpm"].get("event", {}).get("base")
    if not b:
        return [], []
    rows, cpu_rows, below, unsure = [], [], [], []
    for path, pair in b["routes"].items():
        o, n = pair["base"], pair["new"]
        med = [statistics.median(x["rps"]) for x in (o, n)]
        ratios, mid, (lo, hi) = sweep.ratio_stats(n["rps"], o["rps"])
        if hi < BASE_BAR or mid < BASE_BAR:
            below.append("`%s` %.2f [%.2f, %.2f]" % (path, mid, lo, hi))
        elif lo < BASE_BAR:
            unsure.append("`%s` %.2f [%.2f, %.2f]" % (path, mid, lo, hi))

        def per(x, k, d="requests"):
            return x[k] / x[d] if x[d] > (1000 if d == "gets" else 0) \
                else None

        def pair_of(v0, v1, spec="%.1f"):
            return "%s / %s" % (fmt(v0, spec), fmt(v1, spec))
        rows.append([path, fmt(med[0]), fmt(med[1]),
                     "%.2f [%.2f, %.2f]" % (mid, lo, hi),
                     "%.2f" % (med[1] / med[0] if med[0] else 0.0),
                     " ".join("%.2f" % r for r in ratios),
                     "%d / %d" % (o["errors"], n["errors"])])
        cpu_rows.append([path] + [
            pair_of(*(x["us"][side] / x["requests"] if x["requests"]
                      else None for x in (o, n)))
            for side in ("apache", "pg", "redis")] + [
            pair_of(per(o, "minflt"), per(n, "minflt"), "%.3f"),
            pair_of(per(o, "ctxsw"), per(n, "ctxsw"), "%.2f"),
            pair_of(per(o, "redis_us", "gets"), per(n, "redis_us", "gets"),
                    "%.2f")])
    head = ["endpoint", "base req/s", "new req/s", "ratio [95 %]",
            "ratio of medians", "per round", "errors base / new"]
    cpu_head = ["endpoint", "Apache us", "PG us", "Redis us",
                "Apache minflt", "Apache ctxsw", "Redis us/GET"]
    verdict = []
    if not below and not unsure:
        verdict.append("Every endpoint at %.2f or more of the base, the "
                       "whole 95 %% interval above it." % BASE_BAR)
    elif not below:
        verdict.append("Every endpoint's median ratio at %.2f or more."
                       % BASE_BAR)
    if below:
        verdict.append("Below %.2f: %s." % (BASE_BAR, "; ".join(below)))
    if unsure:
        verdict.append("Interval reaching below %.2f: %s." % (
            BASE_BAR, "; ".join(unsure)))
    verdict = " ".join(verdict)
    cfg = res["meta"]["config"]
    md = ["## Against %s, alternated (event MPM)" % b["commit"], "",
          "The tree's module and the stack's defaults (`new`) against "
          "%s's module in its configuration (`base`: `%s`, as "
          "bench/sweep.py writes it).  %d rounds, each base, new, new, "
          "base (a drift linear in time weighs on both alike), Apache "
          "restarted and the cached pages deleted before each; per "
          "configuration and endpoint a %d s warm-up and a %d s run.  "
          "`ratio`: the median over the rounds of new / base (each "
          "round's req/s the mean of its two runs), with a 95 %% "
          "percentile-bootstrap interval of that median; `ratio of "
          "medians`: of the median req/s; errors: socket errors + non-2xx "
          "over the rounds." % (b["commit"], b["spec"],
                                cfg.get("base_rounds", 0),
                                cfg.get("base_warmup", 0),
                                cfg.get("base_seconds", 0)), "",
          md_table(head, rows), "", verdict, "",
          "CPU per request of each side, base / new, over all the timed "
          "runs (user + system microseconds, /proc; Apache's parent and "
          "children, PostgreSQL's postmaster and backends, Redis), with "
          "Apache's minor faults and context switches per request and "
          "Redis's CPU per GET.  CPU per request moves less than req/s on "
          "a shared machine and says on which side a difference lies.", "",
          md_table(cpu_head, cpu_rows), ""]
    term = ["\nagainst %s, alternated (event)" % b["commit"],
            text_table(head, rows), text_table(cpu_head, cpu_rows),
            verdict.replace("`", "")]
    return md, term


PEER_HEAD = ["endpoint", "blog req/s", "peer req/s", "blog / peer [95 %]",
             "per round", "p50 ms blog / peer", "p99 ms blog / peer",
             "p99/p50 blog / peer", "errors blog / peer",
             "x floor blog / peer"]
PEER_CPU_HEAD = ["endpoint", "server us", "PG us", "Redis us", "wrk us",
                 "all sides us", "server ctxsw/req",
                 "server run-queue us/req", "server Pss MiB",
                 "Redis cmds/req"]


def both(b, p, spec="%.2f"):
    return "%s / %s" % (fmt(b, spec), fmt(p, spec))


def peer_rows(res, stage):
    """(figures, CPU rows, notes) of the peer stage's table."""
    cfg = res["meta"]["config"]
    fl = floor_rps(res, "event")
    rows, cpu, notes = [], [], {"ahead": [], "behind": [], "unsure": [],
                                "errors": []}
    for path in ENDPOINTS:
        runs = stage["routes"].get(path)
        if not runs:
            continue
        s = peer.summary(runs, cfg["connections"])
        b, p = s["blog"], s["peer"]
        lo, hi = s["interval"]
        label = "`%s` %.2f [%.2f, %.2f]" % (path, s["ratio"], lo, hi)
        if len(s["ratios"]) > 1:
            notes["ahead" if lo > 1 else "behind" if hi < 1
                  else "unsure"].append(label)
        elif s["ratios"]:
            notes["unsure"].append(label + " (one round)")
        if s["rounds_with_errors"]:
            notes["errors"].append(
                "`%s`: %d of its rounds left out of the ratio (a side "
                "answered errors)" % (path, len(s["rounds_with_errors"])))
        for side, x in (("blog", b), ("peer", p)):
            if x["non2xx"] or x["socket_errors"] or x["bad_sizes"] \
                    or x["failed"]:
                notes["errors"].append(
                    "%s `%s`: %d non-2xx, %d socket errors, %d runs whose "
                    "bytes per response did not fit the page%s" % (
                        side, path, x["non2xx"], x["socket_errors"],
                        x["bad_sizes"], "".join(
                            ", %d runs not made (%s)" % (
                                x["failed"].count(f), f)
                            for f in sorted(set(x["failed"])))))
        floor = both(b["rps"] / fl if fl and b["rps"] else None,
                     p["rps"] / fl if fl and p["rps"] else None) \
            if path in ("/cached", "/post/post-31/cached") else "-"
        rows.append([path, fmt(b["rps"]), fmt(p["rps"]),
                     "%.2f [%.2f, %.2f]" % (s["ratio"], lo, hi)
                     if s["ratios"] else "-",
                     " ".join("%.2f" % r for r in s["ratios"]),
                     both(b["p50_ms"], p["p50_ms"]),
                     both(b["p99_ms"], p["p99_ms"]),
                     both(b["tail"], p["tail"], "%.1f"),
                     "%d / %d" % (b["non2xx"] + b["socket_errors"],
                                  p["non2xx"] + p["socket_errors"]),
                     floor])

        def us(x, side):
            return x["us"].get(side)
        cpu.append([path] + [both(us(b, k), us(p, k), "%.1f")
                             for k in peer.SIDES]
                   + [both(sum(b["us"].values()) if b["us"] else None,
                           sum(p["us"].values()) if p["us"] else None,
                           "%.1f"),
                      both(b["ctxsw"], p["ctxsw"]),
                      both(b.get("runq_us"), p.get("runq_us"), "%.0f"),
                      both(b["pss_kib"] and b["pss_kib"] / 1024.0,
                           p["pss_kib"] and p["pss_kib"] / 1024.0, "%.1f"),
                      both(b["redis_per_req"], p["redis_per_req"], "%.3f")])
    return rows, cpu, notes


def peer_verdict(notes):
    out = []
    for key, words in (("ahead", "The blog ahead of the peer, the whole "
                        "95 % interval above 1"),
                       ("behind", "The peer ahead, the whole interval "
                        "below 1"),
                       ("unsure", "Not told apart (the interval holds 1)")):
        if notes[key]:
            out.append("%s: %s." % (words, "; ".join(notes[key])))
    out.append("Errors: %s." % ("; ".join(notes["errors"])
                                if notes["errors"] else "none"))
    return " ".join(out)


def peer_section(res):
    """(markdown lines, terminal lines) of the run against PEER_URL, or
    ([], [])."""
    stage = res["mpm"].get("event", {}).get("peer")
    if not stage:
        return [], []
    cfg = res["meta"]["config"]
    rows, cpu, notes = peer_rows(res, stage)
    fl = floor_rps(res, "event")
    about = peer.about_line(stage["about"])
    verdict = peer_verdict(notes)
    floor = ("`x floor`: req/s over the quick_handler floor of the same "
             "run (%s req/s, event MPM)" % fmt(fl)) if fl else \
        "`x floor`: no floor was measured"
    md = ["## Against a peer (event MPM)", "",
          "The peer: %s." % about, "",
          "Its pages were checked byte for byte like the blog's before any "
          "load.  Then, per endpoint, %d rounds of blog, peer, peer, blog "
          "(a drift linear in time weighs on both alike), each run a %d s "
          "warm-up and a %d s wrk run (%d connections, %d threads), the "
          "cached pages (`blog:page:*`, which both serve from the same "
          "Redis) deleted before each side's first run in a round.  req/s: "
          "the median over the rounds of each round's mean; `blog / "
          "peer`: the median of the per-round ratios, with a 95 %% "
          "percentile-bootstrap interval of that median; p50, p99 and "
          "p99/p50: the medians over the runs; errors: non-2xx + socket "
          "errors over the runs; %s.  (%s, `%s`)"
          % (cfg["peer_rounds"], cfg["peer_warmup"], cfg["duration"],
             cfg["connections"], cfg["threads"], floor,
             res["meta"]["stamp"], res["meta"]["apache"]), "",
          md_table(PEER_HEAD, rows), "", verdict, "",
          "CPU microseconds per request of each side, blog's run / peer's "
          "run (user + system, /proc, summed over the timed runs over "
          "their requests): `server` the blog's Apache (parent and "
          "children) or the peer's process (and its children), PG the "
          "postmaster and every backend, Redis, wrk (its rusage); the "
          "server's context switches and run-queue wait (microseconds its "
          "threads spent runnable, waiting for a CPU) per request, every "
          "thread, and its largest Pss sampled half-way through a run; "
          "Redis's commands per request.  A `-`: the peer's process is "
          "unknown.", "",
          md_table(PEER_CPU_HEAD, cpu), ""]
    term = ["\nagainst the peer, alternated (event): " + about.replace(
                "`", ""),
            text_table(PEER_HEAD, rows), text_table(PEER_CPU_HEAD, cpu),
            verdict.replace("`", "")]
    return md, term


def terminal(res):
    out = []
    for mpm in res["mpm"]:
        if res["mpm"][mpm]["blog"]:
            out.append("\n%s MPM, fast path %s" % (
                mpm, res["meta"]["config"]["fastpath"]))
            out.append(text_table(BLOG_HEAD, blog_rows(res, mpm)))
            out.append("\n%s: counters per request (ctxsw: context "
                       "switches; sysc: syscalls, perf over the warm-up; "
                       "runq: run-queue wait)" % mpm)
            out.append(text_table(COUNTER_HEAD, counter_rows(res, mpm)))
            out.append("\n%s: CPU microseconds per request, each side user "
                       "and system" % mpm)
            out.append(text_table(CPU_HEAD, cpu_rows(res, mpm)))
            named = [r for r in syscall_name_rows(res, mpm)
                     if r[1] == "Apache"]
            if named:
                out.append("\n%s: Apache's syscalls per request by name"
                           % mpm)
                out += ["  %-22s %s" % (r[0], r[3]) for r in named]
            il = idle_line(res, mpm)
            if il:
                out.append("\n" + il)
            flags = tail_flags(res, mpm)
            out.append("\np99 above %.0f x p50: %s.%s" % (
                TAIL_LIMIT, ", ".join(f.replace("`", "") for f in flags)
                if flags else "none", stock_tails(res, mpm).replace("`", "")))
    head, rows = ceiling_rows(res)
    out.append("")
    out.append(text_table(head, rows))
    mem = ", ".join("%s %s MiB (stock Apache %s MiB, x %s)" % tuple(row[:4])
                    + ("; after the same load %s / %s MiB, x %s" % tuple(row[4:7])
                       if row[4] != "-" else "")
                    for row in memory_table(res))
    if mem:
        out.append("\nApache's memory under load (sum of Pss, max): " + mem)
    f = fastest(res)
    if f:
        out.append("\n" + f.split("\n\n")[0].replace("**", ""))
    out.append("\nSummary (ctxsw and sysc: Apache's; us: CPU microseconds "
               "per request, user + system, of each side)")
    out.append(text_table(SUMMARY_HEAD, summary_rows(res)))
    out += base_section(res)[1]
    out += peer_section(res)[1]
    out.append("\nresult: %s" % ("FAILED" if res["failures"] else "ok"))
    return "\n".join(out)


def chart(res, out_dir):
    mpms = [m for m in res["mpm"] if res["mpm"][m]["blog"]]
    if not mpms:
        return None
    dat = os.path.join(out_dir, "chart.dat")
    with open(dat, "w") as f:
        f.write("endpoint " + " ".join(
            '"%s" "%s ceiling"' % (m, m) for m in mpms) + "\n")
        for p in [p for p in ENDPOINTS
                  if any(p in res["mpm"][m]["blog"] for m in mpms)]:
            cells = []
            for m in mpms:
                ep = res["mpm"][m]["blog"].get(p)
                c, _ = ceiling(res, m, p)
                cells += [fmt(ep["rps"] if ep else None, "%.0f", "0"),
                          fmt(c, "%.0f", "0")]
            f.write('"%s" %s\n' % (p, " ".join(cells)))
    svg = os.path.join(out_dir, "chart.svg")
    subprocess.run(["gnuplot", "-e",
                    "datafile='%s'; outfile='%s'; ncols=%d; subtitle='%s'"
                    % (dat, svg, 1 + 2 * len(mpms),
                       "%s, %d connections, median of %d x %d s"
                       % (res["meta"]["stamp"],
                          res["meta"]["config"]["connections"],
                          res["meta"]["config"]["runs"],
                          res["meta"]["config"]["duration"])),
                    os.path.join(HERE, "chart.gp")], check=True)
    return svg


def syscall_section(res):
    lines = []
    for mpm, m in res["mpm"].items():
        for path, s in m["syscalls"].items():
            if s["per_req"] is None:
                continue
            top = ", ".join("%s %.2f" % (k, v) for k, v in s["top"])
            lines.append([mpm, "`%s`" % path, "%.1f" % s["per_req"], top])
    return md_table(["MPM", "route", "syscalls/req", "most frequent, per request"],
                    lines) if lines else "(not measured: STRACE=0)"


def write(res, out_dir):
    meta = res["meta"]
    cfg = meta["config"]
    svg = chart(res, out_dir)
    md = ["# Benchmark %s" % meta["stamp"], ""]
    if res["failures"]:
        md += ["**FAILED**:", ""] + ["- " + f for f in res["failures"]] + [""]
    else:
        md += ["Result: every page matched the reference before the load; "
               "no non-2xx response and no socket error during it.", ""]
    md += ["## Summary", "",
           "Per endpoint and MPM: req/s, latency, Apache's Pss, Apache's "
           "context switches, run-queue wait (`runq`, microseconds its "
           "threads waited runnable for a CPU) and syscalls per request, "
           "and the CPU "
           "microseconds per request (user + system) of each side; the "
           "sections below break each figure down.", "",
           md_table(SUMMARY_HEAD, summary_rows(res)), ""]
    md += base_section(res)[0]
    md += peer_section(res)[0]
    for mpm in res["mpm"]:
        if not res["mpm"][mpm]["blog"]:
            continue
        md += ["## The fair run, %s MPM%s" % (
            mpm, " (the reference)" if mpm == "event" else ""), "",
            md_table(BLOG_HEAD, blog_rows(res, mpm)), ""]
        flags = tail_flags(res, mpm)
        md += ["p99 above %.0f x p50: %s.%s" % (
            TAIL_LIMIT, ", ".join(flags) if flags else "none",
            stock_tails(res, mpm)), ""]
        alt = alternated_floor(res, mpm)
        if alt:
            md += [alt, ""]
        md += ["### Counters per request, %s MPM" % mpm, "",
               "Context switches and syscalls of each side (the Apache "
               "under test, PostgreSQL, Redis, wrk) and the microseconds "
               "each server side's threads waited runnable for a CPU "
               "(`runq`), the blog's endpoints "
               "then the ceilings and the floor; `strace sysc` only when a "
               "strace run was made.", "",
               md_table(COUNTER_HEAD, counter_rows(res, mpm)), ""]
        md += ["### CPU profile, %s MPM" % mpm, "",
               "Microseconds of CPU per request, user and system time of "
               "each side and their sum; `irq+si in sys` the machine's "
               "interrupt and softirq time (on loopback most of TCP's "
               "receive path), which the kernel charges to the system time "
               "of the process it interrupted, so it is part of the sides' "
               "sys, not beside it; `other` the machine's busy time no side "
               "accounts for (other processes on this shared machine, "
               "ksoftirqd); `busy` the machine's; `kernel %` the system "
               "time's share of all sides' CPU.", "",
               md_table(CPU_HEAD, cpu_rows(res, mpm)), ""]
        named = syscall_name_rows(res, mpm)
        if named:
            md += ["### Syscalls per request by name, %s MPM" % mpm, "",
                   "perf's count of each syscall's tracepoint over the "
                   "warm-up, per side; the most frequent.", "",
                   md_table(["endpoint", "side", "all", "most frequent"],
                            named), ""]
        il = idle_line(res, mpm)
        if il:
            md += ["### Idle keep-alive connections, %s MPM" % mpm, "",
                   il + " (tests/e2e/idle_conns.py's measurement: the same "
                   "load on `/cached` alone just before; the run is kept "
                   "within KeepAliveTimeout so that no idle connection is "
                   "due to be closed).", ""]
    head, rows = ceiling_rows(res)
    md += ["## Ceilings", "",
           "What each endpoint is compared with (its `ratio` above): "
           "`/`, `/post/post-31` and `/tag/tag-7` against pgbench calling "
           "the page function alone; the cached routes against the same "
           "bytes as a static file from an Apache with the same MPM and "
           "settings (threads: see Method); `/compute` against the loop "
           "alone on every CPU.", "",
           md_table(head, rows), ""]
    c = res.get("compute")
    if c:
        md += ["The compute loop alone (bench/compute_bench, mod_blog's "
               "compute.c): %.0f us of CPU per call, so one core does %.0f "
               "calls/s and the %d CPUs %.0f: that is the ceiling of "
               "`/compute`, since its 4 Apache children run on every CPU.  "
               "Wall clock, one process made %.0f calls/s (it had %.2f of a "
               "core) and two at once %.0f in all (the less served had %.2f); "
               "a share below 1 means other load took the CPU, which the "
               "CPU-time ceiling does not depend on."
               % (c["one"]["cpu_us_per_call"],
                  1e6 / c["one"]["cpu_us_per_call"], c["cpus"], c["ceiling"],
                  c["one"]["calls_per_s"], c["one"]["cpu_share"],
                  c["two"]["calls_per_s"], c["two"]["cpu_share"]), ""]
    head, rows = floor_rows(res)
    md += ["## Apache's floor", "",
           "`bench/mod_blog_floor.c` answers with the cached index's bytes "
           "from memory, from `quick_handler` (before translation, "
           "map_to_storage, access and auth) or from the `handler` hook "
           "(after all of them); beside it the static file and the blog's "
           "own `/cached`.", "", md_table(head, rows), ""]
    mem = memory_table(res)
    if mem:
        md += ["## Apache's memory under load", "",
               "Sum of Pss over the parent and its children, from "
               "/proc/PID/smaps_rollup, sampled half-way through each run. "
               "Over each side's own runs: the largest over the blog's "
               "endpoints (each endpoint's is in the tables above) against "
               "the ceiling Apache's, a stock Apache with the same MPM "
               "settings under the same wrk load (its static files and floor "
               "module), after different histories. After the same load "
               "(bench/memory.py): both Apaches restarted, then each blog "
               "run (its routes in turn) followed by a stock run (its static "
               "files in turn), the same connections and length; an "
               "Apache's Pss grows with each new set of connections it is "
               "handed, so this is the like-for-like figure.", "",
               md_table(["MPM", "blog max Pss MiB, own runs",
                         "stock max Pss MiB, own runs", "blog / stock, own runs",
                         "blog max Pss MiB, same load", "stock max Pss MiB, same load",
                         "blog / stock, same load", "runs blog / stock"], mem), ""]
    if cfg.get("strace"):
        md += ["## Syscalls per request, by name", "",
               "From `strace -c -f` attached to every Apache child during a "
               "separate %d s wrk run per route (strace slows the server, so "
               "these runs count calls and are never timed)."
               % cfg["strace_seconds"], "", syscall_section(res), ""]
    f = fastest(res)
    if f:
        md += ["## The fastest configuration for this machine", "", f, ""]
    if svg:
        md += ["## Chart", "", "![requests per second against the ceilings]"
               "(chart.svg)", ""]
    md += ["## How it was run", "",
           "- `make bench` (bench/run.sh): DURATION=%d WARMUP=%d "
           "CONNECTIONS=%d THREADS=%d RUNS=%d MPMS=\"%s\" BLOG_FASTPATH=%s; "
           "%.0f s in all." % (cfg["duration"], cfg["warmup"],
                               cfg["connections"], cfg["threads"], cfg["runs"],
                               " ".join(cfg["mpms"]), cfg["fastpath"],
                               meta["elapsed_s"]),
           "- Machine: %d CPUs (%s), Linux %s, load average at start %s; "
           "wrk, pgbench and the servers share these CPUs."
           % (meta["cpus"], meta["cpu_model"], meta["kernel"],
              meta["loadavg_at_start"]),
           "- %s; %s; %s." % (meta["apache"], meta["postgresql"].split(",")[0],
                               meta["wrk"]),
           "- The blog's Apache: `%s`."
           % meta.get("apache_settings", "?").replace("\n", " "),
           "- The ceiling's Apache, the same but for at least as many "
           "threads per child as there are connections (with fewer, the "
           "event MPM closes keep-alive connections when one child's "
           "workers are all busy): "
           "`%s`." % meta.get("ceiling_apache_settings",
                              meta.get("apache_settings", "?")).replace(
                                  "\n", " "),
           "- Both Apaches run under the scheduling policy %s "
           "(`BLOG_SCHED=%s`, docs/OPERATIONS.md); PostgreSQL, Redis and "
           "wrk under the kernel's default." % (
               "SCHED_BATCH" if meta.get("apache_sched", "other") == "batch"
               else "SCHED_OTHER", meta.get("apache_sched", "other")),
           "- Before any load, Redis is flushed and every page (`/`, "
           "`/cached`, the 1 000 detail pages and their cached variants, "
           "the 30 tag pages, `/compute`, a dozen 404s) is compared byte for "
           "byte with tests/e2e/reference.py; cached pages must answer MISS "
           "then HIT.",
           "- Each endpoint: a %d s warm-up, then %d runs of %d s with wrk "
           "(%d threads, %d keep-alive connections, `--latency`); req/s is "
           "the median run's, p50 and p99 come from that run; non-2xx "
           "(wrk's count of statuses >= 400, plus a check that the bytes "
           "per response match the page checked, which a redirect or "
           "error page would not) and socket errors add up over all runs."
           % (cfg["warmup"], cfg["runs"], cfg["duration"], cfg["threads"],
              cfg["connections"]),
           "- PostgreSQL round trips per page: the change in "
           "pg_stat_database's xact_commit + xact_rollback for the database "
           "blog over the endpoint's warm-up and runs, divided by the "
           "requests wrk completed.  Each page call is one autocommit "
           "statement, one transaction, one round trip; a ping, a second "
           "query or a BEGIN/COMMIT pair would add transactions.  Backends "
           "publish these counters up to 10 s late, so each uncached page's "
           "window closes only after the next load, which never reads "
           "PostgreSQL, has run at least 11 s; the background rate seen "
           "while `/compute` runs is subtracted.  Requests still in flight "
           "when wrk stops (at most %d per wrk run) are served but not "
           "counted, so the figure may read a little above the truth."
           % cfg["connections"],
           "- Redis GET/req, SET/req, other/req and us/GET: Redis's own "
           "`INFO commandstats`, read just before and just after each timed "
           "run (the INFO itself left out), over the requests wrk "
           "completed; as for PostgreSQL, requests in flight when wrk stops "
           "are served but not counted.",
           "- minflt/req, ctxsw and CPU: /proc/PID/stat (minflt, utime, "
           "stime; and the parents' cutime/cstime for children reaped in "
           "the window) and voluntary + involuntary context switches "
           "summed over /proc/PID/task/*/status, and the run-queue wait "
           "(`runq`: the time the threads spent runnable and waiting for a "
           "CPU, schedstat's run_delay summed over /proc/PID/task/*/"
           "schedstat; a request that waits there waits in no order the "
           "server chose), over the Apache under test "
           "(parent and children), the PostgreSQL postmaster and all its "
           "children, and Redis, read just before and after each timed "
           "run; wrk's from its own rusage (wait4); the machine's from "
           "/proc/stat.  Summed over the timed runs and divided by their "
           "requests.  CPU times come in clock ticks of %.0f ms, fine over "
           "runs of seconds." % (1000.0 / os.sysconf("SC_CLK_TCK")),
           "- Syscalls per side (`sysc`): %s"
           % ("the raw_syscalls:sys_enter tracepoint counted by `perf stat` "
              "(attached to every thread of each server, and wrapping wrk) "
              "over each endpoint's warm-up, divided by the warm-up's "
              "requests; the timed runs carry no tracepoint."
              if cfg.get("perf") else "not counted (perf unavailable)."),
           "- Pss: the sum of Pss from /proc/PID/smaps_rollup over the "
           "Apache parent and every child, sampled half-way through each "
           "timed run; the largest sample.",
           "- Ceilings: a second Apache (bench/httpd.conf.in, port %d, same "
           "MPM and settings, threads as above) serves the static files and "
           "the floor module; "
           "pgbench -n -M prepared -c %d -j %d -T %d as %s with "
           "pg_blog_ext/bench/*_function.sql, median of %d runs; "
           "bench/compute_bench runs mod_blog/compute.c alone."
           % (cfg["port"], cfg["pg_clients"], cfg["threads"], cfg["duration"],
              cfg["pg_user"], cfg["runs"]),
           "- Raw outputs (wrk, pgbench, perf, strace) are in `raw/`, every figure "
           "in `results.json`.", ""]
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(md))

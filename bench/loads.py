"""The load generators and their parsers: wrk against an Apache, pgbench
against the page functions, the /compute driver, strace on Apache's
children.  Each returns plain dicts; bench.py decides what they mean."""

import os
import re
import signal
import socket
import statistics
import subprocess
import time

import procstat

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_RE = re.compile(r"^BENCH (.*)$", re.M)


class LoadError(Exception):
    pass


def response_size(port, path):
    """Bytes of one whole response (status line, headers, body), as wrk
    counts them: the expected bytes per request of a correct run."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"
                   % (path, port)).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                raise LoadError("GET %s: connection closed early" % path)
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split()[1])
        m = re.search(rb"\r\ncontent-length: *(\d+)", head, re.I)
        if not m:
            raise LoadError("GET %s: no Content-Length" % path)
        want = int(m.group(1))
        while len(body) < want:
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
        return status, len(head) + 4 + want


def wrk(cfg, port, path, seconds, raw_name=None, during=None):
    """One wrk run; `during` is called once half-way through (sampling)."""
    url = "http://127.0.0.1:%d%s" % (port, path)
    cmd = ["wrk", "-t", str(cfg.threads), "-c", str(cfg.connections),
           "-d", "%ds" % seconds, "--latency", "-s",
           os.path.join(HERE, "wrk.lua"), url]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    sample = None
    if during is not None:
        time.sleep(seconds / 2.0)
        sample = during()
    out, _ = proc.communicate()
    if raw_name:
        with open(os.path.join(cfg.raw_dir, raw_name), "a") as f:
            f.write("$ %s\n%s\n" % (" ".join(cmd), out))
    m = BENCH_RE.search(out)
    if proc.returncode != 0 or not m:
        raise LoadError("wrk failed for %s:\n%s" % (url, out))
    r = {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}
    r["rps"] = r["requests"] * 1e6 / r["duration_us"]
    r["socket_errors"] = r["connect"] + r["read"] + r["write"] + r["timeout"]
    r["sample"] = sample
    return r


def endpoint(cfg, port, path, apache_pid, raw_name):
    """SPEC section 6 for one endpoint: a warm-up, then cfg.runs runs; the
    run with the median requests/s gives the figures, errors add up over
    all runs, and the kernel's counters cover the timed runs."""
    status, size = response_size(port, path)
    if status != 200:
        raise LoadError("GET %s answers %d before the load" % (path, status))
    t0 = time.time()
    warm = wrk(cfg, port, path, cfg.warmup, raw_name) if cfg.warmup else None
    before = procstat.counters(apache_pid)
    runs = [wrk(cfg, port, path, cfg.duration, raw_name,
                during=lambda: procstat.pss_kib(apache_pid))
            for _ in range(cfg.runs)]
    after = procstat.counters(apache_pid)
    minflt, ctxsw = procstat.delta(before, after)
    timed = sum(r["requests"] for r in runs)
    med = sorted(runs, key=lambda r: r["rps"])[len(runs) // 2]
    total_bytes = sum(r["bytes"] for r in runs)
    return {
        "path": path,
        "rps": med["rps"],
        "rps_runs": [r["rps"] for r in runs],
        "p50_ms": med["p50_us"] / 1000.0,
        "p99_ms": med["p99_us"] / 1000.0,
        "non2xx": sum(r["status"] for r in runs),
        "socket_errors": sum(r["socket_errors"] for r in runs),
        "response_bytes": size,
        "bytes_per_response": total_bytes / timed if timed else 0.0,
        "requests": timed + (warm["requests"] if warm else 0),
        "timed_requests": timed,
        "minflt_per_req": minflt / timed if timed else None,
        "ctxsw_per_req": ctxsw / timed if timed else None,
        "pss_kib": max(r["sample"] for r in runs),
        "started": t0,
        "ended": time.time(),
    }


def pgbench(cfg, script, defines, raw_name):
    """Pages per second from one pgbench run of a page-function script."""
    cmd = ["pgbench", "-n", "-M", "prepared", "-c", str(cfg.pg_clients),
           "-j", str(cfg.threads), "-T", str(cfg.duration),
           "-U", cfg.pg_user, "-d", "blog", "-f", script]
    for k, v in defines.items():
        cmd += ["-D", "%s=%s" % (k, v)]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    with open(os.path.join(cfg.raw_dir, raw_name), "a") as f:
        f.write("$ %s\n%s\n" % (" ".join(cmd), out.stdout))
    m = re.search(r"^tps = ([0-9.]+) \(without initial connection time\)",
                  out.stdout, re.M)
    failed = re.search(r"^number of failed transactions: (\d+)", out.stdout,
                       re.M)
    if out.returncode != 0 or not m or (failed and int(failed.group(1))):
        raise LoadError("pgbench failed for %s:\n%s" % (script, out.stdout))
    return float(m.group(1))


def median_of(cfg, fn):
    values = [fn() for _ in range(cfg.runs)]
    return statistics.median(values), values


def compute(cfg, processes):
    """The /compute loop alone, `processes` copies at once: calls per
    second of wall time summed, CPU microseconds per call, and the lowest
    share of a core any copy got (below 1: the figures are low, the CPU
    time per call is not)."""
    cmd = [os.path.join(HERE, "compute_bench"), str(cfg.duration)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
             for _ in range(processes)]
    results = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode != 0:
            raise LoadError("compute_bench failed: %s" % out)
        results.append(dict(kv.split("=") for kv in out.split()))
    return {
        "calls_per_s": sum(float(r["calls_per_s"]) for r in results),
        "us_per_call": statistics.mean(float(r["us_per_call"])
                                       for r in results),
        "cpu_us_per_call": statistics.mean(float(r["cpu_us_per_call"])
                                           for r in results),
        "cpu_share": min(float(r["cpu_share"]) for r in results),
    }


def strace_syscalls(cfg, port, path, apache_pid, raw_name):
    """Syscalls per request over a short run with every Apache child (all
    their threads) traced; strace slows the server, so this run counts and
    is never timed.  Returns (per request, [(name, per request)] top 6)."""
    children = procstat.tree(apache_pid)[1:]
    out_file = os.path.join(cfg.raw_dir, raw_name)
    cmd = ["strace", "-c", "-f", "-q", "-o", out_file]
    for pid in children:
        cmd += ["-p", str(pid)]
    tracer = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    time.sleep(0.5)                 # let strace attach to ~100 threads
    try:
        # the requests the syscall counts are divided by, kept with them
        r = wrk(cfg, port, path, cfg.strace_seconds, "wrk-" + raw_name)
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=30)
    calls = {}
    with open(out_file) as f:
        for line in f:
            parts = line.split()
            # % time, seconds, usecs/call, calls, [errors,] syscall
            if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
                calls[parts[-1]] = int(parts[3])
    total = sum(calls.values())
    if not r["requests"]:
        return None, []
    top = sorted(calls.items(), key=lambda kv: -kv[1])[:6]
    return total / r["requests"], [(k, v / r["requests"]) for k, v in top]

# SPDX-License-Identifier: Apache-2.0
"""The load generators and their parsers: wrk against an Apache, pgbench
against the page functions, the /compute driver, strace on Apache's
children.  Each returns plain dicts; bench.py decides what they mean."""

import os
import re
import resource
import signal
import socket
import statistics
import subprocess
import tempfile
import time

import procstat

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_RE = re.compile(r"^BENCH (.*)$", re.M)


class LoadError(Exception):
    pass


def url_host(host):
    """host as a URL writes it (an IPv6 address in brackets)."""
    return "[%s]" % host if ":" in host else host


def response_size(port, path, host="127.0.0.1"):
    """Bytes of one whole response (status line, headers, body), as wrk
    counts them: the expected bytes per request of a correct run."""
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n"
                   % (path, url_host(host), port)).encode())
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


def wrk(cfg, port, path, seconds, raw_name=None, during=None, prefix=(),
        host="127.0.0.1"):
    """One wrk run; `during` is called once half-way through (sampling).
    The result carries wrk's own CPU time and context switches (its
    rusage), unless `prefix` (a command wrk runs under) is given."""
    url = "http://%s:%d%s" % (url_host(host), port, path)
    cmd = list(prefix) + [
        "wrk", "-t", str(cfg.threads), "-c", str(cfg.connections),
        "-d", "%ds" % seconds, "--latency", "-s",
        os.path.join(HERE, "wrk.lua"), url]
    with tempfile.TemporaryFile(mode="w+") as out_f:
        proc = subprocess.Popen(cmd, stdout=out_f, stderr=subprocess.STDOUT)
        sample = None
        if during is not None:
            time.sleep(seconds / 2.0)
            sample = during()
        # wait4 rather than Popen.wait: the child's rusage is wrk's side of
        # the CPU profile
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        out = out_f.read()
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
    r["rusage"] = {"user_us": ru.ru_utime * 1e6, "sys_us": ru.ru_stime * 1e6,
                   "ctxsw": ru.ru_nvcsw + ru.ru_nivcsw}
    return r


def perf_usable():
    """Whether perf can count syscall tracepoints here (root, or a low
    perf_event_paranoid, and the linux-perf package)."""
    try:
        out = subprocess.run(["perf", "stat", "-x,", "-e", SYSCALL_EVENT,
                              "--", "true"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and _perf_count(out.stderr) is not None


SYSCALL_EVENT = "raw_syscalls:sys_enter"
# Syscalls counted by name beside the total: what a request path, a hand-off
# between threads or a wait on a socket is made of.
NAMED = ("read", "write", "readv", "writev", "recvfrom", "sendto",
         "sendfile64", "futex", "epoll_wait", "epoll_ctl", "poll",
         "accept4", "shutdown", "close", "fcntl", "setsockopt", "openat",
         "newfstatat", "mmap", "munmap", "madvise", "brk")


def syscall_events():
    """The total, then the NAMED tracepoints this kernel has."""
    try:
        with open("/sys/kernel/tracing/available_events") as f:
            have = set(line.strip() for line in f)
    except OSError:
        have = set()
    return [SYSCALL_EVENT] + ["syscalls:sys_enter_" + n for n in NAMED
                              if "syscalls:sys_enter_" + n in have]


def _perf_counts(text):
    """{event: count} from perf stat -x, output."""
    out = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) > 2 and ":" in parts[2]:
            out[parts[2]] = int(parts[0]) if parts[0].isdigit() else 0
    return out


def _perf_count(text):
    return _perf_counts(text).get(SYSCALL_EVENT)


# Descriptors perf itself needs beside one per event and thread.
PERF_SPARE_FDS = 64


def descriptor_cap():
    """How many descriptors a child of this process may open: the hard
    limit (a container's root may not raise it)."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


def events_within(events, threads, cap):
    """The first of `events` (the total first) that one perf may count on
    `threads` threads within `cap` descriptors: perf opens one per event
    and thread, and a server of 1 200 threads asks for more than a
    default limit of 20 000."""
    fit = (cap - PERF_SPARE_FDS) // max(threads, 1)
    return list(events[:max(fit, 0)])


def allow_descriptors(need):
    """Raise this process's soft RLIMIT_NOFILE to `need`, within the hard
    limit, for the perf it starts next to inherit (no preexec_fn: the
    bench may run threads)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))


class SyscallCount:
    """Syscalls entered by each side over a window, counted by the kernel's
    raw_syscalls:sys_enter tracepoint through `perf stat` (a counter, no
    sampling): one perf attached to every thread of each server's
    processes, and wrk run under one.  A side with more threads than the
    descriptor limit allows every named event for gets the total and as
    many names as fit."""

    def __init__(self, cfg, sides, name):
        self.files = {}
        self.procs = {}
        self.want = {}
        self.cfg = cfg
        self.name = name
        self.sides = sides
        self.events = ",".join(cfg.syscall_events)

    def _file(self, side):
        f = os.path.join(self.cfg.raw_dir, "perf-%s-%s.csv" % (self.name, side))
        self.files[side] = f
        return f

    def start(self):
        cap = descriptor_cap()
        for side, (pid, whole) in self.sides.items():
            if not pid:
                continue
            pids = procstat.tree(pid) if whole else [pid]
            threads = sum(procstat.threads(p) for p in pids)
            events = events_within(self.cfg.syscall_events, threads, cap)
            if not events:
                continue
            self.want[side] = len(events) * threads
            allow_descriptors(self.want[side] + PERF_SPARE_FDS)
            self.procs[side] = subprocess.Popen(
                ["perf", "stat", "-x,", "-e", ",".join(events), "-o",
                 self._file(side), "-p", ",".join(map(str, pids))],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._attached()
        return ["perf", "stat", "-x,", "-e", self.events, "-o",
                self._file("wrk"), "--"]

    def _attached(self, limit_s=10.0):
        """Wait until each perf holds a descriptor per event and thread, so
        that the warm-up starts counted."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit_s:
            if all(procstat.open_fds(self.procs[s].pid) >= n
                   for s, n in self.want.items()):
                break
            time.sleep(0.05)
        time.sleep(0.05)

    def stop(self):
        """{side: (syscalls, {name: syscalls})}; None for a side perf could
        not count."""
        for p in self.procs.values():
            p.send_signal(signal.SIGINT)
        for p in self.procs.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        out = {}
        for side, f in self.files.items():
            try:
                with open(f) as fh:
                    counts = _perf_counts(fh.read())
            except OSError:
                counts = {}
            total = counts.pop(SYSCALL_EVENT, None)
            out[side] = None if total is None else (total, {
                k.rsplit("sys_enter_", 1)[1]: v for k, v in counts.items()})
        return out


def _per(value, n):
    return value / n if n else None


def add_into(acc, d):
    """Add the counters of d into acc, key by key."""
    for k, v in d.items():
        acc[k] = acc.get(k, 0) + v


def timed_run(cfg, port, path, seconds, sides, raw_name, redis_port=None,
              pss_pid=None, host="127.0.0.1"):
    """One timed wrk run with every side's counters read just before and
    just after it: (wrk's result, {side: procstat.side_delta} with wrk's
    own rusage as the side "wrk", the machine's /proc/stat delta, Redis's
    {command: (calls, usec)}).  pss_pid's Pss is sampled half-way through
    (the result's "sample")."""
    r0 = procstat.redis_commandstats(redis_port) if redis_port else {}
    before = procstat.snapshot(sides)
    r = wrk(cfg, port, path, seconds, raw_name, host=host,
            during=(lambda: procstat.pss_kib(pss_pid)) if pss_pid else None)
    after = procstat.snapshot(sides)
    r1 = procstat.redis_commandstats(redis_port) if redis_port else {}
    d_sides, d_mach = procstat.delta_all(before, after)
    d_sides["wrk"] = dict(r["rusage"], minflt=0)
    return r, d_sides, d_mach, procstat.redis_delta(r0, r1)


def endpoint(cfg, port, path, sides, raw_name, redis_port=None, beside=None):
    """docs/CONTRACT.md section 6 for one endpoint: a warm-up, then cfg.runs
    runs; the run with the median requests/s gives the figures, errors add up
    over
    all runs.  The counters (/proc of every side, the machine's /proc/stat,
    Redis's commandstats, wrk's rusage) are read just before and just after
    each timed run and add up over the timed runs; syscalls are counted by
    perf over the warm-up, so that the timed runs carry no tracepoint.
    sides: {"apache": (pid, True), "pg": (pid, True), "redis": (pid, False)}
    (a pid and whether its children count).  beside, when given, runs the
    endpoint's reference once before each timed run and returns its
    requests/s: the two alternate, so that a machine that speeds up or
    slows down during the endpoint moves both alike; it runs outside the
    counters' window."""
    status, size = response_size(port, path)
    if status != 200:
        raise LoadError("GET %s answers %d before the load" % (path, status))
    t0 = time.time()
    warm, syscalls, syscall_names = None, None, None
    if cfg.warmup:
        counter = SyscallCount(cfg, sides, raw_name.rsplit(".", 1)[0]) \
            if cfg.perf else None
        prefix = counter.start() if counter else ()
        try:
            warm = wrk(cfg, port, path, cfg.warmup, raw_name, prefix=prefix)
        finally:
            counts = counter.stop() if counter else None
        if counts:
            n = warm["requests"]
            syscalls = {k: _per(v[0], n) if v else None
                        for k, v in counts.items()}
            syscall_names = {k: {name: c / n for name, c in v[1].items() if c}
                             for k, v in counts.items() if v and n}
    apache_pid = sides["apache"][0]
    runs = []
    cpu = {}
    mach = {}
    rcmd = {}
    beside_runs = []
    for _ in range(cfg.runs):
        if beside is not None:
            beside_runs.append(beside())
        r, d_sides, d_mach, d_redis = timed_run(
            cfg, port, path, cfg.duration, sides, raw_name,
            redis_port=redis_port, pss_pid=apache_pid)
        runs.append(r)
        for side, d in d_sides.items():
            add_into(cpu.setdefault(side, {}), d)
        add_into(mach, d_mach)
        for k, (calls, usec) in d_redis.items():
            c, u = rcmd.get(k, (0, 0))
            rcmd[k] = (c + calls, u + usec)
    timed = sum(r["requests"] for r in runs)
    med = sorted(runs, key=lambda r: r["rps"])[len(runs) // 2]
    total_bytes = sum(r["bytes"] for r in runs)
    ap = cpu.get("apache", {})
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
        "warmup_requests": warm["requests"] if warm else 0,
        "minflt_per_req": _per(ap.get("minflt", 0), timed),
        "ctxsw_per_req": _per(ap.get("ctxsw", 0), timed),
        "pss_kib": max(r["sample"] for r in runs),
        "profile": profile(cpu, mach, timed),
        "syscalls_per_req": syscalls,
        "syscalls_by_name": syscall_names,
        "redis": redis_per_request(rcmd, timed) if redis_port else None,
        "beside_rps_runs": beside_runs,
        "beside_rps": statistics.median(beside_runs) if beside_runs else None,
        "started": t0,
        "ended": time.time(),
    }


def profile(cpu, mach, n):
    """Per request: each side's user and system CPU, context switches and
    run-queue wait (none for wrk, known by its rusage only);
    the machine's irq + softirq (the kernel's interrupt work, on loopback
    most of TCP's receive path: the kernel charges it to the system time
    of whichever process it interrupted, so it is inside the sides' sys,
    not beside it); the machine's busy time, what of it no side accounts
    for (another tenant's load, ksoftirqd) and steal; the kernel's share of
    the sides' time."""
    out = {"sides": {}}
    attributed = kernel = 0.0
    for side, d in cpu.items():
        out["sides"][side] = {"user_us": _per(d["user_us"], n),
                              "sys_us": _per(d["sys_us"], n),
                              "ctxsw": _per(d["ctxsw"], n),
                              "runq_us": _per(d["runq_us"], n)
                              if "runq_us" in d else None}
        attributed += d["user_us"] + d["sys_us"]
        kernel += d["sys_us"]
    busy = sum(mach.get(k, 0) for k in ("user", "nice", "system", "irq",
                                        "softirq"))
    out["machine_us"] = {k: _per(v, n) for k, v in mach.items()}
    out["sides_us"] = _per(attributed, n)
    out["irq_us"] = _per(mach.get("irq", 0) + mach.get("softirq", 0), n)
    out["steal_us"] = _per(mach.get("steal", 0), n)
    out["busy_us"] = _per(busy, n)
    out["other_us"] = _per(max(busy - attributed, 0), n)
    out["kernel_share"] = kernel / attributed if attributed else None
    return out


def redis_per_request(rcmd, n):
    """Redis's own count of commands per request: GET and SET apart, the
    rest summed, and its time per GET."""
    get = rcmd.get("get", (0, 0))
    st = rcmd.get("set", (0, 0))
    other = sum(c for k, (c, _) in rcmd.items() if k not in ("get", "set"))
    return {"get": _per(get[0], n), "set": _per(st[0], n),
            "other": _per(other, n),
            "other_names": sorted(k for k in rcmd if k not in ("get", "set")),
            "get_usec": get[1] / get[0] if get[0] else None}


def pgbench(cfg, script, defines, raw_name):
    """Pages per second from one pgbench run of a page-function script."""
    cmd = ["pgbench", "-n", "-M", "prepared", "-c", str(cfg.pg_clients),
           "-j", str(cfg.threads), "-T", str(cfg.duration),
           "-U", cfg.pg_user, "-f", script]
    for k, v in defines.items():
        cmd += ["-D", "%s=%s" % (k, v)]
    # The database is pgbench's operand: its -d is --debug, which prints a
    # line per message and slows the very ceiling it measures.
    cmd.append("blog")
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

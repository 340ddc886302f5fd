# SPDX-License-Identifier: Apache-2.0
"""What the kernel counts for a server's processes, read from /proc.

A server (Apache, PostgreSQL) is its parent plus every process whose parent
it is; Redis is one process.  Per process: minor faults and user/system CPU
time from /proc/PID/stat (process-wide, dead threads included; a child
that exited and was reaped shows in its parent's cutime/cstime); context
switches summed over /proc/PID/task/*/status, because /proc/PID/status
counts only the main thread, and the time each thread waited runnable for
a CPU from /proc/PID/task/*/schedstat (the run queue, where a thread per
request waits when the CPUs are short); the proportional set size from
/proc/PID/smaps_rollup (shared pages split between their users, so the sum
over processes is the memory the server really holds).  The machine's own
time (irq, softirq, steal, idle) from /proc/stat.
"""

import os
import shlex
import socket

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def children_map():
    """{ppid: [pids]} over every process, from one pass over /proc."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read("/proc/%s/stat" % name)
        if stat is None:
            continue
        # the command name may hold spaces: fields start after the last ')'
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        out.setdefault(ppid, []).append(int(name))
    return out


# The stack's servers, each by its pid file under BLOG_VAR, and whether its
# children count as the server (Apache's and PostgreSQL's do; Redis is one
# process).
STACK = (("apache", "run/httpd.pid", True),
         ("pg", "pg/postmaster.pid", True),
         ("redis", "run/redis.pid", False))


def stack_sides(pid_of):
    """{side: (pid, with children)} of the stack, for snapshot();
    pid_of(name) reads a pid file under BLOG_VAR (None when absent)."""
    return {side: (pid_of(name), kids) for side, name, kids in STACK}


def tree(parent_pid, kids=None):
    """The parent and its direct children, as a list of pids."""
    kids = children_map() if kids is None else kids
    return [parent_pid] + kids.get(parent_pid, [])


def _minflt(pid):
    stat = _read("/proc/%d/stat" % pid)
    if stat is None:
        return 0
    return int(stat[stat.rindex(")") + 2:].split()[7])


def thread_ids(pid):
    """The ids of the process's threads, as /proc names them; none once
    it is gone."""
    try:
        return os.listdir("/proc/%d/task" % pid)
    except OSError:
        return []


def _tasks(pid):
    """(context switches, run-queue wait in microseconds) summed over the
    process's threads: /proc/PID/task/*/status counts the switches,
    /proc/PID/task/*/schedstat's second field the nanoseconds each thread
    spent runnable and waiting for a CPU (the scheduler's run_delay)."""
    switches = delay_ns = 0
    for tid in thread_ids(pid):
        status = _read("/proc/%d/task/%s/status" % (pid, tid))
        for line in (status or "").splitlines():
            if line.startswith(("voluntary_ctxt_switches:",
                                "nonvoluntary_ctxt_switches:")):
                switches += int(line.split()[1])
        sched = (_read("/proc/%d/task/%s/schedstat" % (pid, tid))
                 or "").split()
        if len(sched) >= 2:
            delay_ns += int(sched[1])
    return switches, delay_ns / 1000.0


def counters(parent_pid):
    """{pid: (minor faults, context switches)} for the server's processes."""
    return {pid: (_minflt(pid), _tasks(pid)[0]) for pid in tree(parent_pid)}


def delta(before, after):
    """(minor faults, context switches) between two counters() readings,
    over the processes present in both (a child that came or went is left
    out rather than counted from zero)."""
    flt = sw = 0
    for pid, (f1, s1) in after.items():
        if pid in before:
            f0, s0 = before[pid]
            flt += f1 - f0
            sw += s1 - s0
    return flt, sw


def pss_kib(parent_pid):
    """The sum of Pss over the server's processes, in KiB."""
    total = 0
    for pid in tree(parent_pid):
        for line in (_read("/proc/%d/smaps_rollup" % pid) or "").splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1])
    return total


def _stat_fields(pid):
    stat = _read("/proc/%d/stat" % pid)
    if stat is None:
        return None
    return stat[stat.rindex(")") + 2:].split()


def ppid(pid):
    """The parent's pid, or 0 when pid is gone."""
    f = _stat_fields(pid)
    return int(f[1]) if f else 0


def cmdline(pid):
    """The process's command line, its arguments quoted as a shell would
    need them, or None when it is gone or hidden."""
    raw = _read("/proc/%d/cmdline" % pid)
    if not raw:
        return None
    return shlex.join(raw.rstrip("\0").split("\0"))


POLICIES = {os.SCHED_OTHER: "SCHED_OTHER", os.SCHED_BATCH: "SCHED_BATCH",
            os.SCHED_IDLE: "SCHED_IDLE", os.SCHED_FIFO: "SCHED_FIFO",
            os.SCHED_RR: "SCHED_RR"}


def policy(pid):
    """The scheduling policy's name of the process pid, or None when it is
    gone."""
    try:
        n = os.sched_getscheduler(pid)
    except OSError:
        return None
    return POLICIES.get(n, "policy %d" % n)


def _proc(pid):
    """(minflt, utime us, stime us, ctxsw, cutime us, cstime us, run-queue
    wait us) or None."""
    f = _stat_fields(pid)
    if f is None:
        return None
    # fields from the state on: minflt 10, utime 14, stime 15, cutime 16,
    # cstime 17 (man 5 proc), less 3
    switches, runq_us = _tasks(pid)
    return (int(f[7]), int(f[11]) * TICK_US, int(f[12]) * TICK_US,
            switches, int(f[13]) * TICK_US, int(f[14]) * TICK_US, runq_us)


def machine():
    """/proc/stat's cpu line in microseconds: user nice system idle iowait
    irq softirq steal."""
    with open("/proc/stat") as f:
        words = f.readline().split()
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq",
             "steal")
    return {n: int(v) * TICK_US for n, v in zip(names, words[1:])}


def snapshot(sides):
    """sides: {name: (pid, whole tree?)}.  One reading of every side's
    processes and of the machine."""
    out = {"machine": machine(), "sides": {}}
    kids = children_map()
    for name, (pid, whole) in sides.items():
        if not pid:
            continue
        pids = tree(pid, kids) if whole else [pid]
        out["sides"][name] = {"parent": pid,
                              "procs": {p: _proc(p) for p in pids}}
    return out


def side_delta(before, after):
    """{minflt, user_us, sys_us, ctxsw, runq_us} of one side between two
    readings: the processes present in both, plus what the parent's reaped
    children added (cutime/cstime; a reaped child's run-queue wait is
    lost with it)."""
    d = {"minflt": 0, "user_us": 0.0, "sys_us": 0.0, "ctxsw": 0,
         "runq_us": 0.0}
    b, a = before["procs"], after["procs"]
    for pid, v1 in a.items():
        v0 = b.get(pid)
        if v0 is None or v1 is None:
            continue
        d["minflt"] += v1[0] - v0[0]
        d["user_us"] += v1[1] - v0[1]
        d["sys_us"] += v1[2] - v0[2]
        d["ctxsw"] += v1[3] - v0[3]
        d["runq_us"] += v1[6] - v0[6]
    p0, p1 = b.get(before["parent"]), a.get(after["parent"])
    if p0 and p1:
        d["user_us"] += p1[4] - p0[4]
        d["sys_us"] += p1[5] - p0[5]
    return d


def delta_all(before, after):
    """{side: side_delta} and the machine's {field: us} between readings."""
    sides = {n: side_delta(before["sides"][n], after["sides"][n])
             for n in after["sides"] if n in before["sides"]}
    m = {k: after["machine"][k] - before["machine"][k]
         for k in after["machine"]}
    return sides, m


def redis_commandstats(port):
    """{command: (calls, usec)} from Redis's own INFO commandstats."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"INFO commandstats\r\n")
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("Redis closed the connection")
            data += chunk
        head, _, rest = data.partition(b"\r\n")
        if not head.startswith(b"$"):
            raise OSError("INFO answered %r" % head[:80])
        size = int(head[1:])
        while len(rest) < size:
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("Redis closed the connection")
            rest += chunk
    out = {}
    for line in rest[:size].decode().splitlines():
        # cmdstat_get:calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,..
        if not line.startswith("cmdstat_"):
            continue
        name, _, kv = line[len("cmdstat_"):].partition(":")
        vals = dict(item.split("=", 1) for item in kv.split(","))
        out[name] = (int(vals["calls"]), int(vals["usec"]))
    return out


def redis_delta(before, after):
    """{command: (calls, usec)} sent between two readings, less the INFO
    that made the readings."""
    out = {}
    for name, (calls, usec) in after.items():
        c0, u0 = before.get(name, (0, 0))
        if name != "info" and calls > c0:
            out[name] = (calls - c0, usec - u0)
    return out


def threads(pid):
    return len(thread_ids(pid))


def open_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return 0

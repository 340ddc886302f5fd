"""What the kernel counts for a server's processes, read from /proc.

An Apache is its parent plus every process whose parent it is.  Per
process: minor faults from /proc/PID/stat (process-wide, dead threads
included); context switches summed over /proc/PID/task/*/status, because
/proc/PID/status counts only the main thread; the proportional set size
from /proc/PID/smaps_rollup (shared pages split between their users, so the
sum over processes is the memory the server really holds).
"""

import os


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def tree(parent_pid):
    """The parent and its direct children, as a list of pids."""
    pids = [parent_pid]
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read("/proc/%s/stat" % name)
        if stat is None:
            continue
        # the command name may hold spaces: fields start after the last ')'
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == parent_pid:
            pids.append(int(name))
    return pids


def _minflt(pid):
    stat = _read("/proc/%d/stat" % pid)
    if stat is None:
        return 0
    return int(stat[stat.rindex(")") + 2:].split()[7])


def _ctxsw(pid):
    total = 0
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return 0
    for tid in tids:
        status = _read("/proc/%d/task/%s/status" % (pid, tid))
        for line in (status or "").splitlines():
            if line.startswith(("voluntary_ctxt_switches:",
                                "nonvoluntary_ctxt_switches:")):
                total += int(line.split()[1])
    return total


def counters(parent_pid):
    """{pid: (minor faults, context switches)} for the server's processes."""
    return {pid: (_minflt(pid), _ctxsw(pid)) for pid in tree(parent_pid)}


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

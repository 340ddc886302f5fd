# SPDX-License-Identifier: Apache-2.0
"""The CPUs the stack's processes may run on, set live for an experiment
(bench/sweep.py's CPUS=; docs/DECISIONS.md, "Apache on every CPU"), as
an admin would with `CPUAffinity=` in each service's unit.
Nothing here is part of the stack: Apache, PostgreSQL and Redis are
started on every CPU and put back there by `reset()`.

A placement is "" (every CPU), "cells", or ";"-separated "SIDE/CPUS"
items, SIDE one of apache, pg, redis and CPUS a list as taskset takes it
("0", "1", "0-1"): "apache/0;pg/1" keeps Apache's threads on CPU 0 and
PostgreSQL's processes on CPU 1.  "cells" puts Apache's children on the
CPUs in turn (by pid) and each pooled backend on the CPU of the child at
the other end of its socket, so that a page's wake-ups stay on one CPU.
"""

import os
import re
import subprocess

import procstat


def cpu_list(text):
    """{0, 1} from "0-1"; {0, 2} from "0,2"."""
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def pin(pids, cpus):
    """Every thread of every process in pids onto cpus; a thread gone
    meanwhile is skipped."""
    for pid in pids:
        for tid in procstat.thread_ids(pid):
            try:
                os.sched_setaffinity(int(tid), cpus)
            except OSError:
                pass


def sides(pid_of):
    """{side: pids} of the stack: Apache's and PostgreSQL's whole trees,
    Redis alone; pid_of(name) reads a pid file under BLOG_VAR."""
    kids = procstat.children_map()
    return {side: procstat.tree(pid, kids) if with_kids else [pid]
            for side, (pid, with_kids) in procstat.stack_sides(pid_of).items()
            if pid}


def socket_peers():
    """{pid: [pids at the other end of its unix stream sockets]}, from
    ss -xpn's local and peer inodes."""
    out = subprocess.run(["ss", "-xpnH"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout.decode()
    owner, peer_of = {}, {}
    for line in out.splitlines():
        f = line.split()
        m = re.search(r"pid=(\d+),", line)
        if m and len(f) >= 8:
            owner[f[5]] = int(m.group(1))
            peer_of[f[5]] = f[7]
    peers = {}
    for inode, pid in owner.items():
        other = owner.get(peer_of[inode])
        if other is not None:
            peers.setdefault(pid, []).append(other)
    return peers


def place_cells(stack, cpus):
    """Apache's children on cpus in turn, each backend beside its child."""
    cpus = sorted(cpus)
    children = sorted(stack["apache"][1:])
    cpu_of = {c: {cpus[i % len(cpus)]} for i, c in enumerate(children)}
    for child, mine in cpu_of.items():
        pin([child], mine)
    peers = socket_peers()
    for backend in stack.get("pg", [])[1:]:
        for other in peers.get(backend, []):
            if other in cpu_of:
                pin([backend], cpu_of[other])


def place(spec, pid_of):
    """Every side back on every CPU this process may use (the ones the
    stack was started on), then spec applied."""
    stack = sides(pid_of)
    every = os.sched_getaffinity(0)
    for pids in stack.values():
        pin(pids, every)
    if spec == "cells":
        place_cells(stack, every)
        return
    for item in filter(None, spec.split(";")):
        side, _, cpus = item.partition("/")
        pin(stack.get(side, []), cpu_list(cpus))


def reset(pid_of):
    place("", pid_of)

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/placement.py on processes this test starts: the CPU lists, every
thread of a process pinned, a placement undone, and the process at the
other end of a unix socket.  No stack, no load.

    python3 tests/bench/placement.py        (ends with "N passed, N failed")
"""

import os
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import placement  # noqa: E402
import procstat  # noqa: E402
from cases import main, test  # noqa: E402

EVERY = os.sched_getaffinity(0)
# a child with a second thread, so that pinning every thread can be seen
THREADED = ("import threading, time\n"
            "threading.Thread(target=time.sleep, args=(30,)).start()\n"
            "time.sleep(30)\n")


def threads_of(pid):
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        tids = procstat.thread_ids(pid)
        if len(tids) > 1:
            return [int(t) for t in tids]
        time.sleep(0.02)
    raise AssertionError("the child never started its second thread")


def started(code):
    return subprocess.Popen([sys.executable, "-c", code])


@test
def cpu_lists_read_as_taskset_writes_them():
    assert placement.cpu_list("0") == {0}
    assert placement.cpu_list("0-1") == {0, 1}
    assert placement.cpu_list("0,2-3") == {0, 2, 3}


@test
def every_thread_of_a_process_is_pinned_and_put_back():
    child = started(THREADED)
    try:
        tids = threads_of(child.pid)
        last = {max(EVERY)}
        placement.pin([child.pid], last)
        assert [os.sched_getaffinity(t) for t in tids] == [last] * len(tids)
        placement.pin([child.pid], EVERY)
        assert all(os.sched_getaffinity(t) == EVERY for t in tids)
    finally:
        child.kill()
        child.wait()


@test
def a_process_gone_is_skipped():
    child = started("pass")
    child.wait()
    placement.pin([child.pid], EVERY)


@test
def a_placement_by_side_and_its_reset():
    apache, redis = started(THREADED), started(THREADED)
    pids = {"run/httpd.pid": apache.pid, "run/redis.pid": redis.pid}
    try:
        threads_of(apache.pid)
        first = {min(EVERY)}
        placement.place("apache/%d" % min(EVERY), pids.get)
        assert os.sched_getaffinity(apache.pid) == first
        assert os.sched_getaffinity(redis.pid) == EVERY
        placement.reset(pids.get)
        assert os.sched_getaffinity(apache.pid) == EVERY
    finally:
        for p in (apache, redis):
            p.kill()
            p.wait()


@test
def the_process_at_the_other_end_of_a_unix_socket():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        child = started("import socket, time\n"
                        "s = socket.socket(socket.AF_UNIX)\n"
                        "s.connect(%r)\n"
                        "time.sleep(30)\n" % path)
        try:
            conn, _ = srv.accept()
            peers = placement.socket_peers()
            assert child.pid in peers.get(os.getpid(), []), peers.get(
                os.getpid())
            assert os.getpid() in peers.get(child.pid, [])
            conn.close()
        finally:
            child.kill()
            child.wait()
            srv.close()


if __name__ == "__main__":
    sys.exit(main())

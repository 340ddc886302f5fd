# SPDX-License-Identifier: Apache-2.0
"""The machine's load lock: a test or bench step that loads the CPUs takes
/tmp/blog-load.lock (flock) so that two loads never run at once and
timings stay comparable.  When a caller already holds it (for instance
`flock /tmp/blog-load.lock ./blog check`), taking it again from a child
would wait forever, so a lock held by one of our ancestors counts as ours.
"""

import contextlib
import fcntl
import os
import time

LOCK = os.environ.get("BLOG_LOAD_LOCK", "/tmp/blog-load.lock")


def _ppid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
        return int(stat[stat.rindex(")") + 2:].split()[1])
    except (OSError, ValueError):
        return 0


def _holders(path):
    """PIDs holding a flock on path, from /proc/locks.  Matched by inode
    number alone: on overlay and similar file systems the device there is
    not the one stat() reports."""
    ino = str(os.stat(path).st_ino)
    pids = set()
    with open("/proc/locks") as f:
        for line in f:
            # "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF"; waiters
            # are listed with "->" and hold nothing
            fields = line.split()
            if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
                continue
            if fields[5].rsplit(":", 1)[-1] == ino:
                pids.add(int(fields[4]))
    return pids


def held_by_ancestor(path=LOCK):
    try:
        holders = _holders(path)
    except OSError:
        return False
    pid = os.getpid()
    while pid > 1:
        if pid in holders:
            return True
        pid = _ppid(pid)
    return False


@contextlib.contextmanager
def held(say=None, path=LOCK):
    """Hold the load lock for the body of a with-statement."""
    if held_by_ancestor(path):
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:         # another user's lock file: flock(1) too
        fd = os.open(path, os.O_RDONLY)    # locks it read-only
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if say:
                say("waiting for the load lock %s" % path)
            t0 = time.monotonic()
            fcntl.flock(fd, fcntl.LOCK_EX)
            if say:
                say("got the load lock after %.0f s" % (time.monotonic() - t0))
        yield
    finally:
        os.close(fd)

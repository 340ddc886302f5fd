# SPDX-License-Identifier: Apache-2.0
"""Processes started by PID file, stopped by PID: for the ceiling Apache
(bench/) and the cluster's web nodes (tests/cluster)."""

import os
import time


def pid_from(path):
    """The PID a PID file names, or None."""
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def stop(pid, seconds=20.0):
    """SIGTERM to pid, then wait for it to be gone: whether it is."""
    os.kill(pid, 15)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False

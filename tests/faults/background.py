# SPDX-License-Identifier: Apache-2.0
"""What a fault case runs beside itself, on a thread of its own, for the
length of a `with` block: the fake Redis, the slow clients, the prober."""

import threading


class Background:
    """`run` (the subclass's) on a daemon thread from the start of a `with`
    block to its end, where `stopping` is set, `wake` frees the thread from
    a call that does not look at `stopping` (a blocked accept), and the
    thread is given `join_for` seconds to return."""

    join_for = 5.0

    def __init__(self):
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.wake()
        self.thread.join(self.join_for)

    def run(self):
        raise NotImplementedError

    def wake(self):
        pass

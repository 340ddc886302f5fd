#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/peer.py's pure parts and the report's section "Against a peer",
on made-up runs; the peer's process found from a socket this test
listens on; the counters' own parts (the run-queue wait of a side,
perf's events within the descriptor limit).  No stack, no load.

    python3 tests/bench/peer.py        (ends with "N passed, N failed")
"""

import os
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import loads  # noqa: E402
import peer  # noqa: E402
import procstat  # noqa: E402
import report  # noqa: E402
from cases import main, test  # noqa: E402


def raises(fn, *args):
    try:
        fn(*args)
    except peer.PeerError as e:
        return str(e)
    raise AssertionError("%s%r did not raise" % (fn.__name__, args))


@test
def url_host_and_port():
    assert peer.parse_url("http://127.0.0.1:58081") == ("127.0.0.1", 58081)
    assert peer.parse_url("http://127.0.0.1:58081/") == ("127.0.0.1", 58081)
    assert peer.parse_url("http://localhost") == ("localhost", 80)
    assert peer.parse_url("http://[::1]:8000") == ("::1", 8000)


@test
def url_refused():
    assert "http://HOST:PORT" in raises(peer.parse_url, "https://a:1")
    assert "root" in raises(peer.parse_url, "http://a:1/blog")
    assert "root" in raises(peer.parse_url, "http://a:1/?x=1")
    raises(peer.parse_url, "http://a:99999")
    raises(peer.parse_url, "127.0.0.1:8080")


TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1089 1 0 100 0 0 10 0
   1: 0100007F:E305 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5401 1 0 100 0 0 10 0
   2: 0100007F:E305 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 5402 1 0 20 4 30 10 -1
   3: 0100007F:9C40 0100007F:E305 01 00000000:00000000 00:00000000 00000000     0        0 5403 1 0 20 4 30 10 -1
"""
TCP6 = """\
  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:E305 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7701 1 0 100 0 0 10 0
"""


@test
def listening_sockets_only():
    # 0xE305 = 58117: the listening socket, not the connections to it
    assert peer.listening_inodes(TCP, 58117) == {5401}
    assert peer.listening_inodes(TCP, 2024) == {1089}
    assert peer.listening_inodes(TCP, 40000) == set()
    assert peer.listening_inodes(TCP6, 58117) == {7701}
    assert peer.listening_inodes("", 80) == set()


@test
def the_parent_of_a_prefork_server():
    # a parent and its children all hold the socket: the parent
    assert peer.topmost({100: 1, 101: 100, 102: 100}) == [100]
    # the socket inherited by a process of another tree too: both, lowest
    # first
    assert peer.topmost({300: 1, 200: 7, 201: 200}) == [200, 300]
    assert peer.topmost({}) == []


@test
def rounds_alternate():
    order = peer.rounds_order(2)
    assert [s for _, s in order] == ["blog", "peer", "peer", "blog"] * 2
    assert [r for r, _ in order] == [0, 0, 0, 0, 1, 1, 1, 1]


@test
def response_sizes():
    assert peer.size_ok(7000, 7000.0, 10000, 50)
    # a run cut off by wrk's stop: up to one partial response per
    # connection
    assert peer.size_ok(7000, 7000 + 7000 * 50 / 1000.0, 1000, 50)
    assert not peer.size_ok(7000, 300.0, 10000, 50)      # an error page
    assert not peer.size_ok(7000, 7200.0 + 35, 10000, 50)


def run(rnd, rps, p50=1.0, p99=3.0, requests=1000, us=None, ctxsw=2000,
        runq=500.0, pss=10240, non2xx=0, sock=0, size=100, got=100.0):
    return {"round": rnd, "rps": rps, "p50_ms": p50, "p99_ms": p99,
            "requests": requests, "non2xx": non2xx, "socket_errors": sock,
            "response_bytes": size, "bytes_per_response": got,
            "us": us if us is not None else {"server": 50000.0,
                                             "pg": 1000.0, "redis": 0.0,
                                             "wrk": 20000.0},
            "ctxsw": ctxsw, "runq_us": runq, "pss_kib": pss,
            "redis_calls": requests}


def two_rounds():
    return {"blog": [run(0, 300), run(0, 100), run(1, 400, p99=9.0),
                     run(1, 400)],
            "peer": [run(0, 100, p50=2.0, ctxsw=None, runq=None, pss=None,
                         us={"pg": 3000.0, "wrk": 10000.0}),
                     run(0, 100, p50=2.0, ctxsw=None, runq=None, pss=None,
                         us={"pg": 3000.0, "wrk": 10000.0}),
                     run(1, 100, p50=2.0, ctxsw=None, runq=None, pss=None,
                         us={"pg": 3000.0, "wrk": 10000.0}),
                     run(1, 100, p50=2.0, ctxsw=None, runq=None, pss=None,
                         us={"pg": 3000.0, "wrk": 10000.0}, got=20.0)]}


@test
def per_round_ratios():
    s = peer.summary(two_rounds(), 50)
    # round means 200 and 400 against 100 and 100
    assert s["ratios"] == [2.0, 4.0], s["ratios"]
    assert s["ratio"] == 3.0
    assert 2.0 <= s["interval"][0] <= s["interval"][1] <= 4.0
    assert s["blog"]["rps"] == 300 and s["peer"]["rps"] == 100
    assert s["blog"]["p99_ms"] == 3.0 and s["peer"]["p50_ms"] == 2.0
    assert s["blog"]["tail"] == 3.0


@test
def per_request_counters():
    s = peer.summary(two_rounds(), 50)
    b, p = s["blog"], s["peer"]
    assert b["us"] == {"server": 50.0, "pg": 1.0, "redis": 0.0, "wrk": 20.0}
    # the peer's process unknown: no server CPU, context switches, Pss
    assert p["us"] == {"pg": 3.0, "wrk": 10.0}
    assert b["ctxsw"] == 2.0 and p["ctxsw"] is None
    assert b["runq_us"] == 0.5 and p["runq_us"] is None
    assert b["pss_kib"] == 10240 and p["pss_kib"] is None
    assert b["redis_per_req"] == 1.0


def with_peer_errors():
    runs = two_rounds()
    runs["peer"][2]["non2xx"] = 3
    return runs


@test
def peer_errors_counted():
    s = peer.summary(with_peer_errors(), 50)
    assert (s["blog"]["non2xx"], s["blog"]["bad_sizes"]) == (0, 0)
    assert (s["peer"]["non2xx"], s["peer"]["bad_sizes"]) == (3, 1)
    assert s["rounds_with_errors"] == [1] and s["ratios"] == [2.0]


@test
def a_failed_run_is_left_out():
    runs = two_rounds()
    runs["peer"] = [dict(run(0, 100), round=0),
                    {"round": 0, "failed": "wrk failed: refused"},
                    {"round": 1, "failed": "wrk failed: refused"},
                    {"round": 1, "failed": "wrk failed: refused"}]
    s = peer.summary(runs, 50)
    # round 1 has no peer run: its ratio is not made up
    assert s["ratios"] == [2.0], s["ratios"]
    assert s["peer"]["runs"] == 1 and len(s["peer"]["failed"]) == 3
    md, _ = report.peer_section(result({"about": ABOUT,
                                        "routes": {"/": runs}}))
    text = "\n".join(md)
    assert "3 runs not made (wrk failed: refused)" in text
    # one ratio: no interval to judge by
    assert "Not told apart (the interval holds 1): `/` 2.00 [2.00, 2.00] " \
        "(one round)" in text, text


@test
def a_side_that_only_failed_has_no_tail():
    """Runs made but answered by errors alone (wrk's p50 0): no ratio of
    latencies to take, and the report still renders."""
    runs = two_rounds()
    runs["peer"] = [dict(run(0, 7, p50=0.0, p99=0.0), non2xx=68),
                    dict(run(1, 7, p50=0.0, p99=0.0), non2xx=68)]
    s = peer.summary(runs, 50)
    assert s["peer"]["tail"] is None and s["peer"]["non2xx"] == 136
    assert s["blog"]["tail"] == 3.0, s["blog"]["tail"]
    md, _ = report.peer_section(result({"about": ABOUT, "routes": {"/cached": runs}}))
    row = [line for line in md[0:] for line in line.splitlines()
           if line.startswith("| /cached |")][0]
    assert "| 3.0 / - |" in row, row


@test
def a_round_with_errors_makes_no_ratio():
    """A peer answering 503s, or resetting connections, in one round: that
    round's req/s are no pages; the ratio comes from the other."""
    runs = two_rounds()
    runs["peer"] = [dict(run(0, 7), non2xx=68), dict(run(0, 7)),
                    run(1, 100), run(1, 100)]
    s = peer.summary(runs, 50)
    assert s["rounds_with_errors"] == [0], s["rounds_with_errors"]
    assert s["ratios"] == [4.0], s["ratios"]      # round 1: 400 / 100
    runs["peer"] = [run(0, 100), run(0, 100), run(1, 100, sock=3),
                    run(1, 100)]
    assert peer.summary(runs, 50)["ratios"] == [2.0]  # round 0: 200 / 100
    md, _ = report.peer_section(result({"about": ABOUT,
                                        "routes": {"/": runs}}))
    assert "`/`: 1 of its rounds left out of the ratio (a side answered " \
        "errors)" in "\n".join(md)


@test
def failure_in_one_line():
    import loads
    e = loads.LoadError("wrk failed for http://127.0.0.1:1/:\n$ wrk -t 2\n"
                        "unable to connect to 127.0.0.1:1 Connection "
                        "refused\n\n")
    assert peer.failure(e) == "unable to connect to 127.0.0.1:1 " \
        "Connection refused"
    assert peer.failure(OSError()) == "OSError"


def result(stage):
    return {"meta": {"stamp": "20261204-000000", "apache": "Apache/2.4",
                     "config": {"connections": 50, "threads": 2,
                                "duration": 5, "peer_rounds": 2,
                                "peer_warmup": 1}},
            "mpm": {"event": {"floor": {"quick": {"rps": 1000.0}},
                              "peer": stage}}}


ABOUT = {"name": "Rust (hyper)", "url": "http://127.0.0.1:58081",
         "server_header": None, "pid": 42, "pid_from": "PEER_PID",
         "cmdline": "/opt/peer --port 58081", "policy": "SCHED_BATCH"}


@test
def report_section():
    md, term = report.peer_section(result({
        "about": ABOUT, "routes": {"/cached": two_rounds(),
                                   "/": with_peer_errors()}}))
    text = "\n".join(md)
    assert text.startswith("## Against a peer")
    assert "Rust (hyper) at http://127.0.0.1:58081; Server header none; " \
        "pid 42 (PEER_PID): `/opt/peer --port 58081`; " \
        "scheduling policy SCHED_BATCH" in text
    lines = text.splitlines()
    row = [line for line in lines if line.startswith("| /cached |")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:4] == ["300", "100", "3.00 [2.00, 4.00]"], cells
    # the floor (1000 req/s) beside the cached routes only
    assert cells[9] == "0.30 / 0.10", cells
    assert [line for line in lines if line.startswith("| / |")][0] \
        .rstrip(" |").endswith("-")
    assert "peer `/cached`: 0 non-2xx, 0 socket errors, 1 runs" in text
    assert "peer `/`: 3 non-2xx, 0 socket errors, 1 runs" in text
    assert "`/`: 1 of its rounds left out of the ratio" in text
    assert "The blog ahead of the peer" in text
    assert any("against the peer" in t for t in term)


@test
def report_without_a_peer():
    assert report.peer_section({"mpm": {"event": {}}}) == ([], [])


@test
def about_an_unknown_process():
    line = peer.about_line(dict(ABOUT, name=None, pid=None,
                                pid_from="no socket listens on port 1",
                                server_header="hyper"))
    assert line.startswith("(PEER_NAME not given) at http://")
    assert 'Server header "hyper"' in line
    assert "its process unknown (no socket listens on port 1)" in line


@test
def finds_the_process_listening():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        port = s.getsockname()[1]
        pid, how = peer.find_pid("127.0.0.1", port)
        assert pid == os.getpid(), (pid, how)
        assert "port %d" % port in how
    finally:
        s.close()
    assert peer.find_pid("127.0.0.1", port)[0] is None
    assert "tests/bench/peer.py" in procstat.cmdline(os.getpid())


@test
def the_scheduling_policy_of_a_process():
    child = subprocess.Popen(["chrt", "--batch", "0", "sleep", "10"])
    try:
        deadline = time.time() + 5
        while procstat.cmdline(child.pid) != "sleep 10" \
                and time.time() < deadline:
            time.sleep(0.01)      # chrt sets the policy, then execs sleep
        assert procstat.policy(child.pid) == "SCHED_BATCH"
        assert procstat.policy(os.getpid()) == \
            procstat.POLICIES[os.sched_getscheduler(0)]
    finally:
        child.kill()
        child.wait()
    assert procstat.policy(child.pid) is None


@test
def run_queue_wait_counted():
    # two processes spinning on one CPU: while one runs the other waits
    # runnable, and the side's counters must show that wait
    cpu = min(os.sched_getaffinity(0))
    kids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            os.sched_setaffinity(0, {cpu})
            end = time.monotonic() + 0.6
            while time.monotonic() < end:
                pass
            os._exit(0)
        kids.append(pid)
    sides = {"spin": (os.getpid(), True)}
    time.sleep(0.05)
    before = procstat.snapshot(sides)
    time.sleep(0.4)
    after = procstat.snapshot(sides)
    for pid in kids:
        os.waitpid(pid, 0)
    d = procstat.side_delta(before["sides"]["spin"], after["sides"]["spin"])
    # 0.4 s of two spinners sharing one CPU: about 0.4 s of waiting
    assert d["runq_us"] > 100000, d


@test
def perf_events_fit_the_descriptors():
    events = ["total"] + ["name%d" % i for i in range(22)]
    # 4 x 300 workers and the parent's: 16 events of 23 within 20 000
    got = loads.events_within(events, 1216, 20000)
    assert got == events[:16], got
    assert len(got) * 1216 + loads.PERF_SPARE_FDS <= 20000
    assert loads.events_within(events, 50, 20000) == events
    assert loads.events_within(events, 1216, 1000) == []


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make freshness: how soon a write reaches the cached pages, under load.

    . scripts/env.sh && python3 bench/freshness.py

Against the running private stack (BlogInvalidate On), with wrk loading the
cached routes (/cached and the detail pages written to), inside the load
lock (tests/e2e/loadlock.py):

1. 100 comments (blog.add_comment, on 20 posts outside the 20 latest) and
   20 posts (blog.publish_post, dated now, so on the index) are written one
   by one, as pgblog_writer.  Before each, the page it changes is cached (a
   HIT); from the moment the commit returns, the page is fetched in a loop
   until an answer shows the write.  Figures: p50, p99 and max of that
   time; PASS when p99 <= 50 ms.  A second client keeps fetching every page
   written so far: once a write was seen, no later answer may miss it.
2. The cached routes' throughput under one wrk run, in turns read-only and
   with writes at 10 a second (5 comments to 1 post), the order
   alternating, each turn's rate counted from Redis's GET calls; PASS when
   the median of the turns' ratios says the writes cost at most 5 %.

Everything written is removed at the end and the pages are checked against
tests/golden.  Knobs: FRESH_ROUNDS (25 pairs of turns), FRESH_SEGMENT (1 s a turn),
CONNECTIONS (50), THREADS (2).  Ends with `N passed, N failed`.
"""

import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

import blogtest as bt  # noqa: E402
import loadlock  # noqa: E402

T = bt.Tally("freshness")
ROUNDS = int(os.environ.get("FRESH_ROUNDS", "25"))
SEGMENT = float(os.environ.get("FRESH_SEGMENT", "1"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "50"))
THREADS = int(os.environ.get("THREADS", "2"))
P99_LIMIT = 0.050
COST_LIMIT = 0.05
GIVE_UP = 5.0               # a write not seen after this long is a failure
NONCE = "%x" % (int(time.time()) % 0xfffff)
# 20 posts outside the index's 20 latest (981-1000), spread over the table
TARGETS = ["post-%d" % p for p in range(37, 980, 47)][:20]
WRK_LUA = os.path.join(ROOT, "bench", "freshness.lua")


def say(text):
    print(text, flush=True)


class Writer:
    """One psql session as pgblog_writer; write() returns when the
    statement's commit has returned (autocommit), with that instant."""

    def __init__(self):
        self.p = subprocess.Popen(
            ["stdbuf", "-oL", "psql", "-X", "-At", "-q", "-v", "ON_ERROR_STOP=1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            bufsize=0)
        self.write("SET ROLE pgblog_writer; SELECT 'ready';")

    def write(self, sql):
        self.p.stdin.write((sql + "\n").encode())
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        t = time.monotonic()
        if not line:
            raise RuntimeError("psql ended: %s" % self.p.stderr.read().decode())
        return line.decode().strip(), t

    def close(self):
        self.p.stdin.close()
        self.p.wait(10)


def sql_text(s):
    return "'" + s.replace("'", "''") + "'"


def comment_sql(slug, marker):
    return "SELECT blog.add_comment(%s, 'Freshness', %s);" % (sql_text(slug), sql_text(marker))


def post_sql(slug):
    return ("SELECT blog.publish_post(1, %s, 'Freshness ' || %s, 'A summary', 'A body', "
            "ARRAY['tag-1', 'tag-2']);" % (sql_text(slug), sql_text(slug)))


class Watcher(threading.Thread):
    """Fetches every page already seen fresh, again and again: each answer
    must still show every write seen on it."""

    def __init__(self):
        super().__init__(daemon=True)
        self.lock = threading.Lock()
        self.seen = []          # (path, marker)
        self.answers = 0
        self.stale = []
        self.stop = threading.Event()

    def add(self, path, marker):
        with self.lock:
            self.seen.append((path, marker.encode()))

    def run(self):
        c = bt.Conn(10)
        try:
            while not self.stop.is_set():
                with self.lock:
                    seen = list(self.seen)
                if not seen:
                    time.sleep(0.01)
                    continue
                by_path = {}
                for path, marker in seen:
                    by_path.setdefault(path, []).append(marker)
                for path, markers in by_path.items():
                    r = c.request("GET", path)
                    self.answers += 1
                    missing = [m for m in markers if m not in r.body]
                    if r.status != 200 or missing:
                        self.stale.append("%s: status %d, missing %s (X-Cache %s)"
                                          % (path, r.status, missing[:2], r.get("x-cache")))
                    if self.stop.is_set():
                        break
        finally:
            c.close()


def start_wrk(paths, seconds):
    env = dict(os.environ, FRESH_PATHS=" ".join(paths))
    return subprocess.Popen(
        ["wrk", "-t%d" % THREADS, "-c%d" % CONNECTIONS, "-d%ds" % seconds,
         "-s", WRK_LUA, "http://127.0.0.1:%d" % bt.HTTP_PORT],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        # a session of its own, so a scheduling group of its own (autogroup):
        # wrk's two busy threads would otherwise share this process's group
        # with the probe and hold the probe's clock readings back
        start_new_session=True)


def wrk_result(p):
    out = p.communicate(timeout=120)[0].decode()
    for line in out.splitlines():
        if line.startswith("FRESH "):
            return dict(kv.split("=") for kv in line.split()[1:])
    raise RuntimeError("no summary from wrk: %s" % out[-500:])


def redis_fresh(redis, key, marker, t_commit):
    """Seconds from the commit until Redis holds no old page under key
    (deleted by the listener, or already stored again with the write), on
    a Redis connection of our own; None if never."""
    m = marker.encode()
    while True:
        v = redis.cmd("GET", key)
        t = time.monotonic()
        if v is None or m in v:
            return t - t_commit
        if t - t_commit > GIVE_UP:
            return None


def seen_within(conn, path, marker, t_commit):
    """Fetch path until its answer shows marker: seconds from the commit,
    and how many answers before it were the old page."""
    m = marker.encode()
    old = 0
    while True:
        r = conn.request("GET", path)
        t = time.monotonic()
        if r.status == 200 and m in r.body:
            return t - t_commit, old
        old += 1
        if t - t_commit > GIVE_UP:
            return None, old


def cache_it(conn, path):
    """Make sure path is a HIT now: the write must invalidate it."""
    for _ in range(20):
        if conn.request("GET", path).get("x-cache") == "HIT":
            return True
    return False


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def measure_latency(paths):
    """Part 1: 100 comments and 20 posts, one by one, under wrk."""
    wrk = start_wrk(paths, 120)
    time.sleep(1.0)     # wrk's connections up, the pages cached
    watcher = Watcher()
    watcher.start()
    writer = Writer()
    conn = bt.Conn(10)
    redis = bt.Redis()
    lat = {"comment": [], "post": [], "del": []}
    old_answers = []
    not_hit = lost = 0
    try:
        plan = [("comment", i) for i in range(100)]
        # a post after every fifth comment
        for k in range(20):
            plan.insert(k * 6 + 5, ("post", k))
        for kind, i in plan:
            if kind == "comment":
                slug = TARGETS[i % len(TARGETS)]
                path = "/post/%s/cached" % slug
                marker = "fresh-%s-comment-%d" % (NONCE, i)
                sql = comment_sql(slug, marker)
            else:
                slug = "fresh-%s-post-%d" % (NONCE, i)
                path = "/cached"
                marker = '/post/%s"' % slug
                sql = post_sql(slug)
            if not cache_it(conn, path):
                not_hit += 1
            _, t_commit = writer.write(sql)
            gone = redis_fresh(redis, "blog:page:" + (path[:-len("/cached")] or "/"),
                               marker, t_commit)
            if gone is not None:
                lat["del"].append(gone)
            took, old = seen_within(conn, path, marker, t_commit)
            old_answers.append(old)
            if took is None:
                lost += 1
            else:
                lat[kind].append(took)
                watcher.add(path, marker)
            time.sleep(0.02)
    finally:
        conn.close()
        redis.close()
        writer.close()
        time.sleep(0.5)     # the watcher's last rounds, after the last write
        watcher.stop.set()
        watcher.join(10)
        wrk.send_signal(signal.SIGINT)
        load = wrk_result(wrk)
    return lat, old_answers, not_hit, lost, watcher, load


def redis_gets(redis):
    """Redis's count of GET calls so far: one per cached-route request."""
    info = redis.cmd("INFO", "commandstats").decode()
    for line in info.splitlines():
        if line.startswith("cmdstat_get:"):
            return int(line.split("calls=")[1].split(",")[0])
    return 0


def throughput(paths):
    """Part 2: one wrk run; the writer is switched on (10 writes a second)
    and off in turns of SEGMENT seconds, ABBA, and each turn's rate is
    counted from Redis's GET calls.  Restarting wrk for every run, or runs
    of many seconds, let the machine's other load swamp a 5 % effect."""
    pairs = []
    writes = [0]
    on = threading.Event()
    stop = threading.Event()

    def write_loop():
        w = Writer()
        try:
            n = 0
            nxt = time.monotonic()
            while not stop.is_set():
                if on.is_set():
                    if n % 6 == 5:
                        w.write(post_sql("fresh-%s-tp-%d" % (NONCE, n)))
                    else:
                        w.write(comment_sql(random.choice(TARGETS), "fresh-%s-tp-%d" % (NONCE, n)))
                    n += 1
                    writes[0] = n
                nxt += 0.1
                stop.wait(max(0.0, nxt - time.monotonic()))
                if nxt < time.monotonic() - 1:
                    nxt = time.monotonic()
        finally:
            w.close()

    redis = bt.Redis()
    # each turn also waits 0.2 s and reads Redis's counters: room to spare
    wrk = start_wrk(paths, int(2 * ROUNDS * (SEGMENT + 0.5) + 10))
    th = threading.Thread(target=write_loop, daemon=True)
    th.start()
    try:
        time.sleep(2.0)     # wrk's connections up, the pages cached
        for rnd in range(ROUNDS):
            rates = {}
            for mode in (("read-only", "writes") if rnd % 2 == 0 else ("writes", "read-only")):
                if mode == "writes":
                    on.set()
                else:
                    on.clear()
                time.sleep(0.2)     # the previous turn's last write done
                w0, g0, t0 = writes[0], redis_gets(redis), time.monotonic()
                time.sleep(SEGMENT)
                g1, t1 = redis_gets(redis), time.monotonic()
                rates[mode] = ((g1 - g0) / (t1 - t0), writes[0] - w0)
            pairs.append(rates)
            say("  turn %2d  read-only %8.0f req/s   with writes %8.0f req/s (%d writes)  %+5.1f %%"
                % (rnd + 1, rates["read-only"][0], rates["writes"][0], rates["writes"][1],
                   100 * (rates["writes"][0] / rates["read-only"][0] - 1)))
    finally:
        on.clear()
        stop.set()
        th.join(10)
        redis.close()
        wrk.send_signal(signal.SIGINT)
        res = wrk_result(wrk)
    errors = sum(int(res[k]) for k in ("connect", "read", "write", "status", "timeout"))
    T.check(errors == 0, "no wrk errors during the throughput turns", "%d errors" % errors)
    ro = [p["read-only"][0] for p in pairs]
    rw = [p["writes"][0] for p in pairs]
    return ro, rw, sum(p["writes"][1] for p in pairs)


def restore_seed():
    bt.psql("DELETE FROM blog.comments WHERE id > 10000;"
            "DELETE FROM blog.post_tags WHERE post_id > 1000;"
            "DELETE FROM blog.posts WHERE id > 1000;"
            "VACUUM blog.posts, blog.post_tags, blog.comments;")


def golden(name):
    with open(os.path.join(ROOT, "tests", "golden", name), "rb") as f:
        return f.read()


def main():
    listening = bt.psql("SELECT count(*) FROM pg_stat_activity WHERE "
                        "application_name = 'mod_blog listener' AND query = 'LISTEN blog_cache'")
    if not T.check(int(listening[0][0]) == 1, "one invalidation listener is running",
                   "BlogInvalidate Off, or PostgreSQL not reachable by it?"):
        return
    paths = ["/cached"] + ["/post/%s/cached" % s for s in TARGETS]
    with loadlock.held(say):
        say("freshness: 100 comments and 20 posts one by one, wrk -t%d -c%d on %d "
            "cached routes" % (THREADS, CONNECTIONS, len(paths)))
        lat, old_answers, not_hit, lost, watcher, load = measure_latency(paths)
        both = lat["comment"] + lat["post"]
        say("  load meanwhile: %.0f req/s, p99 %.1f ms"
            % (int(load["requests"]) / (int(load["duration_us"]) / 1e6),
               int(load["p99_us"]) / 1000))
        say("  %-34s %5s %8s %8s %8s" % ("commit -> first fresh answer", "n", "p50 ms",
                                          "p99 ms", "max ms"))
        for name, v in (("comment (/post/{slug}/cached)", lat["comment"]),
                        ("post (/cached)", lat["post"]), ("all", both),
                        ("(commit -> old page gone from Redis)", lat["del"])):
            if v:
                say("  %-34s %5d %8.2f %8.2f %8.2f" % (name, len(v), 1000 * pct(v, 0.5),
                                                       1000 * pct(v, 0.99), 1000 * max(v)))
        say("  answers with the old page after a commit: %d of %d writes had one or more,"
            " at most %d" % (sum(1 for o in old_answers if o), len(old_answers),
                             max(old_answers or [0])))
        T.check(lost == 0, "every write reached its cached page within %.0f s" % GIVE_UP,
                "%d did not" % lost)
        T.check(not_hit == 0, "each page was a cached HIT before its write",
                "%d were not" % not_hit)
        p99 = pct(both, 0.99) if both else 1e9
        T.check(p99 <= P99_LIMIT, "p99 commit -> fresh answer <= %.0f ms"
                % (P99_LIMIT * 1000), "%.1f ms" % (p99 * 1000))
        say("  %d answers checked after each write was seen: %d stale"
            % (watcher.answers, len(watcher.stale)))
        for s in watcher.stale[:5]:
            say("    stale: " + s)
        T.check(watcher.answers > 0 and not watcher.stale,
                "no answer after a write was seen misses it",
                "%d stale of %d" % (len(watcher.stale), watcher.answers))
        say("freshness: cached-route throughput, %d turns of %.1f s read-only and %.1f s "
            "with 10 writes/s, under one wrk run" % (ROUNDS, SEGMENT, SEGMENT))
        ro, rw, writes = throughput(paths)
    m_ro, m_rw = statistics.median(ro), statistics.median(rw)
    # each round's pair side by side, then the median of the pairs' ratios
    cost = 1 - statistics.median(w / r for r, w in zip(ro, rw))
    say("  median read-only %.0f req/s, with writes %.0f req/s (%d writes); median "
        "of the rounds' ratios: %.1f %% %s" % (m_ro, m_rw, writes, abs(cost) * 100,
                                             "less" if cost > 0 else "more"))
    T.check(writes >= 0.8 * 10 * SEGMENT * ROUNDS, "writes ran at about 10 a second",
            "%d writes in %.0f s" % (writes, SEGMENT * ROUNDS))
    T.check(cost <= COST_LIMIT, "throughput with writes within %.0f %% of read-only"
            % (COST_LIMIT * 100), "%.1f %% less" % (cost * 100))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        T.crash("freshness", e)
    finally:
        try:
            restore_seed()
            ok = bt.wait_for(lambda: bt.get("/cached").body == golden("index.html"), 3)
            T.check(ok, "after the clean-up /cached is the golden index")
            ok = bt.wait_for(lambda: bt.get("/post/%s/cached" % TARGETS[0]).body
                             == bt.get("/post/%s" % TARGETS[0]).body, 3)
            T.check(ok, "after the clean-up the written posts' cached pages are fresh")
        except Exception as e:
            T.crash("restoring the seed", e)
    for line in ("PASS" if T.failed == 0 else "FAIL",):
        say("freshness: %s" % line)
    T.finish()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cached pages invalidated on writes, against the running private stack.

    . scripts/env.sh && python3 tests/e2e/invalidation.py

pg_blog's triggers NOTIFY blog_cache with the keys of the pages a commit
made stale; mod_blog's one listener deletes them (mod_blog/invalidate.c).
Checks: one listener; a write through each write function, and one in
plain SQL, shows on /post/{slug}/cached and /cached within 1 s, and only
the named keys go; after a gap in listening (PostgreSQL restarted, the
listener's session killed) every page key is dropped, and never the pages
of another mount sharing the Redis; a miss that read PostgreSQL before a
write of more than 200 pages ("*") and stores its page after the drop
(held on a lock in between) is gone by BlogQueryTimeout + BlogRedisTimeout.
Everything written is removed at the end and the seed's pages are checked
against tests/golden.  Ends with `N passed, N failed`.
"""

import os
import re
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blogtest as bt  # noqa: E402

T = bt.Tally("invalidation")
GOLDEN = os.path.join(bt.ROOT, "tests", "golden")
# seconds a write may take to reach a cached page: the listener deletes at
# once; the margin is the loaded machine's, far below the cache TTL (60 s)
FRESH = 1.0 + bt.MARGIN
# BlogQueryTimeout + BlogRedisTimeout: the stack's (the module's defaults)
BOUND = 5.0 + 0.2
# Pages of another blog on the same Redis, mounted at /elsewhere: no
# listener of this one may delete them.
OTHERS = ("blog:page:/elsewhere/", "blog:page:/elsewhere/post/post-6")


def golden(name):
    with open(os.path.join(GOLDEN, name), "rb") as f:
        return f.read()


def listeners():
    return [int(r[0]) for r in bt.psql(
        "SELECT pid FROM pg_stat_activity WHERE datname = 'blog'"
        " AND application_name = 'mod_blog listener'"
        " AND query = 'LISTEN blog_cache'")]


def listener_child():
    """The Apache child that listens: the process at the other end of the
    listener backend's unix socket (ss -xpn: local and peer inodes)."""
    pids = listeners()
    if not pids:
        return None
    out = subprocess.run(["ss", "-xpn"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout.decode()
    rows = [line.split(None, 8) for line in out.splitlines()[1:]]
    rows = [f for f in rows if len(f) == 9]
    peer = [f[7] for f in rows if "pid=%d," % pids[0] in f[8]]
    for f in rows:
        if peer and f[5] == peer[0]:
            m = re.search(r'"apache2",pid=(\d+)', f[8])
            if m:
                return int(m.group(1))
    return None


def as_writer(sql):
    """SQL run with the rights of pgblog_writer only."""
    return bt.psql("SET ROLE pgblog_writer;\n" + sql)


def cached(path):
    r = bt.get(path)
    return r.status, r.get("x-cache"), r.body


def until(path, pred, seconds=FRESH):
    """Poll a cached page until pred(body); the seconds it took, or None."""
    t0 = time.monotonic()
    while True:
        status, _, body = cached(path)
        if status == 200 and pred(body):
            return time.monotonic() - t0
        if time.monotonic() - t0 > seconds:
            return None
        time.sleep(0.01)


def card(index, slug):
    """The index's card of a post (from its link to the end of the card)."""
    at = index.find(b'/post/%s"' % slug.encode())
    return index[at:index.find(b"</article>", at)] if at >= 0 else b""


def warm(*paths):
    for p in paths:
        cached(p)
    return all(cached(p)[1] == "HIT" for p in paths)


def keys():
    return set(k.decode() if isinstance(k, bytes) else k
               for k in (bt.redis_cmd("KEYS", "blog:page:*") or []))


def plant_others():
    for k in OTHERS:
        bt.redis_cmd("SET", k, "another blog's page", "EX", "120")


def others_kept(what):
    T.check(all(bt.redis_cmd("EXISTS", k) == 1 for k in OTHERS),
            "%s: another mount's pages stay (%s)" % (what, ", ".join(OTHERS)))


def locks_on_comments(granted):
    return bt.psql("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                   " WHERE c.relname = 'comments' AND l.granted = %s" % granted)[0][0] != "0"


def miss_across_drop():
    """A miss of /post/post-777/cached reads blog.posts (its snapshot taken),
    then waits on a lock of blog.comments; meanwhile 300 posts are updated
    at once (301 keys: pg_blog sends "*") and the listener drops every
    page; the lock goes, the miss stores the old page after the drop.  The
    drop is repeated after BOUND: the old page is gone by then (it lived
    its 60 s before)."""
    path, key = "/post/post-777/cached", "blog:page:/post/post-777"
    bt.redis_cmd("DEL", key)
    locker = subprocess.Popen(
        ["psql", "-X", "-q", "-c", "BEGIN; LOCK TABLE blog.comments IN ACCESS EXCLUSIVE "
         "MODE; SELECT pg_sleep(2); COMMIT;"], stdout=subprocess.DEVNULL)
    got = {}
    try:
        T.check(bt.wait_for(lambda: locks_on_comments("true"), 5 + bt.MARGIN, 0.02),
                "the lock on blog.comments is held")
        reader = threading.Thread(target=lambda: got.update(r=bt.get(path, timeout=30)))
        reader.start()
        T.check(bt.wait_for(lambda: locks_on_comments("false"), 5 + bt.MARGIN, 0.02),
                "the miss waits on the lock, its snapshot taken")
        bt.psql("UPDATE blog.posts SET title = title || ' #' WHERE id BETWEEN 701 AND 1000")
        t_commit = time.monotonic()
        reader.join(30)
        r = got.get("r")
        T.check(r is not None and r.status == 200 and r.get("x-cache") == "MISS"
                and b" #</h1>" not in r.body,
                "the miss answered the page as it read it, before the write",
                r.brief() if r else "no answer")
        fresh = lambda: bt.get(path).body == bt.get("/post/post-777").body  # noqa: E731
        T.check(bt.wait_for(fresh, BOUND + bt.MARGIN, 0.1),
                "the old page it stored after the drop is gone within BlogQueryTimeout + "
                "BlogRedisTimeout (%.1f s, with the margin %.0f s)" % (BOUND, bt.MARGIN),
                "still the old page")
        T.note("a miss stored across a drop: fresh %.2f s after the commit (bound %.1f s)"
               % (time.monotonic() - t_commit, BOUND))
    finally:
        locker.wait(30)
        bt.psql("UPDATE blog.posts SET title = regexp_replace(title, '( #)+$', '')"
                " WHERE id BETWEEN 701 AND 1000")


def restore_seed():
    bt.psql("DELETE FROM blog.comments WHERE id > 10000;"
            "DELETE FROM blog.post_tags WHERE post_id > 1000;"
            "DELETE FROM blog.posts WHERE id > 1000;"
            "VACUUM blog.posts, blog.post_tags, blog.comments;")


def main():
    T.check(bt.wait_for(lambda: len(listeners()) == 1, 5 + bt.MARGIN),
            "one invalidation listener (LISTEN blog_cache) for the instance",
            "listeners: %s" % listeners())

    # A comment on a post that is not among the 20 latest: its page only.
    bt.flush_page_keys()
    T.check(warm("/post/post-31/cached", "/post/post-32/cached", "/cached"),
            "the pages are cached (HIT) before the write")
    as_writer("SELECT blog.add_comment('post-31', 'Tester', 'Fresh comment 1');")
    took = until("/post/post-31/cached", lambda b: b"Fresh comment 1" in b)
    T.check(took is not None, "add_comment shows on /post/post-31/cached "
            "within %.0f s" % FRESH, "still stale")
    ks = keys()
    T.check("blog:page:/" in ks and "blog:page:/post/post-32" in ks,
            "the pages the comment did not touch stay cached", repr(ks))
    T.check(cached("/post/post-31/cached")[1] == "HIT",
            "the fresh page is cached again")

    # delete_comment
    cid = bt.psql("SELECT max(id) FROM blog.comments")[0][0]
    as_writer("SELECT blog.delete_comment(%d);" % int(cid))
    took = until("/post/post-31/cached", lambda b: b == golden("post-31.html"))
    T.check(took is not None, "delete_comment shows on the cached page",
            "still has the comment")

    # publish_post: on the index at once, and its own page.
    warm("/cached")
    as_writer("SELECT blog.publish_post(3, 'inv-test-post', 'Invalidation test', "
              "'A summary', 'A body', ARRAY['tag-1', 'tag-2']);")
    took = until("/cached", lambda b: b"/post/inv-test-post" in b)
    T.check(took is not None, "publish_post shows on /cached within %.0f s"
            % FRESH, "the index is stale")
    T.check(cached("/post/inv-test-post/cached")[0] == 200,
            "the new post's cached page answers 200")

    # edit_post: the post's page and the index (it is the newest post).
    warm("/cached", "/post/inv-test-post/cached")
    as_writer("SELECT blog.edit_post('inv-test-post', title => 'Edited title');")
    T.check(until("/post/inv-test-post/cached", lambda b: b"Edited title" in b)
            is not None, "edit_post shows on the post's cached page")
    T.check(until("/cached", lambda b: b"Edited title" in b) is not None,
            "edit_post shows on /cached")

    # Plain SQL by the owner: a comment on a post among the 20 latest
    # changes its count on the index too.
    warm("/cached", "/post/post-1000/cached")
    bt.psql("INSERT INTO blog.comments VALUES "
            "(20001, 1000, 'Owner', 'Plain SQL comment', now());")
    T.check(until("/post/post-1000/cached", lambda b: b"Plain SQL comment" in b)
            is not None, "a plain-SQL insert shows on the cached page")
    T.check(until("/cached", lambda b: b"9 comments" in card(b, "post-1000"))
            is not None,
            "a plain-SQL insert shows on /cached (the comment count)")
    bt.psql("UPDATE blog.comments SET body = 'Edited in SQL' WHERE id = 20001;")
    T.check(until("/post/post-1000/cached", lambda b: b"Edited in SQL" in b)
            is not None, "a plain-SQL update shows on the cached page")

    # A gap: PostgreSQL restarted.  A planted stale page must not outlive it.
    bt.redis_cmd("SET", "blog:page:/post/post-5", "stale", "EX", "60")
    bt.redis_cmd("SET", "blog:inv-test:other", "kept", "EX", "60")
    old = listeners()
    r = bt.stack("restart", "pg")
    T.check(r.returncode == 0, "PostgreSQL restarted", r.stdout.decode()[-300:])
    T.check(bt.wait_for(lambda: listeners() and listeners() != old, 5 + bt.MARGIN),
            "the listener is back after the restart", "listeners %s" % listeners())
    T.check(bt.wait_for(lambda: bt.redis_cmd("EXISTS", "blog:page:/post/post-5") == 0, 3 + bt.MARGIN),
            "after the restart every page key is dropped")
    T.check(bt.redis_cmd("EXISTS", "blog:inv-test:other") == 1,
            "keys that are not pages stay")
    warm("/post/post-31/cached")
    as_writer("SELECT blog.add_comment('post-31', 'Tester', 'After the restart');")
    T.check(until("/post/post-31/cached", lambda b: b"After the restart" in b)
            is not None, "writes are heard again after the restart")

    # A gap: the listener's session killed.
    bt.redis_cmd("SET", "blog:page:/post/post-6", "stale", "EX", "60")
    plant_others()
    old = listeners()
    bt.psql("SELECT pg_terminate_backend(%d);" % old[0] if old else "SELECT 1;")
    T.check(bt.wait_for(lambda: listeners() and listeners() != old, 5 + bt.MARGIN),
            "a killed listener session is replaced", "listeners %s" % listeners())
    T.check(bt.wait_for(lambda: bt.redis_cmd("EXISTS", "blog:page:/post/post-6") == 0, 3 + bt.MARGIN),
            "after the listener's session was lost every page key is dropped")
    others_kept("after the listener's session was lost")
    bt.redis_cmd("DEL", "blog:inv-test:other")

    # "*", and the race it left open for a whole TTL.
    bt.redis_cmd("SET", "blog:page:/post/post-7", "stale", "EX", "60")
    bt.psql("NOTIFY blog_cache, '*'")
    T.check(bt.wait_for(lambda: bt.redis_cmd("EXISTS", "blog:page:/post/post-7") == 0,
                        FRESH), "\"*\" drops every page key")
    others_kept("after \"*\"")
    miss_across_drop()
    for k in OTHERS:
        bt.redis_cmd("DEL", k)

    # The listening child killed: another child takes over.
    old = listeners()
    pid = listener_child()
    if T.check(pid is not None, "the listening Apache child is found"):
        bt.redis_cmd("SET", "blog:page:/post/post-8", "stale", "EX", "60")
        os.kill(pid, 9)
        t0 = time.monotonic()
        T.check(bt.wait_for(lambda: listeners() and listeners() != old, 3 + bt.MARGIN, 0.05),
                "another child listens within %.0f s after the listening child was "
                "killed" % (3 + bt.MARGIN), "listeners %s" % listeners())
        T.check(bt.wait_for(lambda: bt.redis_cmd("EXISTS", "blog:page:/post/post-8") == 0,
                            3 + bt.MARGIN),
                "the new listener dropped every page key")
        T.note("listener moved to another child in %.2f s" % (time.monotonic() - t0))
        T.check(bt.wait_for(lambda: len(bt.children()) >= 4, 10 + bt.MARGIN),
                "Apache replaced the killed child")

    # Back to the seed; the pages are the reference ones again.
    restore_seed()
    T.check(until("/cached", lambda b: b == golden("index.html")) is not None,
            "after the clean-up /cached is the golden index")
    T.check(until("/post/post-31/cached", lambda b: b == golden("post-31.html"))
            is not None, "after the clean-up /post/post-31/cached is golden")
    T.check(until("/post/post-1000/cached", lambda b: b == golden("post-1000.html"))
            is not None, "after the clean-up /post/post-1000/cached is golden")
    T.check(len(listeners()) == 1, "still one listener at the end",
            "listeners: %s" % listeners())


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report, then still clean up
        T.crash("invalidation suite", e)
    finally:
        try:
            restore_seed()
            bt.settle_invalidation()
        except Exception as e:
            T.crash("restoring the seed", e)
    T.finish()

# SPDX-License-Identifier: Apache-2.0
"""Fault cases of the cache's freshness (docs/OPERATIONS.md, "Writes and the
cache"): a write that makes more pages stale than pg_blog names
one by one (it sends "*") must leave no stale page past the documented
bound, BlogQueryTimeout + BlogRedisTimeout, however many misses race it."""

import os
import signal
import subprocess
import tempfile
import time

from common import T, bt, case, conf_seconds, figure, healthy

FIRST, LAST = 701, 1000     # 300 posts and the index: 301 keys, so "*"
BURSTS = 10
WRITES = 10                 # per burst: misses race each flush

# wrk on the posts' cached pages, one /compute in ten (CPU for the race)
WRK_LUA = """
local n = 0
request = function()
  n = n + 1
  if n %% 10 == 0 then return wrk.format("GET", "/compute") end
  return wrk.format("GET", "/post/post-" .. (%d + n %% %d) .. "/cached")
end
"""


def stale_pages():
    """The cached pages of the burst's posts (and /cached) that differ from
    what PostgreSQL gives now, read uncached."""
    paths = ["/post/post-%d" % p for p in range(FIRST, LAST + 1)] + ["/"]
    stale = []
    for path in paths:
        cached = bt.get("/cached" if path == "/" else path + "/cached")
        fresh = bt.get(path)
        if cached.status != 200 or fresh.status != 200 or cached.body != fresh.body:
            stale.append((path, cached.get("x-cache")))
    return stale


@case("stale-after-bound", "%d times %d owner UPDATEs of posts %d-%d (301 keys: \"*\") under "
      "wrk on their cached pages and /compute; every page compared 1 s after the bound"
      % (BURSTS, WRITES, FIRST, LAST), long=True, loaded=True)
def stale_after_bound():
    bound = conf_seconds("BlogQueryTimeout", 5.0) + conf_seconds("BlogRedisTimeout", 0.2)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(WRK_LUA % (FIRST, LAST - FIRST + 1))
    seconds = int(BURSTS * (bound + 8)) + 30
    w = subprocess.Popen(["wrk", "-t2", "-c50", "-d%ds" % seconds, "--timeout", "10s",
                          "-s", f.name, "http://127.0.0.1:%d/" % bt.HTTP_PORT],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    bad = []
    try:
        time.sleep(2.0)
        for k in range(BURSTS):
            # commits in a row, each its own "*"
            bt.psql("UPDATE blog.posts SET title = title || ' #' WHERE id BETWEEN %d AND %d;"
                    % (FIRST, LAST) * WRITES)
            time.sleep(bound + 1.0)
            stale = stale_pages()
            if stale:
                bad.append((k + 1, stale))
    finally:
        w.send_signal(signal.SIGINT)        # wrk prints its summary
        out = w.communicate()[0].decode(errors="replace")
        os.unlink(f.name)
        bt.psql("UPDATE blog.posts SET title = regexp_replace(title, '( #)+$', '')"
                " WHERE id BETWEEN %d AND %d" % (FIRST, LAST))
        bt.settle_invalidation()
    requests = out.split(" requests in")[0].split()[-1] if " requests in" in out else "?"
    figure("%d bursts, bound %.1f s, wrk %s requests; bursts with stale pages 1 s after the "
           "bound: %d%s" % (BURSTS, bound, requests, len(bad),
                            " (first: burst %d, %d pages, e.g. %s)"
                            % (bad[0][0], len(bad[0][1]), bad[0][1][:3]) if bad else ""))
    T.check(not bad, "no cached page is stale 1 s after BlogQueryTimeout + BlogRedisTimeout "
            "(%d times %d writes of 301 pages under load)" % (BURSTS, WRITES),
            "; ".join("burst %d: %d pages, %s" % (b, len(s), s[:3]) for b, s in bad))
    T.check(requests != "?", "wrk ran", out[-300:])
    healthy(30)

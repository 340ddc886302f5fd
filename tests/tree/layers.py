#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mod_blog's three layers include only downward: httpd/ may include
store/ and core/, store/ may include core/, core/ only itself; core/ is
pure C (no APR, no httpd, no libpq, no hiredis) and does no I/O (no
file, socket or process call: its callers hand it bytes), the Redis client
(store/redis.*) knows nothing of the cache built on it, and store/ knows no
request (request_rec, r->notes) and registers no httpd hook: httpd/ lends it
a blog_call and runs its start and stop from hooks of its own; httpd/ sees
no libpq, hiredis or OpenSSL type: the store hands it rows and bytes, and
no header an httpd/ file reaches through mod_blog's own "..." includes, at
any depth, includes a driver's.

    python3 tests/tree/layers.py [DIR]     (exit status 1 on a problem)
"""

import glob
import os
import re
import sys

BELOW = {"core": {"core"}, "store": {"core", "store"},
         "httpd": {"core", "store", "httpd"}}
# headers of the hosts and libraries: none of them in core/
HOSTED = re.compile(r"^(apr|apu|ap_|http|util_|mod_|mpm|libpq|hiredis|openssl)")
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)
# calls that touch a file, a socket or a process: none in core/
IO_CALL = re.compile(r"\b(f?open|fdopen|f?read|f?write|f?stat|fscanf|fgets|"
                     r"opendir|socket|connect|accept|send|recv|poll|select|"
                     r"fork|exec\w*|system|popen)\s*\(")
# what store/ must not know: httpd's request and its hooks
STORE_KNOWS_NOT = re.compile(r"\brequest_rec\b|\br->notes\b|\bap_hook_\w+")
# what httpd/ must not see: the drivers under the store
HTTPD_SEES_NOT = re.compile(r"\b(?:PG(?:result|conn)|PQ\w+|redis(?:Context|Reply)|"
                            r"redisAsyncContext)\b")
DRIVER = re.compile(r"^(libpq-fe\.h|hiredis|openssl)")
# what the Redis client must not know
REDIS_KNOWS_NOT = re.compile(r"\bblog_(?:cache|seal)\w*|\bBLOG_CACHE_\w+")


def driver_chains(root, path):
    """[(driver header, [our headers on the way])] of every driver's header
    path reaches through mod_blog's own "..." includes, each header once."""
    out = []
    seen = set()
    todo = [(path, [])]
    while todo:
        here, way = todo.pop()
        for kind, inc in INCLUDE.findall(open(here).read()):
            if DRIVER.match(inc):
                out.append((inc, way))
            mine = os.path.join(root, inc)
            if kind == '"' and "/" in inc and os.path.isfile(mine) \
                    and inc not in seen:
                seen.add(inc)
                todo.append((mine, way + [inc]))
    return out


def problems_of(root, path, ours):
    layer = os.path.basename(os.path.dirname(path))
    name = os.path.relpath(path, root)
    text = open(path).read()
    out = []
    for kind, inc in INCLUDE.findall(text):
        if kind == '"' and "/" in inc:
            if inc.split("/")[0] not in BELOW[layer]:
                out.append("%s includes %s, a layer above it" % (name, inc))
        elif kind == '"' and inc in ours:
            out.append("%s includes \"%s\" without its layer" % (name, inc))
        if layer == "core" and HOSTED.match(inc):
            out.append("%s (core) includes %s" % (name, inc))
    code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    if layer == "core":
        out += ["%s (core) calls %s()" % (name, m)
                for m in sorted(set(IO_CALL.findall(code)))]
    if layer == "store":
        out += ["%s (store) uses %s, httpd's" % (name, m)
                for m in sorted(set(STORE_KNOWS_NOT.findall(code)))]
    if layer == "httpd":
        out += ["%s (httpd) includes %s, a driver's%s"
                % (name, inc, " (through %s)" % " -> ".join(way) if way else "")
                for inc, way in driver_chains(root, path)]
        out += ["%s (httpd) uses %s, a driver's" % (name, m)
                for m in sorted(set(HTTPD_SEES_NOT.findall(code)))]
    if os.path.basename(path) in ("redis.c", "redis.h"):
        out += ["%s includes %s, the cache's" % (name, inc)
                for _, inc in INCLUDE.findall(text)
                if inc in ("store/cache.h", "store/seal.h")]
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        out += ["%s uses %s, the cache's" % (name, m)
                for m in sorted(set(REDIS_KNOWS_NOT.findall(code)))]
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "mod_blog")
    files = sorted(glob.glob(os.path.join(root, "*", "*.[ch]")))
    ours = {os.path.basename(f) for f in files}
    problems = [p for f in files for p in problems_of(root, f, ours)]
    stray = glob.glob(os.path.join(root, "*.[ch]"))
    problems += ["%s is in no layer" % os.path.relpath(f, root) for f in stray]
    problems += ["%s is not a layer" % d for d in sorted(
        {os.path.basename(os.path.dirname(f)) for f in files} - set(BELOW))]
    if not files:
        problems.append("no source under %s" % root)
    for p in problems:
        print("layers: " + p)
    print("layers: %d files, %d problems" % (len(files), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The path one request takes through mod_blog's layers, measured: which
files it enters, how many separate stays (consecutive events in one file
are one stay) and how many calls go from a lower layer into a higher one
(core < store < httpd), callbacks included.

    python3 bench/layers_path.py build OUT     an instrumented mod_blog
        (-finstrument-functions, a logger linked in) at OUT/src/.libs/mod_blog.so
    python3 bench/layers_path.py figures OUT   the figures of each request
        traced in OUT/trace.* (one per process)

Between the two: start the stack with that module (BLOG_MODULE=... make
run), truncate OUT/trace.* (the logger writes OUT/trace.PID, OUT compiled
in; the Apache user must be able to write there), send the requests, then
read the figures.  A request is the span from the entry of a handler hook
(ROOTS) to its exit, on one thread; a stay ends where execution (the
callee on entry, the caller on exit) moves to another file.
"""

import collections
import glob
import os
import shutil
import subprocess
import sys

ROOTS = ("blog_quick_handler", "blog_handler")
LAYER = {"core": 0, "store": 1, "httpd": 2}

LOGGER = r'''/* SPDX-License-Identifier: Apache-2.0 */
/* trace.c - each function's entry and exit, as offsets into the module */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* hidden: glibc has its own (empty) pair, which would win otherwise */
#define NI __attribute__((no_instrument_function))
#define HIDDEN __attribute__((visibility("hidden")))

static __thread int fd = -1;

NI static void
trace(char kind, void *fn)
{
    char line[64];
    Dl_info info;
    int n;

    if (fd < 0) {
        char path[512];

        snprintf(path, sizeof path, "%s/trace.%d", TRACE_DIR, (int) getpid());
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0)
            return;
    }
    if (!dladdr(fn, &info))
        return;
    n = snprintf(line, sizeof line, "%ld %c %lx\n", (long) syscall(SYS_gettid),
                 kind, (unsigned long) ((char *) fn - (char *) info.dli_fbase));
    if (write(fd, line, n) != n)
        return;
}

NI HIDDEN void __cyg_profile_func_enter(void *fn, void *site) { (void) site; trace('E', fn); }
NI HIDDEN void __cyg_profile_func_exit(void *fn, void *site) { (void) site; trace('X', fn); }
'''


def build(out):
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(out, "src")
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(os.path.join(here, "..", "mod_blog"), src,
                    ignore=shutil.ignore_patterns(".libs", "*.o", "*.lo", "*.la", "*.slo"))
    with open(os.path.join(src, "httpd", "trace.c"), "w") as f:
        f.write(LOGGER)
    with open(os.path.join(src, "trace.mk"), "w") as f:
        f.write("SRCS += httpd/trace.c\n")
    subprocess.check_call(
        ["make", "-s", "-C", src, "-f", "Makefile", "-f", "trace.mk",
         "CFLAGS=-O0 -g -fno-inline -finstrument-functions "
         "-DTRACE_DIR='\\\"%s\\\"'" % os.path.abspath(out),
         "LDFLAGS=-ldl"])
    print(os.path.join(src, ".libs", "mod_blog.so"))


def symbols(so, offsets):
    """offset -> (function, file relative to the module's source)"""
    offs = sorted(offsets)
    res = subprocess.run(["addr2line", "-f", "-e", so] + ["%x" % o for o in offs],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    out = {}
    for i, o in enumerate(offs):
        fn, where = res[2 * i], res[2 * i + 1].split(":")[0]
        parts = where.split("/")
        out[o] = (fn, "/".join(parts[-2:]))
    return out


def requests(out):
    for path in sorted(glob.glob(os.path.join(out, "trace.*"))):
        threads = collections.defaultdict(list)
        for line in open(path):
            tid, kind, off = line.split()
            threads[tid].append((kind, int(off, 16)))
        for events in threads.values():
            yield events


def figures(out):
    so = os.path.join(out, "src", ".libs", "mod_blog.so")
    spans = list(requests(out))
    sym = symbols(so, {o for ev in spans for _, o in ev})
    n = 0
    for events in spans:
        stack, span = [], None
        for kind, off in events:
            fn, f = sym[off]
            if span is None:
                if kind == "E" and fn in ROOTS:
                    span, stack = [], []
                else:
                    continue
            span.append((kind, fn, f, stack[-1] if stack else None))
            if kind == "E":
                stack.append(f)
            else:
                stack.pop()
                if not stack:
                    n += 1
                    report(n, span)
                    span = None


def layer(f):
    return LAYER.get(f.split("/")[0], -1)


def report(n, span):
    # where execution is after each event: the callee on entry, the caller on exit
    where = []
    up = []
    for kind, fn, f, caller in span:
        if kind == "E":
            where.append(f)
            if caller is not None and layer(caller) < layer(f):
                up.append("%s -> %s:%s" % (caller, f, fn))
        elif caller is not None:
            where.append(caller)
    entries = [f for kind, _, f, _ in span if kind == "E"]
    stays = sum(1 for i, f in enumerate(where) if i == 0 or where[i - 1] != f)
    pre = sum(1 for i, f in enumerate(entries) if i == 0 or entries[i - 1] != f)
    print("request %d (%s): %d calls, %d files entered, %d stays "
          "(%d counting entries only), %d calls lower->higher"
          % (n, span[0][1], len(entries), len(set(entries)), stays, pre, len(up)))
    print("  files: " + " ".join(sorted(set(entries))))
    for u in collections.Counter(up).most_common():
        print("  up x%d: %s" % (u[1], u[0]))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("build", "figures"):
        sys.exit(__doc__)
    {"build": build, "figures": figures}[sys.argv[1]](sys.argv[2])


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every log call of mod_blog/ carries its own tag (mod_blog/core/logno.h), as
httpd's own modules carry their APLOGNO: each ap_log_error, ap_log_rerror,
ap_log_cerror, ap_log_cserror, ap_log_perror, ap_pass_brigade_fchk,
blog_log_limited, blog_outage_end and their store/call.h forms
(blog_call_log, blog_call_log_limited, blog_call_outage_end) call has a
BLOGLOGNO(nnnnn) in its arguments, and no number is used twice.
Only ratelog.c may call ap_log_error_ and ap_log_cserror_ (with its
caller's tagged message).
docs/LOGS.md's table lists every tag of the module, and no other.

    python3 tests/tree/logno.py [DIR]     (exit status 1 on a problem)
"""

import glob
import os
import re
import sys

CALL = re.compile(r"\b(ap_log_error_?|ap_log_rerror|ap_log_cerror|ap_log_cserror_?|"
                  r"ap_log_perror|ap_pass_brigade_fchk|blog_log_limited|blog_outage_end|"
                  r"blog_call_log|blog_call_log_limited|blog_call_outage_end)\s*\(")
TAG = re.compile(r"BLOGLOGNO\((\d{5})\)")


def calls(text):
    """(name, line, arguments) of each call, string literals kept."""
    for m in CALL.finditer(text):
        i, depth, in_str = m.end(), 1, False
        while depth and i < len(text):
            c = text[i]
            if in_str:
                if c == "\\":
                    i += 1
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            i += 1
        yield m.group(1), text.count("\n", 0, m.start()) + 1, text[m.end():i]


def table_problems(doc, seen):
    """What docs/LOGS.md's table lacks or lists in vain."""
    try:
        rows = re.findall(r"^\| BLOG(\d{5}) \|", open(doc).read(), flags=re.M)
    except OSError as e:
        return ["cannot read %s: %s" % (doc, e)]
    out = ["BLOG%s (%s) is not in docs/LOGS.md" % (t, seen[t])
           for t in sorted(set(seen) - set(rows))]
    out += ["docs/LOGS.md lists BLOG%s, which no log call has" % t
            for t in sorted(set(rows) - set(seen))]
    out += ["docs/LOGS.md lists BLOG%s twice" % t
            for t in sorted({t for t in rows if rows.count(t) > 1})]
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "mod_blog")
    problems, seen, n = [], {}, 0
    for path in sorted(glob.glob(os.path.join(root, "**", "*.c"), recursive=True)):
        name = os.path.basename(path)
        text = open(path).read()
        # comments may name the functions; only code counts
        text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()),
                      text, flags=re.S)
        for fn, line, args in calls(text):
            where = "%s:%d" % (name, line)
            if fn in ("ap_log_error_", "ap_log_cserror_"):
                if name != "ratelog.c":
                    problems.append("%s: %s outside ratelog.c" % (where, fn))
                continue
            # the definitions of ratelog.c's two functions are not calls
            if name == "ratelog.c" and fn in ("blog_log_limited", "blog_outage_end"):
                continue
            tags = TAG.findall(args)
            if not tags:
                problems.append("%s: %s without a BLOGLOGNO tag" % (where, fn))
            for t in tags:
                n += 1
                if t in seen:
                    problems.append("%s: BLOGLOGNO(%s) also at %s" % (where, t, seen[t]))
                else:
                    seen[t] = where
    if n == 0:
        problems.append("no tagged log call found under %s" % root)
    problems += table_problems(os.path.join(root, "..", "docs", "LOGS.md"), seen)
    for p in problems:
        print("logno: " + p)
    print("logno: %d tagged messages, %d distinct numbers, %d problems"
          % (n, len(seen), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

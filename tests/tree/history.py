#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The docs say what is; the project's history is git log.

No numbered run ("a sixteenth run", "run 12"), date (2026-12-05, a
results/ folder's 20261205-170304), commit id ("at 4950b8b") or work-item
number ("issue 6", "#31", "item 5 of ...") in docs/, in any README*.md, in
the man page, or in a comment of the code, scripts, tests and
configuration.  Only comments are read in code (a string or a hash in it
is data); the golden pages, debian/changelog and debian/NEWS (history by
their nature) are not read.  The man page's .TH line is skipped: its date
field is the man page's own convention (the date of the last change).

  python3 tests/tree/history.py [FILE...]   (default: the tree's files)

Prints each finding as file:line: what, then "N passed, N failed".
"""
import os
import re
import subprocess
import sys
import tokenize

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

ORDINALS = ("third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
            "thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|"
            "nineteenth|twentieth|\\d+(?:st|nd|rd|th)")
MONTHS = ("January|February|March|April|May|June|July|August|September|October|"
          "November|December")
# A number after "run" that is a quantity, not a run's number.
UNITS = r"(?:s|ms|µs|us|min|minutes?|seconds?|hours?|rounds?|times|x|%|MiB|KiB)\b"

PATTERNS = [
    ("a numbered run", re.compile(r"\b(?:%s)\s+runs?\b" % ORDINALS, re.I)),
    ("a numbered run", re.compile(r"\brun\s+#?\d+\b(?!\s*(?:%s|[-+/.,]\d))" % UNITS, re.I)),
    ("a numbered run", re.compile(r"\bruns\s+#?\d+\s*(?:and|to|,|-)\s*#?\d+\b", re.I)),
    ("a date", re.compile(r"\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b")),
    ("a date", re.compile(r"\b20\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-\d{6}\b")),
    ("a date", re.compile(r"\b\d{1,2} (?:%s) (?:19|20)\d\d\b" % MONTHS)),
    ("a date", re.compile(r"\b(?:%s) \d{1,2}, (?:19|20)\d\d\b" % MONTHS)),
    # 7 to 40 hex digits with a digit and a letter among them, standing
    # alone (not 0x..., not part of a word, a path or an anchor)
    ("a commit id", re.compile(
        r"(?<![\w./#&\"-])(?=[0-9a-f]{7,40}\b)(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])"
        r"[0-9a-f]{7,40}\b(?!-)")),
    ("a work item", re.compile(r"\b(?:issues?|work items?|pull requests?|PR)\s+#?\d+", re.I)),
    ("a work item", re.compile(r"\bitems?\s+\d+\b(?!\s*(?:%s|[-+/.,]\d))" % UNITS, re.I)),
    ("a work item", re.compile(r"(?<![\w&#/])#\d+\b")),
]

# Data, not history: the seed's first publication time (docs/CONTRACT.md
# section 1.2), the Unix and PostgreSQL epochs the date code counts from.
ALLOWED = {"2025-01-01", "1970-01-01", "2000-01-01"}

SKIP = re.compile(r"^(tests/golden/|results/|debian/changelog$|debian/NEWS$|LICENSE$|"
                  r"tests/tree/history\.py$)")
HASH_COMMENTS = re.compile(
    r"(\.sh|\.conf|\.in|\.load|\.gp|\.spec|\.dict|\.control|\.gitignore|\.apache2|"
    r"\.install|\.docs|\.manpages|\.lintian-overrides|\.postinst|(^|/)Makefile|"
    r"^blog|^debian/rules|^debian/control|^debian/pgversions|^debian/tests/[a-z]+|"
    r"^debian/source/format|^\.ci/[a-z]+)$")


def tree_files():
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        return out.split("\n")
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(ROOT):
            dirs[:] = [x for x in dirs if x not in (".git", "var", "build", "results",
                                                    "__pycache__", ".libs")]
            found += [os.path.relpath(os.path.join(d, f), ROOT) for f in files]
        return found


def whole(text):
    return [(n, line) for n, line in enumerate(text.split("\n"), 1)]


def man_text(text):
    return [(n, line) for n, line in whole(text) if not line.startswith(".TH ")]


def c_comments(text):
    """/* */ and // comments, as (line, text) pieces; strings skipped."""
    out, i, n, line = [], 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            for k, piece in enumerate(text[i + 2:j].split("\n")):
                out.append((line + k, piece))
            line += text.count("\n", i, j)
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        else:
            i += 1
    return out


def line_comments(text, marker):
    """Comments that run from MARKER to the end of a line, outside quotes."""
    out = []
    for n, line in whole(text):
        quote = None
        for i, c in enumerate(line):
            if quote:
                if c == quote:
                    quote = None
            elif c in "\"'" and marker == "#" and (i == 0 or not line[i - 1].isalnum()):
                quote = c
            elif c == "'" and marker == "--":
                quote = c
            elif line.startswith(marker, i) and (
                    marker != "#" or i == 0 or line[i - 1] in " \t;(|&"):
                out.append((n, line[i + len(marker):]))
                break
    return out


def python_comments(text, path):
    out = []
    try:
        toks = list(tokenize.generate_tokens(iter(text.splitlines(True)).__next__))
    except (tokenize.TokenError, SyntaxError):
        return line_comments(text, "#")
    for tok in toks:
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string[1:]))
        elif tok.type == tokenize.STRING and tok.string.lstrip("rbuRBU").startswith(('"""', "'''")):
            for k, piece in enumerate(tok.string.split("\n")):
                out.append((tok.start[0] + k, piece))
    return out


def template_comments(text):
    out = []
    for m in re.finditer(r"\{\{!(.*?)\}\}", text, re.S):
        line = text.count("\n", 0, m.start()) + 1
        for k, piece in enumerate(m.group(1).split("\n")):
            out.append((line + k, piece))
    return out


def pieces(path, text):
    """The parts of a file that are prose: what this check reads."""
    if path.endswith(".md"):
        return whole(text)
    if path.startswith("man/"):
        return man_text(text)
    if path.endswith((".c", ".h")):
        return c_comments(text)
    if path.endswith(".py"):
        return python_comments(text, path)
    if path.endswith((".sql", ".out", ".lua")):
        return line_comments(text, "--")
    if path.startswith("templates/") and path.endswith(".html"):
        return template_comments(text)
    if HASH_COMMENTS.search(path):
        return line_comments(text, "#")
    return []


def findings(path, text):
    out = []
    for n, piece in pieces(path, text):
        for what, pat in PATTERNS:
            for m in pat.finditer(piece):
                if m.group(0) in ALLOWED:
                    continue
                out.append("%s:%d: %s: %r" % (path, n, what, m.group(0)))
    return out


# The patterns, checked on what they must and must not find before the tree.
MUST = ["a sixteenth run", "the 12th run", "(run 1)", "run 12 of the bench",
        "runs 10 and 11", "on 2026-12-05", "results/20261205-170304",
        "5 December 2026", "at 4950b8b", "(3f1bd72)", "issue 6", "Issue 20, item 6",
        "issues 23", "#31", "item 5 of the list", "work item 3"]
MUST_NOT = ["RFC 9110 13.1.2", "a 404", "HTTP 503", "httpd 2.4.51", "port 8080",
            "runs 4 children", "each run 2 s", "3 rounds", "&#34; and &#39;",
            "## 1. Data", "0x9e3779b97f4a7c15", "the first run takes a minute",
            "sha256 " + "0123456789abcdef" * 4, "blog:page:/post/post-31",
            "#define BLOG_F_COUNT 12", "1 000 posts", "2025-01-01", "deadbeef",
            "ETag: \"1f2e3d4c5b6a7980\"", "21171191", "BLOG00061", "AH10159"]


def self_test():
    bad = ["misses %r" % x for x in MUST if not findings("x.md", x)]
    bad += ["cries wolf on %r: %s" % (x, findings("x.md", x)) for x in MUST_NOT
            if findings("x.md", x)]
    return bad


def main(argv):
    bad = self_test()
    if bad:
        print("FAIL: the patterns themselves: " + "; ".join(bad))
        print("0 passed, 1 failed")
        return 1
    paths = argv[1:] or [p for p in tree_files() if p and not SKIP.search(p)]
    problems, nfiles = [], 0
    for p in paths:
        full = os.path.join(ROOT, p)
        if not os.path.isfile(full):
            continue
        try:
            with open(full, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        nfiles += 1
        problems += findings(p, text)
    for line in problems:
        print(line)
    if problems:
        print("FAIL: %d mentions of the project's history in %d files read "
              "(say what is; git log keeps the rest)" % (len(problems), nfiles))
        print("0 passed, 1 failed")
        return 1
    print("ok: no run number, date, commit id or work-item number in the docs "
          "or comments of %d files" % nfiles)
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

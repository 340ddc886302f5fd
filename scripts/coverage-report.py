#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""coverage-report.py SUMMARY.json MIN FILE...: one line per FILE (path
from the checkout's root) with gcovr's line coverage from SUMMARY.json
(gcovr --json-summary), then the total.  Exits 1, naming them, when a file
is under MIN % or was not measured at all (no build with --coverage
compiled it)."""

import json
import sys


def main():
    summary, minimum, files = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    with open(summary) as f:
        measured = {e["filename"]: e for e in json.load(f)["files"]}
    below = []
    total = covered = 0
    print("%-28s %6s %6s %8s" % ("file", "lines", "run", "coverage"))
    for name in files:
        e = measured.get(name)
        if e is None or e["line_total"] == 0:
            print("%-28s %6s %6s %8s" % (name, "-", "-", "not measured"))
            below.append(name + " (not measured)")
            continue
        pct = 100.0 * e["line_covered"] / e["line_total"]
        total += e["line_total"]
        covered += e["line_covered"]
        mark = "" if pct >= minimum else "  < %g %%" % minimum
        print("%-28s %6d %6d %6.1f %%%s" % (name, e["line_total"], e["line_covered"], pct, mark))
        if pct < minimum:
            below.append("%s (%.1f %%)" % (name, pct))
    print("%-28s %6d %6d %6.1f %%" % ("total", total, covered,
                                      100.0 * covered / total if total else 0.0))
    if below:
        print("coverage: under %g %%: %s" % (minimum, ", ".join(below)))
        return 1
    print("coverage: every file at %g %% or more" % minimum)
    return 0


if __name__ == "__main__":
    sys.exit(main())

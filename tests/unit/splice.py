#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""splice.py FILE BLOCK: replace, in FILE, the text from BLOCK's first line
to its last line (the markers of a generated block) with BLOCK."""
import sys

path, block_path = sys.argv[1], sys.argv[2]
with open(path) as f:
    text = f.read()
with open(block_path) as f:
    block = f.read()
lines = block.splitlines(keepends=True)
begin, end = lines[0], lines[-1]
b = text.find(begin)
e = text.find(end, b + len(begin)) if b >= 0 else -1
if b < 0 or e < 0:
    sys.exit("%s: no block between %r and %r" % (path, begin.strip(), end.strip()))
with open(path, "w") as f:
    f.write(text[:b] + block + text[e + len(end):])

# SPDX-License-Identifier: Apache-2.0
"""The bench's own tests' runner: each file registers its cases with
@test and ends with main(), which prints "N passed, N failed"."""

import traceback

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def main():
    npass = nfail = 0
    for fn in TESTS:
        try:
            fn()
        except Exception:
            nfail += 1
            print("FAIL: %s" % fn.__name__)
            traceback.print_exc()
        else:
            npass += 1
            print("ok: %s" % fn.__name__)
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0

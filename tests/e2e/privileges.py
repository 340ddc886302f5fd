#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Least privilege of the blog's roles, against the private stack's
PostgreSQL (no web server needed).

    . scripts/env.sh && python3 tests/e2e/privileges.py

The web server's login role blog_web (sql/setup.sql) may call the page
functions and nothing else; pgblog_writer may call the write functions and
nothing else.  Each "cannot" must end in SQLSTATE 42501
(insufficient_privilege), each "can" must succeed (or, for a write that
names no existing post, fail for that reason and not for a right).  Each
statement runs in its own session as the superuser with SET ROLE, which
checks every right as the role's.  tests/cluster checks the same over the
network, logged in as each role, on a primary and two standbys.  Ends with
`N passed, N failed`.
"""

import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blogtest as bt  # noqa: E402
from rights import SQL, cases  # noqa: E402

T = bt.Tally("privileges")
DENIED = "42501"


def sqlstate(role, sql):
    """The SQLSTATE of sql run as role, rolled back; "" when it succeeds."""
    try:
        bt.psql("BEGIN;\nSET LOCAL ROLE %s;\n%s;\nROLLBACK;\n" % (role, sql),
                variables={"VERBOSITY": "sqlstate"})
    except RuntimeError as e:
        m = re.search(r"ERROR:\s+([0-9A-Z]{5})", str(e))
        return m.group(1) if m else str(e)
    return ""


WRITE = SQL["call a write function"]
CANNOT = (cases("blog_web", "SELECT a table", "UPDATE a table", "call a write function",
                "call an internal function", "create in schema blog",
                "create in schema public", "create a schema")
          + cases("pgblog_writer", "call a page function", "SELECT a table", "UPDATE a table",
                  "call an internal function", "create in schema blog",
                  "create in schema public"))


ROLES = ("SELECT rolname, rolcanlogin, rolsuper, pg_has_role(rolname, 'pgblog_web', 'MEMBER'),"
         " pg_has_role(rolname, 'pgblog_writer', 'MEMBER') FROM pg_catalog.pg_roles"
         " WHERE rolname IN ('blog_web', 'pgblog_web', 'pgblog_writer') ORDER BY 1")


def setup_again():
    """sql/setup.sql run again, as a site may: the roles stay as they were."""
    with open(os.path.join(bt.ROOT, "sql", "setup.sql")) as f:
        bt.psql("SET client_min_messages = warning;\n" + f.read(), timeout=120)
    rows = bt.psql(ROLES)
    want = [["blog_web", "t", "f", "t", "f"], ["pgblog_web", "f", "f", "t", "f"],
            ["pgblog_writer", "f", "f", "f", "t"]]
    T.check(rows == want, "sql/setup.sql run again: the same three roles", repr(rows))


def main():
    try:
        setup_again()
        for role, what, sql in CANNOT:
            st = sqlstate(role, sql)
            T.check(st == DENIED, "%s cannot %s" % (role, what), "got %r, want %s" % (st, DENIED))
        for fn in ("index_page(3)", "post_page('post-1')", "tag_page('tag-1')"):
            st = sqlstate("blog_web", "SELECT * FROM blog." + fn)
            T.check(st == "", "blog_web can call blog.%s" % fn, repr(st))
        st = sqlstate("blog_web", "LISTEN blog_cache")
        T.check(st == "", "blog_web can LISTEN", repr(st))
        # rolled back: nothing is written either way
        st = sqlstate("pgblog_writer", WRITE)
        T.check(st == "", "pgblog_writer can call a write function", repr(st))
        rows = bt.psql("SELECT count(*) FROM pg_catalog.pg_namespace"
                       " WHERE has_schema_privilege('blog_web', oid, 'CREATE')"
                       " OR has_schema_privilege('pgblog_writer', oid, 'CREATE')")
        T.check(rows == [["0"]], "neither role may create in any schema", repr(rows))
    except Exception as e:  # a crash is a failure, and still ends with the count
        T.crash("privileges", e)
    T.finish()


if __name__ == "__main__":
    main()

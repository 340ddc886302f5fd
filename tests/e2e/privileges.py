#!/usr/bin/env python3
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


WRITE = "SELECT blog.add_comment('post-1', 'x', 'y')"
CANNOT = [
    ("blog_web", "SELECT a table", "SELECT 1 FROM blog.posts LIMIT 1"),
    ("blog_web", "UPDATE a table", "UPDATE blog.posts SET title = 'x' WHERE id = 1"),
    ("blog_web", "call a write function", WRITE),
    ("blog_web", "call an internal function", "SELECT blog.notify_stale('{}', false)"),
    ("blog_web", "create in schema blog", "CREATE TABLE blog.x (i int)"),
    ("blog_web", "create in schema public", "CREATE TABLE public.x (i int)"),
    ("blog_web", "create a schema", "CREATE SCHEMA x"),
    ("pgblog_writer", "call a page function", "SELECT * FROM blog.post_page('post-1')"),
    ("pgblog_writer", "SELECT a table", "SELECT 1 FROM blog.posts LIMIT 1"),
    ("pgblog_writer", "UPDATE a table", "UPDATE blog.posts SET title = 'x' WHERE id = 1"),
    ("pgblog_writer", "call an internal function", "SELECT blog.notify_stale('{}', false)"),
    ("pgblog_writer", "create in schema blog", "CREATE TABLE blog.x (i int)"),
    ("pgblog_writer", "create in schema public", "CREATE TABLE public.x (i int)"),
]


def main():
    try:
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

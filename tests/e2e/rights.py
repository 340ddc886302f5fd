# SPDX-License-Identifier: Apache-2.0
"""What the blog's roles may not do, as SQL: one table for
tests/e2e/privileges.py (the private stack) and tests/cluster/checks.py
(logged in over the network, on a primary and two standbys)."""

SQL = {
    "SELECT a table": "SELECT 1 FROM blog.posts LIMIT 1",
    "UPDATE a table": "UPDATE blog.posts SET title = 'x' WHERE id = 1",
    "call a page function": "SELECT * FROM blog.post_page('post-1')",
    "call a write function": "SELECT blog.add_comment('post-1', 'x', 'y')",
    "call an internal function": "SELECT blog.notify_stale('{}', false)",
    "create in schema blog": "CREATE TABLE blog.x (i int)",
    "create in schema public": "CREATE TABLE public.x (i int)",
    "create a temporary table": "CREATE TEMP TABLE x (i int)",
    "create a schema": "CREATE SCHEMA x",
    "become another role": "SET ROLE pgblog_writer",
}


def cases(role, *whats):
    """(role, what, sql) for each of whats."""
    return [(role, w, SQL[w]) for w in whats]

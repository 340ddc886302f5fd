#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Start-up checks: a bad directive or a broken template stops Apache with a
message that says what and where: the directive, and the file and line it
was set on (or that it is the default).

Each case takes the stack's generated httpd.conf (var/httpd/httpd.conf),
changes one thing, and runs `apache2 -t` on it: Apache's configuration
test runs mod_blog's validation and template compilation without binding a
port, so the running stack is not touched.  A case passes when Apache
refuses the config and its message names the problem; the unchanged config
must pass, so that a refusal is known to come from the change."""

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blogtest as bt  # noqa: E402

T = bt.Tally("startup")
CONF = os.path.join(bt.VAR, "httpd", "httpd.conf")
TEMPLATES = os.path.join(bt.ROOT, "templates")


# Where each config under test is written, so that a message can be
# checked for the file and line it names.
TEST_DIR = tempfile.mkdtemp(prefix="blog-startup-")
TEST_CONF = os.path.join(TEST_DIR, "test.conf")
atexit.register(shutil.rmtree, TEST_DIR, True)


def configtest(text):
    """Run apache2 -t on a config text; (exit status, output)."""
    with open(TEST_CONF, "w") as f:
        f.write(text)
    try:
        out = subprocess.run(["/usr/sbin/apache2", "-d", os.path.dirname(CONF),
                              "-f", TEST_CONF, "-t"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=30)
        return out.returncode, out.stdout.decode(errors="replace")
    finally:
        os.unlink(TEST_CONF)


def at(conf, line):
    """ "file:line" of the first line of conf that is exactly `line`."""
    return "%s:%d" % (TEST_CONF, conf.split("\n").index(line) + 1)


def set_directive(conf, name, value):
    """conf with directive `name` set to value (replaced, or appended)."""
    line = "%s %s" % (name, value)
    pat = re.compile(r"^%s\s.*$" % re.escape(name), re.M)
    if pat.search(conf):
        return pat.sub(lambda _m: line, conf, count=1)
    return conf + "\n" + line + "\n"


def refused(what, conf, *needles):
    rc, out = configtest(conf)
    T.check(rc != 0 and all(n in out for n in needles),
            "%s: Apache refuses to start and says %s" % (what, " / ".join(repr(n) for n in needles)),
            "exit %d: %s" % (rc, out.strip()[-400:]))


def broken_templates(tmp, name, line_no, new_line):
    """A copy of templates/ whose file `name` has line line_no replaced."""
    d = os.path.join(tmp, "tpl-%s-%d" % (name, line_no))
    shutil.copytree(TEMPLATES, d)
    path = os.path.join(d, name)
    with open(path) as f:
        lines = f.read().split("\n")
    lines[line_no - 1] = new_line
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return d, path


def main():
    if not os.path.exists(CONF):
        T.check(False, "the stack's httpd.conf exists", CONF + " is missing: start the stack first")
        T.finish()
    with open(CONF) as f:
        base = f.read()

    rc, out = configtest(base)
    T.check(rc == 0 and "Syntax OK" in out, "the stack's own config passes apache2 -t",
            out.strip()[-400:])

    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        d, path = broken_templates(tmp, "card.html", 3, "<p>{{no_such_field}}</p>")
        refused("an unknown name in card.html", set_directive(base, "BlogTemplates", '"%s"' % d),
                "%s:3:" % path, "no_such_field")
        d, path = broken_templates(tmp, "post.html", 2, "{{#comments}}unclosed")
        refused("an unclosed section in post.html", set_directive(base, "BlogTemplates", '"%s"' % d),
                "post.html:")
        d, path = broken_templates(tmp, "index.html", 2, "{{> nowhere}}")
        refused("a missing partial in index.html", set_directive(base, "BlogTemplates", '"%s"' % d),
                "index.html:2:", "nowhere")
        conf = set_directive(base, "BlogTemplates", '"%s/none"' % tmp)
        refused("a templates folder that does not exist (the directive and its line named)",
                conf, "%s/none" % tmp,
                "BlogTemplates %s/none (%s)" % (tmp, at(conf, 'BlogTemplates "%s/none"' % tmp)))

    conf = set_directive(set_directive(base, "BlogPoolMin", "5"), "BlogPoolMax", "4")
    refused("BlogPoolMin above BlogPoolMax (each value's file and line, or default)", conf,
            "BlogPoolMin <= BlogPoolKeep <= BlogPoolMax does not hold",
            "BlogPoolMin 5 (%s)" % at(conf, "BlogPoolMin 5"),
            "BlogPoolKeep 2 (default)",
            "BlogPoolMax 4 (%s)" % at(conf, "BlogPoolMax 4"))
    conf = set_directive(base, "BlogDatabase", '"hots=/tmp dbname=blog"')
    refused("a conninfo keyword libpq does not know", conf,
            "BlogDatabase: invalid conninfo", 'invalid connection option "hots"',
            "line %s of %s" % (at(conf, 'BlogDatabase "hots=/tmp dbname=blog"').rsplit(":", 1)[1],
                               TEST_CONF))
    # What -t cannot see: a host name is resolved only when a child
    # connects (docs/OPERATIONS.md says so).
    rc, out = configtest(set_directive(base, "BlogDatabase",
                                       '"host=nonexistent.invalid dbname=blog"'))
    T.check(rc == 0 and "Syntax OK" in out,
            "a host that does not resolve passes apache2 -t (seen only at connect)",
            out.strip()[-400:])
    refused("a listener conninfo libpq does not know",
            set_directive(base, "BlogInvalidateDatabase", '"nokey=1"'),
            "BlogInvalidateDatabase: invalid conninfo", 'invalid connection option "nokey"')
    refused("BlogMount with a second argument other than shared",
            set_directive(base, "BlogMount", "/ private"), "BlogMount", "'shared'")
    refused("a second argument to a directive of one",
            set_directive(base, "BlogPoolMin", "1 2"), "BlogPoolMin takes one argument")
    refused("BlogFastPath that is neither On nor Off",
            set_directive(base, "BlogFastPath", "maybe"), "BlogFastPath must be On or Off")
    refused("BlogConnectionHold above 1 s", set_directive(base, "BlogConnectionHold", "2s"),
            "BlogConnectionHold must be Off or a duration from 1 ms to 1 s")
    refused("BlogRedis [v6 without its bracket", set_directive(base, "BlogRedis", "[::1:6379"),
            "BlogRedis")
    refused("BlogRedis rediss:// with a socket path",
            set_directive(base, "BlogRedis", "rediss:///run/redis.sock"), "BlogRedis", "host:port")
    refused("BlogRedisTLSCA that does not exist",
            set_directive(set_directive(base, "BlogRedis", "rediss://127.0.0.1:6380"),
                          "BlogRedisTLSCA", "/nonexistent/ca.pem"), "BlogRedisTLSCA /nonexistent/ca.pem")
    refused("a server-wide directive in a <VirtualHost>",
            base + '\n<VirtualHost 127.0.0.1:1>\nBlogCacheTTL 5\n</VirtualHost>\n',
            "BlogCacheTTL cannot occur within")
    refused("BlogPoolMax 0", set_directive(base, "BlogPoolMax", "0"), "BlogPoolMax")
    refused("a malformed conninfo", set_directive(base, "BlogDatabase", '"host=/tmp port"'),
            "BlogDatabase")
    refused("BlogRedis without a port", set_directive(base, "BlogRedis", "localhost"), "BlogRedis")
    refused("BlogRedis with port 0", set_directive(base, "BlogRedis", "127.0.0.1:0"), "BlogRedis")
    refused("BlogQueryTimeout that is not a duration",
            set_directive(base, "BlogQueryTimeout", "soon"), "BlogQueryTimeout")
    refused("BlogCacheTTL 0", set_directive(base, "BlogCacheTTL", "0"), "BlogCacheTTL")
    refused("BlogComputeLimit -1", set_directive(base, "BlogComputeLimit", "-1"), "BlogComputeLimit")
    refused("BlogMount that is not a path", set_directive(base, "BlogMount", "blog"), "BlogMount")
    refused("BlogDatabase inside a <Location>",
            base + '\n<Location /x>\nBlogDatabase "dbname=blog"\n</Location>\n', "BlogDatabase")

    refused("a directive of one with none", base + "\nBlogPoolMin\n",
            "BlogPoolMin takes one argument")
    refused("BlogMount with three arguments", set_directive(base, "BlogMount", "/ shared x"),
            "BlogMount takes one or two arguments")
    # Redis Sentinel: the directives go together and replace BlogRedis's address
    no_redis = re.sub(r"^BlogRedis\s.*$", "", base, flags=re.M)
    sentinels = "10.0.0.21:26379 10.0.0.22:26379 [::1]:26379"
    refused("BlogRedisSentinels without BlogRedisMaster",
            set_directive(no_redis, "BlogRedisSentinels", sentinels),
            "BlogRedisSentinels (%s:" % TEST_CONF, "needs BlogRedisMaster")
    refused("BlogRedisMaster without BlogRedisSentinels",
            set_directive(no_redis, "BlogRedisMaster", "blogcache"),
            "BlogRedisMaster (%s:" % TEST_CONF, "needs BlogRedisSentinels")
    refused("BlogRedisSentinels beside BlogRedis host:port",
            set_directive(set_directive(base, "BlogRedisSentinels", sentinels),
                          "BlogRedisMaster", "blogcache"),
            "BlogRedis (%s:" % TEST_CONF, "set one")
    refused("BlogRedisSentinels some over TLS, some not",
            set_directive(no_redis, "BlogRedisSentinels", "rediss://10.0.0.21:26379 10.0.0.22:26379"),
            "every sentinel over TLS (rediss://) or none")
    refused("a sentinel without its port",
            set_directive(no_redis, "BlogRedisSentinels", "10.0.0.21:26379 10.0.0.22"),
            "10.0.0.22 is not host:port")
    refused("17 sentinels", set_directive(no_redis, "BlogRedisSentinels",
                                          " ".join("10.0.0.%d:26379" % i for i in range(1, 18))),
            "BlogRedisSentinels takes one to 16 arguments")
    refused("BlogRedisMaster with a space", set_directive(no_redis, "BlogRedisMaster", '"a b"'),
            "BlogRedisMaster must be a name")
    refused("BlogRedisSentinelAuth that does not exist",
            set_directive(set_directive(set_directive(no_redis, "BlogRedisSentinels", sentinels),
                                        "BlogRedisMaster", "blogcache"),
                          "BlogRedisSentinelAuth", "/nonexistent/sentinel.auth"),
            "/nonexistent/sentinel.auth")

    # What a user may set must still be accepted.
    ok = set_directive(set_directive(no_redis, "BlogRedisSentinels", sentinels),
                       "BlogRedisMaster", "blogcache")
    rc, out = configtest(ok)
    T.check(rc == 0, "BlogRedisSentinels and BlogRedisMaster without BlogRedis are accepted",
            out.strip()[-400:])
    rc, out = configtest(set_directive(set_directive(set_directive(
        base, "BlogRedis", "off"), "BlogRedisSentinels", sentinels), "BlogRedisMaster", "blogcache"))
    T.check(rc == 0, "BlogRedis Off beside the sentinels is accepted (no cache)",
            out.strip()[-400:])
    ok = set_directive(base, "BlogRedis", "off")
    ok = set_directive(ok, "BlogQueryTimeout", "2s")
    ok = set_directive(ok, "BlogMount", "/blog")
    ok = set_directive(ok, "BlogInvalidateDatabase", '"host=/tmp dbname=blog"')
    rc, out = configtest(ok)
    T.check(rc == 0, "BlogRedis off, BlogQueryTimeout 2s, BlogMount /blog and a listener conninfo are accepted",
            out.strip()[-400:])
    ok = set_directive(base, "BlogMount", "/ shared")
    ok = set_directive(ok, "BlogRedis", "[::1]:6379")
    ok += '\n<VirtualHost 127.0.0.1:1>\nBlogMount /x shared\nBlogFastPath off\n</VirtualHost>\n'
    rc, out = configtest(ok)
    T.check(rc == 0, "BlogMount / shared, BlogRedis [::1]:6379 and a virtual host's own "
            "BlogMount and BlogFastPath are accepted", out.strip()[-400:])
    T.finish()


if __name__ == "__main__":
    main()

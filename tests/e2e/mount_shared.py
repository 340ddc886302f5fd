#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The blog beside the rest of a virtual host (docs/OPERATIONS.md, "Directives",
BlogMount): with `BlogMount / shared` the blog answers its own paths and
Apache the others (the DocumentRoot's files, /.well-known/, /server-status);
with plain `BlogMount /`, as the private stack and the contract have it,
the blog owns every path and any other is its 404 page; with `BlogMount
/blog` beside static files, a URL is the blog's by its normalised path
only (/blog/../hello.txt is the file, as on a server without the blog;
//blog/ is the blog's), /blog is redirected to /blog/ as mod_dir does, and
OPTIONS answers with the methods (docs/CONTRACT.md section 2.1).

    . scripts/env.sh && python3 tests/e2e/mount_shared.py

Adds var/httpd/conf.d/mount-shared.conf (which conf/httpd.conf.in
includes): two name-based virtual hosts on the stack's own address, the
first (the default) left as the main server says, the second
`shared.test` with `BlogMount / shared`, a DocumentRoot and mod_status, the
third `mounted.test` with `BlogMount /blog` and the same DocumentRoot.
Restarts Apache with it, checks both hosts, and restarts it without it,
pass or fail.  Runs under either MPM and either BlogFastPath.
"""

import os
import shutil
import sys

sys.dont_write_bytecode = True  # keep the checkout clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import blogtest as bt  # noqa: E402
import reference as ref  # noqa: E402

T = bt.Tally("shared mount (MPM %s, fast path %s)" % (bt.ENV.get("BLOG_MPM"),
                                                      bt.ENV.get("BLOG_FASTPATH")))
CONF_D = os.path.join(bt.VAR, "httpd", "conf.d")
SNIPPET = os.path.join(CONF_D, "mount-shared.conf")
DOCROOT = os.path.join(bt.VAR, "httpd", "shared-docroot")
SHARED = "shared.test"
MOUNTED = "mounted.test"
NOT_FOUND = ref.render_not_found()
FILES = {
    "hello.txt": b"a file of the DocumentRoot\n",
    ".well-known/acme-challenge/token-1": b"token-1.thumbprint\n",
}

CONF = """# written by tests/e2e/mount_shared.py; removed after it
<IfModule !status_module>
    LoadModule status_module /usr/lib/apache2/modules/mod_status.so
</IfModule>
# The first virtual host of an address is its default: the stack's blog,
# inherited from the main server, owning every path.
<VirtualHost {host}:{port}>
    ServerName {host}
</VirtualHost>
<VirtualHost {host}:{port}>
    ServerName {shared}
    DocumentRoot "{docroot}"
    <Directory "{docroot}">
        Require all granted
    </Directory>
    <IfModule blog_module>
        BlogMount / shared
    </IfModule>
    <Location /server-status>
        SetHandler server-status
    </Location>
</VirtualHost>
<VirtualHost {host}:{port}>
    ServerName {mounted}
    DocumentRoot "{docroot}"
    <Directory "{docroot}">
        Require all granted
    </Directory>
    <IfModule blog_module>
        BlogMount /blog
    </IfModule>
</VirtualHost>
"""


def fetch(host, path, method="GET"):
    with bt.Conn() as c:
        c.send(("%s %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (method, path, host)).encode())
        return c.read_response(head=method == "HEAD")


def golden(name):
    with open(os.path.join(ref.golden_dir(), name), "rb") as f:
        return f.read()


def blog_page(what, r, status, body):
    T.check(r.status == status and r.body == body
            and r.get("content-type") == bt.CONTENT_TYPE,
            "%s: the blog's page (%d)" % (what, status), r.brief())


def apache_answer(what, r, status, body=None):
    """Answered by Apache, not the blog: not its content type or 404 page."""
    T.check(r.status == status and (body is None or r.body == body)
            and r.body != NOT_FOUND and r.get("content-type") != bt.CONTENT_TYPE,
            "%s: Apache's answer (%d)" % (what, status), r.brief())


def mounted(page):
    """A page as the blog renders it under /blog: its links carry the mount."""
    return page.replace(b'href="/', b'href="/blog/')


def mount_checks():
    """mounted.test: the blog at /blog beside the DocumentRoot's files."""
    index, post = mounted(golden("index.html")), mounted(golden("post-31.html"))
    not_found = mounted(NOT_FOUND)
    hello = FILES["hello.txt"]
    blog_page("mounted /blog/ is the index", fetch(MOUNTED, "/blog/"), 200, index)
    blog_page("mounted /blog/post/post-31", fetch(MOUNTED, "/blog/post/post-31"), 200, post)
    blog_page("mounted /blog/post/post-31/cached", fetch(MOUNTED, "/blog/post/post-31/cached"),
              200, post)
    apache_answer("mounted /hello.txt (a file)", fetch(MOUNTED, "/hello.txt"), 200, hello)
    apache_answer("mounted /blogx (not under /blog/)", fetch(MOUNTED, "/blogx"), 404)
    # by the normalised path, as Apache without the blog would serve them
    for path in ("/blog/../hello.txt", "/blog/%2e%2e/hello.txt", "/blog/.%2E/hello.txt",
                 "/blog/post/../../hello.txt", "/blog/./../hello.txt"):
        apache_answer("mounted %s is the file, not the blog's" % path,
                      fetch(MOUNTED, path), 200, hello)
    # merged slashes and dot segments: the blog's URLs; not its pages as sent
    for path in ("//blog/", "/blog//post/post-31", "/blog/./post/post-31",
                 "/x/../blog/post/post-31", "/blog/%70ost/post-31"):
        blog_page("mounted %s is the blog's, its 404 (pages match as sent)" % path,
                  fetch(MOUNTED, path), 404, not_found)
    for path, loc in (("/blog", "/blog/"), ("/blog?a=1&b=2", "/blog/?a=1&b=2"),
                      ("/x/../blog", "/blog/")):
        for m in ("GET", "HEAD"):
            r = fetch(MOUNTED, path, m)
            # the Host sent, its port none: ap_construct_url's URL
            T.check(r.status == 301 and r.get("location") == "http://%s%s" % (MOUNTED, loc),
                    "mounted %s %s -> 301 to %s, as mod_dir" % (m, path, loc), r.brief())
    for path in ("/blog/", "/blog/post/post-31", "/blog/post/post-31/cached", "/blog/nope"):
        r = fetch(MOUNTED, path, "OPTIONS")
        T.check(r.status == 200 and r.get("allow") == "GET, HEAD" and r.body == b""
                and r.get("content-length") == "0",
                "mounted OPTIONS %s -> 200, Allow: GET, HEAD, no body" % path, r.brief())


def restart(what):
    out = bt.stack("restart", "httpd")
    ok = out.returncode == 0 and bt.wait_for(lambda: fetch(bt.HOST, "/").status == 200, 20, 0.2)
    T.check(ok, what, out.stdout.decode(errors="replace")[-400:])
    return ok


def checks():
    index, post = golden("index.html"), golden("post-31.html")

    # shared.test: the blog's paths are the blog's ...
    blog_page("shared / is the index", fetch(SHARED, "/"), 200, index)
    blog_page("shared /post/post-31", fetch(SHARED, "/post/post-31"), 200, post)
    r = fetch(SHARED, "/post/post-31/cached")
    blog_page("shared /post/post-31/cached", r, 200, post)
    T.check(r.get("x-cache") in ("HIT", "MISS"), "shared: the cache answers", r.brief())
    blog_page("shared /post/NOT-a-slug (the blog's namespace)",
              fetch(SHARED, "/post/NOT-a-slug"), 404, NOT_FOUND)
    blog_page("shared /tag/no-such-tag", fetch(SHARED, "/tag/no-such-tag"), 404, NOT_FOUND)
    r = fetch(SHARED, "/post/post-31", "DELETE")
    T.check(r.status == 405 and r.get("allow") == "GET, HEAD",
            "shared: DELETE on a blog path is the blog's 405", r.brief())
    # ... and every other path is Apache's.
    for name, body in sorted(FILES.items()):
        apache_answer("shared /%s (a file)" % name, fetch(SHARED, "/" + name), 200, body)
    r = fetch(SHARED, "/server-status?auto")
    apache_answer("shared /server-status?auto", r, 200)
    T.check(b"Scoreboard:" in r.body, "shared: /server-status is mod_status's", repr(r.body[:200]))
    apache_answer("shared /no-such-file", fetch(SHARED, "/no-such-file"), 404)
    apache_answer("shared /postx (not the blog's /post/)", fetch(SHARED, "/postx"), 404)
    apache_answer("shared /post (no slash)", fetch(SHARED, "/post"), 404)

    # The default host: the blog owns every path.
    blog_page("default / is the index", fetch(bt.HOST, "/"), 200, index)
    for path in ["/hello.txt", "/.well-known/acme-challenge/token-1", "/server-status"]:
        blog_page("default %s is the blog's 404" % path, fetch(bt.HOST, path), 404, NOT_FOUND)


def main():
    os.makedirs(CONF_D, exist_ok=True)
    for name, body in FILES.items():
        path = os.path.join(DOCROOT, name)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        with open(path, "wb") as f:
            f.write(body)
        os.chmod(path, 0o644)
    with open(SNIPPET, "w") as f:
        f.write(CONF.format(host=bt.HOST, port=bt.HTTP_PORT, shared=SHARED, docroot=DOCROOT,
                            mounted=MOUNTED))
    try:
        if restart("Apache restarts with the shared-mount virtual hosts"):
            checks()
            mount_checks()
    finally:
        os.unlink(SNIPPET)
        shutil.rmtree(DOCROOT, ignore_errors=True)
        restart("Apache restarts without them")
    T.finish()


if __name__ == "__main__":
    main()

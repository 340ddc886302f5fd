# SPDX-License-Identifier: Apache-2.0
"""The ceiling Apache: a second httpd, configured from bench/httpd.conf.in,
serving the cached pages' bytes as static files and the floor module's two
answers.  Started and stopped by PID; it never touches the blog's Apache."""

import os
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "e2e"))
import procs  # noqa: E402

APACHE = "/usr/sbin/apache2"
# The blog's generated config (its template's values filled in by
# scripts/stack.sh), else the template itself.
BLOG_CONF = os.path.join(os.environ.get("BLOG_VAR", os.path.join(os.path.dirname(HERE), "var")),
                         "httpd", "httpd.conf")
if not os.path.exists(BLOG_CONF):
    BLOG_CONF = os.path.join(os.path.dirname(HERE), "conf", "httpd.conf.in")
# The directives both Apaches must share, with the values used when the
# blog's template lacks one.
SHARED = [("StartServers", "4"), ("ServerLimit", "4"),
          ("ThreadsPerChild", "25"), ("MaxRequestWorkers", "100"),
          ("MinSpareThreads", "25"), ("MaxSpareThreads", "100"),
          ("MaxConnectionsPerChild", "0"), ("ThreadLimit", None),
          ("ListenBacklog", None), ("ListenCoresBucketsRatio", None),
          ("ThreadStackSize", None), ("AsyncRequestWorkerFactor", "4"),
          ("KeepAlive", "On"), ("MaxKeepAliveRequests", "0"),
          ("KeepAliveTimeout", "5"), ("Timeout", "30"),
          ("EnableMMAP", "Off"), ("EnableSendfile", "On"),
          ("MaxMemFree", "0")]
EVENT_ONLY = {"AsyncRequestWorkerFactor"}


# The blog's scheduling policy (scripts/env.sh's BLOG_SCHED, which
# bench/run.sh sources), under which the ceiling Apache runs too, so that
# the two Apaches are compared under the same one.
SCHED = os.environ.get("BLOG_SCHED", "batch")


def sched_prefix():
    """The command that starts the ceiling Apache under SCHED."""
    return ["chrt", "--batch", "0"] if SCHED == "batch" else []


def stock_threads(found, connections):
    """Stock Apache has no BlogConnectionPark: under the event MPM a child
    whose workers are all busy closes its keep-alive connections, and one
    child may be handed every connection.  Below `connections` threads per
    child the ceilings would count those closes as socket errors, so they
    get that many (children x threads workers), the rest as the blog's."""
    try:
        threads = int(found.get("ThreadsPerChild", "0"))
        children = int(found.get("StartServers", "4"))
    except ValueError:
        return
    if not connections or threads >= connections:
        return
    workers = str(children * connections)
    found["ThreadsPerChild"] = str(connections)
    for name in ("MaxRequestWorkers", "MinSpareThreads", "MaxSpareThreads"):
        found[name] = workers
    if "ThreadLimit" in found and int(found["ThreadLimit"]) < connections:
        found["ThreadLimit"] = str(connections)


def server_settings(path=BLOG_CONF, connections=0):
    """The SHARED directives as conf/httpd.conf.in sets them (the last
    setting wins, as in Apache), in SHARED's order, as config lines; with
    `connections`, at least that many threads per child (stock_threads)."""
    found = {}
    skip = 0        # depth inside a block for prefork, which the bench never runs
    try:
        with open(path) as f:
            for line in f:
                words = line.split()
                if not words:
                    continue
                if words[0].lower() == "<ifmodule":
                    if skip or words[1].rstrip(">") == "mpm_prefork_module":
                        skip += 1
                elif words[0].lower() == "</ifmodule>":
                    skip = max(skip - 1, 0)
                elif not skip and words[0] in dict(SHARED):
                    found[words[0]] = " ".join(words[1:])
    except OSError:
        pass
    stock_threads(found, connections)
    lines = []
    for name, default in SHARED:
        value = found.get(name, default)
        if value is None:
            continue
        line = "%s %s" % (name, value)
        if name in EVENT_ONLY:
            line = "<IfModule mpm_event_module>\n    %s\n</IfModule>" % line
        lines.append(line)
    return "\n".join(lines)


class CeilingApache:
    def __init__(self, var_dir, port, connections=0):
        self.connections = connections
        self.dir = os.path.join(var_dir, "bench")
        self.port = port
        self.conf = os.path.join(self.dir, "httpd.conf")
        self.pid_file = os.path.join(self.dir, "httpd.pid")

    def write_pages(self, pages):
        """pages: {file name: bytes}; readable by the server's user."""
        htdocs = os.path.join(self.dir, "htdocs")
        os.makedirs(htdocs, exist_ok=True)
        os.chmod(self.dir, 0o755)
        os.chmod(htdocs, 0o755)
        for name, body in pages.items():
            path = os.path.join(htdocs, name)
            with open(path, "wb") as f:
                f.write(body)
            os.chmod(path, 0o644)

    def _configure(self, mpm):
        user = "User www-data\nGroup www-data" if os.getuid() == 0 else ""
        with open(os.path.join(HERE, "httpd.conf.in")) as f:
            text = f.read()
        for k, v in (("@DIR@", self.dir), ("@PORT@", str(self.port)),
                     ("@MPM@", mpm), ("@USER@", user),
                     ("@SERVER_SETTINGS@",
                      server_settings(connections=self.connections)),
                     ("@FLOOR_MODULE@",
                      os.path.join(HERE, ".libs", "mod_blog_floor.so"))):
            text = text.replace(k, v)
        with open(self.conf, "w") as f:
            f.write(text)

    def pid(self):
        pid = procs.pid_from(self.pid_file)
        try:
            os.kill(pid, 0)
            return pid
        except (OSError, TypeError):
            return None

    def start(self, mpm):
        if self.pid():
            self.stop()
        self._configure(mpm)
        subprocess.run(sched_prefix() + [APACHE, "-d", self.dir, "-f", self.conf,
                                         "-k", "start"], check=True)
        url = "http://127.0.0.1:%d/index.html" % self.port
        for _ in range(100):
            try:
                with urllib.request.urlopen(url, timeout=1) as r:
                    if r.status == 200 and self.pid():
                        return self.pid()
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the ceiling Apache does not answer on port %d; "
                           "see %s/error.log" % (self.port, self.dir))

    def stop(self):
        pid = self.pid()
        if pid and not procs.stop(pid):
            raise RuntimeError("the ceiling Apache (%d) did not stop" % pid)

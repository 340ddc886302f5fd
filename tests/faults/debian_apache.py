# SPDX-License-Identifier: Apache-2.0
"""Debian's own Apache configuration (a copy of the host's /etc/apache2,
as installed: apache2.conf, envvars, mpm_event.conf, reqtimeout.conf and
the rest) with the blog enabled the way docs/INSTALL.md does it: blog.load
and conf/blog.conf in mods-enabled, `BlogMount /` in the default site, and
optionally conf/blog-mpm.conf in conf-enabled (`a2enconf blog-mpm`) or a
BlogConnectionHold (blog.conf's commented line, set).  It
listens on a port of its own and uses the private stack's PostgreSQL and
Redis; started and stopped by its pid file."""

import os
import re
import shutil
import subprocess
import time

import blogtest as bt

ETC = "/etc/apache2"


def available():
    """Why Debian's Apache cannot be copied here, or None."""
    for f in ("apache2.conf", "envvars", "mods-available/mpm_event.conf"):
        if not os.path.exists(os.path.join(ETC, f)):
            return "no %s/%s (Debian's apache2 package)" % (ETC, f)
    return None


class DebianApache:
    def __init__(self, name, recommended, hold=None):
        self.dir = os.path.join(bt.VAR, name)
        self.etc = os.path.join(self.dir, "etc")
        self.port = bt.free_port()
        self.recommended = recommended
        self.extra = ""         # more configuration, in conf-enabled
        self.hold = hold
        self.pidfile = os.path.join(self.dir, "run", "apache2.pid")

    def env(self):
        e = dict(os.environ, APACHE_CONFDIR=self.etc,
                 APACHE_RUN_USER="www-data" if os.getuid() == 0 else os.environ.get("USER", ""),
                 APACHE_RUN_GROUP="www-data" if os.getuid() == 0 else "",
                 APACHE_PID_FILE=self.pidfile, APACHE_RUN_DIR=os.path.join(self.dir, "run"),
                 APACHE_LOCK_DIR=os.path.join(self.dir, "lock"),
                 APACHE_LOG_DIR=os.path.join(self.dir, "log"), LANG="C")
        return e

    def _write(self, rel, text):
        path = os.path.join(self.etc, rel)
        with open(path, "w") as f:
            f.write(text)

    def configure(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.copytree(ETC, self.etc, symlinks=True)
        for sub in ("run", "lock", "log"):
            os.makedirs(os.path.join(self.dir, sub))
        os.chmod(self.dir, 0o755)
        self._write("ports.conf", "Listen 127.0.0.1:%d\n" % self.port)
        module = os.path.join(bt.ROOT, "mod_blog", ".libs", "mod_blog.so")
        self._write("mods-available/blog.load", "LoadModule blog_module %s\n" % module)
        with open(os.path.join(bt.ROOT, "conf", "blog.conf")) as f:
            conf = f.read()
        # the private stack's servers and this tree's templates
        conf = re.sub(r"(?m)^(\s*)BlogDatabase .*$",
                      r'\1BlogDatabase "host=%s/run port=%s dbname=blog user=blog_web"'
                      % (bt.VAR, bt.ENV["BLOG_PG_PORT"]), conf)
        conf = re.sub(r"(?m)^(\s*)BlogRedis .*$", r"\1BlogRedis %s/run/redis.sock" % bt.VAR, conf)
        conf = re.sub(r"(?m)^(\s*)BlogTemplates .*$",
                      r"\1BlogTemplates %s/templates" % bt.ROOT, conf)
        if self.hold:
            conf = re.sub(r"(?m)^(\s*)#BlogConnectionHold .*$",
                          r"\1BlogConnectionHold %s" % self.hold, conf)
        self._write("mods-available/blog.conf", conf)
        for f in ("blog.load", "blog.conf"):
            os.symlink("../mods-available/" + f, os.path.join(self.etc, "mods-enabled", f))
        site = os.path.join(self.etc, "sites-available", "000-default.conf")
        with open(site) as f:
            text = f.read()
        text = text.replace("<VirtualHost *:80>", "<VirtualHost *:%d>" % self.port, 1)
        text = text.replace("</VirtualHost>", "\t<IfModule blog_module>\n\t\tBlogMount /\n"
                            "\t</IfModule>\n</VirtualHost>", 1)
        self._write("sites-available/000-default.conf", text)
        if self.extra:
            self._write("conf-enabled/zz-faults.conf", self.extra)
        if self.recommended:
            shutil.copy(os.path.join(bt.ROOT, "conf", "blog-mpm.conf"),
                        os.path.join(self.etc, "conf-available", "blog-mpm.conf"))
            os.symlink("../conf-available/blog-mpm.conf",
                       os.path.join(self.etc, "conf-enabled", "blog-mpm.conf"))

    def start(self):
        self.configure()
        p = subprocess.run(["/usr/sbin/apache2", "-d", self.etc, "-f",
                            os.path.join(self.etc, "apache2.conf"), "-k", "start"],
                           env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=60)
        if p.returncode != 0:
            raise RuntimeError("Debian's Apache did not start: %s"
                               % p.stdout.decode(errors="replace")[-600:])
        def up():
            try:
                with bt.Conn(5, port=self.port) as c:
                    return c.request("GET", "/compute").status == 200
            except OSError:
                return False
        if not bt.wait_for(up, 30, 0.2):
            self.stop()
            raise RuntimeError("Debian's Apache does not answer on port %d" % self.port)
        time.sleep(2.0)     # the children start one after the other
        return self

    def graceful(self):
        """What `service apache2 reload` does (apache2ctl graceful)."""
        subprocess.run(["/usr/sbin/apache2", "-d", self.etc, "-f",
                        os.path.join(self.etc, "apache2.conf"), "-k", "graceful"],
                       env=self.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True, timeout=60)

    def threads(self):
        """The children's threads (workers, and a listener and the main
        thread each), for the figure."""
        return sum(len(os.listdir("/proc/%d/task" % k)) for k in bt.children(self.pid()))

    def pid(self):
        with open(self.pidfile) as f:
            return int(f.read().split()[0])

    def stop(self):
        try:
            pid = self.pid()
        except (OSError, ValueError):
            return
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            return
        end = time.monotonic() + 20
        while time.monotonic() < end:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)

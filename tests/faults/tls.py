# SPDX-License-Identifier: Apache-2.0
"""A TLS listener for the handshake cases: a self-signed certificate made
into a temporary folder, the lines that give an Apache a TLS port with it
(mod_ssl, a virtual host serving the blog), slow handshakes trickled by
trickle.py in a process of its own, and a real TLS client."""

import contextlib
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRICKLE = os.path.join(HERE, "trickle.py")
MOD_SSL = "/usr/lib/apache2/modules/mod_ssl.so"


def available():
    """Why no TLS listener can be made here, or None."""
    if not os.path.exists(MOD_SSL):
        return "no %s (Debian's apache2 package)" % MOD_SSL
    if not shutil.which("openssl"):
        return "no openssl command"
    return None


@contextlib.contextmanager
def certificate():
    """(certificate, key) files of a self-signed certificate for 127.0.0.1,
    removed afterwards.  The folder is readable by all: Apache's parent
    reads them as root, but a non-root stack reads them as its user."""
    d = tempfile.mkdtemp(prefix="blog-tls-")
    try:
        os.chmod(d, 0o755)
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", key, "-out", cert, "-subj", "/CN=127.0.0.1", "-days", "2",
                        "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        yield cert, key
    finally:
        shutil.rmtree(d, ignore_errors=True)


def listener(port, cert, key, mount=""):
    """Apache configuration lines: mod_ssl, and a TLS port that serves the
    blog (the server's BlogMount, or mount's lines in the virtual host)."""
    return ("<IfModule !ssl_module>\n"
            "    LoadModule ssl_module %s\n"
            "</IfModule>\n"
            "Listen 127.0.0.1:%d https\n"
            "<VirtualHost 127.0.0.1:%d>\n"
            "    SSLEngine on\n"
            "    SSLCertificateFile \"%s\"\n"
            "    SSLCertificateKeyFile \"%s\"\n"
            "%s"
            "</VirtualHost>\n"
            % (MOD_SSL, port, port, cert, key, mount))


def handshake_limit(conf_text):
    """RequestReadTimeout's handshake limit in seconds (its first value;
    0: none, mod_reqtimeout's default), the last one given wins."""
    found = re.findall(r"(?mi)^\s*RequestReadTimeout\s.*\bhandshake=(\d+)", conf_text)
    return int(found[-1]) if found else 0


def get(port, path="/", timeout=10):
    """(status, body) of a GET over TLS, the certificate not checked."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw, \
            ctx.wrap_socket(raw) as s:
        s.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                  % path.encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def slow_after_hello(port, give_up):
    """One connection that sends a whole ClientHello, then the rest of its
    handshake a byte a second (a record that never ends): mod_ssl reads it
    in a worker.  Seconds until the server closed it, or None when it was
    still open after give_up seconds."""
    import trickle
    rest = b"\x17\x03\x03\x40\x00" + b"\x00" * 0x4000
    with socket.create_connection(("127.0.0.1", port), timeout=give_up) as s:
        t0 = time.monotonic()
        s.sendall(trickle.client_hello())
        s.settimeout(1.0)
        sent = 0
        while time.monotonic() - t0 < give_up:
            try:
                if s.recv(65536) == b"":
                    return time.monotonic() - t0
            except socket.timeout:
                pass
            except OSError:
                return time.monotonic() - t0
            try:
                s.sendall(rest[sent:sent + 1])
                sent += 1
            except OSError:
                return time.monotonic() - t0
    return None


class Trickler:
    """trickle.py in a process of its own for the length of a `with`
    block: n connections trickling `what` to port, each one the server
    closes opened again; `stats` after the block."""

    def __init__(self, port, n, what="hello", seconds=120):
        self.cmd = [sys.executable, TRICKLE, "--port", str(port), "--n", str(n),
                    "--what", what, "--seconds", str(seconds)]
        self.stats = {}

    def __enter__(self):
        self.p = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return self

    def __exit__(self, *exc):
        self.p.terminate()
        try:
            out, err = self.p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
        try:
            self.stats = json.loads(out.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            self.stats = {"error": err.decode(errors="replace")[-300:]}

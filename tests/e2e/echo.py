# SPDX-License-Identifier: Apache-2.0
"""Local backends for the citizen suite (tests/e2e/citizen.py): a TCP echo
server (the far end of a CONNECT tunnel), a WebSocket echo server (the far
end of mod_proxy_wstunnel), a listener that only counts who connects (a
stand-in PostgreSQL or Redis that must never be called), and the client
side of the WebSocket handshake and frames.  Loopback only, ephemeral
ports, a timeout on every socket, daemon threads: a test that fails
leaves nothing running."""

import base64
import hashlib
import os
import socket
import struct
import threading

HOST = "127.0.0.1"
WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC11B65"


class Server:
    """A threaded accept loop on 127.0.0.1:<ephemeral>; serve(sock) per
    connection.  Records what it saw, for the test to assert on."""

    def __init__(self, timeout=10.0):
        self.timeout = timeout
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind((HOST, 0))
        self.lsock.listen(16)
        self.lsock.settimeout(0.2)
        self.port = self.lsock.getsockname()[1]
        self.accepted = 0
        self.received = b""     # every byte (or message) a client sent
        self.closed = threading.Event()     # a client connection ended
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stopping.is_set():
            try:
                s, _ = self.lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.accepted += 1
            s.settimeout(self.timeout)
            threading.Thread(target=self._run, args=(s,), daemon=True).start()

    def _run(self, s):
        try:
            self.serve(s)
        except (OSError, ValueError):
            pass
        finally:
            s.close()
            self.closed.set()

    def serve(self, s):
        """Accept and close: a listener that only counts."""

    def note(self, data):
        with self.lock:
            self.received += data

    def stop(self):
        self.stopping.set()
        self.lsock.close()
        self.thread.join(2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class TcpEcho(Server):
    """Sends back every byte it receives, until the client closes."""

    def serve(self, s):
        while True:
            data = s.recv(65536)
            if not data:
                return
            self.note(data)
            s.sendall(data)


def read_head(s):
    """Bytes from s up to and past the first blank line (an HTTP head and
    whatever came after it), or all there were if s closed before it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


# ------------------------------------------------------------- WebSocket
def ws_accept(key):
    """Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455, 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.encode() + WS_GUID).digest()).decode()


def ws_frame(payload, opcode=1, mask=True):
    """One final frame; a client's frames are masked (RFC 6455, 5.3)."""
    head = bytes([0x80 | opcode])
    n = len(payload)
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def _exact(s, n, buf):
    while len(buf[0]) < n:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside a WebSocket frame")
        buf[0] += chunk
    data, buf[0] = buf[0][:n], buf[0][n:]
    return data


def ws_read(s, buf):
    """(opcode, payload) of the next frame; buf is a one-item list holding
    bytes already read past the last frame."""
    b0, b1 = _exact(s, 2, buf)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", _exact(s, 2, buf))[0]
    elif n == 127:
        n = struct.unpack("!Q", _exact(s, 8, buf))[0]
    key = _exact(s, 4, buf) if b1 & 0x80 else None
    payload = _exact(s, n, buf)
    if key:
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return b0 & 0x0F, payload


class WsEcho(Server):
    """A WebSocket server: the opening handshake, then every text or
    binary message sent back unmasked, a close answered with a close."""

    def serve(self, s):
        head = read_head(s)
        if b"\r\n\r\n" not in head:
            return
        head, rest = head.split(b"\r\n\r\n", 1)
        key = None
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.decode("latin-1").partition(":")
            if k.strip().lower() == "sec-websocket-key":
                key = v.strip()
        if key is None:
            s.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        s.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n"
                   % ws_accept(key)).encode())
        buf = [rest]
        while True:
            op, payload = ws_read(s, buf)
            if op == 8:
                s.sendall(ws_frame(payload[:2], 8, mask=False))
                return
            if op in (1, 2):
                self.note(payload)
                s.sendall(ws_frame(payload, op, mask=False))

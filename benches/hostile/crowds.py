#!/usr/bin/env python3
"""Crowds of hostile clients against a running example server, over
loopback, and the memory the server holds because of them.

Each probe opens many connections that each hold a little — an unread
answer, an unfinished body, a header list, an unfinished WebSocket message —
and prints one markdown row: the server's RSS before, with the crowd
connected, and once the server's timeouts had their time; and how many of
the crowd's connections the server closed by then.

Usage: crowds.py PROBE PID PORT   (benches/hostile/run.sh starts the servers)
Needs the `h2` package for the HTTP/2 probes.
"""

import base64
import os
import socket
import sys
import time


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    raise RuntimeError("no VmRSS")


def connect(port):
    return socket.create_connection(("127.0.0.1", port))


def closed_by_server(sockets):
    """How many of `sockets` the server closed: read what is there (answers
    the server gave up on us with) without waiting."""
    closed = 0
    for sock in sockets:
        sock.setblocking(False)
        try:
            while True:
                data = sock.recv(1 << 16)
                if not data:
                    closed += 1
                    break
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed


def send_all_nonblocking(sockets, payloads, seconds):
    """Sends each socket its payload as far as the server takes it within
    `seconds`, never reading."""
    sent = [0] * len(sockets)
    for sock in sockets:
        sock.setblocking(False)
    deadline = time.time() + seconds
    while time.time() < deadline:
        progress = False
        for i, sock in enumerate(sockets):
            if sent[i] < len(payloads[i]):
                try:
                    sent[i] += sock.send(payloads[i][sent[i]:sent[i] + (1 << 20)])
                    progress = True
                except BlockingIOError:
                    pass
                except OSError:
                    sent[i] = len(payloads[i])
        if not progress:
            break
    return sum(sent)


def pipelined_unread(port):
    """100 connections pipeline GETs and never read an answer."""
    sockets = [connect(port) for _ in range(100)]
    request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    sent = send_all_nonblocking(sockets, [request * 100_000] * len(sockets), 10)
    return sockets, f"100 HTTP/1 connections pipeline GETs, read nothing ({sent >> 20:,} MiB of requests sent)"


def unfinished_bodies(port):
    """1,000 connections each send all but the last byte of a 2 MB body."""
    size = 2_000_000
    head = (
        f"POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n\r\n"
    ).encode()
    body = b'"' + b"x" * (size - 3) + b'"'
    sockets = [connect(port) for _ in range(1000)]
    sent = send_all_nonblocking(sockets, [head + body[: size - 1]] * len(sockets), 25)
    return sockets, f"1,000 HTTP/1 POSTs of 2 MB, the last byte never sent ({sent >> 20:,} MiB sent)"


def h2_connection(port):
    """An HTTP/2 connection (prior knowledge) past the server's SETTINGS and
    the window update that may follow: once the server has acknowledged the
    client's settings, a ping's answer comes after all it had to send."""
    import h2.config
    import h2.connection
    import h2.events

    sock = connect(port)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    sock.settimeout(10)
    while True:
        data = sock.recv(1 << 16)
        if not data:
            break
        events = conn.receive_data(data)
        if any(isinstance(event, h2.events.SettingsAcknowledged) for event in events):
            conn.ping(b"probe---")
        sock.sendall(conn.data_to_send())
        if any(isinstance(event, h2.events.PingAckReceived) for event in events):
            break
    return sock, conn


def h2_heads(port):
    """400 HTTP/2 connections of 100 streams, each a POST with a 15 KB
    header and a body never sent."""
    import hpack.hpack

    # Huffman coding 15 KB headers in Python is slow, and changes nothing.
    encode = hpack.hpack.Encoder.encode
    hpack.hpack.Encoder.encode = lambda self, headers, huffman=False: encode(self, headers, huffman=False)
    big = "x" * 15_000
    sockets = []
    for _ in range(400):
        sock, conn = h2_connection(port)
        for k in range(100):
            stream = conn.get_next_available_stream_id()
            conn.send_headers(stream, [
                (":method", "POST"), (":path", "/users"), (":scheme", "http"), (":authority", "x"),
                ("content-type", "application/json"), ("content-length", "10"), (f"x-big-{k}", big),
            ])
        sock.sendall(conn.data_to_send())
        sockets.append(sock)
    return sockets, "400 HTTP/2 connections × 100 streams with a 15 KB header, bodies never sent"


def h2_windows(port):
    """500 HTTP/2 connections, each a POST of 2 MB sending what the
    server's windows allow, then nothing."""
    sockets = []
    for _ in range(500):
        sock, conn = h2_connection(port)
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, [
            (":method", "POST"), (":path", "/users"), (":scheme", "http"), (":authority", "x"),
            ("content-type", "application/json"), ("content-length", "2000000"),
        ])
        allowed = min(conn.local_flow_control_window(stream), 1 << 20)
        for _ in range(allowed // 16_384):
            conn.send_data(stream, b"x" * 16_384)
        sock.sendall(conn.data_to_send())
        sockets.append(sock)
    return sockets, "500 HTTP/2 POSTs of 2 MB, a window's worth sent"


def websocket(port):
    sock = connect(port)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((
        f"GET /echo?token=secret HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(4096)
    assert b" 101 " in answer, answer
    return sock


def ws_frame(opcode, fin, length):
    """A client frame's header (masked, with a zero mask) for `length` bytes."""
    return bytes([(0x80 if fin else 0) | opcode, 0x80 | 127]) + length.to_bytes(8, "big") + b"\0\0\0\0"


def ws_unfinished(port):
    """1,000 WebSockets, each the first fragment of a message (1 MiB − 1)
    and no more."""
    length = (1 << 20) - 1
    sockets = []
    for _ in range(1000):
        sock = websocket(port)
        sock.sendall(ws_frame(0x2, False, length) + b"x" * length)
        sockets.append(sock)
    return sockets, "1,000 WebSockets, a message begun with a 1 MiB fragment and never finished"


def ws_unread(port):
    """1,000 WebSockets to the echo route, each sending 60 KB messages for as
    long as the server reads them and reading none of the echoes."""
    message = ws_frame(0x2, True, 60_000) + b"x" * 60_000
    sockets = []
    sent = 0
    for _ in range(1000):
        sock = websocket(port)
        sock.setblocking(False)
        pending = message * 64
        try:
            while pending:
                written = sock.send(pending)
                sent += written
                pending = pending[written:]
        except BlockingIOError:
            pass
        sock.setblocking(True)
        sockets.append(sock)
    return sockets, f"1,000 WebSockets send 60 KB messages to echo, read nothing ({sent >> 20:,} MiB sent)"


def ws_echoed(port):
    """1,000 WebSockets, each has a 1 MiB message echoed and reads the echo,
    then idles."""
    length = (1 << 20) - 100
    sockets = []
    for _ in range(1000):
        sock = websocket(port)
        sock.sendall(ws_frame(0x2, True, length) + b"x" * length)
        echoed = 0
        while echoed < 10 + length:
            data = sock.recv(1 << 20)
            if not data:
                break
            echoed += len(data)
        sockets.append(sock)
    return sockets, "1,000 WebSockets, each a 1 MiB message echoed, then idle"


def ws_idle(port):
    """1,000 WebSockets, one small message each, then idle."""
    sockets = []
    for _ in range(1000):
        sock = websocket(port)
        sock.sendall(bytes([0x82, 0x80 | 5]) + b"\0\0\0\0" + b"hello")
        sockets.append(sock)
    return sockets, "1,000 idle WebSockets"


PROBES = {
    # name: (probe, seconds to wait for the server's timeouts; 0 for none)
    "pipelined-unread": (pipelined_unread, 0),
    "unfinished-bodies": (unfinished_bodies, 35),
    "h2-heads": (h2_heads, 35),
    "h2-windows": (h2_windows, 35),
    "ws-unfinished": (ws_unfinished, 35),
    "ws-unread": (ws_unread, 35),
    "ws-echoed": (ws_echoed, 0),
    "ws-idle": (ws_idle, 0),
}


def main():
    name, pid, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    probe, wait = PROBES[name]
    before = rss_mb(pid)
    sockets, what = probe(port)
    time.sleep(3)
    during = rss_mb(pid)
    if wait:
        time.sleep(wait)
        after, closed = f"{rss_mb(pid)} MB", f"{closed_by_server(sockets):,} of {len(sockets):,}"
    else:
        after, closed = "—", "—"
    print(f"| {what} | {before} MB | {during} MB | {after} | {closed} |")
    for sock in sockets:
        sock.close()


if __name__ == "__main__":
    main()

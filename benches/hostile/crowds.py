#!/usr/bin/env python3
"""Crowds of hostile clients against a running example server, over
loopback: the memory the server holds because of them, and what a new
client gets meanwhile.

Each probe opens many connections that each cost the attacker little — an
unread answer, an unfinished body, a bare head, a silent socket, an
unfinished WebSocket message — and prints one markdown row: the server's
RSS before, with the crowd connected, and once the server's timeouts had
their time; how many of the crowd's connections the server closed by
then; the RSS 10 s after the crowd left; and, for the crowds that aim at
other clients, how long a new client's GET and 100 KB upload (or 100 KB
WebSocket message) took while the crowd was there.

Usage: crowds.py PROBE PID PORT   (benches/hostile/run.sh starts the servers)
Needs the `h2` package for the HTTP/2 probes.
"""

import base64
import os
import select
import socket
import struct
import sys
import threading
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
    sock.settimeout(10)
    try:
        while b"\r\n\r\n" not in answer:
            data = sock.recv(4096)
            if not data:
                break
            answer += data
    except socket.timeout:
        answer = b"no answer within 10 s"
    sock.settimeout(None)
    if b" 101 " not in answer:
        sock.close()
        raise ConnectionRefusedError(answer.split(b"\r\n")[0].decode())
    return sock


def websockets(port, count):
    """Up to `count` WebSockets: those the server upgrades (past its cap
    on WebSockets, it answers 503)."""
    for _ in range(count):
        try:
            yield websocket(port)
        except ConnectionRefusedError:
            pass


def ws_frame(opcode, fin, length):
    """A client frame's header (masked, with a zero mask) for `length` bytes."""
    return bytes([(0x80 if fin else 0) | opcode, 0x80 | 127]) + length.to_bytes(8, "big") + b"\0\0\0\0"


def ws_unfinished(port):
    """1,000 WebSockets, each the first fragment of a message (1 MiB − 1)
    and no more."""
    length = (1 << 20) - 1
    sockets = []
    for sock in websockets(port, 1000):
        sock.sendall(ws_frame(0x2, False, length) + b"x" * length)
        sockets.append(sock)
    return sockets, f"1,000 WebSockets ({len(sockets):,} upgraded), a message begun with a 1 MiB fragment and never finished"


def ws_unread(port):
    """1,000 WebSockets to the echo route, each sending 60 KB messages for as
    long as the server reads them and reading none of the echoes."""
    message = ws_frame(0x2, True, 60_000) + b"x" * 60_000
    sockets = []
    sent = 0
    for sock in websockets(port, 1000):
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
    return sockets, f"1,000 WebSockets ({len(sockets):,} upgraded) send 60 KB messages to echo, read nothing ({sent >> 20:,} MiB sent)"


def ws_echoed(port):
    """1,000 WebSockets, each has a 1 MiB message echoed and reads the echo,
    then idles."""
    length = (1 << 20) - 100
    sockets = []
    for sock in websockets(port, 1000):
        sock.sendall(ws_frame(0x2, True, length) + b"x" * length)
        echoed = 0
        while echoed < 10 + length:
            data = sock.recv(1 << 20)
            if not data:
                break
            echoed += len(data)
        sockets.append(sock)
    return sockets, f"1,000 WebSockets ({len(sockets):,} upgraded), each a 1 MiB message echoed, then idle"


def ws_idle(port):
    """1,000 WebSockets, one small message each, then idle."""
    sockets = []
    for sock in websockets(port, 1000):
        sock.sendall(bytes([0x82, 0x80 | 5]) + b"\0\0\0\0" + b"hello")
        sockets.append(sock)
    return sockets, f"1,000 idle WebSockets ({len(sockets):,} upgraded)"


def get_report(port, receive_buffer=None):
    sock = connect(port)
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.sendall(b"GET /report HTTP/1.1\r\nHost: x\r\n\r\n")
    return sock


def slow_readers(port):
    """200 clients ask for the 4 MiB report and read nothing."""
    sockets = [get_report(port, receive_buffer=4096) for _ in range(200)]
    return sockets, "200 clients GET a 4 MiB answer and never read"


def resets(port):
    """1,000 clients ask for the 4 MiB report, read 64 KiB, and reset."""
    for _ in range(1000):
        sock = get_report(port)
        read = 0
        while read < 64 * 1024:
            data = sock.recv(64 * 1024 - read)
            if not data:
                break
            read += len(data)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    return [], "1,000 clients GET a 4 MiB answer, read 64 KiB, reset"


def idle_sockets(port):
    """2,000 connections that send nothing, all begun at once (one by one,
    those past the listener's backlog take seconds each, and the first
    ones time out before the crowd is whole)."""
    sockets = []
    for _ in range(2000):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        sockets.append(sock)
    poll = select.poll()
    pending = {sock.fileno(): sock for sock in sockets}
    for fd in pending:
        poll.register(fd, select.POLLOUT)
    deadline = time.time() + 8
    connected = 0
    while pending and time.time() < deadline:
        for fd, _ in poll.poll(100):
            poll.unregister(fd)
            sock = pending.pop(fd)
            connected += sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
    return sockets, f"2,000 idle TCP connections ({connected:,} connected)"


def bare_heads(port):
    """130 connections send a POST's head declaring 2 MiB, and no body."""
    sockets = []
    for _ in range(130):
        sock = connect(port)
        sock.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n")
        sockets.append(sock)
    return sockets, "130 POST heads declare 2 MiB, send no body"


def ws_silent(port):
    """1,024 WebSocket handshakes, then silence."""
    sockets = list(websockets(port, 1024))
    return sockets, f"1,024 WebSocket handshakes, then silence ({len(sockets):,} upgraded)"


def ws_pings(port):
    """130 WebSockets begin a 70 KB message and send a ping every 10 s."""
    sockets = []
    for sock in websockets(port, 130):
        sock.sendall(ws_frame(0x2, False, 70_000) + b"x" * 70_000)
        sockets.append(sock)

    def ping():
        while True:
            time.sleep(10)
            for sock in sockets:
                try:
                    sock.sendall(bytes([0x89, 0x80]) + b"\0\0\0\0")
                except OSError:
                    pass

    threading.Thread(target=ping, daemon=True).start()
    return sockets, "130 WebSockets begin a 70 KB message, ping every 10 s"


def dribble(port):
    """One connection sends `G`, then a byte every 9 s: when it is closed."""
    sock = connect(port)
    started = time.time()
    head = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    sock.settimeout(9)
    for byte in head:
        try:
            sock.sendall(bytes([byte]))
            if not sock.recv(1):
                break
        except socket.timeout:
            continue
        except OSError:
            break
    return [], f"a first head sent a byte every 9 s (closed after {time.time() - started:.1f} s)"


def timed(answer):
    """Seconds `answer()` took, and what it said."""
    started = time.time()
    try:
        said = answer()
    except ConnectionRefusedError as error:
        said = f"refused: {error}"
    except OSError as error:
        said = type(error).__name__
    return f"{time.time() - started:.2f} s ({said})"


def http_status(sock):
    sock.settimeout(60)
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return "closed"
        data += chunk
    return data.split(b" ")[1].decode()


def new_get(port):
    def answer():
        sock = connect(port)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return http_status(sock)
    return timed(answer)


def new_upload(port):
    def answer():
        sock = connect(port)
        sock.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     b"Content-Length: 100000\r\n\r\n" + b"u" * 100_000)
        return http_status(sock)
    return timed(answer)


def new_ws_message(port):
    def answer():
        sock = websocket(port)
        sock.sendall(ws_frame(0x2, True, 100_000) + b"m" * 100_000)
        sock.settimeout(60)
        echoed = 0
        while echoed < 100_000:
            data = sock.recv(1 << 20)
            if not data:
                return "closed"
            echoed += len(data)
        return "echoed"
    return timed(answer)


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
    "slow-readers": (slow_readers, 0),
    "resets": (resets, 0),
    "idle-sockets": (idle_sockets, 0),
    "bare-heads": (bare_heads, 0),
    "ws-silent": (ws_silent, 0),
    "ws-pings": (ws_pings, 35),
    "dribble": (dribble, 0),
}

# What a new client tries while the crowd is there: the second is a
# 100 KB upload, or over a WebSocket a 100 KB message echoed.
OTHERS = {
    "slow-readers": (new_get, new_upload),
    "resets": (new_get, new_upload),
    "idle-sockets": (new_get, new_upload),
    "bare-heads": (new_get, new_upload),
    "ws-silent": (new_get, new_ws_message),
    "ws-pings": (new_get, new_ws_message),
}


def main():
    name, pid, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    probe, wait = PROBES[name]
    before = rss_mb(pid)
    sockets, what = probe(port)
    time.sleep(3)
    during = rss_mb(pid)
    get, upload = (f(port) for f in OTHERS.get(name, ())) if name in OTHERS else ("—", "—")
    if wait:
        time.sleep(wait)
        after, closed = f"{rss_mb(pid)} MB", f"{closed_by_server(sockets):,} of {len(sockets):,}"
    else:
        after, closed = "—", "—"
    for sock in sockets:
        sock.close()
    time.sleep(10)
    left = rss_mb(pid)
    print(f"| {what} | {before} MB | {during} MB | {after} | {closed} | {left} MB | {get} | {upload} |")


if __name__ == "__main__":
    main()

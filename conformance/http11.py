#!/usr/bin/env python3
"""HTTP/1.1 conformance over raw sockets: the requirements of RFC 9112 and
RFC 9110 that a server can be tested on from the outside, each case citing
its section and the strength of its rule (MUST, SHOULD, or MAY where the
RFC leaves a choice and the case checks that either choice keeps the
connection's framing sound).

The server under test answers as `examples/conformance.rs` does: `/`
echoes the request's body (or `hello`) to every method, `/status/{code}`
answers that status with the body `hello`, `/stream` a body of unknown
length, `/get-only` GET and HEAD alone, `/ws` a WebSocket handshake.

Usage:
    conformance/http11.py HOST:PORT [--known FILE] [--only ID] [-v]

Prints one line per case and `N passed, N failed`; with `--known`, exits
non-zero only if a case fails that the file does not list (one case id a
line, `#` starts a comment), or a listed one passes (so that the list
stays true).
"""

import argparse
import re
import socket
import sys
import time

HOST = b"Host: localhost\r\n"
# A request appended after a case's own: answered `200 hello` only if the
# connection is still open and still in step with the client.
SYNC = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
WAIT_100 = object()  # in a case's parts: wait for a 100 (Continue) first
READ_TIMEOUT = 2.0   # how long a case waits for the server to act
IMF_FIXDATE = re.compile(
    rb"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
    rb" \d{4} \d\d:\d\d:\d\d GMT$"
)


class Response:
    def __init__(self, version, status, headers, body):
        self.version, self.status, self.headers, self.body = version, status, headers, body

    def header(self, name):
        values = self.all(name)
        return values[0] if values else None

    def all(self, name):
        name = name.lower().encode()
        return [value for key, value in self.headers if key == name]

    def __repr__(self):
        return f"{self.status} {self.body[:40]!r}"


class Incomplete(Exception):
    pass


def parse_response(buffer, method, closed):
    """One response from the front of `buffer`: (response, bytes used).
    Raises Incomplete when more bytes are needed, ValueError when the
    bytes are not a response."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        if closed and buffer:
            raise ValueError(f"a response head cut short: {buffer[:80]!r}")
        raise Incomplete
    lines = buffer[:end].split(b"\r\n")
    match = re.match(rb"^(HTTP/1\.[01]) (\d{3}) ?(.*)$", lines[0])
    if not match:
        raise ValueError(f"not a status line: {lines[0][:80]!r}")
    version, status = match.group(1), int(match.group(2))
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not re.match(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", name):
            raise ValueError(f"not a field line: {line[:80]!r}")
        headers.append((name.lower(), value.strip(b" \t")))
    response = Response(version, status, headers, b"")
    at = end + 4
    if method == "HEAD" or status < 200 or status in (204, 304):
        return response, at
    coding = response.header("transfer-encoding")
    if coding is not None:
        if coding.lower() != b"chunked":
            raise ValueError(f"a response coding other than chunked: {coding!r}")
        body = b""
        while True:
            line_end = buffer.find(b"\r\n", at)
            if line_end < 0:
                if closed:
                    raise ValueError("a chunked response cut short")
                raise Incomplete
            size = int(buffer[at:line_end].split(b";")[0], 16)
            at = line_end + 2
            if size == 0:
                trailer_end = buffer.find(b"\r\n", at)
                while trailer_end >= 0 and trailer_end != at:
                    at = trailer_end + 2
                    trailer_end = buffer.find(b"\r\n", at)
                if trailer_end < 0:
                    if closed:
                        raise ValueError("a chunked response's trailers cut short")
                    raise Incomplete
                response.body = body
                return response, trailer_end + 2
            if len(buffer) < at + size + 2:
                if closed:
                    raise ValueError("a chunk cut short")
                raise Incomplete
            body += buffer[at:at + size]
            if buffer[at + size:at + size + 2] != b"\r\n":
                raise ValueError("a chunk without its CRLF")
            at += size + 2
    lengths = response.all("content-length")
    if lengths:
        if len(set(lengths)) != 1 or not lengths[0].isdigit():
            raise ValueError(f"an invalid response Content-Length: {lengths!r}")
        length = int(lengths[0])
        if len(buffer) < at + length:
            if closed:
                raise ValueError("a response body shorter than its Content-Length")
            raise Incomplete
        response.body = buffer[at:at + length]
        return response, at + length
    # Delimited by the end of the connection.
    if not closed:
        raise Incomplete
    response.body = buffer[at:]
    return response, len(buffer)


class Exchange:
    """What a server answered to one connection's bytes."""

    def __init__(self):
        self.responses, self.interim, self.closed, self.error = [], [], False, None
        self.buffer = b""

    @property
    def first(self):
        return self.responses[0] if self.responses else None

    def statuses(self):
        return [response.status for response in self.responses]


def run(address, parts, methods, wanted, until_closed, half_close):
    exchange = Exchange()
    try:
        sock = socket.create_connection(address, timeout=READ_TIMEOUT)
    except OSError as error:
        exchange.error = f"connect: {error}"
        return exchange
    sock.settimeout(0.05)
    pending = list(methods)

    def pump(stop, deadline):
        """Reads and parses until `stop()` or the deadline or the end."""
        while True:
            try:
                while True:
                    method = pending[0] if pending else "GET"
                    response, used = parse_response(exchange.buffer, method, exchange.closed)
                    exchange.buffer = exchange.buffer[used:]
                    if response.status < 200 and response.status != 101:
                        exchange.interim.append(response)
                        continue
                    exchange.responses.append(response)
                    if pending:
                        pending.pop(0)
                    if response.status == 101:
                        return
            except Incomplete:
                pass
            except ValueError as error:
                exchange.error = str(error)
                return
            if stop() or exchange.closed or time.monotonic() > deadline:
                return
            try:
                data = sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                data = b""
            if data:
                exchange.buffer += data
            else:
                exchange.closed = True

    try:
        for part in parts:
            if part is WAIT_100:
                pump(lambda: exchange.interim or exchange.responses, time.monotonic() + 1.0)
                continue
            try:
                sock.sendall(part)
            except OSError:
                break  # the server may close before it has read everything
        if half_close:
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        deadline = time.monotonic() + READ_TIMEOUT
        if until_closed:
            pump(lambda: exchange.closed, deadline)
        else:
            pump(lambda: len(exchange.responses) >= wanted, deadline)
    finally:
        sock.close()
    return exchange


# What a case expects. Each check returns None when the exchange passes,
# and otherwise what went wrong.

def answered(status=200, body=None, keep=True):
    """Answered `status` (and `body`), the connection kept and in step."""
    def check(exchange):
        first = exchange.first
        if first is None or first.status != status:
            return f"expected {status}, got {describe(exchange)}"
        if body is not None and first.body != body:
            return f"expected the body {body!r}, got {first.body[:60]!r}"
        if keep:
            return in_step(exchange, 1)
        return None
    check.sync = keep
    return check


def in_step(exchange, index):
    """The sync request after `index` responses was answered `200 hello`."""
    if len(exchange.responses) <= index:
        return f"the connection did not stay open and in step ({describe(exchange)})"
    sync = exchange.responses[index]
    if sync.status != 200 or sync.body != b"hello":
        return f"the next request was answered {sync!r}: the framing slipped"
    return None


def refused(*statuses, close=True):
    """Answered one of `statuses` (400 by default) and, with `close`, the
    connection closed after it."""
    statuses = statuses or (400,)

    def check(exchange):
        first = exchange.first
        if first is None or first.status not in statuses:
            return f"expected {'/'.join(map(str, statuses))}, got {describe(exchange)}"
        if close and not exchange.closed:
            return "answered, but the connection was not closed"
        if close and len(exchange.responses) > 1:
            return f"answered a request it should not have read: {exchange.statuses()}"
        return None
    check.until_closed = close
    return check


def either(refusal, acceptance):
    """A choice the RFC leaves: refused as `refusal` checks, or answered
    as `acceptance` checks (with the connection in step after it)."""
    def check(exchange):
        first = exchange.first
        if first is not None and first.status >= 400:
            return refusal(exchange)
        return acceptance(exchange)
    check.sync = getattr(acceptance, "sync", False)
    return check


def closes(status=200, body=None):
    """Answered `status` (and `body`), then the connection closed, with no
    answer to anything sent after the request."""
    def check(exchange):
        first = exchange.first
        if first is None or first.status != status:
            return f"expected {status}, got {describe(exchange)}"
        if body is not None and first.body != body:
            return f"expected the body {body!r}, got {first.body[:60]!r}"
        if not exchange.closed:
            return "the connection was not closed after the answer"
        if len(exchange.responses) > 1:
            return f"answered a request sent after the close: {exchange.statuses()}"
        return None
    check.until_closed = True
    return check


def incomplete():
    """A request cut short by the client's close: no success answered,
    and the connection closed."""
    def check(exchange):
        if any(200 <= response.status < 300 for response in exchange.responses):
            return f"answered {exchange.statuses()} to an incomplete request"
        if not exchange.closed:
            return "the connection was not closed"
        return None
    check.until_closed = True
    return check


def with_check(base, extra):
    """`base`, then `extra(exchange)` on the first response."""
    def check(exchange):
        return base(exchange) or extra(exchange)
    check.sync = getattr(base, "sync", False)
    check.until_closed = getattr(base, "until_closed", False)
    return check


def describe(exchange):
    if exchange.error:
        return f"a malformed answer ({exchange.error})"
    if exchange.responses:
        return f"{exchange.statuses()}{' and a close' if exchange.closed else ''}"
    return "the connection closed with no answer" if exchange.closed else "no answer"


CASES = []


def case(id, section, level, title, parts, check, methods=("GET",), half_close=False):
    parts = [parts] if isinstance(parts, bytes) else list(parts)
    methods = list(methods)
    sync = getattr(check, "sync", False)
    if sync:
        parts.append(SYNC)
        methods.append("GET")
    CASES.append(dict(
        id=id, section=section, level=level, title=title, parts=parts, check=check,
        methods=methods, wanted=len(methods), half_close=half_close,
        until_closed=getattr(check, "until_closed", False),
    ))


def get(target=b"/", version=b"HTTP/1.1", headers=b""):
    return b"GET " + target + b" " + version + b"\r\n" + HOST + headers + b"\r\n"


def post(body, headers=None, target=b"/", version=b"HTTP/1.1"):
    if headers is None:
        headers = b"Content-Length: %d\r\n" % len(body)
    return b"POST " + target + b" " + version + b"\r\n" + HOST + headers + b"\r\n" + body


def chunked(body):
    return post(body, b"Transfer-Encoding: chunked\r\n")


# -- RFC 9112, 2 and 3: the message and its request line ---------------------

case("line-valid", "9112 3", "MUST", "a valid request line is answered",
     get(), answered(body=b"hello"))
case("line-version-lowercase", "9112 2.3", "MUST", "the HTTP version is case-sensitive: http/1.1 is refused",
     get(version=b"http/1.1"), refused(400, 505))
case("line-version-missing", "9112 3", "SHOULD", "a request line without a version is refused",
     b"GET /\r\n" + HOST + b"\r\n", refused(400, 505))
case("line-version-no-dot", "9112 2.3", "SHOULD", "HTTP/11 is not a version",
     get(version=b"HTTP/11"), refused(400, 505))
case("line-version-three-parts", "9112 2.3", "SHOULD", "HTTP/1.1.1 is not a version",
     get(version=b"HTTP/1.1.1"), refused(400, 505))
case("line-version-letters", "9112 2.3", "SHOULD", "HTTP/1.x is not a version",
     get(version=b"HTTP/1.x"), refused(400, 505))
case("line-version-2", "9110 15.6.6", "SHOULD", "HTTP/2.0 in an HTTP/1 request line is refused (400 or 505)",
     get(version=b"HTTP/2.0"), refused(400, 505))
case("line-version-3", "9110 15.6.6", "SHOULD", "HTTP/3.0 in an HTTP/1 request line is refused (400 or 505)",
     get(version=b"HTTP/3.0"), refused(400, 505))
case("line-version-0.9", "9110 15.6.6", "SHOULD", "HTTP/0.9 is refused (400 or 505)",
     get(version=b"HTTP/0.9"), refused(400, 505))
case("line-version-scheme", "9112 2.3", "SHOULD", "HTTPS/1.1 is not a version",
     get(version=b"HTTPS/1.1"), refused(400, 505))
case("line-version-1.0", "9112 2.3", "MUST", "an HTTP/1.0 request is answered with HTTP/1.x",
     b"GET / HTTP/1.0\r\n\r\n", with_check(closes(body=b"hello"), lambda e: None
                                         if e.first.version in (b"HTTP/1.0", b"HTTP/1.1")
                                         else f"answered as {e.first.version!r}"))
case("line-double-space", "9112 3", "MAY", "two spaces between method and target: refused or read as one",
     b"GET  / HTTP/1.1\r\n" + HOST + b"\r\n", either(refused(400, close=False), answered()))
case("line-trailing-space", "9112 3", "MAY", "a space after the version: refused or ignored",
     b"GET / HTTP/1.1 \r\n" + HOST + b"\r\n", either(refused(400, close=False), answered()))
case("line-tabs", "9112 3", "MAY", "tabs between the parts: refused or read as spaces",
     b"GET\t/\tHTTP/1.1\r\n" + HOST + b"\r\n", either(refused(400, close=False), answered()))
case("line-no-method", "9112 3", "SHOULD", "a request line without a method is refused",
     b" / HTTP/1.1\r\n" + HOST + b"\r\n", refused(400))
case("line-no-target", "9112 3", "SHOULD", "a request line without a target is refused",
     b"GET HTTP/1.1\r\n" + HOST + b"\r\n", refused(400))
case("line-method-not-token", "9112 3.1", "SHOULD", "a method that is not a token is refused",
     b"G(T / HTTP/1.1\r\n" + HOST + b"\r\n", refused(400))
case("line-method-nul", "9112 3.1", "SHOULD", "a NUL in the method is refused",
     b"G\x00T / HTTP/1.1\r\n" + HOST + b"\r\n", refused(400))
case("line-leading-crlf", "9112 2.2", "SHOULD", "an empty line before the request line is ignored",
     b"\r\n" + get(), answered(body=b"hello"))
case("line-bare-cr", "9112 2.2", "MUST", "a bare CR in the request line is refused (or read as a space, which leaves it invalid)",
     b"GET / HTTP/1.1\rX: y\r\n" + HOST + b"\r\n", refused(400))
case("line-lf-only", "9112 2.2", "MAY", "lines ended by LF alone: recognised or refused",
     b"GET / HTTP/1.1\nHost: localhost\n\n", either(refused(400, close=False), answered()))
case("line-too-long", "9112 3", "MUST", "a request target longer than the server parses is 414",
     get(target=b"/?" + b"a" * 100_000), refused(414, close=False))

# -- RFC 9112 3.2: the request target ----------------------------------------

case("target-absolute-form", "9112 3.2.2", "MUST", "the absolute form is accepted",
     b"GET http://localhost/ HTTP/1.1\r\n" + HOST + b"\r\n", answered(body=b"hello"))
case("target-absolute-form-other-host", "9112 3.2.2", "MUST", "in the absolute form, a Host that differs is ignored",
     b"GET http://localhost/ HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n", answered(body=b"hello"))
case("target-absolute-form-https", "9112 3.2.2", "MUST", "the absolute form with the https scheme is accepted",
     b"GET https://localhost/ HTTP/1.1\r\n" + HOST + b"\r\n", answered(body=b"hello"))
case("target-absolute-form-port", "9112 3.2.2", "MUST", "the absolute form with a port is accepted",
     b"GET http://localhost:80/ HTTP/1.1\r\n" + HOST + b"\r\n", answered(body=b"hello"))
case("target-authority-form-get", "9112 3.2.3", "SHOULD", "the authority form outside CONNECT is refused",
     b"GET localhost:80 HTTP/1.1\r\n" + HOST + b"\r\n", refused(400))
case("target-asterisk-get", "9112 3.2.4", "SHOULD", "the asterisk form outside OPTIONS is refused",
     b"GET * HTTP/1.1\r\n" + HOST + b"\r\n", refused(400))
case("target-asterisk-options", "9112 3.2.4", "MUST", "OPTIONS * is a valid request (not 400, not 5xx)",
     b"OPTIONS * HTTP/1.1\r\n" + HOST + b"\r\n",
     lambda e: None if e.first and e.first.status not in (400,) and e.first.status < 500
     else f"answered {describe(e)}")
case("target-fragment", "9112 3.2", "SHOULD", "a fragment is not part of a request target",
     get(target=b"/#fragment"), refused(400))
case("target-control", "9112 3.2", "SHOULD", "a control character in the target is refused",
     get(target=b"/\x01"), refused(400))
case("target-del", "9112 3.2", "SHOULD", "a DEL in the target is refused",
     get(target=b"/\x7f"), refused(400))
case("target-non-ascii", "9112 3.2", "SHOULD", "a byte above 0x7F in the target is refused",
     get(target=b"/\xff"), refused(400))
case("target-relative", "9112 3.2.1", "SHOULD", "a target without its leading slash is refused",
     get(target=b"a/b"), refused(400))
case("target-query", "9112 3.2.1", "MUST", "the origin form with a query is accepted",
     get(target=b"/?a=b&c=%41"), answered(body=b"hello"))

# -- RFC 9112 3.2 and RFC 9110 7.2: Host ----------------------------------------

case("host-missing", "9112 3.2", "MUST", "an HTTP/1.1 request without Host is 400",
     b"GET / HTTP/1.1\r\n\r\n", refused(400, close=False))
case("host-twice", "9112 3.2", "MUST", "a request with two Host lines is 400",
     b"GET / HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\n\r\n", refused(400, close=False))
case("host-space", "9112 3.2", "MUST", "a Host with a space is 400",
     b"GET / HTTP/1.1\r\nHost: local host\r\n\r\n", refused(400, close=False))
case("host-userinfo", "9112 3.2", "MUST", "a Host with userinfo is 400",
     b"GET / HTTP/1.1\r\nHost: user@localhost\r\n\r\n", refused(400, close=False))
case("host-path", "9112 3.2", "MUST", "a Host with a path is 400",
     b"GET / HTTP/1.1\r\nHost: localhost/x\r\n\r\n", refused(400, close=False))
case("host-bad-port", "9112 3.2", "MUST", "a Host with a port that is not digits is 400",
     b"GET / HTTP/1.1\r\nHost: localhost:abc\r\n\r\n", refused(400, close=False))
case("host-list", "9112 3.2", "MUST", "a Host holding a list is 400",
     b"GET / HTTP/1.1\r\nHost: localhost, other\r\n\r\n", refused(400, close=False))
case("host-empty", "9110 7.2", "MUST", "an empty Host is valid",
     b"GET / HTTP/1.1\r\nHost:\r\n\r\n", answered(body=b"hello"))
case("host-ipv6", "9110 7.2", "MUST", "an IPv6 literal with a port is a valid Host",
     b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", answered(body=b"hello"))
case("host-http10-absent", "9112 3.2", "MUST", "an HTTP/1.0 request needs no Host",
     b"GET / HTTP/1.0\r\n\r\n", closes(body=b"hello"))
case("host-absolute-form-without", "9112 3.2", "MUST", "an HTTP/1.1 request in the absolute form without Host is 400",
     b"GET http://localhost/ HTTP/1.1\r\n\r\n", refused(400, close=False))
case("host-name-case", "9110 5.1", "MUST", "field names are case-insensitive: HOST is Host",
     b"GET / HTTP/1.1\r\nHOST: localhost\r\n\r\n", answered(body=b"hello"))

# -- RFC 9112 5 and RFC 9110 5.5: field lines -----------------------------------

case("field-space-before-colon", "9112 5.1", "MUST", "whitespace between a field name and its colon is 400",
     get(headers=b"X-Test : value\r\n"), refused(400))
case("field-tab-before-colon", "9112 5.1", "MUST", "a tab between a field name and its colon is 400",
     get(headers=b"X-Test\t: value\r\n"), refused(400))
case("field-te-space-before-colon", "9112 5.1", "MUST", "Transfer-Encoding with a space before its colon is 400",
     post(b"0\r\n\r\n", b"Transfer-Encoding : chunked\r\n"), refused(400))
case("field-empty-name", "9112 5", "SHOULD", "a field line with no name is refused",
     get(headers=b": value\r\n"), refused(400))
case("field-name-space", "9112 5", "SHOULD", "a field name with a space is refused",
     get(headers=b"X Test: value\r\n"), refused(400))
case("field-name-not-token", "9112 5", "SHOULD", "a field name that is not a token is refused",
     get(headers=b"X(Test): value\r\n"), refused(400))
case("field-name-non-ascii", "9112 5", "SHOULD", "a field name with a byte above 0x7F is refused",
     get(headers=b"X-T\xe9st: value\r\n"), refused(400))
case("field-no-colon", "9112 5", "SHOULD", "a field line without a colon is refused",
     get(headers=b"X-Test value\r\n"), refused(400))
case("field-nul-value", "9110 5.5", "MUST", "a NUL in a field value: refused, or replaced with SP",
     get(headers=b"X-Test: a\x00b\r\n"), either(refused(400, close=False), answered()))
case("field-bare-cr-value", "9112 2.2", "MUST", "a bare CR in a field value: refused, or replaced with SP",
     get(headers=b"X-Test: a\rb\r\n"), either(refused(400, close=False), answered()))
case("field-obs-fold-space", "9112 5.2", "MUST", "obs-fold (a line starting with SP): 400, or replaced with SP",
     get(headers=b"X-Test: a\r\n b\r\n"), either(refused(400, close=False), answered()))
case("field-obs-fold-tab", "9112 5.2", "MUST", "obs-fold (a line starting with HTAB): 400, or replaced with SP",
     get(headers=b"X-Test: a\r\n\tb\r\n"), either(refused(400, close=False), answered()))
case("field-whitespace-after-start-line", "9112 2.2", "MUST", "whitespace before the first field line: refused, or the line ignored",
     b"GET / HTTP/1.1\r\n X-Test: a\r\n" + HOST + b"\r\n", either(refused(400, close=False), answered()))
case("field-obs-text-value", "9110 5.5", "MUST", "a field value with obs-text (bytes above 0x7F) is valid",
     get(headers=b"X-Test: caf\xe9\r\n"), answered(body=b"hello"))
case("field-empty-value", "9110 5.5", "MUST", "an empty field value is valid",
     get(headers=b"X-Test:\r\n"), answered(body=b"hello"))
case("field-ows", "9110 5.5", "MUST", "whitespace around a field value is not part of it",
     post(b"abcde", b"Content-Length: \t 5 \t\r\n"), answered(body=b"abcde"))
case("field-name-case-content-length", "9110 5.1", "MUST", "field names are case-insensitive: content-LENGTH",
     post(b"abcde", b"content-LENGTH: 5\r\n"), answered(body=b"abcde"))
case("field-del-value", "9110 5.5", "MAY", "a DEL in a field value: refused or kept",
     get(headers=b"X-Test: a\x7fb\r\n"), either(refused(400, close=False), answered()))
case("field-lf-only", "9112 2.2", "MAY", "a field line ended by LF alone: recognised or refused",
     b"GET / HTTP/1.1\r\nHost: localhost\nX-Test: a\r\n\r\n", either(refused(400, close=False), answered()))
case("field-too-large", "6585 5", "SHOULD", "a field line larger than the server takes is 431",
     get(headers=b"X-Large: " + b"a" * 100_000 + b"\r\n"), refused(431, close=False))
case("field-too-many", "6585 5", "SHOULD", "more field lines than the server takes is 431",
     get(headers=b"".join(b"X-Field-%d: a\r\n" % i for i in range(1000))), refused(431, close=False))

# -- RFC 9112 6.2 and 6.3: Content-Length ---------------------------------------

case("length-echo", "9112 6.2", "MUST", "a body of Content-Length octets is read",
     post(b"hello world"), answered(body=b"hello world"))
for id, value in [("letters", b"abc"), ("negative", b"-1"), ("plus", b"+5"), ("decimal", b"5.0"),
                  ("hex", b"0x5"), ("inner-space", b"1 0"), ("empty", b""),
                  ("overflow", b"99999999999999999999999999"), ("different-list", b"5, 6")]:
    case(f"length-invalid-{id}", "9112 6.3", "MUST",
         f"an invalid Content-Length ({value.decode()!r}) is 400 and the connection closed",
         post(b"hello", b"Content-Length: " + value + b"\r\n"), refused(400))
case("length-two-different", "9112 6.3", "MUST", "two Content-Length lines that differ are 400 and the connection closed",
     post(b"hello", b"Content-Length: 5\r\nContent-Length: 6\r\n"), refused(400))
case("length-two-same", "9110 8.6", "MAY", "two Content-Length lines with one value: refused, or read as one",
     post(b"hello", b"Content-Length: 5\r\nContent-Length: 5\r\n"), either(refused(400), answered(body=b"hello")))
case("length-list-same", "9110 8.6", "MAY", "a Content-Length list of one value repeated: refused, or read as one",
     post(b"hello", b"Content-Length: 5, 5\r\n"), either(refused(400), answered(body=b"hello")))
case("length-leading-zeros", "9112 6.2", "MUST", "Content-Length is 1*DIGIT: leading zeros are valid",
     post(b"hello", b"Content-Length: 0005\r\n"), answered(body=b"hello"))
case("length-short-body", "9112 6.3", "MUST", "a body cut short by the client's close is incomplete: no answer of success, the connection closed",
     post(b"hel", b"Content-Length: 10\r\n"), incomplete(), half_close=True)
case("length-extra-bytes", "9112 6.3", "MUST", "bytes past Content-Length start the next request",
     post(b"hello") + SYNC, lambda e: (None if e.first and e.first.body == b"hello" else f"answered {describe(e)}")
     or in_step(e, 1), methods=("POST", "GET"))
case("length-get-body", "9112 6", "MUST", "a GET with a body: the body is read, not taken for a request",
     b"GET / HTTP/1.1\r\n" + HOST + b"Content-Length: 5\r\n\r\nhello", answered(body=b"hello"))
case("length-none", "9112 6.3", "MUST", "a request without Content-Length or Transfer-Encoding has no body",
     b"POST / HTTP/1.1\r\n" + HOST + b"\r\n", answered(body=b"hello"))
case("length-smuggled-in-body", "9112 6.3", "MUST", "a request inside a body of Content-Length octets is not answered",
     post(b"GET /status/404 HTTP/1.1\r\nHost: localhost\r\n\r\n", target=b"/status/200"),
     answered(body=b"hello"), methods=("POST",))
case("length-too-large", "9110 15.5.14", "SHOULD", "a declared body larger than the server takes is 413",
     post(b"", b"Content-Length: 1073741824\r\n"), refused(413, close=False))
case("length-http10", "9112 6.2", "MUST", "an HTTP/1.0 request's body of Content-Length octets is read",
     post(b"hello", version=b"HTTP/1.0"), closes(body=b"hello"))

# -- RFC 9112 6.1 and 7: Transfer-Encoding and chunks ----------------------------

case("chunked-echo", "9112 7.1", "MUST", "a chunked body is decoded",
     chunked(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"), answered(body=b"hello world"))
case("chunked-hex-case", "9112 7.1", "MUST", "chunk sizes in hex of either case",
     chunked(b"a\r\n0123456789\r\nA\r\n0123456789\r\n0\r\n\r\n"), answered(body=b"0123456789" * 2))
case("chunked-extension", "9112 7.1.1", "MUST", "an unrecognised chunk extension is ignored",
     chunked(b"5;name=value\r\nhello\r\n0\r\n\r\n"), answered(body=b"hello"))
case("chunked-extension-quoted", "9112 7.1.1", "MUST", "a chunk extension with a quoted value is ignored",
     chunked(b'5;name="a value; with"\r\nhello\r\n0\r\n\r\n'), answered(body=b"hello"))
case("chunked-extension-no-value", "9112 7.1.1", "MUST", "a chunk extension without a value is ignored",
     chunked(b"5;name\r\nhello\r\n0\r\n\r\n"), answered(body=b"hello"))
case("chunked-extension-bws", "9112 7.1.1", "MUST", "whitespace before a chunk extension's semicolon (BWS) is valid",
     chunked(b"5 ;name=value\r\nhello\r\n0\r\n\r\n"), answered(body=b"hello"))
case("chunked-last-extension", "9112 7.1.1", "MUST", "the last chunk may carry an extension",
     chunked(b"5\r\nhello\r\n0;name=value\r\n\r\n"), answered(body=b"hello"))
case("chunked-trailers", "9112 7.1.2", "MUST", "a trailer section after the last chunk is read",
     chunked(b"5\r\nhello\r\n0\r\nX-Trailer: value\r\n\r\n"), answered(body=b"hello"))
case("chunked-leading-zeros", "9112 7.1", "MUST", "a chunk size with leading zeros is valid",
     chunked(b"005\r\nhello\r\n0\r\n\r\n"), answered(body=b"hello"))
case("chunked-name-case", "9112 7", "MUST", "transfer coding names are case-insensitive: Chunked",
     post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: Chunked\r\n"), answered(body=b"hello"))
case("chunked-http10", "9112 6.1", "MUST", "HTTP/1.0 with Transfer-Encoding: the framing is faulty, the connection closed after",
     post(b"5\r\nhello\r\n0\r\n\r\n" + SYNC, b"Transfer-Encoding: chunked\r\n", version=b"HTTP/1.0"),
     lambda e: None if e.first and e.closed and len(e.responses) == 1 else f"answered {describe(e)}")
CASES[-1]["until_closed"] = True
for id, size in [("letter", b"5g"), ("negative", b"-5"), ("hex-prefix", b"0x5"), ("empty", b""),
                 ("leading-space", b" 5"), ("overflow", b"1" + b"0" * 20)]:
    case(f"chunked-size-{id}", "9112 7.1", "MUST",
         f"an invalid chunk size ({size.decode()!r}) is 400 and the connection closed",
         chunked(size + b"\r\nhello\r\n0\r\n\r\n"), refused(400, 413))
case("chunked-data-too-long", "9112 7.1", "MUST", "chunk data longer than its size is 400 and the connection closed",
     chunked(b"3\r\nhello\r\n0\r\n\r\n"), refused(400))
case("chunked-no-crlf-after-data", "9112 7.1", "MUST", "chunk data not followed by CRLF is 400 and the connection closed",
     chunked(b"5\r\nhelloX0\r\n\r\n"), refused(400))
case("chunked-lf-only", "9112 2.2", "MAY", "chunk lines ended by LF alone: recognised or refused",
     chunked(b"5\nhello\n0\n\n"), either(refused(400), answered(body=b"hello")))
case("chunked-incomplete", "9112 7.1", "MUST", "a chunked body cut short by the client's close: no answer of success, the connection closed",
     chunked(b"5\r\nhel"), incomplete(), half_close=True)
case("chunked-no-last-chunk", "9112 7.1", "MUST", "a chunked body without its last chunk, closed: incomplete",
     chunked(b"5\r\nhello\r\n"), incomplete(), half_close=True)
case("coding-chunked-not-final", "9112 6.3", "MUST", "chunked not the final coding: 400 and the connection closed",
     post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: chunked, gzip\r\n"), refused(400))
case("coding-without-chunked", "9112 6.3", "MUST", "a transfer coding without chunked: 400 and the connection closed",
     post(b"hello", b"Transfer-Encoding: gzip\r\n"), refused(400, 501))
case("coding-unknown", "9112 6.1", "SHOULD", "an unknown transfer coding before chunked is 501",
     post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: foo, chunked\r\n"), refused(501, 400))
case("coding-identity", "9112 7", "SHOULD", "identity is no longer a transfer coding: refused",
     post(b"hello", b"Transfer-Encoding: identity\r\nContent-Length: 5\r\n"), refused(501, 400))
case("coding-xchunked", "9112 6.3", "MUST", "a coding named like chunked (xchunked) is not chunked",
     post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: xchunked\r\n"), refused(400, 501))
case("coding-chunked-twice", "9112 6.1", "MUST", "chunked applied twice: refused",
     post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: chunked, chunked\r\n"), refused(400, 501))
case("coding-two-lines", "9112 6.1", "SHOULD", "two Transfer-Encoding lines, gzip then chunked: an unknown coding, 501",
     post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"),
     refused(501, 400))
case("coding-vertical-tab", "9112 6.1", "MUST", "Transfer-Encoding with a vertical tab is not chunked",
     post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: \x0bchunked\r\n"), refused(400, 501))
case("coding-and-length", "9112 6.1", "MUST", "Transfer-Encoding with Content-Length: refused, or read as chunked; the connection closed after either",
     post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n") + SYNC,
     lambda e: None if e.first and (e.first.status == 400 or e.first.body == b"hello") and e.closed
     and len(e.responses) == 1 else f"answered {describe(e)}", methods=("POST",))
CASES[-1]["until_closed"] = True
case("coding-and-length-smuggling", "9112 6.1", "MUST", "Transfer-Encoding overrides Content-Length: the rest of a chunked body is not a request",
     post(b"0\r\n\r\nGET /status/404 HTTP/1.1\r\nHost: localhost\r\n\r\n",
          b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", target=b"/status/200"),
     lambda e: None if e.first and e.first.status in (200, 400) and 404 not in e.statuses()
     else f"answered {describe(e)}", methods=("POST", "GET"))
CASES[-1]["until_closed"] = True
case("chunked-too-large", "9110 15.5.14", "SHOULD", "a chunked body larger than the server takes is 413",
     chunked(b"1000000\r\n" + b"a" * (3 << 20)), refused(413, close=False))

# -- RFC 9110 10.1.1: Expect ----------------------------------------------------

case("expect-continue", "9110 10.1.1", "MUST", "Expect: 100-continue is answered with 100 or a final status, and the body is then read",
     [b"POST / HTTP/1.1\r\n" + HOST + b"Expect: 100-continue\r\nContent-Length: 5\r\n\r\n", WAIT_100, b"hello"],
     answered(body=b"hello"), methods=("POST",))
case("expect-continue-case", "9110 10.1.1", "MUST", "the expectation is case-insensitive: 100-Continue",
     [b"POST / HTTP/1.1\r\n" + HOST + b"Expect: 100-Continue\r\nContent-Length: 5\r\n\r\n", WAIT_100, b"hello"],
     answered(body=b"hello"), methods=("POST",))
case("expect-continue-interim", "9110 8.6", "MUST", "a 100 (Continue) carries neither Content-Length nor Transfer-Encoding",
     [b"POST / HTTP/1.1\r\n" + HOST + b"Expect: 100-continue\r\nContent-Length: 5\r\n\r\n", WAIT_100, b"hello"],
     lambda e: "no 100 (Continue) was sent" if not e.interim else
     ("the 100 carries framing fields" if any(r.header("content-length") or r.header("transfer-encoding")
                                              for r in e.interim) else in_step(e, 1)),
     methods=("POST", "GET"))
CASES[-1]["parts"].append(SYNC)
case("expect-continue-http10", "9110 10.1.1", "MUST", "Expect: 100-continue in HTTP/1.0 is ignored: no 100",
     b"POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello",
     lambda e: "sent 100 to HTTP/1.0" if e.interim else closes(body=b"hello")(e), methods=("POST",))
CASES[-1]["until_closed"] = True
case("expect-unknown", "9110 10.1.1", "MAY", "an unknown expectation: 417, or ignored",
     b"GET / HTTP/1.1\r\n" + HOST + b"Expect: something\r\n\r\n", either(refused(417, close=False), answered()))
case("expect-continue-no-body", "9110 10.1.1", "MUST", "Expect: 100-continue without a body is answered",
     b"GET / HTTP/1.1\r\n" + HOST + b"Expect: 100-continue\r\n\r\n", answered(body=b"hello"))

# -- RFC 9112 9: connections ------------------------------------------------------

case("persist-default", "9112 9.3", "MUST", "an HTTP/1.1 connection persists after a response",
     get() + get(), lambda e: None if e.statuses()[:2] == [200, 200] and not e.closed else f"answered {describe(e)}",
     methods=("GET", "GET"))
case("persist-close", "9112 9.6", "MUST", "Connection: close: the server closes after the response",
     get(headers=b"Connection: close\r\n"), closes(body=b"hello"))
case("persist-close-pipelined", "9112 9.6", "MUST", "after Connection: close, a pipelined request is not processed",
     get(headers=b"Connection: close\r\n") + SYNC, closes(body=b"hello"))
case("persist-close-case", "9110 7.6.1", "MUST", "connection options are case-insensitive: CLOSE",
     get(headers=b"Connection: CLOSE\r\n"), closes(body=b"hello"))
case("persist-close-among-options", "9110 7.6.1", "MUST", "close among other connection options",
     get(headers=b"Connection: keep-alive, close\r\n"), closes(body=b"hello"))
case("persist-close-header", "9112 9.6", "SHOULD", "the response to Connection: close says close",
     get(headers=b"Connection: close\r\n"),
     with_check(closes(body=b"hello"), lambda e: None if (e.first.header("connection") or b"").lower() == b"close"
                else "no Connection: close in the response"))
case("persist-http10", "9112 9.3", "MUST", "an HTTP/1.0 connection without keep-alive is closed after the response",
     b"GET / HTTP/1.0\r\n\r\n" + SYNC, closes(body=b"hello"))
case("persist-http10-keep-alive", "9112 9.3", "MAY", "HTTP/1.0 with keep-alive: kept, or closed after the response",
     b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + SYNC,
     lambda e: None if e.first and e.first.body == b"hello" and (e.closed or in_step(e, 1) is None)
     else f"answered {describe(e)}", methods=("GET", "GET"))
case("pipeline-order", "9112 9.3.2", "MUST", "pipelined requests are answered in the order received",
     post(b"one") + post(b"two") + post(b"three"),
     lambda e: None if [r.body for r in e.responses] == [b"one", b"two", b"three"] else f"answered {describe(e)}",
     methods=("POST", "POST", "POST"))
case("pipeline-head", "9112 9.3.2", "MUST", "a pipelined HEAD's answer has no body: the next is in step",
     b"HEAD / HTTP/1.1\r\n" + HOST + b"\r\n" + get(),
     lambda e: None if e.statuses()[:2] == [200, 200] and e.responses[1].body == b"hello" else f"answered {describe(e)}",
     methods=("HEAD", "GET"))
case("pipeline-bytewise", "9112 2.2", "MUST", "a request that arrives a byte at a time is parsed",
     [bytes([b]) for b in post(b"hello")], answered(body=b"hello"), methods=("POST",))
case("persist-connection-option-field", "9110 7.6.1", "MUST", "a field named in Connection is handled, the request answered",
     get(headers=b"Connection: x-hop\r\nX-Hop: value\r\n"), answered(body=b"hello"))
case("persist-te-trailers", "9110 10.1.4", "MUST", "TE: trailers (with Connection: TE) is accepted",
     get(headers=b"TE: trailers\r\nConnection: TE\r\n"), answered(body=b"hello"))

# -- RFC 9110: methods, status codes and their framing ----------------------------

case("head-no-body", "9110 9.3.2", "MUST", "the answer to HEAD has no content",
     b"HEAD / HTTP/1.1\r\n" + HOST + b"\r\n", answered(), methods=("HEAD",))
case("head-length", "9110 9.3.2", "SHOULD", "HEAD announces the length GET would send",
     b"HEAD / HTTP/1.1\r\n" + HOST + b"\r\n",
     with_check(answered(), lambda e: None if e.first.header("content-length") in (None, b"5")
                else f"Content-Length {e.first.header('content-length')!r}, GET sends 5"), methods=("HEAD",))
case("head-stream", "9110 9.3.2", "MUST", "HEAD of a body of unknown length has no content",
     b"HEAD /stream HTTP/1.1\r\n" + HOST + b"\r\n", answered(), methods=("HEAD",))
case("head-supported", "9110 9.1", "MUST", "a server supports HEAD wherever it supports GET",
     b"HEAD /get-only HTTP/1.1\r\n" + HOST + b"\r\n", answered(), methods=("HEAD",))
case("method-405-allow", "9110 15.5.6", "MUST", "a 405 carries Allow",
     post(b"", target=b"/get-only"),
     with_check(answered(405), lambda e: None if e.first.header("allow") else "no Allow in the 405"),
     methods=("POST",))
case("status-204", "9110 15.3.5", "MUST", "a 204 has no content and no Content-Length",
     get(target=b"/status/204"),
     with_check(answered(204), lambda e: "a Content-Length in a 204" if e.first.header("content-length")
                else ("a Transfer-Encoding in a 204" if e.first.header("transfer-encoding") else None)))
case("status-304", "9110 15.4.5", "MUST", "a 304 has no content",
     get(target=b"/status/304"), answered(304))
case("date-200", "9110 6.6.1", "MUST", "an origin server with a clock sends Date in a 2xx",
     get(), with_check(answered(), lambda e: None if e.first.header("date") else "no Date"))
case("date-404", "9110 6.6.1", "MUST", "an origin server with a clock sends Date in a 4xx",
     get(target=b"/no/such/route"), with_check(answered(404), lambda e: None if e.first.header("date") else "no Date"))
case("date-400", "9110 6.6.1", "MUST", "an origin server with a clock sends Date in a 400 of its own",
     b"GET / HTTP/1.1\r\n\r\n", with_check(refused(400, close=False),
                                           lambda e: None if e.first.header("date") else "no Date"))
case("date-format", "9110 5.6.7", "MUST", "Date is sent as an IMF-fixdate",
     get(), with_check(answered(), lambda e: None if IMF_FIXDATE.match(e.first.header("date") or b"")
                       else f"Date {e.first.header('date')!r}"))
case("http10-no-chunked", "9112 6.1", "MUST", "no Transfer-Encoding in the answer to an HTTP/1.0 request",
     b"GET /stream HTTP/1.0\r\n\r\n",
     with_check(closes(body=b"hello"), lambda e: "chunked to HTTP/1.0" if e.first.header("transfer-encoding") else None))
case("response-version", "9110 6.2", "SHOULD", "an HTTP/1.1 request is answered as HTTP/1.1",
     get(), with_check(answered(), lambda e: None if e.first.version == b"HTTP/1.1" else f"{e.first.version!r}"))
case("upgrade-not-offered", "9110 7.8", "MUST", "no switch to a protocol on a route that does not speak it",
     get(headers=b"Upgrade: websocket\r\nConnection: upgrade\r\n"),
     lambda e: None if e.first and e.first.status != 101 else f"answered {describe(e)}")
case("upgrade-101-fields", "9110 7.8", "MUST", "a 101 names the protocol switched to in Upgrade",
     b"GET /ws HTTP/1.1\r\n" + HOST + b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
     b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
     lambda e: None if e.first and e.first.status == 101 and (e.first.header("upgrade") or b"").lower() == b"websocket"
     else f"answered {describe(e)}")
case("upgrade-http10", "9110 7.8", "MUST", "an Upgrade in an HTTP/1.0 request is ignored",
     b"GET /ws HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
     b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
     lambda e: None if e.first and e.first.status != 101 else f"answered {describe(e)}")
CASES[-1]["until_closed"] = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("address", help="HOST:PORT of the server under test")
    parser.add_argument("--known", help="a file of the case ids expected to fail")
    parser.add_argument("--only", help="run the cases whose id contains this")
    parser.add_argument("-v", "--verbose", action="store_true", help="print passes too")
    args = parser.parse_args()
    host, _, port = args.address.rpartition(":")
    address = (host or "127.0.0.1", int(port))
    known = set()
    if args.known:
        with open(args.known) as file:
            known = {line.split("#")[0].strip() for line in file} - {""}
    ids = [entry["id"] for entry in CASES]
    assert len(ids) == len(set(ids)), "case ids are unique"
    unknown = known - set(ids)
    started = time.monotonic()
    passed, failed, surprises = 0, [], []
    for entry in CASES:
        if args.only and args.only not in entry["id"]:
            continue
        exchange = run(address, entry["parts"], entry["methods"], entry["wanted"],
                       entry["until_closed"], entry["half_close"])
        problem = entry["check"](exchange)
        if exchange.error and problem is None:
            problem = exchange.error
        label = f"{entry['id']} (RFC {entry['section']}, {entry['level']})"
        if problem is None:
            passed += 1
            if entry["id"] in known:
                surprises.append(f"{entry['id']}: passes, but is listed as failing")
            if args.verbose:
                print(f"pass  {label}: {entry['title']}")
        else:
            failed.append(entry["id"])
            mark = "known" if entry["id"] in known else "FAIL "
            print(f"{mark} {label}: {entry['title']} — {problem}")
            if entry["id"] not in known:
                surprises.append(f"{entry['id']}: fails, and is not listed")
    elapsed = time.monotonic() - started
    print(f"{passed} passed, {len(failed)} failed, of {passed + len(failed)} cases in {elapsed:.1f} s")
    for line in surprises + [f"{id}: listed, but no such case" for id in sorted(unknown)]:
        print(f"  {line}")
    if args.known and (surprises or unknown):
        sys.exit(1)


if __name__ == "__main__":
    main()

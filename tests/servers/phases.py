#!/usr/bin/env python3
"""An HTTP/1.1 server that delays one phase of chosen requests, for railbench's request phases tests.

Python standard library only; binds 127.0.0.1:--port. Every GET is answered 200 with --size bytes.
By object name (the path's last part):

  *slowfb*     the answer's first byte waits --delay-ms after the request came
  *slowbody*   the head and the body's first half go at once, the rest --delay-ms later

By mode, for every connection (each answer then ends its connection, so each request connects anew):

  --accept-delay-ms MS   connections are taken slowly: the listen queue (backlog 0) is kept full by a
                         connection of the server's own, so a client's SYN is dropped and its connect
                         completes on the SYN's retransmission (Linux: about 1 s later); MS between takes
  --tls-cert/--tls-key   HTTPS; with --tls-delay-ms MS the server waits MS on each ClientHello before it
                         answers (the ServerHello), inside the handshake

GET /peer/stats answers JSON: {"requests": N, "connections": N}.
"""
import argparse
import json
import socket
import ssl
import threading
import time

STATS = {"requests": 0, "connections": 0}
LOCK = threading.Lock()


def read_head(f):
    line = f.readline()
    if not line:
        return None, None
    headers = {}
    while True:
        h = f.readline()
        if not h or h in (b"\r\n", b"\n"):
            break
        k, _, v = h.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    return line.decode("latin-1").split(), headers


def serve(conn, args, close_each):
    f = conn.makefile("rb")
    try:
        while True:
            parts, headers = read_head(f)
            if not parts or len(parts) < 2:
                return
            n = int(headers.get("content-length", "0") or 0)
            if n:
                f.read(n)
            path = parts[1]
            with LOCK:
                STATS["requests"] += 1
            if path == "/peer/stats":
                body = json.dumps(STATS).encode()
            else:
                body = b"x" * args.size
            name = path.rsplit("/", 1)[-1]
            if "slowfb" in name:
                time.sleep(args.delay_ms / 1000)
            head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n" % (
                len(body), b"Connection: close\r\n" if close_each else b"")
            if "slowbody" in name:
                half = len(body) // 2
                conn.sendall(head + body[:half])
                time.sleep(args.delay_ms / 1000)
                conn.sendall(body[half:])
            else:
                conn.sendall(head + body)
            if close_each:
                return
    except (OSError, ssl.SSLError):
        return
    finally:
        try:
            conn.close()
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--accept-delay-ms", type=float, default=0)
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--tls-delay-ms", type=float, default=0)
    args = ap.parse_args()

    ctx = None
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        if args.tls_delay_ms:
            ctx.sni_callback = lambda sock, name, c: time.sleep(args.tls_delay_ms / 1000)

    slow_accept = args.accept_delay_ms > 0
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", args.port))
    ls.listen(0 if slow_accept else 128)
    close_each = slow_accept or ctx is not None
    filler = None

    def fill():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.connect(("127.0.0.1", args.port))  # sits in the listen queue: it is full now
        return s

    if slow_accept:
        filler = fill()
    while True:
        if slow_accept:
            time.sleep(args.accept_delay_ms / 1000)
            own, _ = ls.accept()  # the filler: the queue has room again
            own.close()
            filler.close()
        conn, _ = ls.accept()
        if slow_accept:
            filler = fill()
        with LOCK:
            STATS["connections"] += 1
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if ctx is not None:
            def tls_serve(c=conn):
                try:
                    c.settimeout(30)
                    t = ctx.wrap_socket(c, server_side=True)
                    t.settimeout(None)
                except (OSError, ssl.SSLError):
                    c.close()
                    return
                serve(t, args, close_each)
            threading.Thread(target=tls_serve, daemon=True).start()
        else:
            threading.Thread(target=serve, args=(conn, args, close_each), daemon=True).start()


if __name__ == "__main__":
    main()

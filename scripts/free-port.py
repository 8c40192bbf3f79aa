#!/usr/bin/env python3
"""free-port.py [N]: prints N (default 1) distinct TCP ports on 127.0.0.1 that nothing listens on now, one per
line, chosen below the kernel's ephemeral range.

A port the kernel hands out (bind to port 0) is from the ephemeral range, where the next process that
binds port 0 or connects out (mpirun's out-of-band listener, a client socket) may take it before the
caller's server does. Ports below that range are handed out by nobody; a random pick among ~12,000 of
them, checked free, keeps two tests at a time from colliding. The N ports of one call are held bound until
all are chosen, so they differ from each other (N separate calls could repeat one).
"""
import random
import socket
import sys


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def main():
    try:
        want = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    except ValueError:
        want = 0
    if not 1 <= want <= 1000 or len(sys.argv) > 2:
        print("free-port.py: error: usage: free-port.py [N], N from 1 to 1000", file=sys.stderr)
        return 2
    hi = ephemeral_low()
    lo = max(1024, hi - 12000)
    if hi - lo < 100:
        lo, hi = 20000, 32768
    held = []
    try:
        for _ in range(200 + 2 * want):
            if len(held) == want:
                break
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", random.randrange(lo, hi)))
            except OSError:
                s.close()
                continue
            held.append(s)
        if len(held) < want:
            print("free-port.py: error: %d free ports in %d-%d not found after %d tries"
                  % (want, lo, hi - 1, 200 + 2 * want), file=sys.stderr)
            return 3
        for s in held:
            print(s.getsockname()[1])
        return 0
    finally:
        for s in held:
            s.close()


if __name__ == "__main__":
    sys.exit(main())

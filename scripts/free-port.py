#!/usr/bin/env python3
"""Prints a TCP port on 127.0.0.1 that nothing listens on now, chosen below the kernel's ephemeral range.

A port the kernel hands out (bind to port 0) is from the ephemeral range, where the next process that
binds port 0 or connects out (mpirun's out-of-band listener, a client socket) may take it before the
caller's server does. Ports below that range are handed out by nobody; a random pick among ~12,000 of
them, checked free, keeps two tests at a time from colliding.
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
    hi = ephemeral_low()
    lo = max(1024, hi - 12000)
    if hi - lo < 100:
        lo, hi = 20000, 32768
    for _ in range(200):
        port = random.randrange(lo, hi)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        print(port)
        return 0
    print("free-port.py: error: no free port in %d-%d after 200 tries" % (lo, hi - 1), file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Reads KV-cache entries railbench load kvcache wrote (files or objects fetched to files) with numpy (an independent
reader) and checks them against docs/kvcache.md: NumPy format 1.0 with a 128-byte header, dtype '<f2', shape
(LAYERS, 2, tokens, KV_HEADS, HEAD_DIM) with 128 + tokens x bytes per token = the file's size, and the bytes after the
header the seeded payload of the entry's name (recomputed here from docs/load.md's definition). Run by Debian's
/usr/bin/python3 (numpy).

usage: check_kvnpy.py SEED LAYERS KV_HEADS HEAD_DIM FILE NAME [FILE NAME]...
(NAME: the entry's name beneath the target, whose payload key the bytes are); prints one line per file."""
import os
import sys

import numpy as np

from rbpayload import key_of, pattern, payload


def main():
    seed, layers, heads, dim = (int(v) for v in sys.argv[1:5])
    pairs = sys.argv[5:]
    assert pairs and len(pairs) % 2 == 0, 'FILE NAME pairs'
    pat = pattern()
    for f, name in zip(pairs[::2], pairs[1::2]):
        raw = open(f, 'rb').read()
        assert raw[:8] == b'\x93NUMPY\x01\x00', (f, raw[:8])
        a = np.load(f)
        assert a.dtype == np.dtype('<f2'), (f, a.dtype)
        assert a.ndim == 5 and (a.shape[0], a.shape[1], a.shape[3], a.shape[4]) == (layers, 2, heads, dim), (f, a.shape)
        tokens = a.shape[2]
        per_token = layers * 2 * heads * dim * 2
        assert len(raw) == 128 + tokens * per_token, (f, len(raw), tokens)
        want = payload(key_of(seed, name), len(raw) - 128, pat)
        assert np.array_equal(np.frombuffer(raw[128:], dtype=np.uint8), want), (f, 'differs from the payload of', name)
        assert a.tobytes() == raw[128:], (f, 'array bytes differ from the file after its header')
        print(f'ok {name} shape={a.shape} dtype={a.dtype.str} bytes={len(raw)} tokens={tokens}')


main()

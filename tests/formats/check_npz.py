#!/usr/bin/python3
"""Reads npz files railbench wrote with numpy and zipfile (independent readers) and checks them against the seeded
payload, recomputed here from docs/load.md's definition: members x.npy and y.npy stored (not compressed), CRC-32s
right (zipfile.testzip), x uint8 of shape (d1, d2, spo) whose bytes are the payload of the file's name from byte 0,
y spo int64 zeros. Run by Debian's /usr/bin/python3 (numpy).

usage: check_npz.py SEED SPO FILE... (each FILE's base name is its object name); prints one line per file."""
import os
import sys
import zipfile

import numpy as np

from rbpayload import key_of, pattern, payload


def main():
    seed, spo, files = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    pat = pattern()
    for f in files:
        z = zipfile.ZipFile(f)
        names = [i.filename for i in z.infolist()]
        assert names == ['x.npy', 'y.npy'], (f, names)
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist()), f
        assert z.testzip() is None, (f, 'CRC')
        d = np.load(f)
        x, y = d['x'], d['y']
        assert x.dtype == np.uint8 and x.ndim == 3 and x.shape[2] == spo, (f, x.dtype, x.shape)
        assert y.dtype == np.int64 and y.shape == (spo,) and not y.any(), (f, y)
        want = payload(key_of(seed, os.path.basename(f)), x.nbytes, pat)
        assert np.array_equal(np.frombuffer(x.tobytes(), dtype=np.uint8), want), (f, 'x differs from the payload')
        print(f'ok {os.path.basename(f)} x={x.shape[0]}x{x.shape[1]}x{x.shape[2]} bytes={x.nbytes} '
              f'file={os.path.getsize(f)}')


main()

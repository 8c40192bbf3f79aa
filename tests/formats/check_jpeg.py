#!/usr/bin/python3
"""Reads JPEGs railbench wrote with Pillow (an independent decoder) and checks them: each decodes, in full, as a
baseline RGB JPEG whose width and height are multiples of 16 (MCU rows), the file is exactly SIZE bytes, and its
comment (the COM segments) is the file's seeded payload from byte 0, recomputed here. Run by /usr/bin/python3.

usage: check_jpeg.py SEED SIZE FILE... (each FILE's base name is its object name; SIZE 0: any); a line per file."""
import os
import sys

from PIL import Image

from rbpayload import key_of, payload


def main():
    seed, size, files = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    for f in files:
        im = Image.open(f)
        im.load()
        assert im.format == 'JPEG' and im.mode == 'RGB', (f, im.format, im.mode)
        assert not im.info.get('progressive'), f
        w, h = im.size
        assert w % 16 == 0 and h % 16 == 0 and w > 0 and h > 0, (f, im.size)
        got = os.path.getsize(f)
        assert size == 0 or got == size, (f, got, size)
        com = im.info.get('comment', b'')
        want = payload(key_of(seed, os.path.basename(f)), len(com)).tobytes()
        assert com == want, (f, 'the comment is not the payload')
        print(f'ok {os.path.basename(f)} {w}x{h} bytes={got} comment={len(com)}')


main()

"""railbench's seeded payload recomputed from docs/load.md's definition, for the independent readers' checks."""
import numpy as np

M = (1 << 64) - 1
GOLDEN = 0x9e3779b97f4a7c15


def mix(z):
    z &= M
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)


def pattern():
    """The 4 KiB pattern as 512 little-endian words."""
    s, out = 0x5041545445524e, []
    for _ in range(512):
        s = (s + GOLDEN) & M
        out.append(mix(s))
    return np.array(out, dtype='<u8')


def key_of(seed, name):
    """rb_payload_key: FNV-1a of the name, mixed with the seed."""
    h = 0xcbf29ce484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001b3) & M
    return mix(h ^ mix(seed + GOLDEN))


def payload(key, n, pat=None):
    """The first n bytes of the plain payload of key."""
    pat = pattern() if pat is None else pat
    blocks = (n + 4095) // 4096
    words = np.tile(pat, blocks)
    masks = np.array([mix(key + b * GOLDEN) for b in range(blocks)], dtype='<u8')
    words ^= np.repeat(masks, 512)
    return words.view(np.uint8)[:n]

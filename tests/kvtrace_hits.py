#!/usr/bin/env python3
"""Independent prefix-cache hit count of a Mooncake trace (JSON lines), for checking railbench's.

Usage: kvtrace_hits.py TRACE.jsonl
Prints one JSON object: requests, blocks_total (every hash id of every request), blocks_seen (ids that
appeared in an earlier request, in file order) and hit_rate = blocks_seen / blocks_total (null without blocks).
Reads with Python's own json module; shares no code with loader/kvcache/kv_trace.c. Exits 1 with one
"error:" line when a line is not a request object.
"""
import json
import sys


def hits(path):
    seen = set()
    requests = total = hit = 0
    with open(path, encoding='utf-8-sig') as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                ids = json.loads(line)['hash_ids']
            except (ValueError, KeyError, TypeError) as e:
                raise SystemExit(f'error: {path}:{number}: not a Mooncake request ({e})')
            if not isinstance(ids, list):
                raise SystemExit(f'error: {path}:{number}: "hash_ids" is not an array')
            requests += 1
            total += len(ids)
            hit += sum(1 for i in ids if i in seen)
            seen.update(ids)  # after the look-ups: an id counts as seen only from an earlier request
    return {'requests': requests, 'blocks_total': total, 'blocks_seen': hit,
            'hit_rate': hit / total if total else None}


if __name__ == '__main__':
    if len(sys.argv) != 2:
        raise SystemExit('usage: kvtrace_hits.py TRACE.jsonl')
    print(json.dumps(hits(sys.argv[1])))

#!/usr/bin/env python3
"""Where the bytes of zescope serve's live feed go (docs/benchmarks.md, "The live feed").

    benches/scripts/wire_bytes.py ws://HOST:PORT/live SECONDS

Watches the feed in protocol 2 for SECONDS (decoding every column with the third-party client
of tests/commands/live_client.py, so a malformed frame stops it) and prints the bytes received
per sample value, split into the batches' headers, the text frames (hello, health, markers …),
the timestamps columns and the value columns, then per stream its batches, rows per batch and,
per series, the bytes a value of that series took. Needs the `websockets` package (PyPI).
"""
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "commands"))
from live_client import column, varint  # noqa: E402
from websockets.sync.client import connect  # noqa: E402


def main():
    url, secs = sys.argv[1], float(sys.argv[2])
    col_bytes, col_values = collections.Counter(), collections.Counter()
    ts_bytes, batches, rows_of = collections.Counter(), collections.Counter(), collections.Counter()
    headers = text = 0
    names = {}
    start = time.monotonic()
    with connect(url + "?protocol=2", max_size=None) as ws:
        while time.monotonic() - start < secs:
            m = ws.recv()
            if isinstance(m, str):
                text += len(m.encode())
                f = json.loads(m)
                if f["type"] == "hello":
                    for s in f.get("streams", []):
                        names[s["index"]] = [x["name"] for x in s.get("series", [])]
                continue
            pos = 4
            fields = []
            for _ in range(5):
                v, pos = varint(m, pos)
                fields.append(v)
            _, stream, _, rows, k = fields
            pos += 1
            headers += pos
            batches[stream] += 1
            rows_of[stream] += rows
            for block in range(0, rows, 256):
                n = min(256, rows - block)
                for c in range(-1, k):
                    p0 = pos
                    size, pos = varint(m, pos)
                    column(m[pos:pos + size], n)
                    pos += size
                    if c < 0:
                        ts_bytes[stream] += pos - p0
                    else:
                        col_bytes[(stream, c)] += pos - p0
                        col_values[(stream, c)] += n
    values = sum(col_values.values())
    total = headers + text + sum(ts_bytes.values()) + sum(col_bytes.values())
    print(f"{values} values, {total} bytes: {total / values:.2f} bytes/value")
    print(f"  batch headers {headers / values:.3f}, text frames {text / values:.3f}, "
          f"timestamps {sum(ts_bytes.values()) / values:.3f}, values {sum(col_bytes.values()) / values:.3f}")
    for s in sorted(batches):
        print(f"stream {s}: {batches[s]} batches, {rows_of[s] / batches[s]:.1f} rows a batch, "
              f"timestamps {ts_bytes[s] / rows_of[s]:.2f} bytes a row")
        for (_, c) in sorted(key for key in col_bytes if key[0] == s):
            name = names.get(s, [])[c] if c < len(names.get(s, [])) else f"series {c}"
            print(f"  {name}: {col_bytes[(s, c)] / col_values[(s, c)]:.2f} bytes/value")


if __name__ == "__main__":
    main()

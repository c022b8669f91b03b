#!/usr/bin/env python3
"""A third-party client of zescope's live feed (docs/live-protocol.md), written from the
document only, with the stock `websockets` package (PyPI).

    live_client.py URL OUT.json [--token T] [--resume-after SEQ] [--stop-after SEQ]

Connects to URL (ws://HOST:PORT/live), decodes every frame, checks what the protocol promises
(seq numbers without holes, each stream's ordinals contiguous) and writes what it received to
OUT.json: the hello, every stream's timestamps and values (values as their IEEE 754 bit
patterns, so NaN and -0.0 compare exactly), the events by type, gaps, and how the connection
closed. Prints "hello" once the hello arrived ("resumed" when it comes again after a reconnect) and
"closed CODE REASON" at the end.

--resume-after SEQ: once event SEQ arrived, disconnect and reconnect with
?from=<next>&feed=<id>, as a viewer whose link dropped. --stop-after SEQ: leave after SEQ.
A refused handshake is written as {"refused": status, "body": text}.
"""
import json
import struct
import sys

try:
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect
except ImportError as e:  # the test skips, loudly, on exit status 3
    print(f"no websockets package: {e}", file=sys.stderr)
    sys.exit(3)

HEADER = struct.Struct("<4sQIQII B7x")
assert HEADER.size == 40


class Viewer:
    def __init__(self):
        self.hello = None
        self.next_seq = None
        self.streams = {}
        self.events = {}
        self.gaps = []
        self.close = None
        self.refused = None
        self.connects = 0

    def seq(self, s):
        if self.next_seq is not None and s != self.next_seq:
            raise SystemExit(f"event {s} came where {self.next_seq} was due")
        self.next_seq = s + 1

    def batch(self, data):
        magic, seq, stream, first, rows, k, flags = HEADER.unpack_from(data)
        if magic != b"ZSL1":
            raise SystemExit(f"binary frame without ZSL1: {magic!r}")
        if len(data) != 40 + 8 * rows * (k + 1):
            raise SystemExit(f"batch {seq}: {len(data)} bytes for {rows} rows of {k} series")
        self.seq(seq)
        ts = struct.unpack_from(f"<{rows}q", data, 40)
        bits = struct.unpack_from(f"<{rows * k}Q", data, 40 + 8 * rows)
        s = self.streams.setdefault(stream, {"first": first, "next": first, "timestamps": [],
                                             "columns": [[] for _ in range(k)], "gaps_before": []})
        if first != s["next"]:
            raise SystemExit(f"stream {stream}: rows from {first} where {s['next']} was due")
        if flags & 1:
            s["gaps_before"].append(first)
        s["next"] = first + rows
        s["timestamps"].extend(ts)
        for c in range(k):
            s["columns"][c].extend(bits[c * rows:(c + 1) * rows])

    def text(self, msg):
        f = json.loads(msg)
        t = f["type"]
        if t == "hello":
            if f["protocol"] != 1:
                raise SystemExit(f"protocol {f['protocol']}, this client reads 1")
            if self.hello is None:
                print("hello", flush=True)
            else:
                print("resumed", flush=True)
            self.hello = f
        elif t == "gap":
            self.gaps.append([f["from"], f["to"]])
            self.next_seq = f["to"]
        else:
            self.seq(f["seq"])
            self.events.setdefault(t, []).append(f)

    def watch(self, url, token, leave_after):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if self.hello is not None:
            url = f"{url}?from={self.next_seq}&feed={self.hello['feed']}"
        self.connects += 1
        try:
            with connect(url, additional_headers=headers, max_size=None, open_timeout=10) as ws:
                while True:
                    m = ws.recv()
                    if isinstance(m, bytes):
                        self.batch(m)
                    else:
                        self.text(m)
                    if leave_after is not None and self.next_seq is not None and self.next_seq > leave_after:
                        return "left"
        except InvalidStatus as e:
            self.refused = {"refused": e.response.status_code, "body": e.response.body.decode(errors="replace")}
            return "refused"
        except ConnectionClosed as e:
            rcvd = e.rcvd
            self.close = {"code": rcvd.code if rcvd else None, "reason": rcvd.reason if rcvd else None}
            return "closed"


def main():
    args = sys.argv[1:]
    url, out = args[0], args[1]
    opts = dict(zip(args[2::2], args[3::2]))
    token = opts.get("--token")
    resume_after = int(opts["--resume-after"]) if "--resume-after" in opts else None
    stop_after = int(opts["--stop-after"]) if "--stop-after" in opts else None
    v = Viewer()
    how = v.watch(url, token, resume_after if resume_after is not None else stop_after)
    if how == "left" and resume_after is not None:
        how = v.watch(url, token, stop_after)
    if v.refused is not None:
        result = v.refused
    else:
        for s in v.streams.values():
            del s["next"]
        result = {"hello": v.hello, "streams": {str(k): s for k, s in v.streams.items()},
                  "events": v.events, "gaps": v.gaps, "close": v.close, "connects": v.connects,
                  "next_seq": v.next_seq}
    with open(out, "w") as f:
        json.dump(result, f)
    c = v.close or {}
    print("closed", c.get("code"), c.get("reason"), flush=True)


if __name__ == "__main__":
    main()

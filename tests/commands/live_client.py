#!/usr/bin/env python3
"""A third-party client of zescope's live feed (docs/live-protocol.md), written from the
document only, with the stock `websockets` package (PyPI).

    live_client.py URL OUT.json [--protocol 1|2] [--token T] [--resume-after SEQ] [--stop-after SEQ]

Connects to URL (ws://HOST:PORT/live), decodes every frame, checks what the protocol promises
(seq numbers without holes, each stream's ordinals contiguous) and writes what it received to
OUT.json: the hello, every stream's timestamps and values (values as their IEEE 754 bit
patterns, so NaN and -0.0 compare exactly), the events by type, gaps, and how the connection
closed. Prints "hello" once the hello arrived ("resumed" when it comes again after a reconnect) and
"closed CODE REASON" at the end.

--resume-after SEQ: once event SEQ arrived, disconnect and reconnect with
?from=<next>&feed=<id>, as a viewer whose link dropped. --stop-after SEQ: leave after SEQ.
A refused handshake is written as {"refused": status, "body": text}.
--protocol 2 (the default) asks for packed batches (?protocol=2), decoded by `column` below from
the document's description of the packed column encoding; --protocol 1 asks for nothing and
gets version 1's plain f64 batches. OUT.json also gives the bytes of binary frames received and
the values (rows times series) they carried.
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
M64 = (1 << 64) - 1


def varint(b, pos):
    """A LEB128 number at pos: (value, position after it)."""
    v, shift = 0, 0
    while True:
        byte = b[pos]
        pos += 1
        v |= (byte & 0x7F) << shift
        if byte < 0x80:
            return v, pos
        shift += 7


def unzigzag(v):
    return (v >> 1) ^ -(v & 1)


def unpack(b, width, n):
    """n words of `width` bits, packed LSB first."""
    if width == 0:
        return [0] * n
    big, mask = int.from_bytes(b, "little"), (1 << width) - 1
    return [(big >> (i * width)) & mask for i in range(n)]


def column(b, n):
    """The n words of one packed column (mode byte, then the form's fields), and whether they
    are integer words."""
    mode = b[0]
    form, is_int, pos = mode & ~4, bool(mode & 4), 1
    if form == 0:  # frame of reference
        width, pos = b[1], 2
        lo, pos = varint(b, pos)
        lo = unzigzag(lo)
        words = [(w + lo) & M64 for w in unpack(b[pos:], width, n)]
    elif form == 1:  # delta
        width, pos = b[1], 2
        w, pos = varint(b, pos)
        dlo, pos = varint(b, pos)
        w, dlo = unzigzag(w) & M64, unzigzag(dlo)
        words = [w] if n else []
        for d in unpack(b[pos:], width, max(n - 1, 0)):
            w = (w + d + dlo) & M64
            words.append(w)
    elif form == 2:  # XOR of consecutive words, zero bytes elided
        words, prev = [], 0
        for _ in range(n):
            c = b[pos]
            pos += 1
            if c != 0x80:
                lead, trail = c >> 4, c & 15
                size = 8 - lead - trail
                prev ^= int.from_bytes(b[pos:pos + size], "little") << (8 * trail)
                pos += size
            words.append(prev)
    elif form == 3:  # runs
        runs, pos = varint(b, pos)
        words, w = [], 0
        for _ in range(runs):
            length, pos = varint(b, pos)
            d, pos = varint(b, pos)
            w = (w + unzigzag(d)) & M64
            words.extend([w] * (length + 1))
        words = words[:n]
    elif form == 8:  # a line and the residuals from it
        width, pos = b[1], 2
        first, pos = varint(b, pos)
        slope, pos = varint(b, pos)
        low, pos = varint(b, pos)
        base, slope = (unzigzag(first) + unzigzag(low)) & M64, unzigzag(slope) & M64
        words = [(base + slope * i + r) & M64 for i, r in enumerate(unpack(b[pos:], width, n))]
    else:
        raise SystemExit(f"a packed column of unknown mode {mode:#04x}")
    if len(words) != n:
        raise SystemExit(f"a packed column of {len(words)} words where {n} were due")
    return words, is_int


def signed(w):
    return w - (1 << 64) if w >> 63 else w


def value_bits(w, is_int):
    """A value's IEEE 754 bits: integer words are the value as an i64."""
    if not is_int:
        return w
    return struct.unpack("<Q", struct.pack("<d", float(signed(w))))[0]


def packed_batch(data):
    """A ZSL2 frame: (seq, stream, first, rows, k, flags, timestamps, columns of value bits)."""
    pos = 4
    seq, pos = varint(data, pos)
    stream, pos = varint(data, pos)
    first, pos = varint(data, pos)
    rows, pos = varint(data, pos)
    k, pos = varint(data, pos)
    flags = data[pos]
    pos += 1
    ts, cols = [], [[] for _ in range(k)]
    for start in range(0, rows, 256):
        n = min(256, rows - start)
        for c in range(-1, k):
            size, pos = varint(data, pos)
            words, is_int = column(data[pos:pos + size], n)
            pos += size
            if c < 0:
                ts.extend(signed(w) for w in words)
            else:
                cols[c].extend(value_bits(w, is_int) for w in words)
    if pos != len(data):
        raise SystemExit(f"batch {seq}: {len(data) - pos} bytes after its last column")
    return seq, stream, first, rows, k, flags, ts, cols


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
        self.binary_bytes = 0
        self.values = 0

    def seq(self, s):
        if self.next_seq is not None and s != self.next_seq:
            raise SystemExit(f"event {s} came where {self.next_seq} was due")
        self.next_seq = s + 1

    def batch(self, data):
        if data[:4] == b"ZSL2" and self.protocol == 2:
            seq, stream, first, rows, k, flags, ts, cols = packed_batch(data)
        else:
            magic, seq, stream, first, rows, k, flags = HEADER.unpack_from(data)
            if magic != b"ZSL1" or self.protocol != 1:
                raise SystemExit(f"binary frame {magic!r} in protocol {self.protocol}")
            if len(data) != 40 + 8 * rows * (k + 1):
                raise SystemExit(f"batch {seq}: {len(data)} bytes for {rows} rows of {k} series")
            ts = struct.unpack_from(f"<{rows}q", data, 40)
            bits = struct.unpack_from(f"<{rows * k}Q", data, 40 + 8 * rows)
            cols = [bits[c * rows:(c + 1) * rows] for c in range(k)]
        self.seq(seq)
        self.binary_bytes += len(data)
        self.values += rows * k
        s = self.streams.setdefault(stream, {"first": first, "next": first, "timestamps": [],
                                             "columns": [[] for _ in range(k)], "gaps_before": []})
        if first != s["next"]:
            raise SystemExit(f"stream {stream}: rows from {first} where {s['next']} was due")
        if flags & 1:
            s["gaps_before"].append(first)
        s["next"] = first + rows
        s["timestamps"].extend(ts)
        for c in range(k):
            s["columns"][c].extend(cols[c])

    def text(self, msg):
        f = json.loads(msg)
        t = f["type"]
        if t == "hello":
            if f["protocol"] != self.protocol:
                raise SystemExit(f"protocol {f['protocol']} where {self.protocol} was asked for")
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
        query = ["protocol=2"] if self.protocol == 2 else []
        if self.hello is not None:
            query += [f"from={self.next_seq}", f"feed={self.hello['feed']}"]
        if query:
            url = f"{url}?{'&'.join(query)}"
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
    v.protocol = int(opts.get("--protocol", "2"))
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
                  "next_seq": v.next_seq, "binary_bytes": v.binary_bytes, "values": v.values}
    with open(out, "w") as f:
        json.dump(result, f)
    c = v.close or {}
    print("closed", c.get("code"), c.get("reason"), flush=True)


if __name__ == "__main__":
    main()

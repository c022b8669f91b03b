#!/usr/bin/env python3
"""An OTLP/HTTP metrics receiver for the tests, built on the OpenTelemetry project's own
protobuf definitions (PyPI `opentelemetry-proto`).

It listens on 127.0.0.1 (port: argv[2], 0 for any), prints `listening PORT` once it does, and
answers each POST to /v1/metrics (application/x-protobuf, an ExportMetricsServiceRequest) with
an ExportMetricsServiceResponse. Every data point it decodes is appended to the file argv[1] as
one JSON line: the resource's attributes, the scope, the metric's name, unit, description and
kind (`gauge`, or `sum` with `monotonic` and `temporality`), the point's attributes, value
(as text: Python's `repr` of the double, which parses back to the same bits) and times. A request it cannot decode is answered 400 and written as {"error": ...}.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2

OUT = sys.argv[1]


def value(v):
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    return getattr(v, kind)


def attrs(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def points(request):
    for rm in request.resource_metrics:
        resource = attrs(rm.resource.attributes)
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                data = m.WhichOneof("data")
                body = getattr(m, data)
                for p in body.data_points:
                    v = p.as_double if p.WhichOneof("value") == "as_double" else p.as_int
                    yield {
                        "resource": resource,
                        "scope": sm.scope.name,
                        "name": m.name,
                        "unit": m.unit,
                        "description": m.description,
                        "kind": data,
                        "monotonic": getattr(body, "is_monotonic", None),
                        "temporality": getattr(body, "aggregation_temporality", None),
                        "attributes": attrs(p.attributes),
                        "value": repr(float(v)),
                        "time": p.time_unix_nano,
                        "start": p.start_time_unix_nano,
                    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        try:
            if self.path != "/v1/metrics":
                raise ValueError(f"POST to {self.path}")
            if self.headers.get("Content-Type") != "application/x-protobuf":
                raise ValueError(f"Content-Type {self.headers.get('Content-Type')}")
            req = metrics_service_pb2.ExportMetricsServiceRequest()
            req.ParseFromString(body)
            lines = [json.dumps(p) for p in points(req)]
            header = {"request": len(body), "points": len(lines), "headers": dict(self.headers.items())}
            with open(OUT, "a") as f:
                f.write(json.dumps({"export": header}) + "\n")
                f.write("".join(line + "\n" for line in lines))
            answer = metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
        except Exception as e:  # noqa: BLE001 - any decoding failure is the answer
            with open(OUT, "a") as f:
                f.write(json.dumps({"error": str(e)}) + "\n")
            answer = str(e).encode()
            self.send_response(400)
            self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


def main():
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

#!/bin/bash
# What benches/otlp.rs measures, with any built binary (a debug one when the bench's release
# build is out of reach): `zescope serve --interval 1ms --device 0,1` on the simulated devices,
# alone and with --otlp to a loopback receiver (an export a second), two rounds of 10 s; the
# serving process's CPU share of a core from /proc/PID/stat (utime + stime, 100 ticks/s).
#
#   benches/scripts/otlp_cost.sh [path/to/zescope]
set -euo pipefail
BIN=${1:-target/debug/zescope}
dir=$(mktemp -d)
python3 - "$dir/port" <<'PY' &
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
RX=$!
trap 'kill $RX 2>/dev/null; rm -rf "$dir"' EXIT
until [ -s "$dir/port" ]; do sleep 0.2; done
PORT=$(cat "$dir/port")
for round in 1 2; do
  for mode in alone otlp; do
    extra=()
    [ $mode = otlp ] && extra=(--otlp "http://127.0.0.1:$PORT")
    OTEL_METRIC_EXPORT_INTERVAL=1000 "$BIN" --source sim serve --listen 127.0.0.1:0 --interval 1ms --device 0,1 \
      "${extra[@]}" > "$dir/out" 2>&1 &
    SP=$!
    sleep 4
    a=$(awk '{print $14+$15}' /proc/$SP/stat); t0=$(date +%s.%N)
    sleep 10
    b=$(awk '{print $14+$15}' /proc/$SP/stat); t1=$(date +%s.%N)
    addr=$(head -1 "$dir/out" | sed 's#.*http://##; s#/metrics##')
    page=$(curl -s "http://$addr/metrics")
    kill -TERM $SP; wait $SP || true
    share=$(echo "($b-$a)/100/($t1-$t0)*100" | bc -l)
    rate=$(echo "$page" | awk '$1=="zescope_sampler_achieved_rate_hertz"{print $2}')
    exported=$(echo "$page" | awk '$1=="zescope_otlp_exported_total"{print $2}')
    dropped=$(echo "$page" | awk '$1=="zescope_otlp_dropped_total"{print $2}')
    printf '%s %s: %.2f %% of a core, %s Hz, exported %s, dropped %s\n' "$round" "$mode" "$share" "$rate" "${exported:--}" "${dropped:--}"
  done
done

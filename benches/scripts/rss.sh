#!/usr/bin/env bash
# Usage: benches/scripts/rss.sh [BIN]
# Resident memory of `record` (1 kHz, telemetry) and of the window (live, default panes, Xvfb
# display :93) every 10 s for 60 s (docs/benchmarks.md, "Memory over a long run").
BIN=${1:-/work/main/target/release/zescope}
D=$(mktemp -d); mkdir -p $D/{c,d,s,r}; chmod 700 $D/r
export XDG_CONFIG_HOME=$D/c XDG_DATA_HOME=$D/d XDG_STATE_HOME=$D/s XDG_RUNTIME_DIR=$D/r
$BIN --source sim record --interval 1ms --telemetry --duration 80s --out $D/run.ron >/dev/null 2>&1 &
RP=$!
Xvfb :93 -nolisten tcp -noreset -screen 0 1600x1000x24 >/dev/null 2>&1 & XP=$!
sleep 1
DISPLAY=:93 $BIN --source sim >/dev/null 2>&1 & WP=$!
sleep 5
for t in 0 10 20 30 40 50 60; do
  echo "t=$t record $(awk '/VmRSS/{print $2}' /proc/$RP/status) kB window $(awk '/VmRSS/{print $2}' /proc/$WP/status) kB"
  sleep 10
done
kill -TERM $WP; sleep 3; kill $XP; wait $RP; ls -la $D/run.ron; rm -rf $D

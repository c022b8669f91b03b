#!/usr/bin/env bash
# Usage: benches/scripts/window_cpu.sh BIN [SECONDS] [OUT-DIR] [WINDOW]
# The live window's CPU (docs/benchmarks.md, "The monitor's own cost"): BIN's window on Xvfb
# display :91 at 1600x1000 with four panes of the simulated GPU's ComputeBasic (a view file),
# live at 100 Hz, the time window WINDOW (10s, 1min, ...; default 1min); after 10 s of warm-up it
# prints the process's CPU over SECONDS (default 30) in cores and saves OUT-DIR/shot.png (the
# status bar says the achieved rate). Needs Xvfb, xdotool, ImageMagick's import and bc.
set -u
BIN=$1; SECS=${2:-30}; OUT=${3:-/tmp/wcpu}; WIN=${4:-1min}
mkdir -p $OUT; D=$(mktemp -d); mkdir -p $D/{c,d,s,r}; chmod 700 $D/r
cat > $D/four.ron <<'V'
(version: 1, name: "four", window: Some("WINDOW"), panes: [
 (series: [(group: "ComputeBasic", metric: "GpuTime"), (group: "ComputeBasic", metric: "GpuUtilization")]),
 (series: [(group: "ComputeBasic", metric: "GpuBusyCycles")]),
 (series: [(group: "ComputeBasic", metric: "GpuFrequency")]),
 (series: [(group: "ComputeBasic", metric: "GpuPower")])], triggers: [])
V
sed -i "s/WINDOW/$WIN/" $D/four.ron
Xvfb :91 -nolisten tcp -noreset -screen 0 1600x1000x24 >/dev/null 2>&1 &
XPID=$!
sleep 1
export DISPLAY=:91
XDG_CONFIG_HOME=$D/c XDG_DATA_HOME=$D/d XDG_STATE_HOME=$D/s XDG_RUNTIME_DIR=$D/r $BIN --source sim --view $D/four.ron >$OUT/log.txt 2>&1 &
ZP=$!
sleep 4
W=$(xdotool search --sync --name '^zescope' | tail -1)
xdotool windowsize $W 1600 1000; xdotool windowmove $W 0 0; xdotool mousemove 1599 999
sleep 10
t0=$(awk '{print $14+$15}' /proc/$ZP/stat); s0=$(date +%s.%N)
sleep $SECS
t1=$(awk '{print $14+$15}' /proc/$ZP/stat); s1=$(date +%s.%N)
import -window root $OUT/shot.png
echo "cores: $(echo "($t1-$t0)/100/($s1-$s0)" | bc -l | cut -c1-6)"
kill -TERM $ZP; sleep 3; kill $XPID 2>/dev/null; rm -rf $D

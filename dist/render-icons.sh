#!/usr/bin/env bash
# Renders assets/icon/zescope.svg into the hicolor PNG sizes the .deb installs
# (assets/icon/hicolor/NxN/apps/zescope.png). The PNGs are committed, so building the package
# needs no SVG renderer; run this after changing the SVG.
#   dist/render-icons.sh           re-render the PNGs
#   dist/render-icons.sh --check   fail if a committed PNG differs from a fresh rendering (CI)
# Needs rsvg-convert (Debian: apt install librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")/.."

svg=assets/icon/zescope.svg
sizes=(16 32 48 64 128 256)
command -v rsvg-convert >/dev/null || { echo "render-icons: rsvg-convert is missing: sudo apt install librsvg2-bin" >&2; exit 1; }

check=false
[ "${1:-}" = "--check" ] && check=true
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

stale=0
for n in "${sizes[@]}"; do
  out="assets/icon/hicolor/${n}x${n}/apps/zescope.png"
  rsvg-convert --width "$n" --height "$n" --keep-aspect-ratio "$svg" --output "$scratch/$n.png"
  if $check; then
    if ! cmp -s "$scratch/$n.png" "$out"; then
      echo "render-icons: $out is not a rendering of $svg: run dist/render-icons.sh and commit the PNGs" >&2
      stale=1
    fi
  else
    mkdir -p "$(dirname "$out")"
    cp "$scratch/$n.png" "$out"
    echo "$out"
  fi
done
exit "$stale"

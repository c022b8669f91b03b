#!/usr/bin/env bash
# Checks a zescope .deb (default: the newest zescope_*.deb in cargo's target/debian/):
#   - its file list (dpkg-deb -c) holds every path the package must install;
#   - its control data: libze1 recommended, not depended on;
#   - extracted into a scratch root (dpkg-deb -x), the binary runs from there
#     (--version, and doctor/list on the simulated device);
#   - the installed Grafana dashboard is JSON and the alert rules pass `promtool check rules`
#     (where python3 / promtool are installed);
#   - the installed desktop entry and AppStream metainfo validate, the desktop entry takes a file
#     (%f) of a MIME type the package's shared-mime-info file defines, the man pages are gzip files
#     that mention every subcommand, the bash completion parses.
# Needs dpkg-deb, desktop-file-validate (desktop-file-utils) and appstreamcli (appstream).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then
  deb=$1
else
  # where build-deb.sh put it: cargo's target directory (CARGO_TARGET_DIR and configs respected)
  target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  deb=$(ls -t "$target_dir"/debian/zescope_*.deb 2>/dev/null | head -n 1 || true)
fi
[ -n "$deb" ] && [ -f "$deb" ] || { echo "check-deb: no .deb found (${deb:-none}): run dist/build-deb.sh first" >&2; exit 1; }
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
errors=0
fail() { echo "check-deb: $*" >&2; errors=$((errors + 1)); }

expected=(
  usr/bin/zescope
  usr/share/applications/zescope.desktop
  usr/share/metainfo/io.github.zescope.Zescope.metainfo.xml
  usr/share/mime/packages/zescope.xml
  usr/share/icons/hicolor/scalable/apps/zescope.svg
  usr/share/man/man1/zescope.1.gz
  usr/share/bash-completion/completions/zescope
  usr/share/zsh/vendor-completions/_zescope
  usr/share/fish/vendor_completions.d/zescope.fish
  usr/share/doc/zescope/copyright
  usr/share/doc/zescope/manual.md
  usr/lib/systemd/system/zescope-serve.service
  usr/share/zescope/zescope-dashboard.json
  usr/share/zescope/zescope-rules.yml
)
for n in 16 32 48 64 128 256; do expected+=("usr/share/icons/hicolor/${n}x${n}/apps/zescope.png"); done
for f in assets/layouts/*.ron; do expected+=("usr/share/zescope/layouts/$(basename "$f")"); done
for f in assets/views/*.ron; do expected+=("usr/share/zescope/views/$(basename "$f")"); done

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"

# one man page per subcommand the packaged binary has (from its --help)
subcommands=$("$root/usr/bin/zescope" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF && $1 != "help" {print $1}')
[ -n "$subcommands" ] || fail "zescope --help lists no subcommands"
for sub in $subcommands; do expected+=("usr/share/man/man1/zescope-$sub.1.gz"); done

listing=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./||')
for p in "${expected[@]}"; do
  grep -qxF "$p" <<<"$listing" || fail "$deb lacks $p"
done

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = zescope ] || fail "Package is $(field Package)"
[[ "$(field Version)" == "$version"* ]] || fail "Version $(field Version) is not Cargo.toml's $version"
grep -qw libze1 <<<"$(field Recommends)" || fail "libze1 is not in Recommends: $(field Recommends)"
if grep -qw libze1 <<<"$(field Depends)"; then fail "libze1 must not be in Depends: $(field Depends)"; fi

out=$("$root/usr/bin/zescope" --version) || fail "zescope --version failed"
[ "$out" = "zescope $version" ] || fail "zescope --version printed '$out', expected 'zescope $version'"
"$root/usr/bin/zescope" list --source sim | grep -q "ze-sim GPU" || fail "zescope list --source sim shows no simulated GPU"
"$root/usr/bin/zescope" doctor --source sim >"$root/doctor.txt" || {
  cat "$root/doctor.txt" >&2
  fail "zescope doctor --source sim failed"
}

# the systemd unit: runs the packaged binary's serve, hardened, in the device groups
unit="$root/usr/lib/systemd/system/zescope-serve.service"
if [ -f "$unit" ]; then
  grep -qx 'ExecStart=/usr/bin/zescope serve --listen 127.0.0.1:9464' "$unit" || fail "the unit does not start /usr/bin/zescope serve"
  for line in DynamicUser=yes 'SupplementaryGroups=render video' NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
    PrivateTmp=yes DevicePolicy=closed 'DeviceAllow=char-drm rw' CapabilityBoundingSet= 'WantedBy=multi-user.target'; do
    grep -qxF "$line" "$unit" || fail "the unit lacks $line"
  done
  exec_args=$(sed -n 's|^ExecStart=/usr/bin/zescope ||p' "$unit")
  # shellcheck disable=SC2086 # the unit's arguments, split as systemd splits them (no quotes in them)
  "$root/usr/bin/zescope" $exec_args --help >/dev/null || fail "the unit's ExecStart arguments do not parse: $exec_args"
  if command -v systemd-analyze >/dev/null; then
    # the binary is not at /usr/bin here; anything else it says is a fault of the unit
    said=$(systemd-analyze verify --man=no "$unit" 2>&1 | grep -v '/usr/bin/zescope is not executable' || true)
    [ -z "$said" ] || fail "systemd-analyze verify: $said"
  fi
fi

# the fleet files: an importable dashboard (JSON) and alert rules Prometheus loads
if command -v python3 >/dev/null; then
  python3 -m json.tool "$root/usr/share/zescope/zescope-dashboard.json" >/dev/null ||
    fail "usr/share/zescope/zescope-dashboard.json is not JSON"
fi
if command -v promtool >/dev/null; then
  promtool check rules "$root/usr/share/zescope/zescope-rules.yml" >/dev/null ||
    fail "promtool check rules fails on usr/share/zescope/zescope-rules.yml"
fi

desktop-file-validate "$root/usr/share/applications/zescope.desktop" || fail "desktop entry does not validate"
appstreamcli validate --no-net "$root/usr/share/metainfo/io.github.zescope.Zescope.metainfo.xml" >/dev/null ||
  fail "metainfo does not validate (appstreamcli validate --no-net)"
# the desktop entry opens session files, whose MIME type the package defines
grep -qx 'Exec=zescope %f' "$root/usr/share/applications/zescope.desktop" || fail "the desktop entry does not pass a file (%f)"
mime=$(sed -n 's/^MimeType=//p' "$root/usr/share/applications/zescope.desktop")
for t in ${mime//;/ }; do
  grep -q "<mime-type type=\"$t\">" "$root/usr/share/mime/packages/zescope.xml" ||
    fail "MIME type $t of the desktop entry is not defined in usr/share/mime/packages/zescope.xml"
done
if command -v update-mime-database >/dev/null; then
  mkdir -p "$root/mimetest/packages"
  cp "$root/usr/share/mime/packages/zescope.xml" "$root/mimetest/packages/"
  update-mime-database "$root/mimetest" 2>"$root/mime.err" &&
    grep -q '^[0-9]*:application/x-zescope-session:\*\.ron$' "$root/mimetest/globs2" ||
    fail "update-mime-database does not take usr/share/mime/packages/zescope.xml: $(cat "$root/mime.err")"
fi
for page in "$root"/usr/share/man/man1/*.gz; do
  gzip -t "$page" || fail "$page is not a valid gzip file"
done
for sub in $subcommands; do
  zcat "$root/usr/share/man/man1/zescope.1.gz" | grep -q "zescope\\\\-$sub" || fail "zescope.1 does not mention $sub"
done
bash -n "$root/usr/share/bash-completion/completions/zescope" || fail "the bash completion does not parse"

if [ "$errors" -gt 0 ]; then
  echo "check-deb: $deb: $errors problem(s)" >&2
  exit 1
fi
echo "check-deb: $deb: ${#expected[@]} paths present, zescope $version runs from the extracted package, desktop entry and metainfo valid"

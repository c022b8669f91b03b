#!/usr/bin/env bash
# Builds the Debian package target/debian/zescope_<version>-1_<arch>.deb:
#   1. installs cargo-deb if it is missing (cargo install cargo-deb --locked);
#   2. builds zescope and zescope-gen with the profile given (default: release);
#   3. generates the man pages and shell completions into target/dist-gen/ (not kept in git);
#   4. packages with `cargo deb --no-build --strip` (file list and metadata: [package.metadata.deb] in
#      Cargo.toml).
# Prints the path of the .deb last. Check it with dist/check-deb.sh.
#
# Usage: dist/build-deb.sh [--profile PROFILE]
#   --profile dev packages the binaries `cargo test` already built (what .ci/run does: it checks
#   the package, not the optimiser); the packages users install are built with the default.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
case "${1:-}" in
  --profile) profile=${2:?build-deb: --profile needs a name} ;;
  "") ;;
  *) echo "build-deb: unknown argument $1 (usage: dist/build-deb.sh [--profile PROFILE])" >&2; exit 2 ;;
esac
# cargo's directory for the profile: dev (and test) build into debug/
case "$profile" in
  dev | test) profile_dir=debug ;;
  *) profile_dir=$profile ;;
esac

if ! cargo deb --version >/dev/null 2>&1; then
  echo "build-deb: installing cargo-deb" >&2
  cargo install cargo-deb --locked
fi

cargo build --profile "$profile" --locked --bin zescope --bin zescope-gen
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
rm -rf target/dist-gen
"$target_dir/$profile_dir/zescope-gen" target/dist-gen >/dev/null

out=$(cargo deb --no-build --strip --locked --profile "$profile" 2>&1) || { echo "$out" >&2; exit 1; }
deb=$(printf '%s\n' "$out" | grep '\.deb$' | tail -n 1)
[ -f "$deb" ] || { echo "$out" >&2; echo "build-deb: cargo deb reported no .deb" >&2; exit 1; }
echo "$deb"

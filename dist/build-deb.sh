#!/usr/bin/env bash
# Builds the Debian package target/debian/zescope_<version>-1_<arch>.deb:
#   1. installs cargo-deb if it is missing (cargo install cargo-deb --locked);
#   2. builds zescope and zescope-gen with the profile given (default: release);
#   3. generates the man pages and shell completions into target/dist-gen/ (not kept in git);
#   4. packages with `cargo deb --no-build --strip` (file list and metadata: [package.metadata.deb] in
#      Cargo.toml).
# Prints the path of the .deb last. Check it with dist/check-deb.sh.
#
# Usage: dist/build-deb.sh [--profile PROFILE] [--built]
#   --profile dev packages debug binaries; the packages users install are built with the default.
#   --built packages the binaries already in cargo's directory for the profile, as they are,
#   without building them: `.ci/run` packages what `cargo test` built (`--profile dev --built`),
#   to check the package, not the optimiser.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
built=no
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=${2:?build-deb: --profile needs a name}; shift 2 ;;
    --built) built=yes; shift ;;
    *) echo "build-deb: unknown argument $1 (usage: dist/build-deb.sh [--profile PROFILE] [--built])" >&2; exit 2 ;;
  esac
done
# cargo's directory for the profile: dev (and test) build into debug/
case "$profile" in
  dev | test) profile_dir=debug ;;
  *) profile_dir=$profile ;;
esac

if ! cargo deb --version >/dev/null 2>&1; then
  echo "build-deb: installing cargo-deb" >&2
  cargo install cargo-deb --locked
fi

target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
if [ "$built" = yes ]; then
  for b in zescope zescope-gen; do
    [ -x "$target_dir/$profile_dir/$b" ] || { echo "build-deb: --built, but $target_dir/$profile_dir/$b is missing" >&2; exit 1; }
  done
else
  cargo build --profile "$profile" --locked --bin zescope --bin zescope-gen
fi
rm -rf target/dist-gen
"$target_dir/$profile_dir/zescope-gen" target/dist-gen >/dev/null

out=$(cargo deb --no-build --strip --locked --profile "$profile" 2>&1) || { echo "$out" >&2; exit 1; }
deb=$(printf '%s\n' "$out" | grep '\.deb$' | tail -n 1)
[ -f "$deb" ] || { echo "$out" >&2; echo "build-deb: cargo deb reported no .deb" >&2; exit 1; }
echo "$deb"

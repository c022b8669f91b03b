#!/usr/bin/env bash
# Builds the upstream Level Zero loader and its validation and tracing layers from a release
# archive, once: `upstream-loader.sh ARCHIVE ROOT` extracts ARCHIVE (third_party/level-zero-vX.tar.gz)
# into ROOT/src, configures it with cmake (Release at -O0, the loader's own tests off: offline), makes the
# three libraries into ROOT/build/lib with -j2, and writes the stamp ROOT/.built (the version)
# last. An exclusive flock on ROOT/.lock keeps two callers from building at once; a caller that
# finds the stamp and the libraries does nothing.
#
# The one recipe for the build: ze_sim::testing::upstream_loader runs it for the tests, and
# .ci/run starts it in the background before clippy so the tests find it built.
set -euo pipefail
archive=${1:?usage: upstream-loader.sh ARCHIVE ROOT}
root=${2:?usage: upstream-loader.sh ARCHIVE ROOT}
name=$(basename "$archive" .tar.gz)     # level-zero-v1.32.0
version=${name#level-zero-v}             # 1.32.0
libs=(libze_loader.so.1 libze_validation_layer.so.1 libze_tracing_layer.so.1)

[ -f "$archive" ] || { echo "upstream-loader: $archive is missing" >&2; exit 1; }
mkdir -p "$root"
exec 9>"$root/.lock"
flock 9
built() {
  [ -f "$root/.built" ] || return 1
  for l in "${libs[@]}"; do [ -e "$root/build/lib/$l" ] || return 1; done
}
built && exit 0

rm -rf "$root/src"
mkdir -p "$root/src"
tar xzf "$archive" -C "$root/src"
echo "building the Level Zero loader v$version into $root/build (once; a few minutes)" >&2
# Release (NDEBUG: the loader's asserts off, as distributions ship it) without the optimiser: the
# same code, built in about 60 % of the CPU time; nothing the tests check depends on its speed.
cmake -S "$root/src/level-zero-$version" -B "$root/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE="-O0 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" -DBUILD_L0_LOADER_TESTS=OFF >/dev/null
make -C "$root/build" -j2 ze_loader ze_validation_layer ze_tracing_layer >/dev/null
for l in "${libs[@]}"; do
  [ -e "$root/build/lib/$l" ] || { echo "upstream-loader: the build did not produce $root/build/lib/$l" >&2; exit 1; }
done
printf '%s' "$version" > "$root/.built"

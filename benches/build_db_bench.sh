#!/usr/bin/env bash
# Builds db_bench from the RocksDB that ibench embeds, so a side-by-side run
# (benches/db_bench_side_by_side.py) compares the two clients on the very same
# engine: the same version, sources, compiler flags and object code.
#
#     bash benches/build_db_bench.sh [OUT]        # default OUT: $CARGO_TARGET_DIR/db_bench
#
# It compiles db_bench's own sources (tools/db_bench*.cc and what they need
# beyond the library, from librocksdb-sys' bundled RocksDB) with the defines
# and flags librocksdb-sys' build script uses, and links them against the
# librocksdb.a, libsnappy.a, liblz4.a and libzstd.a of ibench's release build
# (run `cargo build --release` first). Needs gflags (libgflags-dev), installed
# when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-/var/cache/ibench-target}"
out="${1:-$target/db_bench}"
mkdir -p "$(dirname "$out")"

if [ ! -e /usr/include/gflags/gflags.h ]; then
  echo "installing libgflags-dev (db_bench parses its flags with gflags)"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libgflags-dev >/dev/null
fi

src=$(cargo metadata --format-version 1 --locked | python3 -c '
import json, os, sys
pkgs = json.load(sys.stdin)["packages"]
print(next(os.path.dirname(p["manifest_path"]) for p in pkgs if p["name"] == "librocksdb-sys"))')
# The newest build of each native library (a build directory per feature set).
newest() { ls -t $target/release/build/$1-*/out/$2 2>/dev/null | head -1; }
rocksdb_a=$(newest librocksdb-sys librocksdb.a)
snappy_a=$(newest librocksdb-sys libsnappy.a)
lz4_a=$(newest lz4-sys liblz4.a)
zstd_a=$(newest zstd-sys libzstd.a)
for lib in rocksdb_a snappy_a lz4_a zstd_a; do
  [ -n "${!lib}" ] || { echo "no ${lib%_a} library under $target/release/build: run cargo build --release first" >&2; exit 1; }
done
lz4_inc=$(dirname "$lz4_a")/include
zstd_inc=$(dirname "$zstd_a")/include
[ -e "$lz4_inc/lz4.h" ] || lz4_inc="$(dirname "$(ls ~/.cargo/registry/src/*/lz4-sys-*/liblz4/lib/lz4.h | tail -1)")"
[ -e "$zstd_inc/zstd.h" ] || zstd_inc="$(dirname "$(ls ~/.cargo/registry/src/*/zstd-sys-*/zstd/lib/zstd.h | tail -1)")"

# As librocksdb-sys' build.rs compiles the library on x86-64 Linux with the
# features ibench enables (lz4, zstd, snappy), plus GFLAGS for the tool.
defines=(-DNDEBUG=1 -DHAVE_ALIGNED_NEW -DHAVE_UINT128_EXTENSION -DSNAPPY=1 -DLZ4=1 -DZSTD=1
  -DOS_LINUX -DROCKSDB_PLATFORM_POSIX -DROCKSDB_LIB_IO_POSIX -DROCKSDB_SCHED_GETCPU_PRESENT
  -DROCKSDB_AUXV_GETAUXVAL_PRESENT -DROCKSDB_FALLOCATE_PRESENT -DROCKSDB_RANGESYNC_PRESENT -DGFLAGS=1)
flags=(-O3 -std=c++20 -fPIC -msse2 -include cstdint -w)
includes=(-I"$src/rocksdb/include" -I"$src/rocksdb" -I"$src" -I"$src/snappy" -I"$lz4_inc" -I"$zstd_inc")
sources=(tools/db_bench.cc tools/db_bench_tool.cc tools/tool_hooks.cc tools/simulated_hybrid_file_system.cc
  test_util/testutil.cc)

obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
objects=()
pids=()
for s in "${sources[@]}"; do
  o="$obj/$(basename "${s%.cc}").o"
  echo "compiling $s"
  g++ "${flags[@]}" "${defines[@]}" "${includes[@]}" -c "$src/rocksdb/$s" -o "$o" &
  objects+=("$o")
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done  # fails on the first compile that failed
# librocksdb-sys' build_version.cc defines RocksDbIOUringEnable (always true)
# for Rust users; db_bench defines it from its --io_uring_enabled flag. The
# first definition, db_bench's, wins (this build has no io_uring either way).
g++ -o "$out" -Wl,--allow-multiple-definition "${objects[@]}" "$rocksdb_a" "$snappy_a" "$lz4_a" "$zstd_a" -lgflags -lpthread -ldl -latomic
echo "built $out from $src ($(basename "$rocksdb_a") of $(dirname "$rocksdb_a"))"
"$out" --version 2>&1 | head -1 || true

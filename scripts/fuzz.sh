#!/usr/bin/env bash
# Runs the libFuzzer targets (Fuzzing/) for SECONDS each (default 60), with AddressSanitizer,
# seeded from packages the test support writes (Fuzzing/seeds/, regenerated each run) and the
# regression inputs kept in Fuzzing/regressions/. A crash leaves its input in Fuzzing/crashes/
# and fails the script.
#   scripts/fuzz.sh 300        # five minutes per target
#   scripts/fuzz.sh --smoke    # 20 seconds each (what CI runs)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
seconds="${1:-60}"
[ "$seconds" = "--smoke" ] && seconds=20
case "$(uname -s)" in Linux) ;; *) echo "fuzz: libFuzzer with Swift needs Linux" >&2; exit 0 ;; esac

python3 scripts/make-fuzz-seeds.py Fuzzing/seeds
# The targets live in the main package (so they reach its `package` API); PKGTOOL_FUZZING makes
# Package.swift instrument the project's targets and link libFuzzer into the fuzz targets, in a
# build folder of their own, so the normal build is untouched.
export PKGTOOL_FUZZING=1
# The package readers are built with the server's packages left out of the manifest
# (PKGTOOL_CORE_ONLY); the purchase proof's target (FuzzSignedData) then with them, in the same
# build folder (the core's modules are not rebuilt).
core_targets=(FuzzXARReader FuzzAppleArchiveReader FuzzPropertyList FuzzValidate FuzzArchive)
flags=(--scratch-path .build-fuzz -c debug)
for target in "${core_targets[@]}"; do
  PKGTOOL_CORE_ONLY=1 swift build "${flags[@]}" --product "$target" >&2
done
swift build "${flags[@]}" --product FuzzSignedData >&2
bin="$(swift build "${flags[@]}" --show-bin-path)"
mkdir -p Fuzzing/crashes
status=0
for target in "${core_targets[@]}" FuzzSignedData; do
  corpus="$(mktemp -d)"
  cp Fuzzing/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
  cp Fuzzing/regressions/"$target"/* "$corpus"/ 2>/dev/null || true
  echo "fuzz: $target for ${seconds}s" >&2
  # libarchive allocates what a header declares (a name, a symlink target, a pax header) before
  # any byte of it arrives. pkgtool checks newc/odc cpio headers of raw and gzip'd payloads first
  # (CpioHeaderGuard); other formats and filters still reach libarchive unchecked, where such an
  # allocation is virtual until filled and the read then fails as truncated. FuzzArchive
  # therefore flags only allocations over 16 GiB; RSS stays bounded at 2 GiB.
  malloc_limit=2048
  [ "$target" = FuzzArchive ] && malloc_limit=16384
  if ! "$bin/$target" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb="$malloc_limit" -max_len=262144 \
      -artifact_prefix="Fuzzing/crashes/$target-" -print_final_stats=1 2> "Fuzzing/crashes/$target.log"; then
    echo "fuzz: $target FAILED; see Fuzzing/crashes/$target.log" >&2
    tail -30 "Fuzzing/crashes/$target.log" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs" "Fuzzing/crashes/$target.log" | sed "s/^/fuzz: $target: /" >&2 || true
  rm -rf "$corpus"
done
exit $status

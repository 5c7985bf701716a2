#!/usr/bin/env bash
# The test suite under AddressSanitizer, then ThreadSanitizer (parallel compression and writes).
# Separate build folders, so the normal build is untouched. Takes several minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
for sanitizer in address thread; do
  echo "sanitizers: swift test --sanitize=$sanitizer" >&2
  swift test --sanitize="$sanitizer" --scratch-path ".build-$sanitizer" "$@"
done

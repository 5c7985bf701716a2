#!/usr/bin/env bash
# The main job on a sample: check the project, build a package from samples/, validate it, unpack
# it, show the result.
# Installs what a fresh machine lacks. Works in a temporary folder; pass a sample name to choose
# (default: level-pack).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
sample="${1:-level-pack}"
# The packaging tool alone: the server's packages (pkgtool serve) are neither fetched nor built.
export PKGTOOL_CORE_ONLY=1
swift build "${release_flags[@]}" --product pkgtool >&2
pkgtool="$(swift build "${release_flags[@]}" --show-bin-path)/pkgtool"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
set -x
"$pkgtool" validate "samples/$sample"
"$pkgtool" build "samples/$sample" -o "$work/$sample.pkg"
"$pkgtool" validate "$work/$sample.pkg"
"$pkgtool" unpack "$work/$sample.pkg" -o "$work/unpacked"
"$pkgtool" info "$work/$sample.pkg"
set +x
echo "--- unpacked tree:"
(cd "$work/unpacked" && find . | sort)

#!/usr/bin/env bash
# Formats the tree with swift-format (.swift-format: 2 spaces, 120 columns), or with --lint
# checks it without changing anything (what CI runs): any finding fails.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Sources Tests Plugins Fuzzing/Sources Examples bench/StateStoreBench Package.swift)
if [ "${1:-}" = "--lint" ]; then
  swift format lint --strict --recursive --parallel "${paths[@]}"
  echo "format: clean" >&2
else
  swift format format --in-place --recursive --parallel "${paths[@]}"
fi

#!/usr/bin/env bash
# Builds the HostedContent documentation (the DocC catalog in Sources/HostedContent/
# HostedContent.docc and the doc comments of the public API) into .build-docs/HostedContent.doccarchive,
# with the toolchain's own docc: no plugin, no network. Prints docc's warnings and its coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
graphs=.build-docs/symbol-graphs
rm -rf .build-docs && mkdir -p "$graphs"
swift build --target HostedContent -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs.all" >&2
cp "$graphs.all/HostedContent.symbols.json" "$graphs/"
docc convert Sources/HostedContent/HostedContent.docc --additional-symbol-graph-dir "$graphs" \
  --fallback-display-name HostedContent --fallback-bundle-identifier org.pkgtool.HostedContent \
  --output-path .build-docs/HostedContent.doccarchive --analyze \
  --experimental-documentation-coverage --coverage-summary-level brief
echo "docs: .build-docs/HostedContent.doccarchive" >&2

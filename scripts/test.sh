#!/usr/bin/env bash
# The test command: installs what a fresh machine lacks, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
swift test "$@"

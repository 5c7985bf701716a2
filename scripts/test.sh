#!/usr/bin/env bash
# The test command: installs what a fresh machine lacks, runs the whole suite (swift test), then
# the interruption script (SIGKILL during build, unpack, install, bump; 20 trials each).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
swift test "$@"
python3 scripts/interrupt.py --trials 20

#!/usr/bin/env bash
# Benchmark: pkgtool vs bsdtar on generated corpora (see bench/run.py --help). Installs what is
# missing first. Takes about 10 minutes with the defaults; results in bench/out/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
exec python3 bench/run.py "$@"

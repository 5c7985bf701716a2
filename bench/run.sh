#!/usr/bin/env bash
# Benchmark: pkgtool vs bsdtar and 7-Zip on generated corpora (see bench/run.py --help). Installs what is
# missing first. Takes about 60 minutes with the defaults; results in bench/out/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
# 7-Zip (Debian's 7zip: 7zz), the second peer for validate and unpack.
if ! command -v 7zz >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq 7zip >&2 || echo "bench: 7zip not installed; 7-Zip is left out" >&2
fi
exec python3 bench/run.py "$@"

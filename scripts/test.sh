#!/usr/bin/env bash
# The test command: installs what a fresh machine lacks, then tests
#   1. the core (pkgtool and the HostedContent library) alone: the manifest leaves the server out
#      (PKGTOOL_CORE_ONLY), so no server package is built and a failing core test shows in minutes;
#   2. the server (pkgtool-serve): its packages and targets are built on top of the same build,
#      and its tests run (the state store's run a PostgreSQL server of their own: Debian's
#      postgresql package is installed first if /usr/lib/postgresql/*/bin/initdb is missing);
#   3. the interruption script (SIGKILL during build, unpack, install, bump; 20 trials each).
# With arguments, runs 'swift test ARGUMENTS' on the whole package instead of 1 and 2.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
install_postgres_server
if [ "$#" -gt 0 ]; then
  swift test "$@"
else
  echo "test: the core (PKGTOOL_CORE_ONLY=1 swift test)" >&2
  PKGTOOL_CORE_ONLY=1 swift test
  echo "test: the server (swift test --filter ContentServerTests)" >&2
  swift test --filter ContentServerTests
fi
python3 scripts/interrupt.py --trials 20

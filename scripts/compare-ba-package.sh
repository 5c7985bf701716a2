#!/usr/bin/env bash
# On a Mac with Xcode: makes one asset pack twice from the same input, with pkgtool
# (`export background-assets -o NAME.aar`) and with Apple's ba-package (from pkgtool's folder
# export), then compares the two archives entry by entry: path, kind, mode, size and SHA-256 of
# every entry, as pkgtool's reader lists them, and the framing of each file (its first bytes).
#
#   scripts/compare-ba-package.sh PACKAGE-OR-PROJECT [export options, e.g. --policy on-demand]
#
# PKGTOOL names the pkgtool binary (default: pkgtool on PATH). Exits 0 when every entry agrees,
# 1 when they differ (the differences are printed), 2 when a step fails. Nothing is kept: the
# archives are made in a temporary folder (KEEP=1 keeps it and prints where).
#
# pkgtool's tests cannot run this (no Mac, no ba-package): docs/migration.md says what is and is
# not verified. Please send the output of a run to the project.
set -euo pipefail

fail() { echo "compare-ba-package: $*" >&2; exit 2; }
[ $# -ge 1 ] || fail "usage: $0 PACKAGE-OR-PROJECT [export options]"
input=$1
shift
pkgtool=${PKGTOOL:-pkgtool}
command -v "$pkgtool" >/dev/null 2>&1 || fail "no pkgtool (set PKGTOOL=/path/to/pkgtool)"
command -v xcrun >/dev/null 2>&1 || fail "xcrun not found: this script needs a Mac with Xcode"
xcrun --find ba-package >/dev/null 2>&1 || fail "xcrun cannot find ba-package: install Xcode 26 or later"
command -v python3 >/dev/null 2>&1 || fail "python3 not found"

work=$(mktemp -d "${TMPDIR:-/tmp}/compare-ba-package.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then echo "keeping $work" >&2; else trap 'rm -rf "$work"' EXIT; fi

"$pkgtool" export background-assets "$input" -o "$work/Pack" -q "$@" || fail "pkgtool could not export a folder"
"$pkgtool" export background-assets "$input" -o "$work/pkgtool.aar" -q "$@" || fail "pkgtool could not export a .aar"
(cd "$work/Pack" && xcrun ba-package Manifest.json -o "$work/ba-package.aar") || fail "ba-package failed on the folder"

for name in pkgtool ba-package; do
  # (A reader failure on Apple's archive is itself a finding: it is printed, and compared as empty.)
  "$pkgtool" info "$work/$name.aar" --files --json >"$work/$name.json" 2>"$work/$name.err" || true
done

python3 - "$work" <<'EOF'
import json, sys, os
work = sys.argv[1]

def listing(name):
    path = os.path.join(work, name + ".json")
    err = open(os.path.join(work, name + ".err")).read().strip()
    with open(os.path.join(work, name + ".aar"), "rb") as f:
        head = f.read(16)
    try:
        data = json.load(open(path))
    except Exception:
        print(f"{name}: pkgtool could not read it: {err or 'no output'}")
        data = {}
    print(f"{name}.aar: {os.path.getsize(os.path.join(work, name + '.aar'))} bytes, starts {head[:4]!r}, "
          f"format {data.get('format')}, {data.get('checksumStyle')}")
    for finding in data.get("findings", []):
        print(f"  {finding['severity']}: {finding['message']} [{finding['rule']}]")
    return {row["path"]: row for row in data.get("files") or []}

ours, apple = listing("pkgtool"), listing("ba-package")
differences = 0
for path in sorted(set(ours) | set(apple)):
    a, b = ours.get(path), apple.get(path)
    if a is None or b is None:
        differences += 1
        print(f"only in {'ba-package' if a is None else 'pkgtool'}: {path}")
        continue
    for key in ("kind", "mode", "size", "sha256"):
        if a.get(key) != b.get(key):
            differences += 1
            print(f"{path}: {key} pkgtool {a.get(key)} / ba-package {b.get(key)}")
print(f"{len(ours)} entries from pkgtool, {len(apple)} from ba-package, {differences} differences")
sys.exit(1 if differences else 0)
EOF

#!/usr/bin/env bash
# Regenerates packaging/symbol-order.txt: the functions the release binary runs for everyday
# commands (validate, build, unpack, info, install, diff, cat on small inputs), in the order they
# first run. The release link (scripts/bootstrap.sh's release_flags, Linux with lld) puts them
# first and side by side in the code, so a run maps in few of the code's pages: the kernel maps
# 64 KiB around each page touched, and scattered code brought in 9 MiB of a 26 MB text segment
# where the functions run fill about 3 (docs/performance.md).
#
# Needs valgrind (callgrind lists every function run, not only the sampled ones). Names that
# are not in the binary (libc's) are left out; names the code no longer has are ignored by the
# linker, so an old file only costs memory, never correctness. Run it after large changes.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "symbol-order: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
. scripts/bootstrap.sh >/dev/null
# The core's binary only: the server is an executable of its own (pkgtool-serve).
export PKGTOOL_CORE_ONLY=1
swift build "${release_flags[@]}" --product pkgtool >&2
bin="$(swift build "${release_flags[@]}" --show-bin-path)/pkgtool"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind cannot read the Swift DWARF; the symbol table is enough.
cp "$bin" "$work/pkgtool"
strip --strip-debug "$work/pkgtool"

# A content project of 600 files in folders, so the readers' batching and decode threads run.
project="$work/project"
mkdir -p "$project/Contents"
cp samples/book-chapter1/ContentInfo.plist "$project/"
for i in $(seq 0 599); do
  mkdir -p "$project/Contents/d$((i % 6))"
  printf '{"page": %d, "text": "%0300d"}\n' "$i" "$i" >"$project/Contents/d$((i % 6))/p$i.json"
done

n=0
run() {
  n=$((n + 1))
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/run.$(printf %02d $n).out" \
    "$work/pkgtool" "$@" >/dev/null 2>&1 || true
}
p="$work/pkgtool"
run --version
run validate samples/book-chapter1
run build samples/book-chapter1 -o "$work/a.pkg"
run build "$project" -o "$work/b.pkg"
run build "$project" --format zip -o "$work/b.zip"
bsdtar --format xar -cf "$work/c.pkg" -C "$project" .
run validate "$work/a.pkg"
run validate "$work/b.pkg"
run validate "$work/c.pkg"
run validate --json "$work/c.pkg"
run validate "$work/b.zip"
run validate "$project"
run unpack "$work/b.pkg" -o "$work/out-b"
run unpack "$work/c.pkg" -o "$work/out-c"
run info "$work/b.pkg"
run info --files --json "$work/c.pkg"
run diff "$work/a.pkg" "$work/b.pkg"
run cat "$work/b.pkg" Contents/d0/p0.json
run install "$work/b.pkg" --into "$work/installed"
run export background-assets "$project" -o "$work/b.aar"

nm --defined-only "$p" | awk '$2 ~ /^[tTwW]$/ {print $3}' | sort -u >"$work/defined"
python3 - "$work" >packaging/symbol-order.txt <<'EOF'
import glob, re, sys
work = sys.argv[1]
defined = set(open(f"{work}/defined").read().split())
order, seen = [], set()
for path in sorted(glob.glob(f"{work}/run.*.out")):
    for line in open(path, errors="replace"):
        m = re.match(r"^c?fn=\(\d+\) (.*?)(?:'\d+)?$", line)
        if m and m.group(1) in defined and m.group(1) not in seen:
            seen.add(m.group(1))
            order.append(m.group(1))
print("\n".join(order))
EOF
echo "symbol-order: $(wc -l <packaging/symbol-order.txt) functions, from $n runs" >&2

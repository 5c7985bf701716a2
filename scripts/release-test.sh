#!/usr/bin/env bash
# Tests the release archive where no Swift is installed: a minimal Debian root made with
# mmdebstrap (this machine's suite, variant apt, plus only the packages INSTALL names), the
# archive unpacked into its /usr/local as INSTALL says, and there:
#   - ldd resolves every library of bin/pkgtool and bin/pkgtool-serve, and no Swift runtime is anywhere in the root;
#   - pkgtool --version, build, validate (a valid package: 0; a package with a script: 1;
#     a missing file: 2) and unpack give the exit codes and output expected;
#   - the completions parse (bash -n), the man page is there.
# On this machine: the archive is reproducible (packed twice, under another umask and after the
# files' times changed: the same bytes; owner 0/0, one mtime, sorted names, gzip without a name
# or time); the man page rendered (groff -mandoc) has EXIT STATUS and ENVIRONMENT, the exit
# codes of README.md's table, and no literal backslash; the Dockerfile and action.yml install the
# packages INSTALL names.
# Usage: scripts/release-test.sh [ARCHIVE]      (default: builds one; needs root for chroot)
#        PKGTOOL_RELEASE_STAGE=DIR packs the files scripts/install.sh installed into DIR (no build).
#        PKGTOOL_RELEASE_TEST_ROOT=DIR keeps the Debian root in DIR and reuses it next time.
# It installs mmdebstrap (and groff-base) from Debian when they are missing. Prints timings.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
[ "$(id -u)" -eq 0 ] || { echo "release-test: run as root (chroot, mmdebstrap)" >&2; exit 2; }
started=$SECONDS
fail() { echo "release-test: FAIL: $*" >&2; exit 1; }
pass() { echo "release-test: ok: $*" >&2; }
timing() { echo "release-test: time: $1 $(( SECONDS - $2 )) s" >&2; }

need=()
command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
command -v groff >/dev/null 2>&1 || need+=(groff-base)
command -v python3 >/dev/null 2>&1 || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  echo "release-test: installing ${need[*]}" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi

work="$(mktemp -d)"
root="${PKGTOOL_RELEASE_TEST_ROOT:-$work/root}"
cleanup() {
  mountpoint -q "$root/proc" 2>/dev/null && umount "$root/proc"
  rm -rf "$work"
}
trap cleanup EXIT

export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
if [ $# -ge 1 ]; then
  archive="$(readlink -f "$1")"
else
  if [ -n "${PKGTOOL_RELEASE_STAGE:-}" ]; then  # an install.sh made before (no build)
    cp -a "$PKGTOOL_RELEASE_STAGE" "$work/stage"
  else
    t=$SECONDS
    PKGTOOL_CONFIGURATION=release scripts/install.sh "$work/stage" >&2
    timing "release build and install.sh" "$t"
  fi
  archive="$(PKGTOOL_RELEASE_STAGE="$work/stage" scripts/release.sh "$work/dist")"
  # Reproducible: the same files packed again, with other times and another umask.
  find "$work/stage" -exec touch -h -d '2030-01-01' {} +
  again="$(umask 077 && PKGTOOL_RELEASE_STAGE="$work/stage" scripts/release.sh "$work/dist2")"
  cmp "$archive" "$again" || fail "packing the same files twice gave different archives"
  pass "reproducible: $(sha256sum < "$archive" | cut -c1-16)… both times"
fi
name="$(basename "$archive" .tar.gz)"
echo "release-test: $archive: $(stat -c %s "$archive") bytes" >&2

# The archive itself: one folder, these files, owner 0/0, mtime SOURCE_DATE_EPOCH, sorted.
python3 - "$archive" "$name" "$SOURCE_DATE_EPOCH" <<'EOF' || fail "archive layout (above)"
import sys, tarfile
path, name, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
raw = open(path, "rb").read(10)
assert raw[3] & 0x08 == 0, "gzip header carries a file name (use gzip -n)"
assert raw[4:8] == b"\0\0\0\0", "gzip header carries a time (use gzip -n)"
with tarfile.open(path) as tar:
    members = tar.getmembers()
names = [m.name for m in members]
files = {m.name[len(name) + 1:] for m in members if m.isfile()}
want = {"INSTALL", "bin/pkgtool", "bin/pkgtool-serve", "share/man/man1/pkgtool.1", "share/man/man1/pkgtool-serve.1",
        "share/bash-completion/completions/pkgtool", "share/zsh/site-functions/_pkgtool",
        "share/fish/vendor_completions.d/pkgtool.fish"}
assert files == want, f"files {sorted(files)} != {sorted(want)}"
assert all(n == name or n.startswith(name + "/") for n in names), "everything in one folder"
assert names == sorted(names), "names not sorted"
for m in members:
    assert (m.uid, m.gid, m.uname, m.gname) in {(0, 0, "", ""), (0, 0, "root", "root")}, f"{m.name} owner"
    assert m.mtime == epoch, f"{m.name} mtime {m.mtime} != {epoch}"
    assert m.mode & 0o022 == 0, f"{m.name} is group/other writable"
    assert not m.issym() and not m.islnk(), f"{m.name} is a link"
print(f"release-test: ok: archive holds {len(files)} files in {name}/, 0/0, mtime {epoch}, sorted", file=sys.stderr)
EOF

tar -xzf "$archive" -C "$work" "$name/INSTALL"
packages="$(sed -n 's/^ *Debian \/ Ubuntu: *apt-get install //p' "$work/$name/INSTALL")"
[ -n "$packages" ] || fail "INSTALL names no Debian packages"
pass "INSTALL names: $packages"

# The recipes install what INSTALL names (Dockerfile, action.yml): same list, same order.
grep -q "apt-get install -y --no-install-recommends $packages" Dockerfile || fail "Dockerfile does not install: $packages"
grep -q "apt-get install -y --no-install-recommends $packages" action.yml || fail "action.yml does not install: $packages"
pass "Dockerfile and action.yml install the same packages"

# The man page, rendered as man would.
tar -xzf "$archive" -C "$work" "$name/share/man/man1/pkgtool.1"
python3 scripts/check-manual.py "$work/$name/share/man/man1/pkgtool.1" README.md || fail "man page (above)"

# A Debian root without Swift: this machine's suite, and only what INSTALL names.
. /etc/os-release
suite="${VERSION_CODENAME:?/etc/os-release has no VERSION_CODENAME}"
if [ -x "$root/bin/sh" ] && [ -f "$root/.pkgtool-release-test" ] \
  && [ "$(cat "$root/.pkgtool-release-test")" = "$suite $packages" ]; then
  pass "reusing the Debian root in $root"
else
  rm -rf "$root"
  t=$SECONDS
  mmdebstrap --quiet --variant=apt --include="$(echo "$packages" | tr ' ' ',')" "$suite" "$root" >&2
  echo "$suite $packages" > "$root/.pkgtool-release-test"
  timing "mmdebstrap $suite (variant apt + $packages)" "$t"
fi
rm -rf "$root/usr/local/bin/pkgtool" "$root/usr/local/bin/pkgtool-serve" "$root/usr/local/share/man/man1/pkgtool.1" \
  "$root/usr/local/share/man/man1/pkgtool-serve.1" "$root/work"
mount -t proc proc "$root/proc"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

[ -z "$(find "$root" -xdev \( -name 'libswift*' -o -name 'swift' -o -name 'libFoundation*.so' \) -print -quit)" ] \
  || fail "a Swift runtime or toolchain is in the root: $(find "$root" -xdev -name 'libswift*' -print -quit)"
in_root sh -c 'command -v swift' >/dev/null && fail "swift is on the root's PATH"
pass "no Swift in the root"

# Installed as INSTALL says.
install_line="$(sed -n 's/^ *\(sudo \)\{0,1\}\(tar -xzf .* -C \/usr\/local .*\)$/\2/p' "$work/$name/INSTALL")"
[ -n "$install_line" ] || fail "INSTALL has no tar line installing into /usr/local"
cp "$archive" "$root/tmp/"
in_root sh -c "cd /tmp && $install_line" || fail "INSTALL's line failed: $install_line"
[ -x "$root/usr/local/bin/pkgtool" ] && [ -f "$root/usr/local/share/man/man1/pkgtool.1" ] \
  && [ ! -e "$root/usr/local/INSTALL" ] || fail "INSTALL's line did not install bin/ and share/ alone"
pass "installed with: $install_line"

out="$(in_root ldd /usr/local/bin/pkgtool /usr/local/bin/pkgtool-serve)" || fail "ldd in the root"
echo "$out" | grep -q 'not found' && fail "ldd: $(echo "$out" | grep 'not found')"
echo "$out" | grep -qi swift && fail "ldd names a Swift library: $out"
pass "ldd resolves all $(echo "$out" | grep -c '=>') libraries in the root"

expect() {  # expect CODE DESCRIPTION COMMAND…: runs in the root, checks the exit code
  local code=$1 what=$2; shift 2
  set +e
  in_root "$@" > "$work/out" 2> "$work/err"
  local got=$?
  set -e
  [ "$got" -eq "$code" ] || { cat "$work/out" "$work/err" >&2; fail "$what: exit $got, expected $code"; }
}
version="$(in_root pkgtool --version)"
[ "$name" = "pkgtool-$version-linux-$(uname -m)" ] || fail "--version says '$version' for $name"
pass "pkgtool --version: $version"
in_root pkgtool serve --help | grep -q -- '--root-certificate' || fail "pkgtool serve --help does not run pkgtool-serve"
pass "pkgtool serve runs pkgtool-serve"

mkdir -p "$root/work"
cp -R samples/book-chapter1 "$root/work/book"
expect 0 "build" pkgtool build /work/book -o /work/book.pkg
expect 0 "validate of a valid package" pkgtool validate /work/book.pkg
grep -q "valid" "$work/out" "$work/err" || fail "validate printed no verdict"
expect 0 "validate --reporter sarif" pkgtool validate /work/book.pkg --reporter sarif -o /work/book.sarif
python3 -c 'import json,sys; l=json.load(open(sys.argv[1])); assert l["version"]=="2.1.0" and l["runs"][0]["results"]==[]' \
  "$root/work/book.sarif" || fail "SARIF written in the root"
expect 0 "unpack" pkgtool unpack /work/book.pkg -o /work/unpacked
diff -r "samples/book-chapter1/Contents" "$root/work/unpacked/Contents" >&2 || fail "unpacked files differ from the sample"
pass "build, validate (text and SARIF) and unpack of samples/book-chapter1: exit 0, the files unpacked as they were"

python3 - "$root/work/script.zip" <<'EOF'
import sys, zipfile
plist = b'<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>ContentVersion</key><string>1.0</string><key>IAPProductIdentifier</key><string>com.example.book</string></dict></plist>\n'
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("ContentInfo.plist", plist)
    z.writestr("Contents/run.sh", b"#!/bin/sh\necho hi\n")
EOF
expect 1 "validate of a package with a script" pkgtool validate /work/script.zip
grep -q "no-executable" "$work/out" "$work/err" || fail "validate did not name no-executable"
expect 2 "validate of a missing file" pkgtool validate /work/missing.pkg
[ "$(wc -l < "$work/err")" -ge 1 ] && grep -q "^pkgtool: error: .*missing.pkg" "$work/err" || fail "missing file: $(cat "$work/err")"
expect 1 "unpack of a package with a script" pkgtool unpack /work/script.zip -o /work/refused
[ ! -e "$root/work/refused" ] || fail "a refused unpack left /work/refused"
pass "validate 1 (no-executable), 2 (missing file); a refused unpack leaves nothing"

# The GitHub Action's steps, on this machine, against this archive.
cp "$root/work/book.pkg" "$root/work/script.zip" "$work/"
python3 scripts/check-action.py "$archive" "$version" "$work/book.pkg" 0 || fail "action.yml (above)"
python3 scripts/check-action.py "$archive" "$version" "$work/script.zip" 1 || fail "action.yml (above)"

expect 0 "bash completion parses" bash -n /usr/local/share/bash-completion/completions/pkgtool
pass "bash completion parses in the root"

timing "release test" "$started"
echo "release-test: passed" >&2

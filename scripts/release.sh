#!/usr/bin/env bash
# Makes the release archive: dist/pkgtool-VERSION-linux-ARCH.tar.gz, installable without a Swift
# toolchain. It holds one folder, pkgtool-VERSION-linux-ARCH/, laid out as a PREFIX:
#   bin/pkgtool                                (release build, Swift runtime and Foundation linked in, stripped)
#   bin/pkgtool-serve                          (the server `pkgtool serve` runs; the same build)
#   share/man/man1/pkgtool.1                   (with EXIT STATUS and ENVIRONMENT)
#   share/man/man1/pkgtool-serve.1
#   share/bash-completion/completions/pkgtool, share/zsh/site-functions/_pkgtool,
#   share/fish/vendor_completions.d/pkgtool.fish
#   INSTALL                                    (how to install it; the Debian packages it needs)
# scripts/install.sh builds and lays out the files (with the release flags scripts/bootstrap.sh
# sets); this script only adds INSTALL and packs. The Debian packages are found, not written down:
# the shared libraries the binary names (DT_NEEDED), resolved by ldd, owned per dpkg -S.
# The archive is reproducible: names sorted, owner 0/0, modes normalized, every mtime
# SOURCE_DATE_EPOCH (default: the last commit's time; the man page's date too), gzip -n.
# Usage: scripts/release.sh [OUTDIR]   (default dist/; prints the archive's path on stdout)
#        PKGTOOL_RELEASE_STAGE=DIR reuses an install made before into DIR (no build; for tests).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(uname -s)" = Linux ] || { echo "release: the archive is made on Linux (macOS builds from source: packaging/homebrew)" >&2; exit 2; }
outdir="${1:-dist}"

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null || echo 946684800)"
fi
export SOURCE_DATE_EPOCH

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stage="${PKGTOOL_RELEASE_STAGE:-$work/stage}"
if [ -z "${PKGTOOL_RELEASE_STAGE:-}" ]; then
  PKGTOOL_CONFIGURATION=release scripts/install.sh "$stage" >&2
fi
binary="$stage/bin/pkgtool"
version="$("$binary" --version)"
arch="$(uname -m)"
name="pkgtool-$version-linux-$arch"

# The Debian packages that hold the libraries the binaries link against directly.
packages=()
for library in $(for b in "$binary" "$stage/bin/pkgtool-serve"; do readelf -d "$b"; done \
    | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
  case "$library" in libswift* | libFoundation* | lib_Foundation* | libdispatch* | libBlocksRuntime*)
    echo "release: the binary needs the Swift runtime ($library): build it with --static-swift-stdlib" >&2; exit 2 ;;
  esac
  path="$(ldd "$binary" "$stage/bin/pkgtool-serve" | awk -v l="$library" '$1 == l { print $3 } $1 ~ /^\// && substr($1, length($1) - length(l)) == "/" l { print $1 }' | head -1)"
  [ -n "$path" ] && [ -e "$path" ] || { echo "release: $library is not found on this machine" >&2; exit 2; }
  package=""
  for candidate in "$path" "$(readlink -f "$path")" "${path#/usr}" "/usr${path#/usr}"; do
    package="$(dpkg -S "$candidate" 2>/dev/null | head -1 | cut -d: -f1)" && [ -n "$package" ] && break
  done
  [ -n "$package" ] || { echo "release: no Debian package owns $path" >&2; exit 2; }
  packages+=("$package")
done
packages=($(printf '%s\n' "${packages[@]}" | sort -u))
glibc="$(getconf GNU_LIBC_VERSION | awk '{print $2}')"
if readelf -d "$binary" | grep -q RELR; then needs_glibc=2.36; else needs_glibc="$glibc"; fi
. /etc/os-release

root="$work/$name"
mkdir -p "$root"
cp -a "$stage/." "$root/"
# Symbols stripped: 92 MB -> 62 MB (the Swift runtime's metadata is in sections strip keeps).
strip "$root/bin/pkgtool" "$root/bin/pkgtool-serve"
cat > "$root/INSTALL" <<EOF
pkgtool $version for Linux ($arch)

Needs glibc $needs_glibc or later (built on ${PRETTY_NAME}) and these packages:

  Debian / Ubuntu:  apt-get install ${packages[*]}

No Swift toolchain is needed: the Swift runtime is linked into bin/pkgtool and bin/pkgtool-serve
(the server that 'pkgtool serve' runs; keep the two side by side).
unpack and install of an http(s):// URL also need the curl command (apt-get install curl).

Install (the folders are a PREFIX: bin/, share/man/, share/bash-completion/, share/zsh/, share/fish/):

  sudo tar -xzf $name.tar.gz -C /usr/local --strip-components=1 --no-overwrite-dir --exclude=INSTALL
  pkgtool --version

or into your home: the same with -C ~/.local (and ~/.local/bin on your PATH).
The man page is share/man/man1/pkgtool.1 (man pkgtool); the completions are found by bash
(bash-completion), zsh (when /usr/local/share/zsh/site-functions is in fpath) and fish.
EOF

mkdir -p "$outdir"
archive="$outdir/$name.tar.gz"
tar --sort=name --format=gnu --owner=0 --group=0 --numeric-owner --mode='u=rwX,go=rX' \
  --mtime="@$SOURCE_DATE_EPOCH" -C "$work" -cf - "$name" | gzip -9 -n > "$archive.tmp"
mv "$archive.tmp" "$archive"
echo "release: $archive ($(stat -c %s "$archive") bytes; needs ${packages[*]})" >&2
echo "$archive"

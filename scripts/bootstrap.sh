#!/usr/bin/env bash
# Installs what pkgtool needs to build and test, if it is missing:
#   Debian/Ubuntu: libarchive-dev (headers, pkg-config file), libarchive-tools (bsdtar),
#                  libxml2-dev, zlib1g-dev, libdeflate-dev, liblzma-dev (Apple Archive's pbzx), pkg-config, curl (unpack/install of a URL),
#                  unicode-data (CaseFolding.txt and NormalizationTest.txt, which the name tests check against)
#                  strace (tests that count the opens and writes of the real binary),
#                  groff-base (the manual test renders the man page's added sections);
#                  postgresql (the server's tests) through install_postgres_server, which only
#                  scripts/test.sh calls
#   macOS:         libarchive, libxml2 and libdeflate from Homebrew (keg-only: PKG_CONFIG_PATH is set)
# Source it (". scripts/bootstrap.sh") so PKG_CONFIG_PATH reaches the caller on macOS.
# It also sets release_flags: how to build the release binary. On Linux that carries the Swift
# runtime and Foundation inside the binary (--static-swift-stdlib): 16 MiB of memory at start
# instead of 29, and no shared Swift libraries needed where it runs. Where glibc is 2.36 or
# later, the binary is also linked by the toolchain's lld with packed relative relocations
# (DT_RELR): the loader then reads 16 KB of them instead of 2 MB, 1.5 MiB less at start
# (docs/performance.md), and with its code ordered (packaging/symbol-order.txt). Older glibc
# cannot load such a binary, so it is not done there.
set -u
release_flags=(-c release)
if [ "$(uname -s)" = Linux ]; then
  release_flags+=(--static-swift-stdlib)
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  swift_bin=$(dirname "$(readlink -f "$(command -v swift)")")
  if [ -x "$swift_bin/ld.lld" ] && [ -n "$glibc" ] \
    && [ "$(printf '%s\n' 2.36 "$glibc" | sort -V | head -1)" = 2.36 ]; then
    release_flags+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
    # The code a run needs, side by side: every function in a section of its own, the ones
    # packaging/symbol-order.txt lists (what everyday commands run; scripts/symbol-order.sh)
    # placed first. And no dynamic symbol table of the binary's own 36,000 functions, which
    # the loader searched on every lookup. 6 MiB less at peak (docs/performance.md).
    release_flags+=(-Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
      -Xlinker "--symbol-ordering-file=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/packaging/symbol-order.txt"
      -Xlinker --no-warn-symbol-ordering -Xlinker --no-export-dynamic)
  fi
fi

need_debian_packages() {
  local missing=()
  pkg-config --exists libarchive 2>/dev/null || missing+=(libarchive-dev)
  command -v bsdtar >/dev/null 2>&1 || missing+=(libarchive-tools)
  pkg-config --exists libxml-2.0 2>/dev/null || missing+=(libxml2-dev)
  pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
  pkg-config --exists libdeflate 2>/dev/null || missing+=(libdeflate-dev)
  pkg-config --exists liblzma 2>/dev/null || missing+=(liblzma-dev)
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  [ -f /usr/share/unicode/CaseFolding.txt ] || missing+=(unicode-data)
  command -v strace >/dev/null 2>&1 || missing+=(strace)
  command -v groff >/dev/null 2>&1 || missing+=(groff-base)
  echo "${missing[@]:-}"
}

# The server's tests (ContentServerTests) run a PostgreSQL server of their own: Debian's initdb and
# postgres from /usr/lib/postgresql/*/bin. Only scripts/test.sh and bench/serve.sh (the state
# store's benchmark) call this (scripts/demo.sh and the other scripts that source this file stay light); the package's own cluster is not used (the
# tests make theirs in a temporary folder), so the service is left stopped.
install_postgres_server() {
  if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then return 0; fi
  case "$(uname -s)" in
    Linux)
      echo "bootstrap: installing postgresql (the server's tests run one)" >&2
      local sudo_cmd=""
      [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
      $sudo_cmd apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends postgresql >&2
      # The package starts its own cluster where services run: nothing of ours uses it.
      $sudo_cmd service postgresql stop >/dev/null 2>&1 || true
      ;;
    *)
      echo "bootstrap: the server's PostgreSQL tests need Debian's postgresql package in /usr/lib/postgresql" >&2
      ;;
  esac
}

case "$(uname -s)" in
  Linux)
    missing=$(need_debian_packages)
    if [ -n "$missing" ]; then
      echo "bootstrap: installing $missing" >&2
      sudo_cmd=""
      [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
      $sudo_cmd apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq $missing >&2
    fi
    ;;
  Darwin)
    if command -v brew >/dev/null 2>&1; then
      for formula in libarchive libxml2 libdeflate pkg-config; do
        brew list "$formula" >/dev/null 2>&1 || brew install "$formula" >&2
      done
      export PKG_CONFIG_PATH="$(brew --prefix libarchive)/lib/pkgconfig:$(brew --prefix libxml2)/lib/pkgconfig:${PKG_CONFIG_PATH:-}"
      export PATH="$(brew --prefix libarchive)/bin:$PATH"
    else
      echo "bootstrap: Homebrew is needed on macOS for libarchive (https://brew.sh)" >&2
    fi
    ;;
esac

# The SARIF tests check logs against the vendored schema with Python's jsonschema (PyPI).
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import jsonschema" >/dev/null 2>&1; then
  echo "bootstrap: installing the Python package jsonschema" >&2
  python3 -m pip install -q jsonschema >&2 || echo "bootstrap: could not install jsonschema; the SARIF schema test will fail" >&2
fi

# The LZFSE tests check our own encoder and decoder against the reference C code, which PyPI's
# lzfse package wraps (Debian does not package it). The Apple Archive tests use it too, through
# scripts/aar_oracle.py (pbze); PyPI has no Apple Archive reader (its "aarpy" is a REST client).
if command -v python3 >/dev/null 2>&1 && ! python3 -c "import lzfse" >/dev/null 2>&1; then
  echo "bootstrap: installing the Python package lzfse" >&2
  python3 -m pip install -q lzfse >&2 || echo "bootstrap: could not install lzfse; the LZFSE tests will fail" >&2
fi

#!/usr/bin/env bash
# Builds pkgtool and its server pkgtool-serve (release) and installs them with their man pages and
# pkgtool's shell completions:
#   PREFIX/bin/pkgtool
#   PREFIX/bin/pkgtool-serve                              (what `pkgtool serve` runs)
#   PREFIX/share/man/man1/pkgtool.1                       (swift-argument-parser's manual plugin)
#   PREFIX/share/man/man1/pkgtool-serve.1
#   PREFIX/share/bash-completion/completions/pkgtool      (pkgtool --generate-completion-script bash)
#   PREFIX/share/zsh/site-functions/_pkgtool              (… zsh)
#   PREFIX/share/fish/vendor_completions.d/pkgtool.fish   (… fish)
# Usage: scripts/install.sh [PREFIX]   (default /usr/local; DESTDIR is honoured for packaging;
#        PKGTOOL_CONFIGURATION=debug for a quick trial install)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bootstrap.sh
prefix="${1:-/usr/local}"
root="${DESTDIR:-}${prefix}"

configuration="${PKGTOOL_CONFIGURATION:-release}"
flags=(-c "$configuration")
[ "$configuration" = release ] && flags=("${release_flags[@]}")
swift build "${flags[@]}" --product pkgtool >&2
swift build "${flags[@]}" --product pkgtool-serve >&2
# Copies: the manual plugin below may build the tools again, without the release flags.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bin_path="$(swift build "${flags[@]}" --show-bin-path)"
cp "$bin_path/pkgtool" "$work/pkgtool"
cp "$bin_path/pkgtool-serve" "$work/pkgtool-serve"
binary="$work/pkgtool"

# The man page, from the same command tree as --help. The plugin builds every product first; in
# the debug configuration (the same text), cheaper than building every product in release again
# without the release flags. Its date is SOURCE_DATE_EPOCH's when that is set (reproducible).
manual_date=()
[ -n "${SOURCE_DATE_EPOCH:-}" ] && manual_date=(--date "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)")
swift package plugin generate-manual --configuration debug "${manual_date[@]}" >&2
manual="$(find .build/plugins -path '*GenerateManual*' -name pkgtool.1 -newer "$binary" | head -1)"
[ -n "$manual" ] || manual="$(find .build/plugins -path '*GenerateManual*' -name pkgtool.1 | head -1)"
# EXIT STATUS and ENVIRONMENT, kept in docs/man-sections.mdoc.
scripts/man-page.sh "$manual" > "$work/pkgtool.1"
manual="$work/pkgtool.1"
# The server's page: generate-manual names it after the command ("pkgtool serve.1"); installed
# as pkgtool-serve(1), the program's name.
serve_manual="$(find .build/plugins -path '*GenerateManual*' -name 'pkgtool serve.1' | head -1)"
[ -n "$serve_manual" ] || { echo "install: generate-manual wrote no page for pkgtool serve" >&2; exit 2; }
sed 's/^\.Dt "PKGTOOL SERVE" 1$/.Dt PKGTOOL-SERVE 1/' "$serve_manual" > "$work/serve.1"
scripts/man-page.sh "$work/serve.1" > "$work/pkgtool-serve.1"

install -d "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
  "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d"
install -m 0755 "$binary" "$root/bin/pkgtool"
install -m 0755 "$work/pkgtool-serve" "$root/bin/pkgtool-serve"
install -m 0644 "$manual" "$root/share/man/man1/pkgtool.1"
install -m 0644 "$work/pkgtool-serve.1" "$root/share/man/man1/pkgtool-serve.1"
"$binary" --generate-completion-script bash > "$root/share/bash-completion/completions/pkgtool"
"$binary" --generate-completion-script zsh > "$root/share/zsh/site-functions/_pkgtool"
"$binary" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/pkgtool.fish"
echo "installed pkgtool $("$binary" --version) and pkgtool-serve into $root (man pkgtool, man pkgtool-serve; completions for bash, zsh, fish)"

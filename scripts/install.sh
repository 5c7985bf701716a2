#!/usr/bin/env bash
# Builds pkgtool (release) and installs it with its man page and shell completions:
#   PREFIX/bin/pkgtool
#   PREFIX/share/man/man1/pkgtool.1                       (swift-argument-parser's manual plugin)
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
# A copy: the manual plugin below may build the tool again, without the release flags.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$(swift build "${flags[@]}" --show-bin-path)/pkgtool" "$work/pkgtool"
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

install -d "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
  "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d"
install -m 0755 "$binary" "$root/bin/pkgtool"
install -m 0644 "$manual" "$root/share/man/man1/pkgtool.1"
"$binary" --generate-completion-script bash > "$root/share/bash-completion/completions/pkgtool"
"$binary" --generate-completion-script zsh > "$root/share/zsh/site-functions/_pkgtool"
"$binary" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/pkgtool.fish"
echo "installed pkgtool $("$binary" --version) into $root (man pkgtool; completions for bash, zsh, fish)"

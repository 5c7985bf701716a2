#!/usr/bin/env bash
# Prints pkgtool(1): the page swift-argument-parser's generate-manual wrote (GENERATED), with the
# ENVIRONMENT and EXIT STATUS sections of docs/man-sections.mdoc in place of the generator's own
# EXIT STATUS (".Ex -std": "exits 0 on success, and >0 if an error occurs"), or else before SEE
# ALSO, HISTORY or AUTHORS (mdoc's order), or at the end. The fragment's comment lines stay out.
# Used by scripts/install.sh and packaging/homebrew/pkgtool.rb.
# Usage: scripts/man-page.sh GENERATED > pkgtool.1
set -euo pipefail
sections="$(dirname "$0")/../docs/man-sections.mdoc"
awk -v sections="$sections" '
  function insert() { while ((getline line < sections) > 0) if (line !~ /^\.\\"/) print line; done = 1 }
  skipping && /^\.Sh / { skipping = 0 }
  skipping { next }
  /^\.Sh "?(EXIT STATUS|ENVIRONMENT)"?$/ { if (!done) insert(); skipping = 1; next }
  !done && /^\.Sh "?(SEE ALSO|HISTORY|AUTHORS)"?$/ { insert() }
  { print }
  END { if (!done) insert() }' "$1"

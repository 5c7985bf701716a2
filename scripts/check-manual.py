#!/usr/bin/env python3
"""Checks pkgtool's man page as a reader sees it: rendered with groff -mandoc -Tutf8 (what man
runs), it must have ENVIRONMENT and EXIT STATUS sections, list every exit code of README.md's
"Exit codes" table with the same words, name every environment variable the sources read
(getenv), and show no literal backslash (a backslash only ends a line of an example, as a shell
continuation). groff must render it without a warning.

Usage: scripts/check-manual.py PAGE.1 [README.md] [SOURCES_DIR]
       (a fragment such as docs/man-sections.mdoc is checked inside a minimal mdoc page)
Exit 0 when it holds, 1 with one line per problem otherwise."""

import os
import re
import subprocess
import sys


def render(page: str) -> tuple[str, str]:
    source = open(page, encoding="utf-8").read()
    if ".Dt " not in source:  # a fragment: give it a title block
        source = ".Dd January 1, 2000\n.Dt PKGTOOL 1\n.Os\n.Sh NAME\n.Nm pkgtool\n.Nd test\n" + source
    # A wide line and no hyphenation: each paragraph on one line, words whole.
    result = subprocess.run(
        ["groff", "-mandoc", "-Tutf8", "-ww", "-rLL=400n", "-rHY=0"],
        input=source.encode(), capture_output=True, env={**os.environ, "GROFF_NO_SGR": "1"})
    text = re.sub(r".\x08", "", result.stdout.decode())  # overstrike bold/underline
    return text, result.stderr.decode()


def sections(text: str) -> dict[str, str]:
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if re.match(r"^[A-Z][A-Z ]+$", line):
            current = line.strip()
            found[current] = []
        elif current:
            found[current].append(line)
    return {name: " ".join(" ".join(lines).split()) for name, lines in found.items()}


def readme_exit_codes(readme: str) -> dict[str, str]:
    text = open(readme, encoding="utf-8").read()
    table = text.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and re.match(r"^\d+(, \d+)*$", cells[0]):
            rows[cells[0]] = " ".join(cells[1].replace("`", "").split())
    return rows


def source_variables(sources: str) -> set[str]:
    names = set()
    for folder, _, files in os.walk(sources):
        for file in files:
            if file.endswith(".swift"):
                code = open(os.path.join(folder, file), encoding="utf-8").read()
                names.update(re.findall(r'getenv\("([A-Z_][A-Z0-9_]*)"\)', code))
                names.update(re.findall(r'environment\["([A-Z_][A-Z0-9_]*)"\]', code))
    return names


def main() -> int:
    page = sys.argv[1]
    readme = sys.argv[2] if len(sys.argv) > 2 else "README.md"
    sources = sys.argv[3] if len(sys.argv) > 3 else "Sources"
    text, warnings = render(page)
    problems = []
    # generate-manual leaves empty lines between paragraphs (rendered as space); any other
    # warning is a problem.
    warnings = [w for w in warnings.splitlines() if w.strip() and "Empty input line" not in w]
    if warnings:
        problems.append(f"groff warns: {'; '.join(warnings)}")
    for name in ("ENVIRONMENT", "EXIT STATUS"):
        count = len(re.findall(rf"^{name}$", text, re.M))
        if count > 1:
            problems.append(f"{count} {name} sections")
    found = sections(text)
    for name in ("ENVIRONMENT", "EXIT STATUS"):
        if name not in found:
            problems.append(f"no {name} section (sections: {', '.join(found)})")
    status = found.get("EXIT STATUS", "")
    codes = readme_exit_codes(readme)
    if not codes:
        problems.append(f"no exit codes found in {readme}'s 'Exit codes' table")
    for code, meaning in codes.items():
        if f"{code} {meaning}" not in status:
            problems.append(f"EXIT STATUS does not say, as {readme} does: {code} {meaning}")
    listed = set(re.findall(r"^\s+(\d+(?:, \d+)*)\s", "\n".join(
        line for line in text.split("EXIT STATUS", 1)[-1].splitlines()), re.M))
    for extra in sorted(listed - set(codes)):
        problems.append(f"EXIT STATUS lists {extra}, {readme}'s table does not")
    environment = found.get("ENVIRONMENT", "")
    for variable in sorted(source_variables(sources)):
        if not re.search(rf"(?<![A-Z0-9_]){variable}(?![A-Z0-9_])", environment):
            problems.append(f"ENVIRONMENT does not name {variable} (the sources read it)")
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.rstrip()
        inner = stripped[:-2] if stripped.endswith(" \\") else stripped
        if "\\" in inner:
            problems.append(f"a literal backslash in the rendered page, line {number}: {stripped.strip()}")
    for problem in problems:
        print(f"check-manual: {page}: {problem}", file=sys.stderr)
    if not problems:
        print(f"check-manual: ok: {page}: ENVIRONMENT and EXIT STATUS ({', '.join(codes)}), "
              f"{len(source_variables(sources))} variables, no stray backslash", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

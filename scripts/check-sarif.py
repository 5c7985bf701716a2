#!/usr/bin/env python3
"""Checks SARIF logs against the vendored SARIF 2.1.0 schema (offline), plus what the schema's
"format" keywords leave to the reader: every artifact URI is a percent-encoded URI reference,
every helpUri an absolute URI.

Usage: scripts/check-sarif.py LOG.sarif...   (exit 0 valid, 1 invalid, 2 cannot check)
"""
import json
import os
import re
import sys

try:
    import jsonschema
except ImportError:
    print("check-sarif: the Python package jsonschema is missing (pip install jsonschema)", file=sys.stderr)
    sys.exit(2)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "Tests", "HostedContentTests", "Schemas", "sarif-schema-2.1.0.json")
URI_REFERENCE = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")
ABSOLUTE_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")


def walk(value, path=""):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, f"{path}/{key}")
            if key == "uri" and isinstance(item, str):
                yield ("uri", f"{path}/{key}", item)
            if key in ("helpUri", "informationUri") and isinstance(item, str):
                yield ("absolute", f"{path}/{key}", item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk(item, f"{path}/{index}")


def main(paths):
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft7Validator(schema)
    failed = False
    for path in paths:
        with open(path, encoding="utf-8") as f:
            log = json.load(f)
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
        for error in errors:
            print(f"{path}: {'/'.join(map(str, error.path))}: {error.message}")
        for kind, where, text in walk(log):
            if kind == "uri" and (not URI_REFERENCE.match(text) or re.search(r"%(?![0-9A-F]{2})", text)):
                errors.append(where)
                print(f"{path}: {where}: '{text}' is not a percent-encoded URI reference")
            if kind == "absolute" and not ABSOLUTE_URI.match(text):
                errors.append(where)
                print(f"{path}: {where}: '{text}' is not an absolute URI")
        failed = failed or bool(errors)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))

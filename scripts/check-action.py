#!/usr/bin/env python3
"""Runs action.yml's steps as GitHub's runner would, against a local release archive: the YAML
has the inputs, output and composite steps docs/ci.md describes; each step's `run` goes to bash
with its `env` (the ${{ inputs.* }} expressions filled in from INPUTS), RUNNER_TEMP, GITHUB_PATH
(read back into PATH for the next step) and GITHUB_OUTPUT. Checks validate's exit code, the
SARIF file and the `sarif` output.

Usage: scripts/check-action.py ARCHIVE VERSION PACKAGE EXPECTED_EXIT
Exit 0 when it holds, 1 otherwise."""

import json
import os
import re
import subprocess
import sys
import tempfile

import yaml


def main() -> int:
    archive, version, package, expected = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    action = yaml.safe_load(open("action.yml"))
    assert set(action["inputs"]) >= {"path", "version", "args"}, action["inputs"]
    assert action["inputs"]["path"]["required"] and action["inputs"]["version"]["required"]
    assert action["runs"]["using"] == "composite"
    assert "steps.validate.outputs.sarif" in action["outputs"]["sarif"]["value"]
    with tempfile.TemporaryDirectory() as temp:
        sarif = os.path.join(temp, "out", "pkgtool.sarif")
        os.makedirs(os.path.dirname(sarif))
        inputs = {"path": package, "version": version, "args": "", "sarif": sarif, "repository": "",
                  "archive-url": "file://" + os.path.abspath(archive)}
        files = {name: os.path.join(temp, name) for name in ("GITHUB_PATH", "GITHUB_OUTPUT")}
        for path in files.values():
            open(path, "w").close()
        path = os.environ["PATH"]
        code = None
        for step in action["runs"]["steps"]:
            assert step["shell"] == "bash"
            env = {**os.environ, **files, "RUNNER_TEMP": temp, "PATH": path}
            for key, value in step.get("env", {}).items():
                env[key] = re.sub(r"\$\{\{\s*inputs\.([\w-]+)(\s*\|\|[^}]*)?\s*\}\}",
                                  lambda m: inputs[m.group(1)], value)
            assert "${{" not in step["run"], "expressions belong in env:, not in run:"
            code = subprocess.run(["bash", "-e", "-c", step["run"]], env=env).returncode
            added = [line for line in open(files["GITHUB_PATH"]).read().splitlines() if line]
            path = ":".join(added[::-1] + [os.environ["PATH"]])
            if step.get("id") != "validate":
                assert code == 0, f"step '{step['name']}' exited {code}"
        assert code == expected, f"validate step exited {code}, expected {expected}"
        outputs = dict(line.split("=", 1) for line in open(files["GITHUB_OUTPUT"]).read().splitlines())
        assert outputs.get("sarif") == sarif, outputs
        log = json.load(open(sarif))
        results = log["runs"][0]["results"]
        assert (len(results) == 0) == (expected == 0), results
    print(f"check-action: ok: action.yml installs {version} from the archive; validate exits {expected}, "
          f"SARIF with {len(results)} results, output sarif set", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

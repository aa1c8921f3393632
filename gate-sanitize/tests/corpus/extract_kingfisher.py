#!/usr/bin/env python3
"""Extracts the rule examples of MongoDB's Kingfisher secret scanner
(Apache-2.0) into tests/corpus/credentials/kingfisher.jsonl: for every rule
of every data/rules/*.yml (and *.yaml) at HEAD, one line per `examples`
entry and per `negative_examples` entry, as
{"rule": id, "name": name, "pattern": pattern, "text": example,
"positive": bool}, in file-name, rule and example order (a rule's
examples before its negative examples). A rule without examples gives no
line; anything that is not the expected shape stops the script rather
than being skipped. Needs PyYAML; the files are read with `git show`.

Usage: extract_kingfisher.py GIT_DIR > credentials/kingfisher.jsonl
"""

import json
import subprocess
import sys

import yaml


def main(gitdir):
    run = lambda *a: subprocess.run(["git", "--git-dir", gitdir, *a], capture_output=True, check=True).stdout.decode()
    files = sorted(
        f for f in run("ls-tree", "-r", "--name-only", "HEAD", "data/rules/").splitlines() if f.endswith((".yml", ".yaml"))
    )
    for f in files:
        doc = yaml.safe_load(run("show", "HEAD:" + f))
        for rule in doc["rules"]:
            rule_id, name, pattern = rule["id"], rule["name"], rule["pattern"]
            if not all(isinstance(x, str) for x in (rule_id, name, pattern)):
                sys.exit(f"{f}: rule {rule_id!r}: id, name and pattern must be strings")
            for key, positive in (("examples", True), ("negative_examples", False)):
                for text in rule.get(key) or []:
                    if not isinstance(text, str):
                        sys.exit(f"{f}: rule {rule_id}: {key} entry {text!r} is not a string")
                    line = {"rule": rule_id, "name": name, "pattern": pattern, "text": text, "positive": positive}
                    print(json.dumps(line, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])

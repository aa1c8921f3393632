#!/usr/bin/env python3
"""Converts Kingfisher's built-in rules into the JSON that build.rs reads.

Usage: vendor.py KINGFISHER_GIT_DIR > rules.json

Reads every `data/rules/*.yml` (and `*.yaml`) at HEAD of the given
repository (a bare clone works) and writes each rule as Kingfisher wrote
it: id, name, pattern, min_entropy, confidence, visible, examples and
negative examples, with the file it came from. Nothing is rewritten; which
rules the sanitizer runs is decided in build.rs. The HTTP validation and
dependency blocks are left out: the sanitizer never calls a vendor.
Needs PyYAML (only to regenerate the file).
"""

import json
import subprocess
import sys

import yaml


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


def main():
    repo = sys.argv[1]
    files = sorted(
        f for f in git(repo, "ls-tree", "-r", "--name-only", "HEAD", "data/rules/").split() if f.endswith((".yml", ".yaml"))
    )
    rules = []
    for path in files:
        for r in yaml.safe_load(git(repo, "show", f"HEAD:{path}"))["rules"]:
            rules.append(
                {
                    "id": r["id"],
                    "name": r["name"],
                    "file": path.rsplit("/", 1)[1],
                    "pattern": r["pattern"],
                    "min_entropy": float(r.get("min_entropy") or 0.0),
                    "confidence": r.get("confidence") or "medium",
                    "visible": r.get("visible", True),
                    "examples": r.get("examples") or [],
                    "negative_examples": r.get("negative_examples") or [],
                }
            )
    commit = git(repo, "log", "-1", "--format=%H %cs").split()
    out = {"source": "https://github.com/mongodb/kingfisher", "commit": commit[0], "date": commit[1], "rules": rules}
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Converts Nosey Parker's built-in rules into the JSON that build.rs reads.

Usage: vendor.py NOSEYPARKER_GIT_DIR > rules.json

Reads every `crates/noseyparker/data/default/builtin/rules/*.yml` and the
rulesets beside them at HEAD of the given repository (a bare clone works)
and writes each rule as Nosey Parker wrote it: id, name, pattern, examples,
negative examples, and the rulesets that include it. Nothing is rewritten;
which rules the sanitizer runs is decided in build.rs, from the rulesets.
Needs PyYAML (only to regenerate the file).
"""

import json
import subprocess
import sys

import yaml

BUILTIN = "crates/noseyparker/data/default/builtin"


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def load(repo, path):
    return yaml.safe_load(git(repo, "show", f"HEAD:{path}"))


def main():
    repo = sys.argv[1]
    files = sorted(git(repo, "ls-tree", "-r", "--name-only", "HEAD", BUILTIN).split())
    member = {}
    for path in files:
        if "/rulesets/" in path and path.endswith(".yml"):
            for ruleset in load(repo, path)["rulesets"]:
                for rule_id in ruleset.get("include_rule_ids", []):
                    member.setdefault(rule_id, []).append(ruleset["id"])
    rules = []
    for path in files:
        if "/rules/" in path and path.endswith(".yml"):
            for r in load(repo, path)["rules"]:
                rules.append(
                    {
                        "id": r["id"],
                        "name": r["name"],
                        "file": path.rsplit("/", 1)[1],
                        "pattern": r["pattern"],
                        "examples": r.get("examples") or [],
                        "negative_examples": r.get("negative_examples") or [],
                        "rulesets": sorted(member.get(r["id"], [])),
                    }
                )
    commit = git(repo, "log", "-1", "--format=%H %cs").split()
    out = {"source": "https://github.com/praetorian-inc/noseyparker", "commit": commit[0], "date": commit[1], "rules": rules}
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Extracts the exception fixtures of Google's fluent-plugin-detect-exceptions
(test/plugin/test_exception_detector.rb, Apache-2.0) into
tests/corpus/traces/fluent.jsonl: one JSON object per heredoc, with its
constant name and text (`<<~` heredocs lose their common indentation, as in
Ruby). Constants built by `+` from other heredocs are joined the same way.

Usage: extract_traces.py GIT_DIR > traces/fluent.jsonl
"""

import json
import re
import subprocess
import sys


def main(gitdir):
    src = subprocess.run(
        ["git", "--git-dir", gitdir, "show", "HEAD:test/plugin/test_exception_detector.rb"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    lines = src.split("\n")
    docs = {}
    order = []
    i = 0
    start = re.compile(r"^\s*([A-Z_0-9]+) = <<(~?)([A-Z_0-9]+)\.freeze\s*$")
    concat = re.compile(r"^\s*([A-Z_0-9]+) = \(([A-Z_0-9]+(?:\s*\+\s*[A-Z_0-9]+)+)\)\.freeze\s*$")
    while i < len(lines):
        m = start.match(lines[i])
        c = concat.match(lines[i])
        if m:
            name, squiggly, tag = m.groups()
            body = []
            i += 1
            while lines[i].strip() != tag:
                body.append(lines[i])
                i += 1
            if squiggly:
                indents = [len(l) - len(l.lstrip(" ")) for l in body if l.strip()]
                cut = min(indents) if indents else 0
                body = [l[cut:] for l in body]
            docs[name] = "\n".join(body) + "\n"
            order.append(name)
        elif c:
            name = c.group(1)
            docs[name] = "".join(docs[p.strip()] for p in c.group(2).split("+"))
            order.append(name)
        i += 1
    for name in order:
        print(json.dumps({"name": name, "text": docs[name]}, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])

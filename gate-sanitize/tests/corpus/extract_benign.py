#!/usr/bin/env python3
"""Extracts real error and diagnostic messages from other projects' sources
into tests/corpus/benign/*.jsonl, one JSON string per line.

Only messages that mention what a secret scanner looks for (passwords, keys,
tokens, hosts, certificates, authentication) are kept: they are the ones a
careless sanitizer would damage. Messages are taken as the software ships
them (printf conversions such as `%s` included), from:

* git: the English `msgid`s of po/de.po;
* kubectl: the single-line `msgid`s of
  pkg/util/i18n/translations/kubectl/template.pot (its multi-line entries
  are help pages with example command lines, not messages);
* curl: the format strings of `failf(data, "...")` and `infof(data, "...")`
  calls in lib/ (adjacent string literals joined);
* urllib3: the first string argument (plain or f-string, adjacent literals
  joined) of every `raise SomethingError(...)` / `...Warning(...)` in src/;
* OpenSSH: the format strings of `error`, `fatal`, `logit`, `verbose` and
  their `_f`/`_fr` forms in *.c.

Usage: extract_benign.py NAME GIT_DIR > benign/NAME.jsonl
"""

import json
import re
import subprocess
import sys

KEYWORDS = re.compile(
    r"pass(?:word|phrase|wd)?|\bkeys?\b|key[ _-]?(?:file|id|type|size|pair|ring|store)|token|secret|credential|"
    r"auth|host|cert|\bssl\b|\btls\b|private|signature|login|\buser",
    re.I,
)


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, check=True).stdout.decode(
        "utf-8", "replace"
    )


def c_unescape(s):
    out, i = [], 0
    table = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "a": "\a", "0": "\0"}
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append(table.get(s[i + 1], "\\" + s[i + 1]))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def po_msgids(text):
    """The msgid of every entry (obsolete `#~` entries excluded)."""
    ids, cur, in_id = [], None, False
    for line in text.splitlines():
        if line.startswith("msgid "):
            if cur is not None:
                ids.append(cur)
            cur, in_id = c_unescape(line[7:-1]), True
        elif line.startswith('"') and in_id:
            cur += c_unescape(line[1:-1])
        else:
            if line.startswith("msgstr") or line.startswith("msgid_plural"):
                in_id = False
    if cur is not None:
        ids.append(cur)
    return [i for i in ids if i]


LITERALS = r'"((?:\\.|[^"\\\n])*)"(?:\s*"((?:\\.|[^"\\\n])*)")*'


def joined_literals(m_text):
    return "".join(c_unescape(x) for x in re.findall(r'"((?:\\.|[^"\\\n])*)"', m_text))


def c_calls(gitdir, paths, funcs):
    files = [f for f in git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").splitlines() if paths(f)]
    call = re.compile(r"\b(?:" + "|".join(funcs) + r")\s*\(\s*(?:data\s*,\s*|[A-Z_0-9]+\s*,\s*)?(" + LITERALS + ")")
    out = []
    for f in files:
        src = git(gitdir, "show", "HEAD:" + f)
        for m in call.finditer(src):
            out.append(joined_literals(m.group(1)))
    return out


PY_LIT = r'(?:[rbfu]{0,2})"((?:\\.|[^"\\\n])*)"|(?:[rbfu]{0,2})\'((?:\\.|[^\'\\\n])*)\''


def py_raises(gitdir):
    files = [
        f
        for f in git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
        if f.startswith("src/") and f.endswith(".py")
    ]
    call = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning)\(\s*((?:(?:" + PY_LIT + r")\s*)+)")
    out = []
    for f in files:
        src = git(gitdir, "show", "HEAD:" + f)
        for m in call.finditer(src):
            parts = re.findall(PY_LIT, m.group(1))
            out.append("".join(c_unescape(a or b) for a, b in parts))
    return out


def main(name, gitdir):
    if name == "git":
        msgs = po_msgids(git(gitdir, "show", "HEAD:po/de.po"))
    elif name == "kubectl":
        pot = git(gitdir, "show", "HEAD:pkg/util/i18n/translations/kubectl/template.pot")
        msgs = [m for m in po_msgids(pot) if "\n" not in m.strip("\n")]
    elif name == "curl":
        msgs = c_calls(gitdir, lambda f: f.startswith("lib/") and f.endswith(".c"), ["failf", "infof"])
    elif name == "openssh":
        msgs = c_calls(
            gitdir,
            lambda f: "/" not in f and f.endswith(".c"),
            ["error", "fatal", "logit", "verbose", "error_f", "fatal_f", "logit_f", "verbose_f", "error_fr", "fatal_fr"],
        )
    elif name == "urllib3":
        msgs = py_raises(gitdir)
    else:
        raise SystemExit(f"unknown source {name}")
    seen = set()
    for m in msgs:
        m = m.strip("\n")
        if m and m not in seen and KEYWORDS.search(m):
            seen.add(m)
            print(json.dumps(m, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

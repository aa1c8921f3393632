#!/usr/bin/env python3
"""Extracts the snapshot cases of secretlint's rules (MIT) into
tests/corpus/credentials/secretlint.jsonl.

Every rule package `packages/@secretlint/secretlint-rule-NAME` has
`test/snapshots/CASE/` folders, each an input file (beside, at most, the
case's options) and the `output.json` secretlint produced for it. For each
case secretlint reports something in (most are named `ng.*`) one line
{"rule": NAME, "case": CASE, "text": input, "secrets": [reported text,
...]} with the text of every range it reports; for each case it reports
nothing in (`ok.*`) one line per non-blank input line, {"rule", "case",
"text": line, "secrets": []}.
Left out: the rules that take no credential (`no-homedir`, home
directories; `no-dotenv`, a file name; `filter-comments`, `pattern`,
`example`, which test secretlint's configuration), the reports of an
identifier (an AWS account id, an Azure client or tenant id: see
`IDENTIFIERS`) and the messages whose
credential is a whole file (`FILE_NAME` data: a `.p12` or key file by
its name) and the `ok.*` cases that are key files rather than text (not UTF-8, or a
folder of them). Ranges are UTF-16 offsets, as JavaScript counts. Anything that
is not the expected shape stops the script rather than being skipped.

Usage: extract_secretlint.py GIT_DIR > credentials/secretlint.jsonl
"""

import json
import subprocess
import sys

PREFIX = "packages/@secretlint/secretlint-rule-"
NOT_CREDENTIALS = {"no-homedir", "no-dotenv", "filter-comments", "pattern", "example"}
# Reports that name whose credential it is rather than being one.
IDENTIFIERS = {"AWSAccountID", "AzureClientId", "AzureTenantId"}


def utf16_slice(text, start, end):
    units = text.encode("utf-16-le")
    return units[2 * start : 2 * end].decode("utf-16-le")


def main(gitdir):
    run = lambda *a: subprocess.run(["git", "--git-dir", gitdir, *a], capture_output=True, check=True).stdout
    paths = run("ls-tree", "-r", "-z", "--name-only", "HEAD", "packages/@secretlint/").decode().split("\0")
    cases = {}
    for p in paths:
        if not p.startswith(PREFIX) or "/test/snapshots/" not in p:
            continue
        rule = p[len(PREFIX) :].split("/", 1)[0]
        if rule in NOT_CREDENTIALS or rule.startswith("preset-"):
            continue
        folder, name = p.rsplit("/", 1)
        case = folder.rsplit("/", 1)[1]
        cases.setdefault((rule, case), {})[name] = p
    for (rule, case), files in sorted(cases.items()):
        if "output.json" not in files:
            sys.exit(f"{rule}/{case}: no output.json")
        output = json.loads(run("show", "HEAD:" + files["output.json"]))
        messages = output.get("messages") or []
        if messages and all("FILE_NAME" in (m.get("data") or {}) for m in messages):
            continue
        inputs = [n for n in files if n not in ("output.json", "README.md") and not n.startswith((".secretlintrc", "options."))]
        if len(inputs) != 1 and not messages:
            continue  # a key file's fixture folder (`.p12`, `.pem`, `.csr`) that secretlint passes
        if len(inputs) != 1:
            sys.exit(f"{rule}/{case}: expected one input beside output.json, found {sorted(files)}")
        try:
            text = run("show", "HEAD:" + files[inputs[0]]).decode("utf-8")
        except UnicodeDecodeError:
            if messages:
                sys.exit(f"{rule}/{case}: a binary input with messages")
            continue  # a binary file secretlint passes (a DER key): not text a tool returns
        if not messages:
            for line in text.splitlines():
                if line.strip():
                    print(json.dumps({"rule": rule, "case": case, "text": line, "secrets": []}, ensure_ascii=False))
            continue
        secrets = []
        for m in messages:
            if "FILE_NAME" in (m.get("data") or {}) or m.get("messageId") in IDENTIFIERS:
                continue
            start, end = m["range"]
            secrets.append(utf16_slice(text, start, end))
        if secrets:
            print(json.dumps({"rule": rule, "case": case, "text": text, "secrets": secrets}, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1])

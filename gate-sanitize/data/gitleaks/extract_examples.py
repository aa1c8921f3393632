#!/usr/bin/env python3
"""Extracts gitleaks' own per-rule examples into examples.json.

Every rule in gitleaks' generator (cmd/generate/config/rules/*.go) ends with
`utils.Validate(r, tps, fps)`: true positives the rule must find and false
positives it must not. This script reads those Go sources at the pinned
release and evaluates the `tps`/`fps` expressions with a small interpreter
for the subset of Go they use (string literals, `+`, `[]string{...}`,
`append`, `utils.GenerateSampleSecret(s)`, `utils.AlphaNumeric` and friends,
`secrets.NewSecret`). `secrets.NewSecret(re)` draws a random string matching
`re` (gitleaks uses lucasjones/reggen with a repeat limit of 1); here the draw
is seeded by the rule id so the output is reproducible. A sample whose
expression uses anything else (a rule-local helper, a loop) is counted as
skipped rather than guessed.

Usage: extract_examples.py RULES_DIR > examples.json
"""

import json
import os
import random
import re
import sys
import zlib

try:
    import warnings

    warnings.simplefilter("ignore", FutureWarning)
    import re._parser as sre_parse  # Python >= 3.11
    import re._constants as C
except ImportError:  # pragma: no cover
    import sre_parse
    import sre_constants as C


class Skip(Exception):
    """An expression outside the supported subset."""


# ---------------------------------------------------------------- lexing

TOKEN = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<str>"(?:\\.|[^"\\\n])*")
  | (?P<rune>'(?:\\.|[^'\\\n])*')
  | (?P<num>\d+(?:\.\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<op>\.\.\.|:=|[-+*/%&|^!<>=]=?|[{}()\[\],;:.])
    """,
    re.S | re.X,
)


def go_string(lit):
    if lit.startswith("`"):
        return lit[1:-1].replace("\r", "")
    body = lit[1:-1]
    # Go's escapes are a subset of Python's for the ones used here.
    return json.loads('"' + body.replace("\\'", "'").replace("\\x60", "`") + '"') if "\\x" not in body else bytes(
        body, "utf-8"
    ).decode("unicode_escape")


def lex(src):
    out = []
    pos = 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            out.append(("op", src[pos]))
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            if "\n" in m.group():
                out.append(("nl", "\n"))
            continue
        out.append((kind, m.group()))
    return out


# ---------------------------------------------------------------- sampling


def sample(pattern, rng):
    """A random string matching `pattern`, reggen-style (unbounded repeats
    go at most one past their minimum)."""
    try:
        tree = sre_parse.parse(pattern)
    except Exception as e:  # noqa: BLE001
        raise Skip(f"regex {pattern!r}: {e}")
    return "".join(gen(tree, rng))


PRINTABLE = [chr(c) for c in range(0x21, 0x7F)]


def class_chars(items):
    chars = set()
    neg = False
    for op, av in items:
        if op is C.NEGATE:
            neg = True
        elif op is C.LITERAL:
            chars.add(chr(av))
        elif op is C.RANGE:
            chars.update(chr(c) for c in range(av[0], av[1] + 1))
        elif op is C.CATEGORY:
            chars.update(category(av))
        else:
            raise Skip(f"class item {op}")
    if neg:
        chars = set(PRINTABLE) - chars
    return sorted(chars)


def category(cat):
    name = str(cat)
    if "DIGIT" in name:
        s = "0123456789"
    elif "WORD" in name:
        s = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
    elif "SPACE" in name:
        s = " "
    else:
        raise Skip(f"category {name}")
    if "NOT" in name:
        return [c for c in PRINTABLE if c not in s]
    return list(s)


def gen(tree, rng):
    out = []
    for op, av in tree:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(rng.choice([c for c in PRINTABLE if ord(c) != av]))
        elif op is C.ANY:
            out.append(rng.choice(PRINTABLE))
        elif op is C.IN:
            out.append(rng.choice(class_chars(av)))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            if hi is C.MAXREPEAT:
                hi = lo + 1
            for _ in range(rng.randint(lo, hi)):
                out.extend(gen(sub, rng))
        elif op is C.SUBPATTERN:
            out.extend(gen(av[-1], rng))
        elif op is C.BRANCH:
            out.extend(gen(rng.choice(av[1]), rng))
        elif op is C.AT:
            pass
        else:
            raise Skip(f"regex op {op}")
    return out


# ---------------------------------------------------------------- evaluation

SAMPLE_TEMPLATES = [
    '{i}Token="{s}"',
    '{i}Token = "{s}"',
    "{i}Token={s}",
    "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}',
    '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    '{i}_token: "{s}"',
    'string {i}Token = "{s}";',
    'var {i}Token string = "{s}"',
    '{i}Token := "{s}"',
    "{i}Token := `{s}`",
    'String {i}Token = "{s}";',
    'var {i}Token = "{s}"',
    '${i}Token .= "{s}"',
    "{i}Token = '{s}'",
    '{i}Token = "{s}"',
    'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"',
    '{i}_TOKEN = "{s}"',
    '{i}_TOKEN := "{s}"',
    '{i}_TOKEN ::= "{s}"',
    '{i}_TOKEN :::= "{s}"',
    '{i}_TOKEN ?= "{s}"',
]


class Val:
    """A string or list of strings, with the secret each sample carries
    when the generator put it there."""

    def __init__(self, items, scalar):
        self.items = items  # list of (text, secret or None)
        self.scalar = scalar


def s(text, secret=None):
    return Val([(text, secret)], True)


class Interp:
    def __init__(self, toks, rng):
        self.t = toks
        self.i = 0
        self.rng = rng

    def peek(self, k=0):
        j = self.i
        seen = 0
        while j < len(self.t):
            if self.t[j][0] != "nl":
                if seen == k:
                    return self.t[j]
                seen += 1
            j += 1
        return ("eof", "")

    def next(self):
        while self.t[self.i][0] == "nl":
            self.i += 1
        tok = self.t[self.i]
        self.i += 1
        return tok

    def expect(self, v):
        tok = self.next()
        if tok[1] != v:
            raise Skip(f"expected {v}, got {tok}")

    def expr(self, env):
        v = self.unary(env)
        while self.peek()[1] == "+":
            self.next()
            r = self.unary(env)
            if not (v.scalar and r.scalar):
                raise Skip("+ on a list")
            (a, sa), (b, sb) = v.items[0], r.items[0]
            v = s(a + b, sa or sb)
        return v

    def args(self, env):
        self.expect("(")
        out = []
        while self.peek()[1] != ")":
            v = self.expr(env)
            if self.peek()[1] == "...":
                self.next()
                v = Val(v.items, False)
                v.spread = True
            out.append(v)
            if self.peek()[1] == ",":
                self.next()
        self.expect(")")
        return out

    def unary(self, env):
        kind, tok = self.next()
        if kind in ("raw", "str"):
            return s(go_string(tok))
        if kind == "op" and tok == "[" and self.peek(1)[1] == "byte":
            self.expect("]")
            self.expect("byte")
            self.expect("(")
            v = self.expr(env)
            self.expect(")")
            return v
        if kind == "op" and tok == "[":
            self.expect("]")
            self.expect("string")
            self.expect("{")
            items = []
            while self.peek()[1] != "}":
                v = self.expr(env)
                if not v.scalar:
                    raise Skip("list in list")
                items.extend(v.items)
                if self.peek()[1] == ",":
                    self.next()
            self.expect("}")
            return Val(items, False)
        if kind == "ident" and tok == "map":
            self.expect("[")
            self.expect("string")
            self.expect("]")
            self.expect("string")
            self.expect("{")
            items = []
            while self.peek()[1] != "}":
                path = self.expr(env).items[0][0]
                self.expect(":")
                v = self.expr(env)
                for text, secret in v.items:
                    PATHS[text] = path
                items.extend(v.items)
                if self.peek()[1] == ",":
                    self.next()
            self.expect("}")
            return Val(items, False)
        if kind == "ident":
            if tok in env:
                return env[tok]
            if self.peek()[1] != "(":
                raise Skip(f"unknown name {tok}")
            args = self.args(env)
            return self.call(tok, args)
        raise Skip(f"unexpected {tok}")

    def call(self, name, args):
        def text(k):
            v = args[k]
            if not v.scalar:
                raise Skip(f"{name}: list argument")
            return v.items[0][0]

        classes = {
            "utils.Numeric": "[0-9]{%s}",
            "utils.Hex": "[a-f0-9]{%s}",
            "utils.AlphaNumeric": "[a-z0-9]{%s}",
            "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
            "utils.AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
            "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
        }
        if name in classes:
            return s(classes[name] % text(0))
        if name == "utils.Hex8_4_4_4_12":
            return s("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        if name == "secrets.NewSecret":
            v = sample(text(0), self.rng)
            return s(v, v)
        if name in ("utils.GenerateSampleSecret", "utils.GenerateSampleSecrets"):
            ident, secret = text(0), text(1)
            templates = SAMPLE_TEMPLATES if name.endswith("s") else ['{i}_api_token = "{s}"']
            items = [
                (t.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", secret), secret)
                for t in templates
            ]
            return Val(items, name.endswith("Secret"))
        if name == "newPlausibleSecret":
            # generic.go: retry until the draw has a digit 1-9 and no stop word.
            for _ in range(1000):
                v = sample(text(0), self.rng)
                if re.search("[1-9]", v) and not any(w in v.lower() for w in STOPWORDS):
                    return s(v, v)
            raise Skip("no plausible secret")
        if name == "base64.StdEncoding.EncodeToString":
            import base64

            return s(base64.b64encode(text(0).encode()).decode())
        if name == "append":
            base = args[0]
            items = list(base.items)
            for a in args[1:]:
                items.extend(a.items)
            return Val(items, False)
        if name == "fmt.Sprintf":
            fmt = text(0)
            rest = [text(k) for k in range(1, len(args))]
            if re.search(r"%[^sq%]", fmt):
                raise Skip("Sprintf verb")
            it = iter(rest)
            out = re.sub(r"%([sq%])", lambda m: "%" if m.group(1) == "%" else (json.dumps(next(it)) if m.group(1) == "q" else next(it)), fmt)
            secret = next((a.items[0][1] for a in args[1:] if a.items[0][1]), None)
            return s(out, secret)
        if name == "strings.Repeat":
            return s(text(0) * int(text(1)))
        raise Skip(f"call {name}")


def statements(body_toks):
    """Splits a function body into top-level statements (token lists)."""
    out, cur, depth = [], [], 0
    for tok in body_toks:
        if tok[1] in "({[" and tok[0] == "op":
            depth += 1
        elif tok[1] in ")}]" and tok[0] == "op":
            depth -= 1
        if tok[0] == "nl" and depth == 0:
            if cur:
                out.append(cur)
            cur = []
            continue
        cur.append(tok)
    if cur:
        out.append(cur)
    return out


def functions(toks):
    """Yields (name, body tokens) of each top-level func."""
    i = 0
    while i < len(toks):
        if toks[i] == ("ident", "func"):
            name = toks[i + 1][1]
            j = i
            while toks[j][1] != "{":
                j += 1
            depth, k = 0, j
            while True:
                if toks[k][1] == "{":
                    depth += 1
                elif toks[k][1] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            yield name, toks[j + 1 : k]
            i = k
        i += 1


def run(stmts, env, rng, skipped):
    """Evaluates `name := expr`, `name = expr` and `var name = expr`
    statements (also inside `var ( ... )`), keeping what evaluates."""
    for st in stmts:
        if st and st[0] == ("ident", "var"):
            st = st[1:]
            if st and st[0][1] == "(":
                run(statements(st[1:-1]), env, rng, skipped)
                continue
            if len(st) >= 2 and st[1][1] not in ("=",):
                env.setdefault(st[0][1], Val([], False))
                continue
        if len(st) < 3 or st[0][0] != "ident" or st[1][1] not in (":=", "="):
            continue
        name = st[0][1]
        it = Interp(st[2:] + [("nl", "\n")], rng)
        try:
            env[name] = it.expr(env)
        except (Skip, IndexError, StopIteration, ValueError) as e:
            if name in ("tps", "fps"):
                skipped.append(f"{name}: {e}")
            env.setdefault(name, Val([], False))


def outside_functions(toks):
    """The tokens of a file that are not inside a func."""
    out, i = [], 0
    while i < len(toks):
        if toks[i] == ("ident", "func"):
            j = i
            while toks[j][1] != "{":
                j += 1
            depth = 0
            while True:
                if toks[j][1] == "{":
                    depth += 1
                elif toks[j][1] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            i = j + 1
            continue
        out.append(toks[i])
        i += 1
    return out


STOPWORDS = []

# The file path a ValidateWithPaths sample is checked under, by its text.
PATHS = {}


def go_to_python(p):
    """Go (RE2) regex syntax as Python's `re` reads it: a flag group such
    as `(?i)` after the start applies to the rest of its enclosing group,
    and `\\z` is Python's `\\Z`."""
    out, stack, i = [], [0], 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            nxt = p[i + 1]
            out.append("\\Z" if nxt == "z" else p[i : i + 2])
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < len(p) and p[j] == "^":
                j += 1
            if j < len(p) and p[j] == "]":
                j += 1
            while p[j] != "]":
                if p[j] == "\\":
                    j += 1
                elif p[j] == "[" and p[j + 1] == ":":
                    j = p.index(":]", j) + 1
                j += 1
            body = p[i + 1 : j].replace("[", "\\[") if "[:" not in p[i + 1 : j] else p[i + 1 : j]
            out.append("[" + body + "]")
            i = j + 1
            continue
        m = re.match(r"\(\?([a-zA-Z]+)\)", p[i:])
        if m and (out or i > 0):
            out.append("(?" + m.group(1) + ":")
            stack[-1] += 1
            i += m.end()
            continue
        if c == "(":
            stack.append(0)
        elif c == ")":
            out.append(")" * stack.pop())
        out.append(c)
        i += 1
    out.append(")" * stack.pop())
    return "".join(out)


def entropy(v):
    """gitleaks' shannonEntropy: per rune, divided by the byte length."""
    import math
    from collections import Counter

    n = len(v.encode())
    return -sum(c / n * math.log2(c / n) for c in Counter(v).values()) if v else 0.0


def derive(rule, entry, rng):
    """For a rule whose Go source gives no true (or no false) positive,
    derive one from the rule's own regex, checked with Python's `re`: a
    draw from the regex that `re` matches and whose entropy clears the
    rule's threshold; a true positive whose secret is cut short until `re`
    no longer matches."""
    try:
        rx = re.compile(go_to_python(rule["regex"]))
    except (re.error, KeyError) as e:
        entry["skipped"].append(f"derive: {e}")
        return
    if not entry["tps"]:
        for _ in range(200):
            try:
                v = sample(go_to_python(rule["regex"]), rng)
            except Skip as e:
                entry["skipped"].append(f"derive tp: {e}")
                break
            m = rx.search(v)
            if not m:
                continue
            groups = [g for g in m.groups() if g]
            secret = groups[0] if groups else m.group(0)
            if entropy(secret) > rule.get("entropy", 0.0):
                entry["tps"].append({"text": v, "secret": secret, "derived": True})
                break
    if not entry["fps"]:
        for tp in entry["tps"]:
            secret = tp.get("secret")
            if not secret:
                continue
            for v in [tp["text"].replace(secret, secret[:cut]) for cut in (len(secret) // 2, len(secret) // 3, 4)] + [
                tp["text"].replace(secret, "x" * len(secret))
            ]:
                if v != tp["text"] and not rx.search(v):
                    entry["fps"].append(v)
                    entry.setdefault("derived_fps", []).append(v)
                    break
            if entry["fps"]:
                break


def main(rules_dir):
    rules = {}
    import tomllib

    cfg = tomllib.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gitleaks.toml"), "rb"))
    for rule in cfg["rules"]:
        if rule["id"] == "generic-api-key":
            for a in rule.get("allowlists", []):
                STOPWORDS.extend(a.get("stopwords", []))
    for fname in sorted(os.listdir(rules_dir)):
        if not fname.endswith(".go") or fname.endswith("_test.go"):
            continue
        src = open(os.path.join(rules_dir, fname), encoding="utf-8").read()
        toks = lex(src)
        file_env = {}
        run(statements(outside_functions(toks)), file_env, random.Random(zlib.crc32(fname.encode())), [])
        for fn, body in functions(toks):
            ids = re.findall(r'RuleID:\s*"([^"]+)"', "".join(t[1] if t[0] != "nl" else "\n" for t in body))
            if len(ids) != 1:
                continue
            rid = ids[0]
            rng = random.Random(zlib.crc32(rid.encode()))
            env = dict(file_env)
            skipped = []
            run(statements(body), env, rng, skipped)
            entry = rules.setdefault(rid, {"tps": [], "fps": [], "skipped": []})
            for text, secret in env.get("tps", Val([], False)).items:
                entry["tps"].append({"text": text, "secret": secret} if secret else {"text": text})
            for text, _ in env.get("fps", Val([], False)).items:
                entry["fps"].append(text)
                if text in PATHS:
                    entry.setdefault("fp_paths", {})[text] = PATHS[text]
            entry["skipped"].extend(skipped)
    for rule in cfg["rules"]:
        entry = rules.setdefault(rule["id"], {"tps": [], "fps": [], "skipped": []})
        if "path" in rule:
            entry["path"] = rule["path"]
        if "regex" in rule and (not entry["tps"] or not entry["fps"]):
            derive(rule, entry, random.Random(zlib.crc32(rule["id"].encode()) ^ 1))
    json.dump({"rules": rules}, sys.stdout, indent=1, ensure_ascii=False, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""Build replayable `gate replay` transcripts from the AgentDojo benchmark.

What it makes
-------------
From AgentDojo (PyPI `agentdojo==0.1.35`, benchmark version `v1.2.1`), for the
`workspace` and `slack` suites only:

* `workspace.tools.json`, `slack.tools.json`: each suite's tools as a JSON
  array of MCP tools (`name`, `description`, `inputSchema` with `$defs`
  inlined, MCP `annotations`, and gate's effect names in
  `_meta["gate/effects"]`). The effects are the labels in `LABELS` below,
  chosen per tool as the tool's users would declare them.
* `utility.jsonl`: one conversation per user task of each suite, on the
  suite's default environment (no injection): `{"task", "user"}`, the task's
  prompt as `{"user_message"}`, then each ground-truth call of the task
  (`user_task.ground_truth(env)`) executed for real through agentdojo's
  `FunctionsRuntime`, as `{"call": {"id": "user-N", "name", "arguments"},
  "result": ...}` or `{"call": ..., "error": "Type: message"}`.
* `attacks.jsonl`: one conversation per (user task, injection task) pair whose
  user task's ground truth reads at least one injection vector (agentdojo's
  own `get_injection_candidates`). The environment carries the injections of
  the `important_instructions` attack (`ImportantInstructionsAttack`, aimed at
  a dummy pipeline named `gpt-4o-2024-05-13`, so the model is addressed as
  "GPT-4" and the user signs as "Emma Johnson"). The user task's ground-truth
  calls run first (`user-N`), then the injection task's ground truth,
  computed with `injection_task.ground_truth(env)` on the environment as the
  user calls left it (`injection-N`).
* `index.json`: per suite the counts, and per transcript its task id, kind,
  the injection vectors it carries, which call results hold injected text,
  and the injection task's calls (ids and tool names).
* `LICENSE`: AgentDojo's licence (MIT), copied from the installed package.

Which pairs
-----------
By default (the subset vendored in the repository, for CI): every utility
transcript of both suites, and for attacks a fixed rotation: the j-th
injectable user task (in task-number order) is paired with injection task
number j mod K (K injection tasks, in task-number order), repeated over the
user tasks until every injection task appears at least twice per suite.
`--all` writes every injectable pair instead (the full measurement).

How to run
----------
    python3 -m venv /work/agentdojo-venv
    /work/agentdojo-venv/bin/pip install agentdojo==0.1.35
    /work/agentdojo-venv/bin/python gate-cli/tests/agentdojo/build.py
    /work/agentdojo-venv/bin/python gate-cli/tests/agentdojo/build.py --all

`--out DIR` chooses where the files go: by default this script's own
directory for the subset, and `target/agentdojo` (at the repository root)
with `--all`. The output is deterministic: a rerun writes identical files.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import importlib.metadata
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

AGENTDOJO_VERSION = "0.1.35"
BENCHMARK_VERSION = "v1.2.1"
SUITES = ("workspace", "slack")
ATTACK = "important_instructions"
PIPELINE_NAME = "gpt-4o-2024-05-13"
USER = "emma"
# A phrase of the important_instructions template that survives JSON
# escaping, used to tell which results hold the injected text.
INJECTION_MARK = "This is an important message from me, Emma Johnson"

# The suites' tools stamp sent mail and written files with the wall clock;
# for identical output on every run the clock is frozen at noon of the
# workspace calendar's "current day" (checked when the suite loads).
FROZEN_NOW = datetime.datetime(2024, 5, 15, 12, 0, 0)

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[2]

# gate's effect names, in the order gate writes them.
EFFECT_ORDER = (
    "read_only",
    "idempotent",
    "writes",
    "destructive",
    "external",
    "keyed",
    "approval",
    "private",
    "untrusted",
    "trusted",
)

# Per suite, per tool: (gate effects, why). `private`: the results hold the
# user's own data. `untrusted`: the results hold text third parties wrote
# (an `external` read is untrusted anyway unless it says `trusted`).
# `external`: the call communicates out of the user's own space.
LABELS: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    "workspace": {
        "send_email": (
            ("writes", "external", "private"),
            "sends mail out to others; the result is the user's own sent email",
        ),
        "delete_email": (
            ("destructive",),
            "deletes an email from the user's own inbox; the result is a fixed confirmation",
        ),
        "get_unread_emails": (
            ("read_only", "private", "untrusted"),
            "the user's received mail, written by its senders (marking it read is treated as a read, as mail clients do)",
        ),
        "get_sent_emails": (
            ("read_only", "private"),
            "mail the user wrote and sent",
        ),
        "get_received_emails": (
            ("read_only", "private", "untrusted"),
            "the user's received mail, written by its senders",
        ),
        "get_draft_emails": (
            ("read_only", "private"),
            "the user's own unsent drafts",
        ),
        "search_emails": (
            ("read_only", "private", "untrusted"),
            "searches the whole mailbox, received mail included",
        ),
        "search_contacts_by_name": (
            ("read_only", "private"),
            "the user's address book",
        ),
        "search_contacts_by_email": (
            ("read_only", "private"),
            "the user's address book",
        ),
        "get_current_day": (
            ("read_only",),
            "the calendar's clock: neither the user's secrets nor third-party text",
        ),
        "search_calendar_events": (
            ("read_only", "private", "untrusted"),
            "the user's calendar, including events others created or invited the user to",
        ),
        "get_day_calendar_events": (
            ("read_only", "private", "untrusted"),
            "the user's calendar, including events others created or invited the user to",
        ),
        "create_calendar_event": (
            ("writes", "external", "private"),
            "adds an event and emails the invitation to its participants; the result is the new event",
        ),
        "cancel_calendar_event": (
            ("destructive", "external"),
            "cancels an event and emails its participants; the result is a fixed confirmation",
        ),
        "reschedule_calendar_event": (
            ("destructive", "external", "private", "untrusted"),
            "overwrites an event's time and emails its participants; the result is the event, which others may have written",
        ),
        "add_calendar_event_participants": (
            ("writes", "external", "private", "untrusted"),
            "invites people to an event (emailing them); the result is the event, which others may have written",
        ),
        "append_to_file": (
            ("writes", "private", "untrusted"),
            "appends to a drive file; the result is the whole file, which may be shared and written by others",
        ),
        "search_files_by_filename": (
            ("read_only", "private", "untrusted"),
            "the user's drive, including files others own and share",
        ),
        "create_file": (
            ("writes", "private"),
            "creates a file in the user's own drive; the result is that new file",
        ),
        "delete_file": (
            ("destructive", "private", "untrusted"),
            "deletes a drive file; the result is the deleted file, which may be shared and written by others",
        ),
        "get_file_by_id": (
            ("read_only", "private", "untrusted"),
            "a drive file, possibly owned and written by others",
        ),
        "list_files": (
            ("read_only", "private", "untrusted"),
            "every drive file, shared ones included",
        ),
        "share_file": (
            ("writes", "external", "private", "untrusted"),
            "gives another person access to a file; the result is the file, which may be written by others",
        ),
        "search_files": (
            ("read_only", "private", "untrusted"),
            "searches the whole drive, shared files included",
        ),
    },
    "slack": {
        "get_channels": (
            ("read_only", "private", "untrusted"),
            "the workspace's channel names, which any member (external ones too) may have chosen",
        ),
        "add_user_to_channel": (
            ("writes", "external"),
            "gives a person access to a channel's messages",
        ),
        "read_channel_messages": (
            ("read_only", "private", "untrusted"),
            "the workspace's messages, written by other members",
        ),
        "read_inbox": (
            ("read_only", "private", "untrusted"),
            "direct messages, written by their senders",
        ),
        "send_direct_message": (
            ("writes", "external"),
            "sends a message to another person",
        ),
        "send_channel_message": (
            ("writes", "external"),
            "posts a message that the channel's members read",
        ),
        "get_users_in_channel": (
            ("read_only", "private"),
            "the workspace's member list",
        ),
        "invite_user_to_slack": (
            ("writes", "external"),
            "sends an invitation to an email address and lets a new person in",
        ),
        "remove_user_from_slack": (
            ("destructive",),
            "removes a member and deletes their inbox, inside the workspace",
        ),
        "get_webpage": (
            ("read_only", "external"),
            "fetches a page from the web: an external read, so untrusted",
        ),
        "post_webpage": (
            ("writes", "external"),
            "publishes content at a URL on the web",
        ),
    },
}


def check_effects(names: tuple[str, ...]) -> None:
    """The combinations gate refuses (gate-core `Effects::check`)."""
    s = set(names)
    unknown = s - set(EFFECT_ORDER)
    if unknown:
        raise ValueError(f"unknown effects {sorted(unknown)}")
    writes = s & {"writes", "idempotent", "destructive"}
    if "read_only" in s and writes:
        raise ValueError("read_only with a write effect")
    if "read_only" not in s and not writes:
        raise ValueError("neither read_only nor a write effect")
    if {"writes", "idempotent"} <= s:
        raise ValueError("writes and idempotent")
    if {"untrusted", "trusted"} <= s:
        raise ValueError("untrusted and trusted")
    if "trusted" in s and not {"external", "read_only"} <= s:
        raise ValueError("trusted on something other than an external read")


def annotations(names: tuple[str, ...]) -> dict[str, bool]:
    s = set(names)
    return {
        "readOnlyHint": "read_only" in s,
        "destructiveHint": "destructive" in s,
        "idempotentHint": "read_only" in s or "idempotent" in s,
        "openWorldHint": "external" in s,
    }


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every local `$ref` replaced by its `$defs` entry."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                ref = node["$ref"]
                prefix = "#/$defs/"
                if not ref.startswith(prefix):
                    raise ValueError(f"unsupported $ref {ref}")
                target = walk(copy.deepcopy(defs[ref[len(prefix) :]]))
                rest = {k: walk(v) for k, v in node.items() if k != "$ref"}
                return {**target, **rest}
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out = walk(schema)
    if "$ref" in json.dumps(out):
        raise ValueError("recursive $ref left in schema")
    return out


def freeze_clock() -> None:
    """Makes `datetime.datetime.now()` in the workspace tools return `FROZEN_NOW`."""
    from agentdojo.default_suites.v1.tools import cloud_drive_client, email_client

    class FrozenDatetime(datetime.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> datetime.datetime:
            return FROZEN_NOW if tz is None else FROZEN_NOW.replace(tzinfo=tz)

    shim = types.ModuleType("datetime")
    shim.__dict__.update(datetime.__dict__)
    shim.datetime = FrozenDatetime  # type: ignore[attr-defined]
    for module in (email_client, cloud_drive_client):
        module.datetime = shim  # type: ignore[attr-defined]


def tools_json(suite_name: str, suite: Any) -> list[dict[str, Any]]:
    labels = LABELS[suite_name]
    names = [t.name for t in suite.tools]
    missing = sorted(set(names) - set(labels))
    extra = sorted(set(labels) - set(names))
    if missing or extra:
        raise SystemExit(f"{suite_name}: tools without a label {missing}, labels without a tool {extra}")
    out = []
    for tool in sorted(suite.tools, key=lambda t: t.name):
        effects, _why = labels[tool.name]
        check_effects(effects)
        ordered = [e for e in EFFECT_ORDER if e in effects]
        out.append(
            {
                "name": tool.name,
                "description": tool.description,
                "inputSchema": inline_refs(tool.parameters.model_json_schema()),
                "annotations": annotations(effects),
                "_meta": {"gate/effects": ordered},
            }
        )
    return out


def jsonable(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)


def task_number(task_id: str) -> int:
    return int(task_id.rsplit("_", 1)[1])


def run_calls(runtime: Any, env: Any, calls: list[Any], prefix: str) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Runs `calls` on `env` for real; the transcript lines and (id, name) of each."""
    from agentdojo.functions_runtime import FunctionCall

    lines = []
    made = []
    for n, call in enumerate(calls, start=1):
        if any(isinstance(v, FunctionCall) for v in call.args.values()):
            raise SystemExit(f"nested function call in ground truth of {call.function}: not representable")
        call_id = f"{prefix}-{n}"
        result, error = runtime.run_function(env, call.function, call.args, raise_on_error=False)
        line: dict[str, Any] = {
            "call": {"id": call_id, "name": call.function, "arguments": jsonable(dict(call.args))}
        }
        if error is not None:
            line["error"] = error
        else:
            line["result"] = jsonable(result)
        lines.append(line)
        made.append({"id": call_id, "name": call.function})
    return lines, made


def make_attack(suite: Any) -> Any:
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
    from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack

    class Named(BasePipelineElement):
        """Stands for the attacked pipeline: the attack only reads its name."""

        name = PIPELINE_NAME

        def query(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
            raise NotImplementedError("the dummy pipeline never runs")

    attack = ImportantInstructionsAttack(suite, Named())
    assert attack.name == ATTACK
    return attack


def injected_calls(lines: list[dict[str, Any]]) -> list[str]:
    return [
        line["call"]["id"]
        for line in lines
        if INJECTION_MARK in json.dumps(line.get("result", line.get("error")), ensure_ascii=False)
    ]


def build_suite(suite_name: str, all_pairs: bool) -> dict[str, Any]:
    from agentdojo.functions_runtime import FunctionsRuntime
    from agentdojo.task_suite.load_suites import get_suite

    suite = get_suite(BENCHMARK_VERSION, suite_name)
    if suite_name == "workspace":
        day = suite.load_and_inject_default_environment({}).calendar.current_day
        if day != FROZEN_NOW.date():
            raise SystemExit(f"the workspace calendar's current day is {day}, not {FROZEN_NOW.date()}")
    attack = make_attack(suite)
    user_tasks = sorted(suite.user_tasks.items(), key=lambda kv: task_number(kv[0]))
    injection_tasks = sorted(suite.injection_tasks.items(), key=lambda kv: task_number(kv[0]))

    utility: list[list[dict[str, Any]]] = []
    attacks: list[list[dict[str, Any]]] = []
    entries: list[dict[str, Any]] = []

    # Utility: every user task on the default environment.
    for uid, user_task in user_tasks:
        env = user_task.init_environment(suite.load_and_inject_default_environment({}))
        runtime = FunctionsRuntime(suite.tools)
        calls = user_task.ground_truth(env)
        lines, made = run_calls(runtime, env, calls, "user")
        task_id = f"{suite_name}/{uid}"
        utility.append([{"task": task_id, "user": USER}, {"user_message": user_task.PROMPT}, *lines])
        entries.append(
            {
                "task": task_id,
                "kind": "utility",
                "user_task": uid,
                "user_calls": made,
                "errors": [l["call"]["id"] for l in lines if "error" in l],
            }
        )

    # Which user tasks read an injection vector.
    vectors: dict[str, list[str]] = {}
    not_injectable = []
    for uid, user_task in user_tasks:
        try:
            vectors[uid] = sorted(attack.get_injection_candidates(user_task))
        except ValueError:
            not_injectable.append(uid)
    injectable = [(uid, t) for uid, t in user_tasks if uid in vectors]

    k = len(injection_tasks)
    if all_pairs:
        pairs = [(u, i) for u in injectable for i in injection_tasks]
    else:
        pairs = []
        if injectable and k:
            seen = set()
            for t in range(max(len(injectable), 2 * k)):
                u, i = injectable[t % len(injectable)], injection_tasks[t % k]
                if (u[0], i[0]) not in seen:
                    seen.add((u[0], i[0]))
                    pairs.append((u, i))
        pairs.sort(key=lambda p: (task_number(p[0][0]), task_number(p[1][0])))

    for (uid, user_task), (iid, injection_task) in pairs:
        injections = attack.attack(user_task, injection_task)
        env = user_task.init_environment(suite.load_and_inject_default_environment(injections))
        runtime = FunctionsRuntime(suite.tools)
        user_lines, user_made = run_calls(runtime, env, user_task.ground_truth(env), "user")
        inj_lines, inj_made = run_calls(runtime, env, injection_task.ground_truth(env), "injection")
        task_id = f"{suite_name}/{uid}/{iid}"
        lines = [*user_lines, *inj_lines]
        attacks.append([{"task": task_id, "user": USER}, {"user_message": user_task.PROMPT}, *lines])
        entries.append(
            {
                "task": task_id,
                "kind": "attack",
                "user_task": uid,
                "injection_task": iid,
                "injection_vectors": sorted(injections),
                "injected_results": injected_calls(lines),
                "user_calls": user_made,
                "injection_calls": inj_made,
                "errors": [l["call"]["id"] for l in lines if "error" in l],
            }
        )

    injection_info = {}
    for iid, injection_task in injection_tasks:
        gt = injection_task.ground_truth(suite.load_and_inject_default_environment({}))
        injection_info[iid] = {"goal": injection_task.GOAL, "ground_truth_tools": [c.function for c in gt]}

    all_pair_count = len(user_tasks) * k
    counts = {
        "user_tasks": len(user_tasks),
        "injection_tasks": k,
        "pairs": all_pair_count,
        "pairs_skipped_no_vector": len(not_injectable) * k,
        "injectable_pairs": len(injectable) * k,
        "utility_transcripts": len(utility),
        "attack_transcripts": len(attacks),
    }
    return {
        "counts": counts,
        "user_tasks_without_vector": not_injectable,
        "injection_tasks": injection_info,
        "injection_tasks_without_ground_truth": [i for i, v in injection_info.items() if not v["ground_truth_tools"]],
        "transcripts": entries,
        "_utility": utility,
        "_attacks": attacks,
        "_tools": tools_json(suite_name, suite),
    }


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path} ({path.stat().st_size} bytes)", file=sys.stderr)


def jsonl(conversations: list[list[dict[str, Any]]]) -> str:
    return "".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for conv in conversations for line in conv
    )


def main() -> None:
    # Some tools return sets as lists (calendar participants): the order of
    # a set of strings depends on the hash seed, so fix it.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="every injectable (user task, injection task) pair")
    parser.add_argument("--out", type=Path, help="output directory (default: this directory; target/agentdojo with --all)")
    args = parser.parse_args()
    out: Path = args.out or (REPO_ROOT / "target" / "agentdojo" if args.all else HERE)
    out.mkdir(parents=True, exist_ok=True)

    installed = importlib.metadata.version("agentdojo")
    if installed != AGENTDOJO_VERSION:
        raise SystemExit(f"agentdojo {installed} is installed; this script is pinned to {AGENTDOJO_VERSION}")
    freeze_clock()

    utility: list[list[dict[str, Any]]] = []
    attacks: list[list[dict[str, Any]]] = []
    index: dict[str, Any] = {
        "agentdojo_version": AGENTDOJO_VERSION,
        "benchmark_version": BENCHMARK_VERSION,
        "attack": ATTACK,
        "attack_pipeline_name": PIPELINE_NAME,
        "frozen_clock": FROZEN_NOW.isoformat(),
        "subset": "all" if args.all else "rotation",
        "suites": {},
    }
    for suite_name in SUITES:
        built = build_suite(suite_name, args.all)
        write(out / f"{suite_name}.tools.json", json.dumps(built.pop("_tools"), indent=2, ensure_ascii=False) + "\n")
        utility += built.pop("_utility")
        attacks += built.pop("_attacks")
        built["labels"] = {name: {"effects": list(e), "why": why} for name, (e, why) in sorted(LABELS[suite_name].items())}
        index["suites"][suite_name] = built

    write(out / "utility.jsonl", jsonl(utility))
    write(out / "attacks.jsonl", jsonl(attacks))
    write(out / "index.json", json.dumps(index, indent=1, ensure_ascii=False) + "\n")
    licence = importlib.metadata.distribution("agentdojo").read_text("licenses/LICENSE")
    if licence is None:
        raise SystemExit("agentdojo's LICENSE is not in its installed metadata")
    write(out / "LICENSE", licence)
    for suite_name, built in index["suites"].items():
        print(f"{suite_name}: {json.dumps(built['counts'])}", file=sys.stderr)


if __name__ == "__main__":
    main()

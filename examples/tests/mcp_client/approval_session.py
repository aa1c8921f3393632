"""The official MCP Python client charging a card that needs a person's approval.

Driven by examples/tests/mcp_python.rs, which starts invoice-mcp with
`--approval charge_card` (or lets this script start it over stdio) and
asserts on what this script prints.

--answer says what the client's user does when the server asks through
form elicitation: `accept` or `decline` (an elicitation callback that
answers so), or `none` (no elicitation callback: the client cannot be
asked). With `none` the script prints an `awaiting_decision` line and waits
on stdin until the Rust test has decided the request out of band, then makes
the identical call again.

Every line on stdout is one JSON object: {"step": NAME, ...what was seen}.
The script observes and reports; the assertions are the Rust test's.
"""

import argparse
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters, types


def report(step, **seen):
    print(json.dumps({"step": step, **seen}), flush=True)


def result_view(result):
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return {
        "is_error": result.is_error,
        "text": "\n".join(c.get("text", "") for c in wire.get("content", [])),
        "meta": wire.get("_meta", {}),
    }


CHARGE = {"customer_id": "cus_bob", "amount_cents": 4500, "invoice_id": "INV-42"}

questions = []


def elicitation_callback(answer):
    async def answer_it(context, params):
        questions.append(
            {"message": params.message, "schema": params.requested_schema}
        )
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"reason": "invoice INV-42 checked"})
        return types.ElicitResult(action="decline")

    return answer_it


async def session(args):
    if args.url:
        server = args.url
    else:
        server = StdioServerParameters(command=args.server[0], args=args.server[1:])
    callback = None if args.answer == "none" else elicitation_callback(args.answer)
    async with Client(server, mode=args.mode, read_timeout_seconds=60, elicitation_callback=callback) as client:
        report("connected", protocol_version=client.protocol_version)

        task = {}

        async def call(step):
            # Naming the task the first result ran in keeps the calls in one
            # task where the transport has no session (2026-07-28 over HTTP).
            result = await client.call_tool("charge_card", CHARGE, meta=task or None)
            seen = result_view(result)
            task.setdefault("gate/task", seen["meta"].get("gate/task"))
            report(step, questions=list(questions), **seen)

        await call("charge")
        if args.answer == "none":
            report("awaiting_decision")
            decided = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
            if decided.strip() != "decided":
                report("no_decision", answer=decided.strip())
                return
        await call("charge_again")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--answer", choices=["accept", "decline", "none"], required=True)
    parser.add_argument("--mode", choices=["auto", "legacy"], default="auto")
    parser.add_argument("--url", help="streamable HTTP endpoint; otherwise --server is started over stdio")
    parser.add_argument("server", nargs="*", help="the server command line, for stdio")
    asyncio.run(session(parser.parse_args()))


if __name__ == "__main__":
    main()

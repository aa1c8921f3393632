"""One session of the official MCP Python client against invoice-mcp.

Driven by examples/tests/mcp_python.rs, which starts the server (or
lets this script start it over stdio), asserts on what this script prints,
and plays the operator: when the charge's outcome is unknown, this script
prints an `awaiting_resolution` line and waits on stdin until the Rust test
has resolved the intent in the ledger.

Every line on stdout is one JSON object: {"step": NAME, ...what was seen}.
The script observes and reports; the assertions are the Rust test's.
"""

import argparse
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


def report(step, **seen):
    print(json.dumps({"step": step, **seen}), flush=True)


def result_view(result):
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return {
        "is_error": result.is_error,
        "text": "\n".join(c.get("text", "") for c in wire.get("content", [])),
        "structured": wire.get("structuredContent"),
        "meta": wire.get("_meta", {}),
    }


CHARGE = {"customer_id": "cus_bob", "amount_cents": 4500, "invoice_id": "INV-42"}


async def session(args):
    if args.url:
        server = args.url
    else:
        server = StdioServerParameters(command=args.server[0], args=args.server[1:])
    meta = {"gate/task": args.task} if args.task else None
    async with Client(server, mode=args.mode, read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        report(
            "tools",
            protocol_version=client.protocol_version,
            server_name=client.server_info.name if client.server_info else None,
            tools=[t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools],
        )

        async def call(step, name, arguments):
            result = await client.call_tool(name, arguments, meta=meta)
            report(step, **result_view(result))

        await call("valid", "get_invoice", {"invoice_id": "INV-41"})
        await call("wrong_type", "get_invoice", {"invoice_id": 41})
        await call("hallucinated", "get_customer_balance", {"email": "ann@acme.com"})
        await call("charge_timeout", "charge_card", CHARGE)
        report("awaiting_resolution")
        answer = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        if answer.strip() != "resolved":
            report("no_resolution", answer=answer.strip())
            return
        await call("charge_again", "charge_card", CHARGE)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["auto", "legacy"], default="auto")
    parser.add_argument("--url", help="streamable HTTP endpoint; otherwise --server is started over stdio")
    parser.add_argument("--task", help="name this task in every call's _meta (gate/task)")
    parser.add_argument("server", nargs="*", help="the server command line, for stdio")
    asyncio.run(session(parser.parse_args()))


if __name__ == "__main__":
    main()

"""The providers' own SDKs as the oracle of gate's provider formats.

Run once per test suite by gate-core/tests/provider_sdk.rs. Reads from stdin
the tool results gate rendered (and shapes the test broke on purpose), writes
to stdout one JSON document:

- "calls": for each provider, tool calls built with that SDK's own response
  types and dumped to JSON as a program would log them, beside "expected",
  the calls read back through the SDK's own attributes (never through gate);
- "verdicts": for every result given, whether the SDK's request types accept
  it, and the SDK's complaint when they do not.

The request types are TypedDicts (OpenAI, Anthropic) validated with pydantic
in strict mode, with unknown keys forbidden, and iterables consumed so that
their items are validated too; Gemini's are pydantic models that forbid
unknown fields themselves.
"""

import json
import sys

import pydantic
from anthropic import types as anthropic_types
from google.genai import types as genai
from openai.types import chat as openai_chat
from openai.types import responses as openai_responses
from openai.types.responses.response_input_param import FunctionCallOutput


def strict_adapter(typed_dict):
    pydantic.with_config(pydantic.ConfigDict(extra="forbid"))(typed_dict)
    return pydantic.TypeAdapter(typed_dict)


def consume(value):
    """Validation of an Iterable field is lazy in pydantic: walk it to run it."""
    if isinstance(value, dict):
        for item in value.values():
            consume(item)
    elif not isinstance(value, (str, bytes, list)) and hasattr(value, "__iter__"):
        for item in value:
            consume(item)
    elif isinstance(value, list):
        for item in value:
            consume(item)


def typed_dict_validator(typed_dict):
    adapter = strict_adapter(typed_dict)

    def validate(value):
        consume(adapter.validate_python(value, strict=True))

    return validate


def model_validator(model):
    def validate(value):
        model.model_validate(value, strict=True)

    return validate


RESULT_VALIDATORS = {
    "openai": typed_dict_validator(openai_chat.ChatCompletionToolMessageParam),
    "openai-responses": typed_dict_validator(FunctionCallOutput),
    "anthropic": typed_dict_validator(anthropic_types.ToolResultBlockParam),
    "gemini": model_validator(genai.Part),
}

REPLY_VALIDATORS = {
    "openai": typed_dict_validator(openai_chat.ChatCompletionToolMessageParam),
    "openai-responses": typed_dict_validator(FunctionCallOutput),
    "anthropic": typed_dict_validator(anthropic_types.MessageParam),
    "gemini": model_validator(genai.Content),
}


def verdict(validate, case):
    try:
        validate(case["value"])
        return {"label": case["label"], "valid": True, "error": None}
    except (pydantic.ValidationError, TypeError, ValueError) as error:
        return {"label": case["label"], "valid": False, "error": str(error)[:600]}


ARGS_LOOKUP = {"email": "ann@acme.io", "include_history": True}
ARGS_CHARGE = {"customer_id": "cus_1", "amount_cents": 4200, "lines": [{"sku": "A-1", "qty": 2}]}


def openai_calls():
    completion = openai_chat.ChatCompletion.model_validate(
        {
            "id": "chatcmpl-AbC123",
            "object": "chat.completion",
            "created": 1764547200,
            "model": "gpt-4.1-2025-04-14",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            openai_chat.ChatCompletionMessageFunctionToolCall(
                                id="call_lookup1",
                                type="function",
                                function={"name": "lookup_customer", "arguments": json.dumps(ARGS_LOOKUP)},
                            ).model_dump(),
                            openai_chat.ChatCompletionMessageFunctionToolCall(
                                id="call_charge1",
                                type="function",
                                # What models do write: not JSON at all.
                                function={"name": "charge_card", "arguments": '{"customer_id": "cus_1", "amount_cents": '},
                            ).model_dump(),
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 812, "completion_tokens": 64, "total_tokens": 876},
        }
    )
    message = completion.choices[0].message
    expected = [
        {"id": c.id, "name": c.function.name, "arguments_text": c.function.arguments} for c in message.tool_calls
    ]
    return {
        "dumps": {
            "completion (model_dump)": completion.model_dump(mode="json"),
            "message (to_dict)": message.to_dict(),
            "tool_calls (list)": [c.to_dict() for c in message.tool_calls],
            "one call": message.tool_calls[0].model_dump(mode="json"),
        },
        "expected": expected,
    }


def responses_calls():
    output = [
        openai_responses.ResponseReasoningItem(id="rs_1", type="reasoning", summary=[]),
        openai_responses.ResponseFunctionToolCall(
            id="fc_1", call_id="call_lookup1", type="function_call", name="lookup_customer",
            arguments=json.dumps(ARGS_LOOKUP), status="completed",
        ),
        openai_responses.ResponseFunctionToolCall(
            id="fc_2", call_id="call_charge1", type="function_call", name="charge_card",
            arguments=json.dumps(ARGS_CHARGE), status="completed",
        ),
    ]
    response = openai_responses.Response.model_validate(
        {
            "id": "resp_1", "object": "response", "created_at": 1764547200, "model": "gpt-5",
            "output": [item.model_dump() for item in output], "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [],
        }
    )
    expected = [
        {"id": item.call_id, "name": item.name, "arguments_text": item.arguments}
        for item in response.output
        if item.type == "function_call"
    ]
    return {
        "dumps": {
            "response (model_dump)": response.model_dump(mode="json"),
            "output items (to_dict)": [item.to_dict() for item in response.output],
            "one item": response.output[1].to_dict(),
        },
        "expected": expected,
    }


def anthropic_calls():
    message = anthropic_types.Message(
        id="msg_01XFDUDYJgAACzvnptvVoYEL",
        type="message",
        role="assistant",
        model="claude-sonnet-4-5",
        content=[
            anthropic_types.TextBlock(type="text", text="I'll look the customer up, then charge the card."),
            anthropic_types.ToolUseBlock(type="tool_use", id="toolu_01A09q90qw90lq917835lq9", name="lookup_customer", input=ARGS_LOOKUP),
            anthropic_types.ToolUseBlock(type="tool_use", id="toolu_01B18r81rx81mr826746mr8", name="charge_card", input=ARGS_CHARGE),
        ],
        stop_reason="tool_use",
        stop_sequence=None,
        usage=anthropic_types.Usage(input_tokens=912, output_tokens=88),
    )
    expected = [
        {"id": b.id, "name": b.name, "arguments": b.input} for b in message.content if b.type == "tool_use"
    ]
    return {
        "dumps": {
            "message (model_dump)": message.model_dump(mode="json"),
            "content (to_dict)": [block.to_dict() for block in message.content],
            "one block": message.content[1].to_dict(),
        },
        "expected": expected,
    }


def gemini_calls():
    response = genai.GenerateContentResponse(
        candidates=[
            genai.Candidate(
                content=genai.Content(
                    role="model",
                    parts=[
                        genai.Part(text="Looking up the customer and charging the card."),
                        genai.Part(function_call=genai.FunctionCall(name="lookup_customer", args=ARGS_LOOKUP)),
                        genai.Part(function_call=genai.FunctionCall(id="fc-7c2a", name="charge_card", args=ARGS_CHARGE)),
                    ],
                ),
                finish_reason=genai.FinishReason.STOP,
            )
        ]
    )
    expected = [{"id": c.id, "name": c.name, "arguments": c.args} for c in response.function_calls]
    return {
        "dumps": {
            "response (REST camelCase)": response.model_dump(mode="json", by_alias=True, exclude_none=True),
            "response (snake_case)": response.model_dump(mode="json", exclude_none=True),
            "content (REST camelCase)": response.candidates[0].content.model_dump(mode="json", by_alias=True, exclude_none=True),
            "one part": response.candidates[0].content.parts[2].model_dump(mode="json", by_alias=True, exclude_none=True),
        },
        "expected": expected,
    }


def main():
    given = json.load(sys.stdin)
    verdicts = {}
    for provider, cases in given["results"].items():
        verdicts[provider] = [verdict(RESULT_VALIDATORS[provider], case) for case in cases]
    for provider, cases in given["replies"].items():
        verdicts[provider + " reply"] = [verdict(REPLY_VALIDATORS[provider], case) for case in cases]
    calls = {
        "openai": openai_calls(),
        "openai-responses": responses_calls(),
        "anthropic": anthropic_calls(),
        "gemini": gemini_calls(),
    }
    json.dump({"calls": calls, "verdicts": verdicts}, sys.stdout)


if __name__ == "__main__":
    main()

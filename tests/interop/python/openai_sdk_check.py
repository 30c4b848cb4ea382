"""The official openai Python SDK against a switchyard router.

Runs every check with the SDK's own clients (sync `OpenAI`, async
`AsyncOpenAI`), records what the SDK returned (never asserting itself: the
node test that started the router judges), and prints one JSON object as its
last stdout line:

    {"python": ..., "openai": ..., "checks": {name: {facts...} | {"error": ...}}}

Arguments: --base (router, .../v1), --model (simulated engines),
--tool-calls (how many tool calls the engines put in one answer), --shed-base and --shed-engine (a router that sheds at once in front of one
engine of capacity 1, and that engine's own URL), --id-prefix (request ids).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import threading
import time
import traceback
from typing import Any, Callable

import httpx2
import openai
from openai import AsyncOpenAI, OpenAI

API_KEY = "sk-interop"  # the router has no keys configured; the SDK requires one
MESSAGES = [{"role": "user", "content": "Say hello."}]
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["location"]},
    },
}
# The engines name their calls after the offered tools in turn.
TOOLS = [SEARCH_TOOL, WEATHER_TOOL]


def several(args: argparse.Namespace) -> dict[str, str]:
    """The simulator's per-request knob for tool calls per answer."""
    return {"x-sim-tool-calls": args.tool_calls}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    for name in ("--base", "--model", "--tool-calls", "--shed-base", "--shed-engine", "--id-prefix"):
        parser.add_argument(name, required=True)
    return parser.parse_args()


def tool_calls_facts(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Names and parsed arguments of tool calls; a JSONDecodeError propagates as the check's error."""
    return {
        "count": len(calls),
        "names": [c["name"] for c in calls],
        "ids": [c["id"] for c in calls],
        "arguments": [json.loads(c["arguments"]) for c in calls],
    }


def message_calls(message: Any) -> list[dict[str, Any]]:
    return [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in message.tool_calls or []]


class StreamedCalls:
    """Accumulates streamed tool-call deltas per index, as the OpenAI docs prescribe."""

    def __init__(self) -> None:
        self.by_index: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None

    def add(self, chunk: Any) -> None:
        for choice in chunk.choices:
            if choice.finish_reason is not None:
                self.finish_reason = choice.finish_reason
            for delta in choice.delta.tool_calls or []:
                call = self.by_index.setdefault(delta.index, {"id": None, "name": "", "arguments": ""})
                if delta.id:
                    call["id"] = delta.id
                if delta.function is not None:
                    call["name"] += delta.function.name or ""
                    call["arguments"] += delta.function.arguments or ""

    def facts(self) -> dict[str, Any]:
        calls = [self.by_index[i] for i in sorted(self.by_index)]
        return {**tool_calls_facts(calls), "finish_reason": self.finish_reason}


def chat_text(stream: Any) -> dict[str, Any]:
    text, finish, chunks = "", None, 0
    for chunk in stream:
        chunks += 1
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    return {"text": text, "finish_reason": finish, "chunks": chunks}


async def achat_text(stream: Any) -> dict[str, Any]:
    text, finish, chunks = "", None, 0
    async for chunk in stream:
        chunks += 1
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    return {"text": text, "finish_reason": finish, "chunks": chunks}


def response_stream_facts(events: list[Any]) -> dict[str, Any]:
    types = [e.type for e in events]
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    completed = [e for e in events if e.type == "response.completed"]
    final = completed[-1].response.output_text if completed else None
    return {"first": types[0] if types else None, "last": types[-1] if types else None, "delta_text": deltas, "final_text": final, "events": len(types)}


def status_error_facts(err: openai.APIStatusError) -> dict[str, Any]:
    return {"exception": type(err).__name__, "status": err.status_code, "code": err.code, "type": err.type, "message": err.message}


# ---- sync checks -----------------------------------------------------------------------------------------------


def check_chat(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    completion = client.chat.completions.create(model=args.model, messages=MESSAGES)
    choice = completion.choices[0]
    return {"object": completion.object, "text": choice.message.content, "finish_reason": choice.finish_reason, "usage_total": completion.usage.total_tokens if completion.usage else None}


def check_chat_stream(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    return chat_text(client.chat.completions.create(model=args.model, messages=MESSAGES, stream=True))


def check_tools(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    completion = client.chat.completions.create(model=args.model, messages=MESSAGES, tools=TOOLS, extra_headers=several(args))
    choice = completion.choices[0]
    return {**tool_calls_facts(message_calls(choice.message)), "finish_reason": choice.finish_reason}


def check_tools_stream(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    calls = StreamedCalls()
    for chunk in client.chat.completions.create(model=args.model, messages=MESSAGES, tools=TOOLS, stream=True, extra_headers=several(args)):
        calls.add(chunk)
    return calls.facts()


def check_tools_stream_helper(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    """The SDK's own accumulation (`chat.completions.stream`), which also checks each call's JSON."""
    with client.chat.completions.stream(model=args.model, messages=MESSAGES, tools=TOOLS, extra_headers=several(args)) as stream:
        final = stream.get_final_completion()
    choice = final.choices[0]
    return {**tool_calls_facts(message_calls(choice.message)), "finish_reason": choice.finish_reason}


def check_one_tool(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    """One tool offered, one call answered (1.5 KB of arguments, fragmented when streamed), both ways."""
    plain = client.chat.completions.create(model=args.model, messages=MESSAGES, tools=[SEARCH_TOOL])
    calls = StreamedCalls()
    for chunk in client.chat.completions.create(model=args.model, messages=MESSAGES, tools=[SEARCH_TOOL], stream=True):
        calls.add(chunk)
    return {"plain": tool_calls_facts(message_calls(plain.choices[0].message)), "streamed": calls.facts()}


def check_completions(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    plain = client.completions.create(model=args.model, prompt="Once upon a time", max_tokens=16)
    text = "".join(c.choices[0].text for c in client.completions.create(model=args.model, prompt="Once upon a time", max_tokens=16, stream=True) if c.choices)
    return {"object": plain.object, "text": plain.choices[0].text, "streamed_text": text}


def check_embeddings(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    result = client.embeddings.create(model=args.model, input="hello")
    return {"count": len(result.data), "dimensions": len(result.data[0].embedding), "first": result.data[0].embedding[0]}


def check_models(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    return {"ids": sorted(m.id for m in client.models.list())}


def check_responses(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    response = client.responses.create(model=args.model, input="Say hello.")
    return {"object": response.object, "status": response.status, "text": response.output_text, "id_prefix": response.id[:5]}


def check_responses_stream(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    return response_stream_facts(list(client.responses.create(model=args.model, input="Say hello.", stream=True)))


def check_not_found(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    try:
        client.chat.completions.create(model="no-such-model", messages=MESSAGES)
    except openai.APIStatusError as err:
        return status_error_facts(err)
    return {"exception": None}


def check_bad_request(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    """A body without `model`: the typed methods cannot send one, the SDK's generic post can."""
    try:
        client.post("/chat/completions", cast_to=httpx2.Response, body={"messages": MESSAGES})
    except openai.APIStatusError as err:
        return status_error_facts(err)
    return {"exception": None}


def check_retry(_client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    """
    A request shed with 429 while another holds the only slot, sent by a client with the
    default max_retries: the SDK must wait what the router advertised and succeed on retry.
    Attempt times come from httpx event hooks (request sent, response headers received).
    """
    attempts: list[dict[str, Any]] = []

    def on_request(request: httpx2.Request) -> None:
        attempts.append({"sent": time.monotonic(), "retry_count": request.headers.get("x-stainless-retry-count")})

    def on_response(response: httpx2.Response) -> None:
        attempts[-1].update(
            received=time.monotonic(),
            status=response.status_code,
            retry_after=response.headers.get("retry-after"),
            retry_after_ms=response.headers.get("retry-after-ms"),
            should_retry=response.headers.get("x-should-retry"),
        )

    hold = threading.Thread(target=hold_slot, args=(args,))
    hold.start()
    wait_running(args.shed_engine)
    client = OpenAI(base_url=args.shed_base, api_key=API_KEY, http_client=openai.DefaultHttpxClient(event_hooks={"request": [on_request], "response": [on_response]}))
    assert client.max_retries == openai.DEFAULT_MAX_RETRIES
    try:
        completion = client.chat.completions.create(model=args.model, messages=MESSAGES)
        outcome = {"text": completion.choices[0].message.content}
    except openai.APIStatusError as err:
        outcome = status_error_facts(err)
    hold.join()
    gaps = [later["sent"] - earlier["received"] for earlier, later in zip(attempts, attempts[1:])]
    return {**outcome, "max_retries": client.max_retries, "attempts": [{k: v for k, v in a.items() if k not in ("sent", "received")} for a in attempts], "gaps_s": gaps}


def hold_slot(args: argparse.Namespace) -> None:
    """Holds the shed router's one engine slot for about a second, through the router."""
    body = {"model": args.model, "messages": MESSAGES}
    httpx2.post(f"{args.shed_base}/chat/completions", json=body, headers={"x-sim-ttft-ms": "1000", "x-request-id": f"{args.id_prefix}-hold"}, timeout=30)


def wait_running(engine: str) -> None:
    """Until the engine's own gauges show the held request running (it went through the router)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text = httpx2.get(f"{engine}/metrics", timeout=5).text
        if any(line.startswith("vllm:num_requests_running") and float(line.split()[-1]) == 1 for line in text.splitlines()):
            return
        time.sleep(0.01)
    raise RuntimeError("the held request never reached the engine")


def check_timeout(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    """A 0.5 s client timeout on an engine that takes 5 s: APITimeoutError, and the router lets go upstream."""
    request_id = f"{args.id_prefix}-timeout"
    started = time.monotonic()
    try:
        client.with_options(timeout=0.5, max_retries=0).chat.completions.create(
            model=args.model, messages=MESSAGES, extra_headers={"x-sim-ttft-ms": "5000", "x-request-id": request_id}
        )
    except openai.APITimeoutError as err:
        return {"exception": type(err).__name__, "request_id": request_id, "elapsed_s": time.monotonic() - started}
    return {"exception": None, "request_id": request_id}


def check_cancel(client: OpenAI, args: argparse.Namespace) -> dict[str, Any]:
    """Closes a long stream after a few chunks; the engine must see the cut."""
    request_id = f"{args.id_prefix}-cancel"
    stream = client.chat.completions.create(
        model=args.model, messages=MESSAGES, stream=True, extra_headers={"x-sim-output-tokens": "500", "x-sim-itl-ms": "20", "x-request-id": request_id}
    )
    chunks = 0
    for _ in stream:
        chunks += 1
        if chunks == 5:
            break
    stream.close()
    return {"chunks": chunks, "request_id": request_id}


# ---- async checks ----------------------------------------------------------------------------------------------


async def acheck_chat(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    completion = await client.chat.completions.create(model=args.model, messages=MESSAGES)
    return {"text": completion.choices[0].message.content, "finish_reason": completion.choices[0].finish_reason}


async def acheck_chat_stream(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    return await achat_text(await client.chat.completions.create(model=args.model, messages=MESSAGES, stream=True))


async def acheck_tools(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    completion = await client.chat.completions.create(model=args.model, messages=MESSAGES, tools=TOOLS, extra_headers=several(args))
    return {**tool_calls_facts(message_calls(completion.choices[0].message)), "finish_reason": completion.choices[0].finish_reason}


async def acheck_tools_stream(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    calls = StreamedCalls()
    async for chunk in await client.chat.completions.create(model=args.model, messages=MESSAGES, tools=TOOLS, stream=True, extra_headers=several(args)):
        calls.add(chunk)
    return calls.facts()


async def acheck_completions_stream(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    text = ""
    async for chunk in await client.completions.create(model=args.model, prompt="Once upon a time", max_tokens=16, stream=True):
        text += "".join(c.text for c in chunk.choices)
    return {"streamed_text": text}


async def acheck_embeddings(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    result = await client.embeddings.create(model=args.model, input="hello")
    return {"count": len(result.data), "dimensions": len(result.data[0].embedding)}


async def acheck_models(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    return {"ids": sorted([m.id async for m in client.models.list()])}


async def acheck_responses(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    response = await client.responses.create(model=args.model, input="Say hello.")
    return {"status": response.status, "text": response.output_text}


async def acheck_responses_stream(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    return response_stream_facts([e async for e in await client.responses.create(model=args.model, input="Say hello.", stream=True)])


async def acheck_not_found(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    try:
        await client.chat.completions.create(model="no-such-model", messages=MESSAGES)
    except openai.APIStatusError as err:
        return status_error_facts(err)
    return {"exception": None}


async def acheck_cancel(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    request_id = f"{args.id_prefix}-acancel"
    stream = await client.chat.completions.create(
        model=args.model, messages=MESSAGES, stream=True, extra_headers={"x-sim-output-tokens": "500", "x-sim-itl-ms": "20", "x-request-id": request_id}
    )
    chunks = 0
    async for _ in stream:
        chunks += 1
        if chunks == 5:
            break
    await stream.close()
    return {"chunks": chunks, "request_id": request_id}


async def acheck_timeout(client: AsyncOpenAI, args: argparse.Namespace) -> dict[str, Any]:
    request_id = f"{args.id_prefix}-atimeout"
    try:
        await client.with_options(timeout=0.5, max_retries=0).chat.completions.create(
            model=args.model, messages=MESSAGES, extra_headers={"x-sim-ttft-ms": "5000", "x-request-id": request_id}
        )
    except openai.APITimeoutError as err:
        return {"exception": type(err).__name__, "request_id": request_id}
    return {"exception": None, "request_id": request_id}


# ---- runner ----------------------------------------------------------------------------------------------------


def run(name: str, check: Callable[[], Any], checks: dict[str, Any]) -> None:
    try:
        checks[name] = check()
    except Exception as err:  # every failure becomes a fact the node test shows
        checks[name] = {"error": f"{type(err).__name__}: {err}", "trace": traceback.format_exc(limit=4)}


async def run_async(args: argparse.Namespace, checks: dict[str, Any]) -> None:
    async with AsyncOpenAI(base_url=args.base, api_key=API_KEY) as client:
        for name, check in ASYNC_CHECKS.items():
            try:
                checks[name] = await check(client, args)
            except Exception as err:
                checks[name] = {"error": f"{type(err).__name__}: {err}", "trace": traceback.format_exc(limit=4)}


SYNC_CHECKS = {
    "chat": check_chat,
    "chat_stream": check_chat_stream,
    "tools": check_tools,
    "tools_stream": check_tools_stream,
    "tools_stream_helper": check_tools_stream_helper,
    "one_tool": check_one_tool,
    "completions": check_completions,
    "embeddings": check_embeddings,
    "models": check_models,
    "responses": check_responses,
    "responses_stream": check_responses_stream,
    "not_found": check_not_found,
    "bad_request": check_bad_request,
    "timeout": check_timeout,
    "cancel": check_cancel,
    "retry": check_retry,
}

ASYNC_CHECKS = {
    "async_chat": acheck_chat,
    "async_chat_stream": acheck_chat_stream,
    "async_tools": acheck_tools,
    "async_tools_stream": acheck_tools_stream,
    "async_completions_stream": acheck_completions_stream,
    "async_embeddings": acheck_embeddings,
    "async_models": acheck_models,
    "async_responses": acheck_responses,
    "async_responses_stream": acheck_responses_stream,
    "async_not_found": acheck_not_found,
    "async_timeout": acheck_timeout,
    "async_cancel": acheck_cancel,
}


def main() -> int:
    args = parse_args()
    checks: dict[str, Any] = {}
    with OpenAI(base_url=args.base, api_key=API_KEY) as client:
        for name, check in SYNC_CHECKS.items():
            run(name, lambda check=check: check(client, args), checks)
    asyncio.run(run_async(args, checks))
    print(json.dumps({"python": platform.python_version(), "openai": openai.__version__, "checks": checks}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

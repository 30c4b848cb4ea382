"""Locust in the shape of the tool-call bug reports against OpenAI-compatible routers.

Every user sends chat requests offering a `search` function tool (a JSON-schema
parameter), alternating streamed and non-streamed, and parses every response
the way an agent framework would: each tool call's `arguments` through
json.loads, with `name` and the expected argument key present; streamed
tool-call deltas accumulated per `index`. A malformed tool call is a Locust
failure and is counted apart.

Environment:
  SWITCHYARD_MODEL            model to request (required)
  SWITCHYARD_LOCUST_SUMMARY   where to write the run's JSON summary at test stop (required)
  SWITCHYARD_TOOL_CALLS       tool calls every answer must hold (default: 1)
  SWITCHYARD_TOOL_NAME        name every call must carry (default: search, the one tool offered)
  SWITCHYARD_TOOL_ARG_KEY     key every call's arguments must hold (default: location, what the engine simulator fills in)
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from locust import FastHttpUser, between, events, task

MODEL = os.environ["SWITCHYARD_MODEL"]
SUMMARY = os.environ["SWITCHYARD_LOCUST_SUMMARY"]
TOOL_CALLS = int(os.environ.get("SWITCHYARD_TOOL_CALLS", "1"))
TOOL_NAME = os.environ.get("SWITCHYARD_TOOL_NAME", "search")
ARG_KEY = os.environ.get("SWITCHYARD_TOOL_ARG_KEY", "location")

SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web and return the top results.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to search for."}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["query"],
        },
    },
}

# Counted in this one process (gevent greenlets, no threads): plain ints are safe.
counts = {"ok": 0, "streamed": 0, "non_streamed": 0, "tool_calls_checked": 0, "malformed": 0, "failed": 0}
malformed_examples: list[str] = []
spawned = {"users": 0}


class Malformed(Exception):
    """A response whose tool calls a client could not use."""


def check_calls(calls: list[dict[str, Any]]) -> int:
    """Raises Malformed unless every call has an id, the expected name and JSON arguments with the expected key."""
    if len(calls) != TOOL_CALLS:
        raise Malformed(f"{len(calls)} tool calls, expected {TOOL_CALLS}")
    for call in calls:
        if not call.get("id"):
            raise Malformed(f"missing required field 'id': {call!r}"[:300])
        if call.get("name") != TOOL_NAME:
            raise Malformed(f"missing required field 'name' or wrong name: {call.get('name')!r}")
        try:
            arguments = json.loads(call.get("arguments") or "")
        except json.JSONDecodeError as err:
            raise Malformed(f"JSONDecodeError: {err}: {call.get('arguments')!r}"[:300]) from err
        if not isinstance(arguments, dict) or ARG_KEY not in arguments:
            raise Malformed(f"arguments without {ARG_KEY!r}: {arguments!r}"[:300])
    return len(calls)


def plain_calls(body: bytes) -> list[dict[str, Any]]:
    choice = json.loads(body)["choices"][0]
    if choice.get("finish_reason") != "tool_calls":
        raise Malformed(f"finish_reason {choice.get('finish_reason')!r}")
    return [{"id": c.get("id"), "name": c.get("function", {}).get("name"), "arguments": c.get("function", {}).get("arguments")} for c in choice["message"].get("tool_calls") or []]


def streamed_calls(body: bytes) -> list[dict[str, Any]]:
    """Accumulates tool-call deltas per index over the whole SSE body (decoded once, so no UTF-8 split matters)."""
    by_index: dict[int, dict[str, Any]] = {}
    finish, done = None, False
    for event in body.decode("utf-8").split("\n\n"):
        if not event.startswith("data: "):
            continue
        data = event[len("data: ") :]
        if data == "[DONE]":
            done = True
            continue
        for choice in json.loads(data)["choices"]:
            finish = choice.get("finish_reason") or finish
            for delta in choice.get("delta", {}).get("tool_calls") or []:
                call = by_index.setdefault(delta["index"], {"id": None, "name": "", "arguments": ""})
                call["id"] = delta.get("id") or call["id"]
                function = delta.get("function") or {}
                call["name"] += function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
    if not done:
        raise Malformed("stream ended without [DONE]")
    if finish != "tool_calls":
        raise Malformed(f"finish_reason {finish!r}")
    return [by_index[i] for i in sorted(by_index)]


class ToolCallUser(FastHttpUser):
    wait_time = between(0.2, 0.6)

    def on_start(self) -> None:
        self.stream_next = False

    @task
    def chat_with_tool(self) -> None:
        stream = self.stream_next
        self.stream_next = not stream
        body = {"model": MODEL, "messages": [{"role": "user", "content": "Find the weather in Zürich."}], "tools": [SEARCH_TOOL], "stream": stream}
        name = "chat tools stream" if stream else "chat tools"
        started = time.perf_counter()
        with self.client.post("/v1/chat/completions", json=body, name=name, stream=stream, catch_response=True) as response:
            try:
                if response.status_code != 200:
                    raise RuntimeError(f"status {response.status_code}")
                if stream:
                    raw = b"".join(response.iter_content(chunk_size=16384, decode_content=False))
                    # Locust times a streamed request to its headers; the whole stream is what a user waits for.
                    response.request_meta["response_time"] = (time.perf_counter() - started) * 1000
                    calls = streamed_calls(raw)
                else:
                    calls = plain_calls(response.content)
                counts["tool_calls_checked"] += check_calls(calls)
                counts["streamed" if stream else "non_streamed"] += 1
                counts["ok"] += 1
                response.success()
            except Malformed as err:
                counts["malformed"] += 1
                if len(malformed_examples) < 5:
                    malformed_examples.append(str(err))
                response.failure(f"malformed tool call: {err}")
            except Exception as err:  # a transport or HTTP failure: Locust counts it, the summary too
                counts["failed"] += 1
                response.failure(f"{type(err).__name__}: {err}")


@events.spawning_complete.add_listener
def count_users(user_count: int, **_kwargs: Any) -> None:
    spawned["users"] = user_count


@events.test_stop.add_listener
def write_summary(environment: Any, **_kwargs: Any) -> None:
    # Read here, after the stop timeout let every user finish its request, so the numbers and counts agree.
    total = environment.stats.total
    summary = {
        **counts,
        "malformed_examples": malformed_examples,
        "users": spawned["users"],
        "requests": total.num_requests,
        "failures": total.num_failures,
        "rps": total.total_rps,
        "p50_ms": total.get_response_time_percentile(0.5),
        "p95_ms": total.get_response_time_percentile(0.95),
        "p99_ms": total.get_response_time_percentile(0.99),
    }
    with open(SUMMARY, "w", encoding="utf-8") as out:
        json.dump(summary, out)

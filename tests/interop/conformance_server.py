"""An MCP server built with the official Python SDK (PyPI `mcp`, 2.x) that serves everything the
official MCP conformance suite's *server* scenarios ask for, in both protocol eras on one
Streamable HTTP endpoint (`/mcp`):

* 2025-11-25: sessions (`initialize`, `Mcp-Session-Id`), server-to-client requests
  (sampling, elicitation, roots) sent mid-call on the request's SSE stream, resumable streams
  (SEP-1699), `logging/setLevel`, `resources/subscribe`.
* 2026-07-28: stateless requests (`server/discover`, per-request `_meta`), questions to the
  client answered by retrying the request (Multi Round-Trip Requests, `input_required`),
  `subscriptions/listen`, caching hints, `Mcp-Param-*` headers.

It is an independent implementation of the fixture the suite describes, written against the
SDK's high-level `MCPServer` API; the SDK itself decides which era a request belongs to.

Usage: python conformance_server.py --port 0 [--host 127.0.0.1]
Prints `listening http://HOST:PORT` once it accepts connections; the endpoint is `/mcp`.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import socket
import struct
import sys
import warnings
import wave
import zlib
from collections.abc import Sequence
from itertools import count
from typing import Annotated, Any, Literal

import uvicorn
from mcp_types import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ClientCapabilities,
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    EmptyResult,
    InputRequest,
    InputRequiredResult,
    InputResponse,
    JSONRPCMessage,
    ListRootsRequest,
    ListRootsResult,
    MissingRequiredClientCapabilityErrorData,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, WithJsonSchema

from mcp.server.caching import CACHEABLE_METHODS, CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import (
    Audio,
    Context,
    Elicit,
    ElicitationResult,
    Image,
    MCPServer,
    Resolve,
    Sample,
    UserMessage,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.tools import Tool
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.uri_template import UriTemplate

# The 2025-11-25 features this fixture must serve (logging, sampling, roots) are deprecated as
# of 2026-07-28; using them is the point here, so their deprecation warnings are noise.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

STEP = 0.05
"""Pause between the steps of the logging and progress tools, in seconds."""

RETRY_MS = 500
"""SSE `retry` the server suggests; the polling tool closes its stream and the client resumes."""


# --- Payloads ---------------------------------------------------------------------------------


def _png_1x1_red() -> bytes:
    """A 1x1 red RGB PNG, built here so the fixture carries no opaque blobs."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _wav_silence() -> bytes:
    """A few milliseconds of 8 kHz, 8-bit mono silence as WAV."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(8000)
        out.writeframes(b"\x80" * 16)
    return buffer.getvalue()


PNG = _png_1x1_red()
WAV = _wav_silence()


def _embedded_text(uri: str, mime_type: str, text: str) -> EmbeddedResource:
    return EmbeddedResource(type="resource", resource=TextResourceContents(uri=uri, mime_type=mime_type, text=text))


def _is_modern(ctx: Context) -> bool:
    """Whether this request is 2026-07-28 (stateless) rather than a 2025-11-25 session."""
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _session_id(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The 2025-11-25 `Mcp-Session-Id` of the request, if it has one."""
    headers = getattr(ctx.request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


# --- Resumable SSE streams (SEP-1699) ---------------------------------------------------------


class MemoryEventStore(EventStore):
    """Keeps every SSE event in memory so a client can resume a closed stream with
    `Last-Event-ID`; the SDK calls `store_event`/`replay_events_after`."""

    def __init__(self) -> None:
        self._events: list[tuple[EventId, StreamId, JSONRPCMessage | None]] = []
        self._ids = count(1)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = str(next(self._ids))
        self._events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        position = next((i for i, (eid, _, _) in enumerate(self._events) if eid == last_event_id), None)
        if position is None:
            return None
        stream_id = self._events[position][1]
        for event_id, stream, message in self._events[position + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


# --- The server -------------------------------------------------------------------------------

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


async def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, Any] | None = None,
    contactMethod: str | None = None,  # noqa: N803 - the advertised schema's property name
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Tool with JSON Schema 2020-12 features"""
    given = {"name": name, "address": address, "contactMethod": contactMethod, "phone": phone, "email": email}
    return f"Received arguments: {json.dumps({k: v for k, v in given.items() if v is not None})}"


def _schema_2020_12_tool() -> Tool:
    """json-schema-2020-12: the SDK derives input schemas from signatures; this tool advertises a
    hand-written 2020-12 schema instead, which the suite checks is passed through verbatim."""
    tool = Tool.from_function(json_schema_2020_12_tool, description="Tool with JSON Schema 2020-12 features")
    return tool.model_copy(update={"parameters": JSON_SCHEMA_2020_12})


server = MCPServer(
    "vmcp-python-conformance",
    version="1.0.0",
    instructions="Python SDK fixture for the MCP conformance suite's server scenarios.",
    log_level="WARNING",
    tools=[_schema_2020_12_tool()],
    # caching (2026-07-28): every cacheable result carries ttlMs/cacheScope.
    cache_hints={method: CacheHint(ttl_ms=60_000, scope="public") for method in CACHEABLE_METHODS},
)


# --- Tools: content ---------------------------------------------------------------------------


@server.tool(description="Returns one text block.")
def test_simple_text() -> str:
    """tools-call-simple-text."""
    return "This is a simple text response for testing."


@server.tool(description="Returns one PNG image block.")
def test_image_content() -> Image:
    """tools-call-image."""
    return Image(data=PNG, format="png")


@server.tool(description="Returns one WAV audio block.")
def test_audio_content() -> Audio:
    """tools-call-audio."""
    return Audio(data=WAV, format="wav")


@server.tool(description="Returns one embedded text resource.")
def test_embedded_resource() -> EmbeddedResource:
    """tools-call-embedded-resource."""
    return _embedded_text("test://embedded-resource", "text/plain", "This is an embedded resource content.")


@server.tool(description="Returns a text, an image and an embedded resource.")
def test_multiple_content_types() -> list[TextContent | Image | EmbeddedResource]:
    """tools-call-mixed-content."""
    return [
        TextContent(type="text", text="Multiple content types test:"),
        Image(data=PNG, format="png"),
        _embedded_text("test://mixed-content-resource", "application/json", '{"test":"data","value":123}'),
    ]


@server.tool(description="Always fails with isError: true.")
def test_error_handling() -> str:
    """tools-call-error: a ToolError becomes a result with isError: true."""
    raise ToolError("This tool intentionally returns an error for testing")


# --- Tools: logging and progress --------------------------------------------------------------

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_session_log_levels: dict[str, str] = {}
"""2025-11-25: the level each session set with logging/setLevel (unset: everything)."""


async def _log_steps(ctx: Context) -> str:
    """Three info logs 50 ms apart. 2025-11-25: filtered by the session's logging/setLevel;
    2026-07-28: the SDK sends them only if the request's `_meta` asked for a log level."""
    minimum = _session_log_levels.get(_session_id(ctx.request_context) or "", "debug")
    send = LOG_LEVELS.index("info") >= LOG_LEVELS.index(minimum)
    for i, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if i:
            await asyncio.sleep(STEP)
        if send:
            await ctx.info(message)
    return "Tool with logging executed successfully"


@server.tool(description="Sends three info log notifications while it runs.")
async def test_tool_with_logging(ctx: Context) -> str:
    """tools-call-with-logging."""
    return await _log_steps(ctx)


@server.tool(description="Sends three info logs, if the request asked for logs (2026-07-28: _meta logLevel).")
async def test_logging_tool(ctx: Context) -> str:
    """server-stateless (no notifications/message without a requested log level)."""
    return await _log_steps(ctx)


@server.tool(description="Reports progress 0, 50 and 100 of 100 when given a progress token.")
async def test_tool_with_progress(ctx: Context) -> str:
    """tools-call-with-progress: the SDK drops progress when the request has no progressToken."""
    for i, (progress, message) in enumerate(((0, "Started"), (50, "Half way"), (100, "Done"))):
        if i:
            await asyncio.sleep(STEP)
        await ctx.report_progress(progress, 100, message)
    return "Tool with progress executed successfully"


# --- Tools: asking the client (both eras, through the SDK's resolvers) ------------------------
#
# A `Resolve(...)` parameter is filled before the tool body runs. The SDK follows the era:
# 2025-11-25 sends the request to the client mid-call; 2026-07-28 returns `input_required`
# and resumes when the client retries with its answers.


def _describe(outcome: ElicitationResult[Any]) -> str:
    content = outcome.data.model_dump(mode="json") if outcome.action == "accept" else None
    return f"action={outcome.action}, content={json.dumps(content)}"


class UserDetails(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


def ask_user_details(message: str) -> Elicit[UserDetails]:
    return Elicit(message, UserDetails)


@server.tool(description="Asks the user, through the client, for a username and an email.")
async def test_elicitation(
    message: Annotated[str, Field(description="The message to show the user")],
    answer: Annotated[ElicitationResult[UserDetails], Resolve(ask_user_details)],
) -> str:
    """tools-call-elicitation."""
    return f"User response: {_describe(answer)}"


class DefaultedProfile(BaseModel):
    name: str = Field("John Doe", description="User name")
    age: int = Field(30, description="User age")
    score: float = Field(95.5, description="User score")
    status: Literal["active", "inactive", "pending"] = Field("active", description="User status")
    verified: bool = Field(True, description="Verification status")


def ask_defaulted_profile() -> Elicit[DefaultedProfile]:
    return Elicit("Please review these details; every field has a default.", DefaultedProfile)


@server.tool(description="Asks the user for fields that all have default values (SEP-1034).")
async def test_elicitation_sep1034_defaults(
    answer: Annotated[ElicitationResult[DefaultedProfile], Resolve(ask_defaulted_profile)],
) -> str:
    """elicitation-sep1034-defaults: pydantic field defaults become schema `default`s."""
    return f"Elicitation completed: {_describe(answer)}"


def _titled(options: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"const": value, "title": title} for value, title in options]


class EnumChoices(BaseModel):
    untitledSingle: Literal["option1", "option2", "option3"] | None = Field(  # noqa: N815
        None, description="Untitled single-select"
    )
    titledSingle: Annotated[  # noqa: N815
        Literal["value1", "value2", "value3"] | None,
        WithJsonSchema(
            {
                "type": "string",
                "oneOf": _titled([("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")]),
            }
        ),
    ] = Field(None, description="Titled single-select")
    legacyEnum: Annotated[  # noqa: N815
        Literal["opt1", "opt2", "opt3"] | None,
        WithJsonSchema(
            {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            }
        ),
    ] = Field(None, description="Legacy titled single-select (enumNames)")
    untitledMulti: list[Literal["option1", "option2", "option3"]] | None = Field(  # noqa: N815
        None, description="Untitled multi-select"
    )
    titledMulti: Annotated[  # noqa: N815
        list[Literal["value1", "value2", "value3"]] | None,
        WithJsonSchema(
            {
                "type": "array",
                "items": {
                    "anyOf": _titled(
                        [("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")]
                    )
                },
            }
        ),
    ] = Field(None, description="Titled multi-select")


def ask_enum_choices() -> Elicit[EnumChoices]:
    return Elicit("Please pick from each kind of list.", EnumChoices)


@server.tool(description="Asks the user to pick from every kind of enum (SEP-1330).")
async def test_elicitation_sep1330_enums(
    answer: Annotated[ElicitationResult[EnumChoices], Resolve(ask_enum_choices)],
) -> str:
    """elicitation-sep1330-enums."""
    return f"Elicitation completed: {_describe(answer)}"


def sample_prompt(prompt: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=100)


def _sampled_text(result: CreateMessageResult) -> str:
    content = result.content
    return content.text if isinstance(content, TextContent) else content.model_dump_json()


@server.tool(description="Asks the client to sample an LLM with the given prompt.")
async def test_sampling(
    prompt: Annotated[str, Field(description="The prompt to send to the LLM")],
    reply: Annotated[CreateMessageResult, Resolve(sample_prompt)],
) -> str:
    """tools-call-sampling."""
    return f"LLM response: {_sampled_text(reply)}"


def sample_capital() -> Sample:
    question = "What is the capital of France?"
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=100)


@server.tool(description="Needs the client's sampling capability (-32021 without it).")
async def test_missing_capability(reply: Annotated[CreateMessageResult, Resolve(sample_capital)]) -> str:
    """server-stateless: the SDK refuses with -32021 before asking an undeclaring client."""
    return f"LLM says: {_sampled_text(reply)}"


# --- Tools: Multi Round-Trip Requests with fixed keys (2026-07-28 scenarios) ------------------
#
# The suite names the keys of the questions (`user_name`, `capital_question`, ...), so these
# tools ask by hand: `ask` returns the answers, or on 2026-07-28 an `InputRequiredResult` for
# the ones the retry has not brought yet. The SDK seals `requestState` (tampering is refused
# with -32602 before the tool runs) and hands the tool back the plaintext it chose.


class Name(BaseModel):
    name: str


class Colour(BaseModel):
    color: str


class Confirmation(BaseModel):
    ok: bool


class PromptContext(BaseModel):
    context: str


def _elicit(message: str, schema: type[BaseModel]) -> ElicitRequest:
    return ElicitRequest(
        params=ElicitRequestFormParams(message=message, requested_schema=render_elicitation_schema(schema))
    )


def _sample(text: str, max_tokens: int) -> CreateMessageRequest:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    return CreateMessageRequest(params=CreateMessageRequestParams(messages=[message], max_tokens=max_tokens))


_ANSWER_TYPES: dict[str, type[BaseModel]] = {
    "elicitation/create": ElicitResult,
    "sampling/createMessage": CreateMessageResult,
    "roots/list": ListRootsResult,
}
"""What a client's answer to each kind of question must be."""

_CAPABILITIES = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
"""The client capability each kind of question needs."""


def _needed_capability(request: InputRequest) -> ClientCapabilities:
    return ClientCapabilities.model_validate({_CAPABILITIES[request.method]: {}})


def _client_can(ctx: Context, request: InputRequest) -> bool:
    return ctx.session.check_client_capability(_needed_capability(request))


async def ask(
    ctx: Context, questions: dict[str, InputRequest], state: str | None = None
) -> dict[str, InputResponse] | InputRequiredResult:
    """The client's answers to `questions` (key -> request).

    2025-11-25: each question is sent to the client now, on the request's stream.
    2026-07-28: answers come from the retry's `inputResponses`; an answer that is missing or of
    the wrong kind is asked (again) by returning `InputRequiredResult`, with `state` as the
    `requestState` the retry must echo. Asking needs the client capability, else -32021.
    """
    for request in questions.values():
        if not _client_can(ctx, request):
            data = MissingRequiredClientCapabilityErrorData(required_capabilities=_needed_capability(request))
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message=f"Answering needs a client capability the client did not declare ({request.method})",
                data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
            )
    if not _is_modern(ctx):
        metadata = ServerMessageMetadata(related_request_id=ctx.request_id)
        return {
            key: await ctx.session.send_request(request, _ANSWER_TYPES[request.method], metadata=metadata)
            for key, request in questions.items()
        }
    given = ctx.input_responses or {}
    answers = {
        key: given[key]
        for key, request in questions.items()
        if isinstance(given.get(key), _ANSWER_TYPES[request.method])
    }
    missing = {key: request for key, request in questions.items() if key not in answers}
    if missing:
        return InputRequiredResult(input_requests=missing, request_state=state)
    return answers


def _accepted(answer: InputResponse, field: str) -> str:
    """The string `field` of an accepted elicitation; anything else fails the tool."""
    accepted = isinstance(answer, ElicitResult) and answer.action == "accept"
    value = (answer.content or {}).get(field) if accepted else None  # type: ignore[union-attr]
    if isinstance(value, str):
        return value
    raise ToolError(f"elicitation not accepted (no string `{field}`)")


def _root_uris(answer: InputResponse) -> str:
    return ", ".join(str(root.uri) for root in answer.roots) if isinstance(answer, ListRootsResult) else ""


def _sampled(answer: InputResponse) -> str:
    return _sampled_text(answer) if isinstance(answer, CreateMessageResult) else ""


@server.tool(description="Asks for your name (elicitation), then greets you.")
async def test_input_required_result_elicitation(ctx: Context) -> str | InputRequiredResult:
    """input-required-result-basic-elicitation, -result-type, -missing-input-response,
    -ignore-extra-params, -validate-input."""
    answers = await ask(ctx, {"user_name": _elicit("What is your name?", Name)})
    if isinstance(answers, InputRequiredResult):
        return answers
    return f"Hello, {_accepted(answers['user_name'], 'name')}!"


@server.tool(description="Asks the client's LLM for the capital of France.")
async def test_input_required_result_sampling(ctx: Context) -> str | InputRequiredResult:
    """input-required-result-basic-sampling."""
    answers = await ask(ctx, {"capital_question": _sample("What is the capital of France?", 100)})
    if isinstance(answers, InputRequiredResult):
        return answers
    return f"LLM says: {_sampled(answers['capital_question'])}"


@server.tool(description="Asks the client for its roots and lists them.")
async def test_input_required_result_list_roots(ctx: Context) -> str | InputRequiredResult:
    """input-required-result-basic-list-roots."""
    answers = await ask(ctx, {"client_roots": ListRootsRequest()})
    if isinstance(answers, InputRequiredResult):
        return answers
    return f"Roots: {_root_uris(answers['client_roots'])}"


async def _confirm_with_state(ctx: Context) -> str | InputRequiredResult:
    """Round 1 asks with a requestState; the retry must echo it (verified by the SDK)."""
    state = json.dumps({"step": "confirm"})
    question: dict[str, InputRequest] = {"confirm": _elicit("Please confirm", Confirmation)}
    if ctx.request_state != state:
        # First round, or a retry that lost the state: answers without it are not trusted.
        return InputRequiredResult(input_requests=question, request_state=state)
    answers = await ask(ctx, question, state)
    if isinstance(answers, InputRequiredResult):
        return answers
    answer = answers["confirm"]
    ok = isinstance(answer, ElicitResult) and answer.action == "accept" and (answer.content or {}).get("ok")
    return f"state-ok: requestState verified, ok={json.dumps(ok)}"


@server.tool(description="Asks for a confirmation and checks the echoed requestState.")
async def test_input_required_result_request_state(ctx: Context) -> str | InputRequiredResult:
    """input-required-result-request-state."""
    if not _is_modern(ctx):
        answers = await ask(ctx, {"confirm": _elicit("Please confirm", Confirmation)})
        assert not isinstance(answers, InputRequiredResult)
        return "state-ok: no requestState needed on a 2025-11-25 session"
    return await _confirm_with_state(ctx)


@server.tool(description="Asks for a confirmation; a tampered requestState is refused.")
async def test_input_required_result_tampered_state(ctx: Context) -> str | InputRequiredResult:
    """input-required-result-tampered-state: the SDK's RequestStateBoundary rejects the
    tampered token with -32602 before this body runs."""
    return await test_input_required_result_request_state(ctx)


@server.tool(description="Asks for a name, a sampled greeting and the roots at once.")
async def test_input_required_result_multiple_inputs(ctx: Context) -> str | InputRequiredResult:
    """input-required-result-multiple-input-requests."""
    questions: dict[str, InputRequest] = {
        "user_name": _elicit("What is your name?", Name),
        "greeting": _sample("Generate a greeting", 50),
        "client_roots": ListRootsRequest(),
    }
    answers = await ask(ctx, questions, state=json.dumps({"asked": sorted(questions)}))
    if isinstance(answers, InputRequiredResult):
        return answers
    name = _accepted(answers["user_name"], "name")
    return f"name={name}, greeting={_sampled(answers['greeting'])}, roots={_root_uris(answers['client_roots'])}"


@server.tool(description="Asks for a name, then a colour, over two rounds.")
async def test_input_required_result_multi_round(ctx: Context) -> str | InputRequiredResult:
    """input-required-result-multi-round: round 1 asks a name, round 2 keeps it in the
    requestState and asks a colour, round 3 answers."""
    known = json.loads(ctx.request_state).get("name") if ctx.request_state else None
    if known is None:
        answers = await ask(ctx, {"step1": _elicit("Step 1: What is your name?", Name)}, json.dumps({"round": 1}))
        if isinstance(answers, InputRequiredResult):
            return answers
        known = _accepted(answers["step1"], "name")
    question = {"step2": _elicit("Step 2: What is your favorite color?", Colour)}
    answers = await ask(ctx, question, json.dumps({"round": 2, "name": known}))
    if isinstance(answers, InputRequiredResult):
        return answers
    return f"{known}'s favorite color is {_accepted(answers['step2'], 'color')}."


@server.tool(description="Asks only what the request's client capabilities allow.")
async def test_input_required_result_capabilities(ctx: Context) -> str | InputRequiredResult:
    """input-required-result-capability-check: never asks for an undeclared capability."""
    questions: dict[str, InputRequest] = {
        "capital_question": _sample("What is the capital of France?", 100),
        "user_name": _elicit("What is your name?", Name),
        "client_roots": ListRootsRequest(),
    }
    allowed = {key: request for key, request in questions.items() if _client_can(ctx, request)}
    answers = await ask(ctx, allowed, json.dumps({"asked": sorted(allowed)}))
    if isinstance(answers, InputRequiredResult):
        return answers
    return f"Answered {len(answers)} question(s) the client can answer."


@server.tool(description="Reports progress, then asks for a confirmation.")
async def test_streaming_elicitation(ctx: Context) -> str | InputRequiredResult:
    """server-stateless: its 2026-07-28 response stream carries notifications and the
    input_required result, never a server-to-client request."""
    await ctx.report_progress(1, 2, "Waiting for confirmation")
    answers = await ask(ctx, {"confirm": _elicit("Please confirm", Confirmation)})
    if isinstance(answers, InputRequiredResult):
        return answers
    answer = answers["confirm"]
    return f"Confirmed: {answer.model_dump_json(exclude_none=True)}"


# --- Tools: change notifications and custom headers -------------------------------------------


# The hooks really change the lists (a tool or prompt appears, then disappears on the next call),
# as a server announcing list_changed has: an intermediary that only forwards changes it can see
# (a gateway re-listing the backend) observes one.
_toggled = {"tool": False, "prompt": False}


def _toggled_tool() -> str:
    """Present every other test_trigger_tool_change."""
    return "toggled"


def _toggled_prompt() -> str:
    """Present every other test_trigger_prompt_change."""
    return "toggled"


@server.tool(description="Adds or removes a tool, then announces tools/list_changed.")
async def test_trigger_tool_change(ctx: Context) -> str:
    """server-stateless: a tools list change reaches listen streams that asked for it."""
    if _toggled["tool"]:
        server.remove_tool("test_toggled_tool")
    else:
        server.add_tool(_toggled_tool, name="test_toggled_tool")
    _toggled["tool"] = not _toggled["tool"]
    await ctx.notify_tools_changed()
    return "Announced notifications/tools/list_changed."


@server.tool(description="Adds or removes a prompt, then announces prompts/list_changed.")
async def test_trigger_prompt_change(ctx: Context) -> str:
    """server-stateless: a prompts list change reaches listen streams that asked for it."""
    if _toggled["prompt"]:
        server.remove_prompt("test_toggled_prompt")
    else:
        server.add_prompt(Prompt.from_function(_toggled_prompt, name="test_toggled_prompt"))
    _toggled["prompt"] = not _toggled["prompt"]
    await ctx.notify_prompts_changed()
    return "Announced notifications/prompts/list_changed."


@server.tool(description="Announces that test://watched-resource changed, to whoever subscribed to it.")
async def test_trigger_resource_update(ctx: Context) -> str:
    """resources-subscribe made observable (no scenario requires it): 2025-11-25 sends
    notifications/resources/updated to this session if it subscribed; 2026-07-28 publishes it
    to subscriptions/listen streams that asked for the URI."""
    uri = "test://watched-resource"
    if _is_modern(ctx):
        await ctx.notify_resource_updated(uri)
    elif uri in _subscriptions.get(_session_id(ctx.request_context) or "", set()):
        await ctx.session.send_resource_updated(uri)
    return f"Announced notifications/resources/updated for {uri}."


@server.tool(description="Echoes `region`, which a 2026-07-28 client mirrors into Mcp-Param-Region.")
def test_custom_header(
    region: Annotated[str, Field(description="Where to run", json_schema_extra={"x-mcp-header": "Region"})],
) -> str:
    """http-custom-header-server-validation: the SDK checks Mcp-Param-Region against `region`."""
    return f"Region: {region}"


# --- Tools: resumable stream (2025-11-25) -----------------------------------------------------


@server.tool(description="Closes its SSE stream mid-call; the result arrives once the client resumes it (SEP-1699).")
async def test_reconnection(ctx: Context) -> str:
    """server-sse-polling: close the POST stream, finish while the client is away; the event
    store replays the result when it reconnects with Last-Event-ID."""
    await asyncio.sleep(STEP)
    await ctx.close_sse_stream()
    await asyncio.sleep(RETRY_MS / 1000 / 2)
    return "Reconnection test completed successfully"


# --- Resources --------------------------------------------------------------------------------


@server.resource(
    "test://static-text", name="static-text", description="A static text resource", mime_type="text/plain"
)
def static_text() -> str:
    """resources-read-text."""
    return "This is the content of the static text resource."


@server.resource(
    "test://static-binary",
    name="static-binary",
    description="A static binary resource (a 1x1 PNG)",
    mime_type="image/png",
)
def static_binary() -> bytes:
    """resources-read-binary: bytes become a base64 `blob`."""
    return PNG


@server.resource(
    "test://watched-resource",
    name="watched-resource",
    description="A resource clients may subscribe to",
    mime_type="text/plain",
)
def watched_resource() -> str:
    """resources-subscribe, resources-unsubscribe."""
    return "This resource never changes, but you may watch it."


@server.resource(
    "test://template/{id}/data", name="template-data", description="Data for the given id", mime_type="application/json"
)
def template_data(id: str) -> str:  # noqa: A002 - the template variable's name
    """resources-templates-read."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))


# sep-2164-resource-not-found: an unknown URI is the SDK's -32602 with `data.uri`.

_subscriptions: dict[str, set[str]] = {}
"""2025-11-25: the resource URIs each session subscribed to."""


async def _check_resource_exists(uri: str) -> None:
    """-32602 with `data.uri` (as resources/read answers) unless `uri` names a resource."""
    if uri in {str(resource.uri) for resource in await server.list_resources()}:
        return
    templates = await server.list_resource_templates()
    if any(UriTemplate.parse(template.uri_template).match(uri) is not None for template in templates):
        return
    raise MCPError(code=INVALID_PARAMS, message="Resource not found", data={"uri": uri})


async def subscribe(ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
    """resources-subscribe (2025-11-25; 2026-07-28 clients use subscriptions/listen)."""
    await _check_resource_exists(params.uri)
    _subscriptions.setdefault(_session_id(ctx) or "", set()).add(params.uri)
    return EmptyResult()


async def unsubscribe(ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams) -> EmptyResult:
    """resources-unsubscribe."""
    _subscriptions.get(_session_id(ctx) or "", set()).discard(params.uri)
    return EmptyResult()


async def set_level(ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams) -> EmptyResult:
    """logging-set-level (2025-11-25): the least severe level this session wants."""
    _session_log_levels[_session_id(ctx) or ""] = params.level
    return EmptyResult()


# MCPServer has no decorators for these 2025-11-25-only methods; the SDK points at the
# low-level `add_request_handler` for them (MethodBinding's docstring). Registering them also
# advertises `resources.subscribe` and `logging` in the 2025-11-25 capabilities.
_lowlevel = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
_lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
_lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
_lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)


# --- Prompts ----------------------------------------------------------------------------------


@server.prompt(description="A simple prompt without arguments")
def test_simple_prompt() -> str:
    """prompts-get-simple."""
    return "This is a simple prompt for testing."


@server.prompt(description="A prompt with two required arguments")
def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    """prompts-get-with-args."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(description="A prompt embedding the given resource")
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],  # noqa: N803
) -> list[UserMessage]:
    """prompts-get-embedded-resource."""
    return [
        UserMessage(_embedded_text(resourceUri, "text/plain", "Embedded resource content for testing.")),
        UserMessage("Please process the embedded resource above."),
    ]


@server.prompt(description="A prompt holding an image")
def test_prompt_with_image() -> list[UserMessage]:
    """prompts-get-with-image."""
    return [UserMessage(Image(data=PNG, format="png")), UserMessage("Please analyze the image above.")]


@server.prompt(description="Asks, through the client, what context to use before it is rendered")
async def test_input_required_result_prompt(ctx: Context) -> list[UserMessage] | InputRequiredResult:
    """input-required-result-non-tool-request: prompts/get may answer input_required too."""
    answers = await ask(ctx, {"user_context": _elicit("What context should the prompt use?", PromptContext)})
    if isinstance(answers, InputRequiredResult):
        return answers
    return [UserMessage(f"Answer using this context: {_accepted(answers['user_context'], 'context')}")]


# --- Completions ------------------------------------------------------------------------------

_COMPLETIONS = {
    ("ref/prompt", "test_prompt_with_arguments"): ["paris", "park", "party", "test"],
    ("ref/resource", "test://template/{id}/data"): ["1", "2", "123"],
}


@server.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument, context: CompletionContext | None
) -> Completion:
    """completion-complete: candidates for the prompt's arguments and the template's `{id}`."""
    key = (ref.type, ref.name if isinstance(ref, PromptReference) else ref.uri)
    values = [value for value in _COMPLETIONS.get(key, []) if value.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


# --- Entry point ------------------------------------------------------------------------------


async def serve(host: str, port: int) -> None:
    """Serve `/mcp` on `host:port` and announce the bound address on stdout."""
    # 2025-11-25 sessions get resumable SSE streams (priming events, `retry`); 2026-07-28
    # requests are served statelessly by the same app. DNS-rebinding protection (Host/Origin
    # checks) is on by default for a localhost host.
    app = server.streamable_http_app(event_store=MemoryEventStore(), retry_interval=RETRY_MS, host=host)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http = uvicorn.Server(config)
    serving = asyncio.create_task(http.serve(sockets=[sock]))
    while not http.started and not serving.done():
        await asyncio.sleep(0.01)
    if http.started:
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        print(f"listening http://{shown}:{bound}", flush=True)
    await serving


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port to bind (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind")
    args = parser.parse_args(argv)
    try:
        asyncio.run(serve(args.host, args.port))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()

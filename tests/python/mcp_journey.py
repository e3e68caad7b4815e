#!/usr/bin/env python3
"""The whole agent journey against Etappe's /mcp, through the official Python MCP SDK.

Walks the steps of the Rust journey (tests/tests/e2e/mcp/tools.rs) with `mcp` 2.x: initialize (and,
with --era both, the 2026-07-28 `server/discover` era too), tools/list with every hint,
create_trip from a GPX link, get_trip until the days exist, get_stage, edit_stages (and the
same edit on a stale version, refused), update_trip_settings (at once, then confirmed), share_trip, unshare_trip and
delete_trip through their confirmation tokens. In the 2026-07-28 era, a second client that
declares form elicitation then has delete_trip confirmed by its person instead: the server
answers `input_required` with a yes/no form, the SDK's `Client` asks the elicitation callback
and retries the call with the answer (declined: nothing changes; accepted: the trip is gone,
and no confirmationToken ever reaches the agent). One line per step; exits 1 with the reason
on the first deviation, 2 when the SDK is missing or too old; the last line on success is
`journey complete: N tool calls ...` (N counts every tools/call request, retries included).

Run by tests/tests/e2e/mcp/python.rs; by hand:
    tests/python/.venv/bin/python tests/python/mcp_journey.py \
        --url http://127.0.0.1:8080/mcp --token etp_A --token etp_B --token etp_C \
        --gpx-url http://127.0.0.1:9000/route.gpx
(one token per era and one for the elicitation client: each has its own rate budget.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from importlib import metadata
from typing import Any
from urllib.parse import urlsplit, urlunsplit

try:
    import mcp.types as types
    from mcp import Client, ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
except ImportError as error:  # pragma: no cover - the Rust test checks `import mcp` first
    print(
        f"the Python MCP SDK is not installed ({error}): "
        "python3 -m venv tests/python/.venv && "
        "tests/python/.venv/bin/pip install -r tests/python/requirements.txt",
        file=sys.stderr,
    )
    sys.exit(2)

# The catalogue (services/src/mcp/catalogue.rs), in tools/list order, with its four hints:
# (readOnlyHint, destructiveHint, idempotentHint, openWorldHint).
EXPECTED_TOOLS: dict[str, tuple[bool, bool, bool, bool]] = {
    "list_trips": (True, False, True, False),
    "get_trip": (True, False, True, False),
    "get_stage": (True, False, True, False),
    "search_places": (True, False, True, True),
    "create_trip": (False, False, True, True),
    "update_trip_settings": (False, True, False, False),
    "edit_stages": (False, True, False, False),
    "add_waypoint": (False, False, False, True),
    "choose_accommodation": (False, False, True, False),
    "analyze_trip": (False, False, False, True),
    "share_trip": (False, False, True, False),
    "unshare_trip": (False, True, True, False),
    "delete_trip": (False, True, True, False),
    "etappe_help": (True, False, True, False),
}

POLL_DEADLINE_S = 60.0
# The server allows 60 calls a minute per user and client: the polls back off to stay under.
POLL_FIRST_S = 0.1
POLL_MAX_S = 1.5
READ_TIMEOUT_S = 30.0
# The protocol whose clients may be asked to confirm through a form (MRTR `input_required`).
ELICITATION_PROTOCOL = "2026-07-28"


class Deviation(Exception):
    """The server answered something the journey did not expect."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Deviation(message)


def show(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 600 else text[:600] + "…"


class Person:
    """The human behind a client that can elicit: answers each form as told, and keeps it."""

    def __init__(self) -> None:
        self.consents = False
        # (the key of the input request, its params), in the order asked.
        self.forms: list[tuple[str, types.ElicitRequestParams]] = []

    async def answer(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        """The SDK's elicitation callback (for 2026-07-28, run by `Client`'s MRTR driver)."""
        self.forms.append((str(context.request_id), params))
        if self.consents:
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")


class Journey:
    """One era's walk: a session, the tool calls it made, and the step being walked."""

    def __init__(self, session: ClientSession | Client, era: str, base: str, args: argparse.Namespace):
        self.session = session
        self.era = era
        self.base = base
        self.args = args
        self.calls = 0
        self.step = "connect"

    def say(self, step: str, detail: str) -> None:
        self.step = step
        print(f"[{self.era}] {step}: {detail}", flush=True)

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """One tools/call (through a `Client`, its retries with a person's answers count apart)."""
        self.calls += 1
        return await self.session.call_tool(name, arguments, read_timeout_seconds=READ_TIMEOUT_S)

    async def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The structured answer of a call that must succeed."""
        result = await self.call(name, arguments)
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        check(not result.is_error, f"{name} {show(arguments)} was refused: {show(result.structured_content) if result.structured_content is not None else text}")
        structured = result.structured_content
        check(isinstance(structured, dict), f"{name} answered no structuredContent object: {show(structured)} / {text!r}")
        # Clients that read only `content` must see the same answer.
        texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        if texts:
            try:
                mirrored = json.loads(texts[0])
            except ValueError:
                mirrored = None
            check(mirrored == structured, f"{name}: the text content does not mirror structuredContent: {texts[0][:300]!r}")
        return structured

    async def refused(self, name: str, arguments: dict[str, Any]) -> str:
        """The message of a call that must be refused as a tool error (isError: true)."""
        result = await self.call(name, arguments)
        check(result.is_error, f"{name} {show(arguments)} was accepted, expected a refusal: {show(result.structured_content)}")
        structured = result.structured_content
        if isinstance(structured, dict) and isinstance(structured.get("error"), str):
            return structured["error"]
        texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        check(bool(texts), f"{name}: a refusal with neither structuredContent.error nor text: {result!r}")
        return texts[0]

    async def challenge(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The first call of a confirmation flow: nothing written, a token answered."""
        answer = await self.ok(name, arguments)
        check(answer.get("confirmationRequired") is True, f"{name}: expected a confirmation challenge, got {show(answer)}")
        token = answer.get("confirmationToken")
        check(isinstance(token, str) and len(token) >= 16, f"{name}: no confirmationToken in {show(answer)}")
        check(isinstance(answer.get("impact"), dict), f"{name}: the challenge states no impact: {show(answer)}")
        check(isinstance(answer.get("nextAction"), str) and name in answer["nextAction"], f"{name}: the challenge's nextAction does not say to call {name} again: {show(answer)}")
        return answer

    async def settled(self, trip_id: str) -> tuple[dict[str, Any], int]:
        """get_trip until the days exist and are analysed: the trip and the number of polls."""
        started = time.monotonic()
        polls = 0
        pause = POLL_FIRST_S
        while True:
            trip = await self.ok("get_trip", {"id": trip_id})
            polls += 1
            status = trip.get("categoryStatus") or {}
            for category in ("route", "terrain_security"):
                check(status.get(category) != "failed", f"get_trip: {category} failed: {show(trip.get('unavailable'))}")
            if trip.get("partial") is False and status.get("terrain_security") == "done":
                return trip, polls
            elapsed = time.monotonic() - started
            check(elapsed < POLL_DEADLINE_S, f"get_trip: still partial={trip.get('partial')!r}, categoryStatus {show(status)} after {elapsed:.0f} s")
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, POLL_MAX_S)

    def asked_once(self, person: Person, before: int, name: str, title: str, days: int) -> str:
        """The one form `person` was asked by the last call (the SDK retried the call with the
        answer, a tools/call of its own: counted), checked; its message."""
        forms = person.forms[before:]
        self.calls += len(forms)
        check(len(forms) == 1, f"{name}: the person was asked {len(forms)} times, expected once (an input_required result with one form): {[show(p.model_dump()) for _, p in forms]}")
        key, params = forms[0]
        check(key == "confirm", f"{name}: the form's inputRequests key is {key!r}, expected 'confirm'")
        check(isinstance(params, types.ElicitRequestFormParams), f"{name}: not a form elicitation: {params!r}")
        schema = params.requested_schema
        field = (schema.get("properties") or {}).get("confirm") or {}
        check(
            field.get("type") == "boolean" and "confirm" in (schema.get("required") or []),
            f"{name}: the form does not ask for a required boolean 'confirm': {show(schema)}",
        )
        message = params.message
        check(f'"{title}"' in message, f"{name}: the form does not name the trip \"{title}\": {message!r}")
        check(f"({days} days" in message, f"{name}: the form does not state the {days} days: {message!r}")
        check(message.endswith("Go ahead?"), f"{name}: the form does not end with its question: {message!r}")
        return message

    async def walk_elicitation(self, person: Person) -> None:
        """delete_trip confirmed by the person, through a form (the session is a `Client`)."""
        client = self.session
        assert isinstance(client, Client)
        check(client.protocol_version == ELICITATION_PROTOCOL, f"the elicitation client negotiated {client.protocol_version}, expected {ELICITATION_PROTOCOL}")
        self.say("elicitation", f"a second client (the SDK's Client, with an elicitation callback), protocol {client.protocol_version}")

        title = f"Python confirms by form ({self.era})"
        created = await self.ok("create_trip", {"sourceUrl": self.args.gpx_url, "settings": {"maxDistancePerDay": 70, "title": title}})
        trip_id = created.get("id")
        check(isinstance(trip_id, str) and trip_id, f"create_trip answered no id: {show(created)}")
        trip, polls = await self.settled(trip_id)
        days = trip.get("stageCount")
        check(trip.get("title") == title, f"get_trip: the trip is titled {trip.get('title')!r}, expected {title!r}")
        self.say("create_trip (throwaway)", f"trip {trip_id}, {days} days after {polls} polls")

        # The person declines: an error saying so, and nothing changed.
        person.consents = False
        before = len(person.forms)
        declined = await self.refused("delete_trip", {"id": trip_id})
        message = self.asked_once(person, before, "delete_trip (declined)", title, days)
        check("declined" in declined and "nothing was changed" in declined, f"delete_trip declined by the person: {declined!r}")
        still = await self.ok("get_trip", {"id": trip_id})
        check(still.get("title") == title and still.get("version") == trip.get("version"), f"get_trip after a declined delete_trip: {show(still)}")
        self.say("delete_trip (person declines)", f"asked {message!r}; refused: {declined}; get_trip still answers version {still.get('version')}")

        # The person accepts: one call from the agent, no token, and the trip is gone.
        person.consents = True
        before = len(person.forms)
        deleted = await self.ok("delete_trip", {"id": trip_id})
        self.asked_once(person, before, "delete_trip (accepted)", title, days)
        check(
            not {"confirmationRequired", "confirmationToken"} & deleted.keys(),
            f"delete_trip confirmed through the form answered a token challenge to the agent: {show(deleted)}",
        )
        check("deleted" in str(deleted.get("result")), f"delete_trip confirmed through the form: {show(deleted)}")
        missing = await self.refused("get_trip", {"id": trip_id})
        check("not found" in missing, f"get_trip after delete_trip confirmed through the form: {missing!r}")
        self.say("delete_trip (person accepts)", "deleted without a confirmationToken; get_trip answers not found")

    async def public(self, path: str) -> tuple[int, str]:
        """GET a public (tokenless) address of the same server."""
        async with create_mcp_http_client() as client:
            response = await client.get(self.base + path)
            return response.status_code, response.text

    async def walk(self) -> None:
        session = self.session

        # Connect: initialize (legacy handshake) or server/discover (2026-07-28).
        if self.era == "initialize":
            init = await session.initialize()
            check(init.server_info.name == "etappe", f"serverInfo.name is {init.server_info.name!r}, expected 'etappe'")
            detail = f"protocol {init.protocol_version}, server {init.server_info.name} {init.server_info.version}"
        else:
            await session.discover()
            detail = f"protocol {session.protocol_version}"
        self.say(self.era, detail)
        capabilities = session.server_capabilities
        check(capabilities is not None and capabilities.tools is not None, f"the server does not declare tools: {capabilities!r}")
        instructions = session.instructions or ""
        missing = [n for n in EXPECTED_TOOLS if n not in instructions]
        check(not missing, f"the server instructions do not name {missing}: {instructions!r}")

        # tools/list: the catalogue, in order, with all four hints as declared.
        tools = []
        cursor = None
        while True:
            params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        names = [t.name for t in tools]
        check(names == list(EXPECTED_TOOLS), f"tools/list answered {names}, expected {list(EXPECTED_TOOLS)}")
        for tool in tools:
            a = tool.annotations
            check(a is not None, f"{tool.name} has no annotations")
            hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
            check(None not in hints, f"{tool.name}: a hint is missing: readOnly/destructive/idempotent/openWorld = {hints}")
            check(hints == EXPECTED_TOOLS[tool.name], f"{tool.name}: hints {hints}, the catalogue says {EXPECTED_TOOLS[tool.name]}")
            check(bool(tool.description), f"{tool.name} has no description")
            # Unknown arguments are refused by the server, by name (edit_stages with a misspelt
            # field, below), not declared with additionalProperties (tokens in every conversation).
            check(tool.input_schema.get("type") == "object" and isinstance(tool.input_schema.get("properties"), dict), f"{tool.name}: the input schema names no arguments")
            check(tool.output_schema is not None, f"{tool.name} declares no output schema")
        self.say("list_tools", f"{len(tools)} tools, every one with its four hints as catalogued")

        # create_trip: answers at once, partial, and says to poll get_trip.
        create_args = {
            "sourceUrl": self.args.gpx_url,
            "settings": {"maxDistancePerDay": 70, "title": f"Python journey ({self.era})"},
        }
        created = await self.ok("create_trip", create_args)
        trip_id = created.get("id")
        check(isinstance(trip_id, str) and trip_id, f"create_trip answered no id: {show(created)}")
        check(created.get("partial") is True, f"create_trip: partial is {created.get('partial')!r}, expected true")
        next_action = created.get("nextAction")
        check(isinstance(next_action, str) and "get_trip" in next_action, f"create_trip: nextAction does not point at get_trip: {next_action!r}")
        self.say("create_trip", f"trip {trip_id}, partial: true, nextAction names get_trip")
        again = await self.ok("create_trip", {"settings": create_args["settings"], "sourceUrl": create_args["sourceUrl"]})
        check(again.get("id") == trip_id, f"the same create_trip again answered trip {again.get('id')!r}, not {trip_id}")
        self.say("create_trip (retry)", "the same arguments answer the same trip")

        # get_trip until the days exist and are analysed.
        started = time.monotonic()
        trip, polls = await self.settled(trip_id)
        version = trip.get("version")
        stages = trip.get("stages")
        check(isinstance(version, int), f"get_trip: no integer version: {show(trip)}")
        check(isinstance(stages, list) and stages, f"get_trip: partial is false but there are no days: {show(trip)}")
        check(trip.get("stageCount") == len(stages), f"get_trip: stageCount {trip.get('stageCount')!r} for {len(stages)} days")
        day1 = stages[0].get("stageId")
        check(isinstance(day1, str) and day1, f"get_trip: the first day has no stageId: {show(stages[0])}")
        self.say("get_trip", f"{len(stages)} days, version {version}, after {polls} polls in {time.monotonic() - started:.1f} s")

        # get_stage: one day in full, without geometry.
        stage = await self.ok("get_stage", {"tripId": trip_id, "stageId": day1})
        check(stage.get("stageId") == day1, f"get_stage answered day {stage.get('stageId')!r}, asked {day1}")
        check(stage.get("version") == version, f"get_stage: version {stage.get('version')!r}, get_trip said {version}")
        check("points" not in stage, "get_stage carries geometry (points); agents get none")
        for key in ("alerts", "accommodations"):
            check(isinstance(stage.get(key), list), f"get_stage: {key} is not a list: {show(stage)}")
        self.say("get_stage", f"day {stage.get('dayNumber')}: {stage.get('distance')} km, {len(stage['alerts'])} alerts")

        # edit_stages on the current version: a new version.
        label = f"Python day one ({self.era})"
        edit = {"tripId": trip_id, "action": "update", "version": version, "stageId": day1, "label": label}
        edited = await self.ok("edit_stages", edit)
        check(edited.get("version") == version + 1, f"edit_stages: version {edited.get('version')!r}, expected {version + 1}")
        check(isinstance(edited.get("nextAction"), str), f"edit_stages: no nextAction: {show(edited)}")
        current = edited["version"]
        self.say("edit_stages", f"label set, version {version} -> {current}")

        # The same edit on the old version: refused, naming the current one.
        stale = await self.refused("edit_stages", {**edit, "label": "stale"})
        expected = f"you edited version {version}, the current one is {current}"
        check(expected in stale, f"edit_stages on a stale version: the refusal does not say {expected!r}: {stale!r}")
        self.say("edit_stages (stale)", f"refused: {stale}")
        star = await self.refused("edit_stages", {"tripId": trip_id, "action": "delete", "version": "*", "stageId": day1})
        check("not accepted" in star, f"edit_stages with version '*': {star!r}")
        self.say("edit_stages (version *)", "refused")
        misspelt = await self.refused("edit_stages", {**edit, "version": current, "distnace": 5})
        check("distnace" in misspelt and "distance" in misspelt, f"edit_stages with distnace: the refusal does not name the field and the accepted ones: {misspelt!r}")
        self.say("edit_stages (misspelt field)", f"refused: {misspelt}")

        trip = await self.ok("get_trip", {"id": trip_id})
        check(trip.get("version") == current, f"get_trip after the edits: version {trip.get('version')!r}, expected {current}")
        check(trip["stages"][0].get("label") == label, f"get_trip: the first day's label is {trip['stages'][0].get('label')!r}, expected {label!r} (and not the stale edit's)")
        self.say("get_trip", f"version {current}, the first day is labelled")

        # update_trip_settings with a setting that keeps the days: changed at once, no token.
        details = await self.ok("update_trip_settings", {"id": trip_id, "version": current, "settings": {"averageSpeed": 18}})
        check("confirmationToken" not in details, f"update_trip_settings (speed) asked to confirm: {show(details)}")
        check("the days stay" in str(details.get("result")), f"update_trip_settings (speed): {show(details)}")
        check(details.get("version") == current + 1, f"update_trip_settings (speed): version {details.get('version')!r}, expected {current + 1}")
        current = details["version"]
        self.say("update_trip_settings (speed)", f"averageSpeed 18 at once, the days stay, version {current}")

        # update_trip_settings: a challenge, a token bound to its arguments, then the change.
        settings_args = {"id": trip_id, "version": current, "settings": {"fatigueFactor": 0.8}}
        first = await self.challenge("update_trip_settings", settings_args)
        check(first["impact"].get("tripId") == trip_id, f"update_trip_settings: the impact names another trip: {show(first)}")
        other = await self.refused(
            "update_trip_settings",
            {**settings_args, "settings": {"fatigueFactor": 0.7}, "confirmationToken": first["confirmationToken"]},
        )
        check("not valid for this call" in other, f"a token used with other arguments: {other!r}")
        self.say("update_trip_settings (other arguments)", "the token is refused")
        first = await self.challenge("update_trip_settings", settings_args)
        self.say("update_trip_settings", "challenged, nothing written")
        token = first["confirmationToken"]
        changed = await self.ok("update_trip_settings", {**settings_args, "confirmationToken": token})
        check("Settings changed" in str(changed.get("result")), f"update_trip_settings confirmed: {show(changed)}")
        check(isinstance(changed.get("version"), int), f"update_trip_settings: no version: {show(changed)}")
        self.say("update_trip_settings (confirmed)", f"{changed['result']} version {changed['version']}")
        # The fatigue factor re-cuts the days: get_trip until the new ones are analysed.
        trip, _ = await self.settled(trip_id)
        settings = trip.get("settings") or {}
        check(settings.get("averageSpeed") == 18 and settings.get("fatigueFactor") == 0.8, f"get_trip after the settings changes: {show(settings)}")
        # The new days landing move the version again (they are a structural change).
        check(trip.get("version", -1) >= changed["version"], f"get_trip after the settings change: version {trip.get('version')!r}, the change answered {changed['version']}")
        self.say("get_trip", f"averageSpeed 18, fatigueFactor 0.8, version {trip['version']}, partial: {str(trip.get('partial')).lower()}")

        # share_trip: a public address, readable without a token.
        shared = await self.ok("share_trip", {"tripId": trip_id})
        code = shared.get("shortCode")
        url = shared.get("url")
        check(isinstance(code, str) and code, f"share_trip: no shortCode: {show(shared)}")
        check(isinstance(url, str) and url.startswith("http") and url.endswith(f"/s/{code}"), f"share_trip: url {url!r} is not a public /s/{code} address")
        status, body = await self.public(f"/s/{code}.gpx")
        check(status == 200 and "<gpx" in body, f"GET /s/{code}.gpx without a token: {status} {body[:200]!r}")
        self.say("share_trip", f"{url}; its .gpx downloads without a token")

        # unshare_trip: a challenge, then the link stops resolving.
        first = await self.challenge("unshare_trip", {"tripId": trip_id})
        check(first["impact"].get("hasActiveShareLink") is True, f"unshare_trip: the impact does not show the active link: {show(first)}")
        self.say("unshare_trip", "challenged, nothing written")
        status, _ = await self.public(f"/s/{code}")
        check(status == 200, f"GET /s/{code} after the challenge alone: {status}, expected 200 (nothing revoked yet)")
        confirm = {"tripId": trip_id, "confirmationToken": first["confirmationToken"]}
        await self.ok("unshare_trip", confirm)
        status, _ = await self.public(f"/s/{code}")
        check(status == 404, f"GET /s/{code} after unshare_trip: {status}, expected 404")
        self.say("unshare_trip (confirmed)", "the public address answers 404")
        replay = await self.refused("unshare_trip", confirm)
        check("not valid for this call" in replay, f"unshare_trip with its used token again: {replay!r}")
        self.say("unshare_trip (token again)", "refused: a token is single use")

        # delete_trip: a challenge, then the trip is gone.
        first = await self.challenge("delete_trip", {"id": trip_id})
        impact = first["impact"]
        check(impact.get("hasActiveShareLink") is False, f"delete_trip: the impact shows a share link after unshare: {show(first)}")
        check(impact.get("stageCount") == trip.get("stageCount"), f"delete_trip: the impact counts {impact.get('stageCount')!r} days, get_trip said {trip.get('stageCount')!r}")
        check(impact.get("title") == trip.get("title"), f"delete_trip: the impact names {impact.get('title')!r}, the trip is {trip.get('title')!r}")
        self.say("delete_trip", f"challenged ({impact.get('stageCount')} days), nothing written")
        await self.ok("delete_trip", {"id": trip_id, "confirmationToken": first["confirmationToken"]})
        missing = await self.refused("get_trip", {"id": trip_id})
        check("not found" in missing, f"get_trip after delete_trip: {missing!r}")
        self.say("delete_trip (confirmed)", "get_trip answers not found")


def server_base(url: str) -> str:
    """The server's root: the MCP URL without its path."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def first_deviation(error: BaseException) -> BaseException:
    """The innermost meaningful error of an exception group raised by the SDK's task groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def client_headers(token: str, era: str, version: str) -> dict[str, str]:
    return {
        # The server's rate limits count per client, i.e. per token: give each era (and the
        # elicitation client) its own, so that the walks do not share one budget.
        "Authorization": f"Bearer {token}",
        "User-Agent": f"etappe-mcp-journey/{era} python-mcp/{version}",
    }


async def walk_era(era: str, token: str, elicitation_token: str, args: argparse.Namespace, version: str) -> int:
    headers = client_headers(token, era, version)
    journey: Journey | None = None
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(args.url, http_client=http) as (read, write):
            async with ClientSession(
                read,
                write,
                read_timeout_seconds=READ_TIMEOUT_S,
                client_info=types.Implementation(name="etappe-mcp-journey", version=version),
            ) as session:
                journey = Journey(session, era, server_base(args.url), args)
                await journey.walk()
    calls = journey.calls
    if era != "discover":
        return calls

    # The same era, through a client whose person can be asked: the SDK's high-level `Client`
    # declares form elicitation (it has a callback) and drives the MRTR rounds itself.
    person = Person()
    async with create_mcp_http_client(headers=client_headers(elicitation_token, f"{era}+elicitation", version)) as http:
        async with Client(
            streamable_http_client(args.url, http_client=http),
            mode="auto",
            elicitation_callback=person.answer,
            read_timeout_seconds=READ_TIMEOUT_S,
            client_info=types.Implementation(name="etappe-mcp-journey", version=version),
        ) as client:
            asking = Journey(client, era, server_base(args.url), args)
            await asking.walk_elicitation(person)
    return calls + asking.calls


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the MCP endpoint, http://host:port/mcp")
    parser.add_argument(
        "--token",
        required=True,
        action="append",
        help="a bearer token with trips:read and trips:write; three times: one per era, then one "
        "for the 2026-07-28 elicitation client (fewer are reused in turn, sharing a rate budget)",
    )
    parser.add_argument("--gpx-url", required=True, help="a GPX route the server may fetch")
    parser.add_argument(
        "--era",
        choices=("initialize", "discover", "both"),
        default="both",
        help="initialize (2025-11-25 handshake), discover (2026-07-28), or both in turn (default)",
    )
    args = parser.parse_args()

    version = metadata.version("mcp")
    if int(version.split(".")[0]) < 2:
        print(f"mcp {version} is installed; this script needs mcp 2.x (tests/python/requirements.txt)", file=sys.stderr)
        return 2
    print(f"python mcp SDK {version}, {args.url}", flush=True)

    eras = ["initialize", "discover"] if args.era == "both" else [args.era]
    total = 0
    started = time.monotonic()
    for index, era in enumerate(eras):
        journey_calls = 0
        try:
            token = args.token[index % len(args.token)]
            elicitation_token = args.token[len(eras) % len(args.token)]
            journey_calls = await walk_era(era, token, elicitation_token, args, version)
        except BaseException as raised:  # noqa: BLE001 - every failure is reported the same way
            error = first_deviation(raised)
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            kind = "deviation" if isinstance(error, Deviation) else type(error).__name__
            print(f"[{era}] FAILED ({kind}): {error}", file=sys.stderr, flush=True)
            if not isinstance(error, Deviation):
                import traceback

                traceback.print_exception(raised, file=sys.stderr)
            return 1
        print(f"[{era}] done: {journey_calls} tool calls", flush=True)
        total += journey_calls
    print(f"journey complete: {total} tool calls in {time.monotonic() - started:.1f} s ({', '.join(eras)})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

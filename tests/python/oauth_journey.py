#!/usr/bin/env python3
"""An MCP host connecting to Etappe's /mcp unaided, through the official Python SDK's OAuth client.

`mcp.client.auth.OAuthClientProvider` (mcp 2.x) meets the 401, reads the protected-resource
metadata named in `WWW-Authenticate`, then the authorization-server metadata, registers (dynamic
client registration; or, with a client ID metadata document URL, not at all: the server fetches
the document, served over https on loopback by the Rust test), sends the person to the consent
page, exchanges the code with PKCE, and calls tools. The person is a
second HTTP client (the SDK warns that re-entering its locked flow would deadlock): it logs in
with the magic link read from the server's file mailbox, opens the consent page the redirect
handler is given, and approves it by POST with the page's CSRF token. Then the access token
expires (the server is started with a short lifetime) and the SDK refreshes it; then the
token is revoked (RFC 7009) and the next call with it gets 401.

Prints one line per step, and, per registration, `first tool call: N requests, S seconds`
(from the client's first request to its first successful tool call). Exits 1 on the first
deviation, 2 when the SDK is missing.

Run by tests/tests/e2e/oauth/python.rs; by hand:
    tests/python/.venv/bin/python tests/python/oauth_journey.py --base http://127.0.0.1:8080 \\
        --mailbox data/mailbox --access-ttl 2 --cimd-url https://127.0.0.1:8443/client.json \\
        --cimd-name 'Etappe OAuth journey (metadata document)'
"""

from __future__ import annotations

import argparse
import asyncio
import email
import email.policy
import html
import re
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

try:
    import httpx2
    import mcp.types as types
    from mcp import ClientSession
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
except ImportError as error:  # pragma: no cover - the Rust test checks `import mcp` first
    print(f"the Python MCP SDK is not installed ({error})", file=sys.stderr)
    sys.exit(2)

REDIRECT_URI = "http://127.0.0.1:47999/callback"


class Deviation(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Deviation(message)


class MemoryStorage:
    """The SDK's TokenStorage protocol, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """The person at the browser: logs in by magic link, approves consent pages."""

    def __init__(self, base: str, mailbox: Path) -> None:
        self.base = base
        self.mailbox = mailbox
        self.browser = httpx2.AsyncClient(follow_redirects=False, timeout=30)
        self.cookie = ""
        self.answer: AuthorizationCodeResult | None = None
        self.consents = 0
        # What the consent page must show: the client's name and its client id.
        self.expected_client: tuple[str, str] | None = None

    def messages(self) -> list[Path]:
        if not self.mailbox.is_dir():
            return []
        return sorted(self.mailbox.glob("*.eml"), key=lambda p: p.stat().st_mtime_ns)

    async def log_in(self, address: str) -> None:
        before = len(self.messages())
        asked = await self.browser.post(f"{self.base}/auth/login", json={"email": address})
        check(asked.status_code == 202, f"POST /auth/login answered {asked.status_code}")
        for _ in range(200):
            found = self.messages()
            if len(found) > before:
                break
            await asyncio.sleep(0.025)
        else:
            raise Deviation("no login mail arrived in the mailbox")
        message = email.message_from_bytes(found[-1].read_bytes(), policy=email.policy.default)
        body = message.get_body(preferencelist=("plain",)).get_content()
        link = re.search(r"\S+/auth/magic\?token=([A-Za-z0-9_-]+)", body)
        check(link is not None, f"no login link in the mail: {body!r}")
        page = await self.browser.get(link.group(0))
        check(page.status_code == 200, f"the login link's page answered {page.status_code}")
        done = await self.browser.post(
            f"{self.base}/auth/magic",
            data={"token": link.group(1)},
            headers={"Origin": self.base},
        )
        check(done.status_code == 303, f"POST /auth/magic answered {done.status_code}")
        cookie = done.headers.get("set-cookie", "").split(";")[0]
        check("=" in cookie, "no session cookie")
        self.cookie = cookie
        print(f"person: logged in as {address} from the mailbox's magic link")

    async def redirect_handler(self, authorization_url: str) -> None:
        """The SDK sends the person here: the consent page, then Allow."""
        page = await self.browser.get(authorization_url, headers={"Cookie": self.cookie})
        check(page.status_code == 200, f"the consent page answered {page.status_code}: {page.text[:300]}")
        check(page.headers.get("x-frame-options") == "DENY", "the consent page can be framed")
        if self.expected_client is not None:
            name, client_id = self.expected_client
            check(f"<q>{html.escape(name)}</q>" in page.text, f"the consent page does not name {name!r}: {page.text[:600]}")
            check(html.escape(client_id) in page.text, f"the consent page does not show {client_id}")
        fields = {
            html.unescape(name): html.unescape(value)
            for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.text)
        }
        check("csrf" in fields, "the consent form carries no CSRF token")
        fields["decision"] = "approve"
        decided = await self.browser.post(
            f"{self.base}/oauth/authorize",
            data=fields,
            headers={"Cookie": self.cookie, "Origin": self.base},
        )
        check(decided.status_code == 303, f"the decision answered {decided.status_code}: {decided.text[:300]}")
        location = decided.headers["location"]
        check(location.startswith(REDIRECT_URI), f"redirected to {location}")
        query = parse_qs(urlsplit(location).query)
        self.answer = AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )
        self.consents += 1

    async def callback_handler(self) -> AuthorizationCodeResult:
        check(self.answer is not None, "the callback came before the redirect")
        answer, self.answer = self.answer, None
        return answer  # type: ignore[return-value]


class Counter:
    """Every request the client sends, in order (method, path, status)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.started: float | None = None

    async def on_request(self, request: httpx2.Request) -> None:
        if self.started is None:
            self.started = time.monotonic()
        self.requests.append((request.method, request.url.path))


async def connect(args: argparse.Namespace, person: Person, kind: str) -> None:
    storage = MemoryStorage()
    # A DCR client is named by its registration; a document's client by its document, which
    # the server fetched (the SDK's own metadata below is not sent then).
    person.expected_client = (args.cimd_name, args.cimd_url) if kind == "cimd" else None
    metadata = OAuthClientMetadata(
        client_name=f"Etappe OAuth journey ({kind})",
        redirect_uris=[REDIRECT_URI],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    provider = OAuthClientProvider(
        server_url=f"{args.base}/mcp",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
        client_metadata_url=args.cimd_url if kind == "cimd" else None,
    )
    counter = Counter()
    async with httpx2.AsyncClient(
        auth=provider,
        event_hooks={"request": [counter.on_request]},
        timeout=httpx2.Timeout(30, read=60),
    ) as http:
        async with streamable_http_client(f"{args.base}/mcp", http_client=http) as (read, write):
            async with ClientSession(
                read, write, client_info=types.Implementation(name="etappe-oauth-journey", version="1")
            ) as session:
                await session.initialize()
                listed = await session.call_tool("list_trips", {})
                check(not listed.is_error, f"list_trips failed: {listed}")
                elapsed = time.monotonic() - (counter.started or time.monotonic())
                calls = len(counter.requests)
                paths = " ".join(f"{m} {p}" for m, p in counter.requests)
                print(f"{kind}: first tool call: {calls} requests, {elapsed:.3f} seconds ({paths})")
                check(storage.client is not None, "no client registered")
                client_id = storage.client.client_id
                if kind == "cimd":
                    check(client_id == args.cimd_url, f"the client id is {client_id}, not the document URL")
                else:
                    check(client_id.startswith("dcr_"), f"a registered client id: {client_id}")
                registered = any(p == "/oauth/register" for _, p in counter.requests)
                check(registered == (kind == "dcr"), f"{kind}: dynamic registration used: {registered}")
                check(storage.tokens is not None and storage.tokens.access_token.startswith("eta_"), "no access token")
                first_access = storage.tokens.access_token
                print(f"{kind}: tokens issued to {client_id} (scope {storage.tokens.scope})")

                # The access token expires; the SDK refreshes it before the next call.
                await asyncio.sleep(args.access_ttl + 1.0)
                before = len(counter.requests)
                again = await session.call_tool("list_trips", {})
                check(not again.is_error, f"list_trips after expiry failed: {again}")
                token_posts = [p for _, p in counter.requests[before:] if p == "/oauth/token"]
                check(len(token_posts) == 1, f"the refresh: {counter.requests[before:]}")
                check(storage.tokens.access_token != first_access, "the access token did not change")
                check(person.consents == 1, "the refresh asked the person again")
                print(f"{kind}: access token expired and refreshed (rotated), the call went through")

                # Revocation (RFC 7009): the grant ends, and a call with the token gets 401.
                access = storage.tokens.access_token
                refresh = storage.tokens.refresh_token
                async with httpx2.AsyncClient(timeout=30) as raw:
                    revoked = await raw.post(
                        f"{args.base}/oauth/revoke", data={"token": access, "client_id": client_id}
                    )
                    check(revoked.status_code == 200, f"revoke answered {revoked.status_code}")
                    after = await raw.post(
                        f"{args.base}/mcp",
                        headers={
                            "Authorization": f"Bearer {access}",
                            "Accept": "application/json, text/event-stream",
                            "Content-Type": "application/json",
                            "MCP-Protocol-Version": "2025-11-25",
                        },
                        json={"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "list_trips", "arguments": {}}},
                    )
                    check(after.status_code == 401, f"a call after revocation answered {after.status_code}")
                    challenge = after.headers.get("www-authenticate", "")
                    check('error="invalid_token"' in challenge and "resource_metadata=" in challenge, challenge)
                    reused = await raw.post(
                        f"{args.base}/oauth/token",
                        data={"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client_id},
                    )
                    check(reused.status_code == 400, f"the revoked grant's refresh answered {reused.status_code}")
                print(f"{kind}: revoked; the next call got 401 ({challenge})")
    person.consents = 0


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the server, http://host:port")
    parser.add_argument("--mailbox", required=True, help="the server's file mailbox directory")
    parser.add_argument("--access-ttl", type=float, required=True, help="the server's access token lifetime")
    parser.add_argument("--cimd-url", required=True, help="an https client ID metadata document URL the server can fetch")
    parser.add_argument("--cimd-name", required=True, help="the client_name that document gives")
    parser.add_argument("--email", default="agent-owner@example.org")
    args = parser.parse_args()
    person = Person(args.base, Path(args.mailbox))
    try:
        await person.log_in(args.email)
        for kind in ("dcr", "cimd"):
            await connect(args, person, kind)
    except Deviation as deviation:
        print(f"FAILED: {deviation}", file=sys.stderr)
        return 1
    finally:
        await person.browser.aclose()
    print("oauth journey complete")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

// An MCP host connecting to Etappe's /mcp unaided, through the official TypeScript SDK's OAuth
// client (`@modelcontextprotocol/sdk`, pinned in package.json).
//
// The SDK's transport meets the 401, reads the protected-resource metadata named in
// `WWW-Authenticate`, then the authorization-server metadata, registers (dynamic client
// registration; or, given ETAPPE_CIMD_URL, a client ID metadata document URL, which the server
// fetches), and calls the provider's `redirectToAuthorization(url)`. There the person (a second
// HTTP client, logged in by the magic link read from the server's file mailbox) opens the
// consent page and approves it with the page's CSRF token; the code from the redirect goes to
// `transport.finishAuth(code)` (PKCE S256, the SDK's verifier), then a new connection calls a
// tool. Then the access token expires (the server is started with a short lifetime,
// ETAPPE_ACCESS_TTL seconds), the next call's 401 makes the SDK refresh it (rotated) without
// the person; then the token is revoked (RFC 7009) and the next call with it gets 401.
//
// Prints one line per step, and, per registration, `first tool call: N requests, S seconds`
// (from the client's first request to its first successful tool call). Exits 1 on the first
// deviation. Run by tests/tests/e2e/oauth/node.rs; by hand (after `npm ci` here):
//   ETAPPE_BASE=http://127.0.0.1:8080 ETAPPE_MAILBOX=data/mailbox node tests/node/oauth_journey.mjs

import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const REDIRECT_URI = 'http://127.0.0.1:47998/callback';

class Deviation extends Error {}

function check(condition, message) {
  if (!condition) throw new Deviation(message);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function unescapeHtml(text) {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

// The text of a mail the file mailbox wrote: its body, decoded from quoted-printable or base64.
function mailBody(raw) {
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split);
  let body = raw.slice(split).trim();
  const encoding = (head.match(/^content-transfer-encoding:\s*(\S+)/im) || [])[1] || '';
  if (/^quoted-printable$/i.test(encoding)) {
    body = body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/gi, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
  } else if (/^base64$/i.test(encoding)) {
    body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  }
  return body;
}

// The person at the browser: logs in by magic link, approves consent pages.
class Person {
  constructor(base, mailbox) {
    this.base = base;
    this.mailbox = mailbox;
    this.cookie = '';
    this.consents = 0;
  }

  messages() {
    if (!existsSync(this.mailbox)) return [];
    return readdirSync(this.mailbox)
      .filter((name) => name.endsWith('.eml'))
      .map((name) => join(this.mailbox, name))
      .sort((a, b) => Number(statSync(a, { bigint: true }).mtimeNs - statSync(b, { bigint: true }).mtimeNs));
  }

  async logIn(address) {
    const before = this.messages().length;
    const asked = await fetch(`${this.base}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: address }),
    });
    check(asked.status === 202, `POST /auth/login answered ${asked.status}`);
    let found = [];
    for (let i = 0; i < 200; i++) {
      found = this.messages();
      if (found.length > before) break;
      await sleep(25);
    }
    check(found.length > before, 'no login mail arrived in the mailbox');
    const body = mailBody(readFileSync(found[found.length - 1], 'utf8'));
    const link = body.match(/\S+\/auth\/magic\?token=([A-Za-z0-9_-]+)/);
    check(link !== null, `no login link in the mail: ${JSON.stringify(body)}`);
    const page = await fetch(link[0], { redirect: 'manual' });
    check(page.status === 200, `the login link's page answered ${page.status}`);
    const done = await fetch(`${this.base}/auth/magic`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: this.base },
      body: new URLSearchParams({ token: link[1] }),
    });
    check(done.status === 303, `POST /auth/magic answered ${done.status}`);
    const cookie = (done.headers.getSetCookie()[0] || '').split(';')[0];
    check(cookie.includes('='), 'no session cookie');
    this.cookie = cookie;
    console.log(`person: logged in as ${address} from the mailbox's magic link`);
  }

  // The consent page, then Allow; answers the code the redirect carries.
  async approve(authorizationUrl, expected) {
    const page = await fetch(authorizationUrl, { redirect: 'manual', headers: { Cookie: this.cookie } });
    const text = await page.text();
    check(page.status === 200, `the consent page answered ${page.status}: ${text.slice(0, 300)}`);
    check(page.headers.get('x-frame-options') === 'DENY', 'the consent page can be framed');
    check(text.includes(`<q>${expected.name}</q>`), `the consent page does not name ${expected.name}`);
    const fields = new URLSearchParams();
    for (const [, name, value] of text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      fields.append(unescapeHtml(name), unescapeHtml(value));
    }
    check(fields.has('csrf'), 'the consent form carries no CSRF token');
    fields.append('decision', 'approve');
    const decided = await fetch(`${this.base}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Cookie: this.cookie,
        Origin: this.base,
      },
      body: fields,
    });
    check(decided.status === 303, `the decision answered ${decided.status}: ${(await decided.text()).slice(0, 300)}`);
    const location = new URL(decided.headers.get('location'));
    check(location.href.startsWith(REDIRECT_URI), `redirected to ${location.href}`);
    check(location.searchParams.get('iss') !== null, 'no iss in the redirect (RFC 9207)');
    this.consents += 1;
    return location.searchParams.get('code');
  }
}

// The SDK's OAuthClientProvider, with everything in memory.
class MemoryProvider {
  constructor(name, person, clientMetadataUrl) {
    this.person = person;
    this.name = name;
    this.clientMetadataUrl = clientMetadataUrl;
    this.client = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.code = undefined;
    this.expected = { name };
  }

  get redirectUrl() {
    return REDIRECT_URI;
  }

  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(info) {
    this.client = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens) {
    this.saved = tokens;
  }

  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  async redirectToAuthorization(url) {
    check(url.searchParams.get('code_challenge_method') === 'S256', `no S256 challenge: ${url}`);
    this.code = await this.person.approve(url.href, this.expected);
  }
}

async function connect(base, person, kind, cimd, ttl) {
  const provider = new MemoryProvider(
    kind === 'cimd' ? cimd.name : 'Etappe OAuth journey (TypeScript, dcr)',
    person,
    kind === 'cimd' ? cimd.url : undefined,
  );
  const requests = [];
  let started;
  const counting = async (input, init) => {
    started ??= performance.now();
    const url = new URL(input instanceof Request ? input.url : input);
    requests.push(`${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${url.pathname}`);
    return fetch(input, init);
  };
  const mcpUrl = new URL(`${base}/mcp`);
  const open = () => new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: counting });
  let transport = open();
  let client = new Client({ name: 'etappe-oauth-journey-ts', version: '1' });
  try {
    await client.connect(transport);
    throw new Deviation('connected without authorization');
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  check(provider.code, 'the SDK never sent the person to the consent page');
  await transport.finishAuth(provider.code);
  transport = open();
  client = new Client({ name: 'etappe-oauth-journey-ts', version: '1' });
  await client.connect(transport);
  const listed = await client.callTool({ name: 'list_trips', arguments: {} });
  check(!listed.isError, `list_trips failed: ${JSON.stringify(listed)}`);
  const seconds = (performance.now() - started) / 1000;
  console.log(`${kind}: first tool call: ${requests.length} requests, ${seconds.toFixed(3)} seconds (${requests.join(' ')})`);

  const clientId = provider.client?.client_id;
  if (kind === 'cimd') {
    check(clientId === cimd.url, `the client id is ${clientId}, not the document URL`);
  } else {
    check(clientId?.startsWith('dcr_'), `a registered client id: ${clientId}`);
  }
  const registered = requests.includes('POST /oauth/register');
  check(registered === (kind === 'dcr'), `${kind}: dynamic registration used: ${registered}`);
  const access = provider.saved?.access_token;
  check(access?.startsWith('eta_'), 'no access token');
  check(person.consents === 1, `consents asked: ${person.consents}`);
  console.log(`${kind}: tokens issued to ${clientId} (scope ${provider.saved.scope})`);

  // The access token expires; the call's 401 makes the SDK refresh it, and retry.
  await sleep((ttl + 1) * 1000);
  const before = requests.length;
  const again = await client.callTool({ name: 'list_trips', arguments: {} });
  check(!again.isError, `list_trips after expiry failed: ${JSON.stringify(again)}`);
  const tokenPosts = requests.slice(before).filter((r) => r === 'POST /oauth/token');
  check(tokenPosts.length === 1, `the refresh: ${requests.slice(before).join(' ')}`);
  check(provider.saved.access_token !== access, 'the access token did not change');
  check(person.consents === 1, 'the refresh asked the person again');
  console.log(`${kind}: access token expired and refreshed (rotated), the call went through`);
  const current = provider.saved.access_token;
  await client.close();

  // Revocation (RFC 7009): the grant ends, and a call with the token gets 401.
  const revoked = await fetch(`${base}/oauth/revoke`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: current, client_id: clientId }),
  });
  check(revoked.status === 200, `revoke answered ${revoked.status}`);
  const after = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${current}`,
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'list_trips', arguments: {} } }),
  });
  check(after.status === 401, `a call after revocation answered ${after.status}`);
  const challenge = after.headers.get('www-authenticate') ?? '';
  check(challenge.includes('error="invalid_token"') && challenge.includes('resource_metadata='), challenge);
  console.log(`${kind}: revoked; the next call got 401 (${challenge})`);
  person.consents = 0;
}

async function main() {
  const base = process.env.ETAPPE_BASE;
  const mailbox = process.env.ETAPPE_MAILBOX;
  if (!base || !mailbox) {
    console.error('set ETAPPE_BASE (http://host:port) and ETAPPE_MAILBOX (the file mailbox directory)');
    return 1;
  }
  const cimd = process.env.ETAPPE_CIMD_URL
    ? { url: process.env.ETAPPE_CIMD_URL, name: process.env.ETAPPE_CIMD_NAME ?? '' }
    : undefined;
  const ttl = Number(process.env.ETAPPE_ACCESS_TTL ?? 'NaN');
  if (!(ttl > 0)) {
    console.error("set ETAPPE_ACCESS_TTL to the server's access token lifetime in seconds");
    return 1;
  }
  const person = new Person(base, mailbox);
  try {
    await person.logIn(process.env.ETAPPE_EMAIL ?? 'ts-agent-owner@example.org');
    for (const kind of cimd ? ['dcr', 'cimd'] : ['dcr']) {
      await connect(base, person, kind, cimd, ttl);
    }
  } catch (error) {
    console.error(`FAILED: ${error instanceof Deviation ? error.message : error?.stack ?? error}`);
    return 1;
  }
  console.log('oauth journey complete');
  return 0;
}

process.exit(await main());

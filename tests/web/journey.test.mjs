// The rider's journey in headless Chromium (Debian's package, driven by playwright-core),
// against an Etappe started by tests/tests/web.rs (ETAPPE_BASE), with a GPX served on
// loopback (ETAPPE_GPX_URL) and the login mail in a file mailbox (ETAPPE_MAILBOX).
// Screenshots go to ETAPPE_ARTEFACTS; figures are printed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';

const BASE = process.env.ETAPPE_BASE;
const GPX = process.env.ETAPPE_GPX_URL;
const LONG_GPX = process.env.ETAPPE_LONG_GPX_URL;
const MAILBOX = process.env.ETAPPE_MAILBOX;
const OUT = process.env.ETAPPE_ARTEFACTS || 'artefacts';
const EMAIL = `rider-${Date.now()}@example.org`;
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 412, height: 915 };
fs.mkdirSync(OUT, { recursive: true });

let browser;
before(async () => {
  assert.ok(BASE && GPX && MAILBOX, 'ETAPPE_BASE, ETAPPE_GPX_URL and ETAPPE_MAILBOX are set');
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
  });
});
after(async () => { if (browser) await browser.close(); });

/// Fails on any serious or critical axe-core violation of the page as it is.
async function accessible(page, screen) {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [],
    `axe on ${screen}`);
}

async function shots(page, name) {
  for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150);
    await page.screenshot({ path: path.join(OUT, `${name}-${size}.png`), fullPage: false });
  }
  await page.setViewportSize(DESKTOP);
}

/// The login link of the newest mail to EMAIL (quoted-printable decoded).
function loginLink() {
  const files = fs.existsSync(MAILBOX) ? fs.readdirSync(MAILBOX).filter((f) => f.endsWith('.eml')).sort() : [];
  for (const f of files.reverse()) {
    const raw = fs.readFileSync(path.join(MAILBOX, f), 'utf8');
    if (!raw.includes(EMAIL)) continue;
    const body = raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, x) => String.fromCharCode(parseInt(x, 16)));
    const m = body.match(/https?:\/\/[^\s"<>]+\/auth\/magic\?[^\s"<>]+/);
    if (m) return m[0];
  }
  return null;
}

async function waitFor(fn, what, ms = 45000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const dayCount = (page) => page.locator('#days details.day').count();

test('every call of the page exists in /openapi.json with its method', async () => {
  const source = fs.readFileSync(new URL('../../services/web-assets/app/api.js', import.meta.url), 'utf8');
  const ops = [...source.matchAll(/\w+: \['(GET|POST|PATCH|PUT|DELETE)', '([^']+)'\]/g)].map((m) => [m[1], m[2]]);
  assert.ok(ops.length > 20, 'the client lists its operations');
  const doc = await (await fetch(`${BASE}/openapi.json`)).json();
  const missing = ops.filter(([method, p]) => !(doc.paths[p] && doc.paths[p][method.toLowerCase()]));
  assert.deepEqual(missing, [], 'operations the page calls that the API does not document');
});

test('the rider journey', async () => {
  const started = Date.now();
  const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 4(04|12)/.test(m.text())) errors.push(m.text()); });

  // Log in by the mailbox link.
  await page.goto(`${BASE}/login`);
  await accessible(page, 'login');
  await page.fill('input[name=email]', EMAIL);
  await page.click('button[type=submit]');
  await page.waitForSelector('text=Check your mail');
  const link = await waitFor(async () => loginLink(), 'the login mail');
  await page.goto(link);
  await page.click('button[type=submit]');
  await page.waitForSelector('#create');
  await accessible(page, 'trips');
  await shots(page, 'trips');

  // Create from the loopback GPX; the days appear without a reload.
  let loads = 0;
  page.on('load', () => { loads += 1; });
  await page.fill('#new-sourceUrl', GPX);
  await page.fill('#new-title', 'Alps <b>crossing</b>');
  await page.fill('#new-maxDistancePerDay', '80');
  await page.click('#create button[type=submit]');
  await page.waitForURL(/#\/trips\//);
  const tripId = page.url().split('#/trips/')[1];
  await waitFor(async () => (await dayCount(page)) >= 3, 'the days to appear');
  assert.equal(loads, 0, 'the days appeared without a reload');
  const events = Number(await page.getAttribute('body', 'data-events'));
  assert.ok(events >= 1, `live events reached the page (${events})`);
  // The title is text, never markup.
  assert.equal(await page.locator('h1').first().textContent(), 'Alps <b>crossing</b>');
  await page.waitForSelector('#map .leaflet-overlay-pane canvas', { state: 'attached' });
  await page.waitForSelector('#profile canvas');

  // What OpenStreetMap (the Overpass stand-in) put along day 1: the tap at km 0.5 and the
  // bakery at km 10 in the day's list, the museum as a suggestion the rider can ride to.
  await page.click('#day-1 summary');
  await page.waitForSelector('#day-1 ul.found', { timeout: 20000 });
  const along = await page.locator('#day-1 ul.found').textContent();
  assert.match(along, /Water: km 0\.5 \(Fontaine\)/, along);
  assert.match(along, /Food: km 10 \(Boulangerie\)/, along);
  const visit = page.locator('#day-1 li.alert:has-text("museum") button');
  assert.equal(await visit.count(), 1, 'the suggested museum can be added as a detour');
  await page.click('#day-1 summary');
  await accessible(page, 'trip');
  await shots(page, 'trip');

  // A second tab reads the same version, and its rider starts typing.
  const tab = await context.newPage();
  await tab.goto(`${BASE}/#/trips/${tripId}`);
  await tab.waitForSelector('#day-1');
  await tab.click('#day-1 summary');
  await tab.fill('#d1-label', 'Evening ride to the lake');

  // Open day 1 and split it.
  const before = await dayCount(page);
  await page.click('#day-1 summary');
  await page.fill('#d1-split', '20');
  await page.click('#day-1 form:has(#d1-split) button');
  await waitFor(async () => (await dayCount(page)) === before + 1, 'the split');
  await shots(page, 'day');

  // The stale tab's edit meets "this trip changed elsewhere", and keeps what was typed.
  await tab.click('#day-1 form:has(#d1-label) button');
  await tab.waitForSelector('#conflict:not([hidden])');
  assert.match(await tab.textContent('#conflict'), /changed elsewhere/);
  assert.equal(await tab.inputValue('#d1-label'), 'Evening ride to the lake');
  // Sent again on the fresh version, it lands.
  await tab.click('#day-1 form:has(#d1-label) button');
  await tab.waitForSelector('#day-1 summary >> text=Evening ride to the lake');
  await tab.close();

  // A rest day after day 1.
  await page.reload();
  await page.waitForSelector('#day-1');
  const withSplit = await dayCount(page);
  await page.click('#day-1 summary');
  await page.click('#day-1 button.rest');
  await waitFor(async () => (await dayCount(page)) === withSplit + 1, 'the rest day');
  await page.waitForSelector('#day-2 summary >> text=Rest day');

  // Share, and read the public page in a fresh context without cookies.
  await page.click('#make-link');
  await page.waitForSelector('#share-url');
  const shareUrl = await page.inputValue('#share-url');
  assert.match(shareUrl, /\/s\/[\w-]+$/);
  const visitor = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  const pub = await visitor.newPage();
  await pub.goto(shareUrl);
  await pub.waitForSelector('#days details.day');
  const text = await pub.textContent('body');
  assert.ok(!text.includes(GPX), 'the public page hides the source link');
  assert.ok(!text.includes(EMAIL), 'the public page hides the account');
  assert.equal(await pub.locator('#settings, #share, #nav a').count(), 0, 'no settings, share or account on the public page');
  await accessible(pub, 'public');
  await shots(pub, 'public');
  // JSON clients keep the JSON.
  const json = await (await fetch(shareUrl, { headers: { Accept: 'application/json' } })).json();
  assert.ok(Array.isArray(json.stages) && json.stages.length === withSplit + 1);
  assert.ok(!JSON.stringify(json).includes(GPX));
  // Download the GPX.
  const [download] = await Promise.all([pub.waitForEvent('download'), pub.click('#dl-gpx')]);
  const gpx = fs.readFileSync(await download.path(), 'utf8');
  assert.match(gpx, /<gpx[\s>]/);

  // Revoke: the public page says the link is gone.
  await page.click('#revoke');
  await page.waitForSelector('#make-link');
  const gone = await pub.reload();
  assert.equal(gone.status(), 404, 'a revoked link answers 404, page and all');
  await pub.waitForSelector('#gone');
  await accessible(pub, 'gone');

  // History, a past version, the account.
  await page.goto(`${BASE}/#/trips/${tripId}/history`);
  await page.waitForSelector('#timeline li');
  await accessible(page, 'history');
  await shots(page, 'history');
  await page.locator('#versions a').last().click();
  await page.waitForSelector('h1 >> text=read-only');
  assert.equal(await page.locator('#days form').count(), 0, 'a past version is read-only');
  await page.goto(`${BASE}/#/account`);
  await page.waitForSelector('#token-form');
  await page.fill('#token-name', 'my script');
  await page.click('#token-form button[type=submit]');
  await page.waitForSelector('#token-created code');
  await accessible(page, 'account');
  await shots(page, 'account');

  // A route that cannot be had: its reason and a retry button.
  await page.goto(`${BASE}/#/`);
  await page.waitForSelector('#create');
  await page.fill('#new-sourceUrl', GPX.replace(/[^/]+$/, 'missing.gpx'));
  await page.click('#create button[type=submit]');
  await page.waitForSelector('#retry', { timeout: 30000 });
  assert.match(await page.textContent('#progress'), /Could not compute: /);

  // Planning from places on a server without a routing engine: refused at once, saying which
  // setting it needs (the 422 the browser logs for it is the one expected refusal).
  await page.goto(`${BASE}/#/`);
  await page.waitForSelector('#create #plan');
  await page.fill('#new-planFrom', 'Basel');
  await page.fill('#new-planTo', 'Wien');
  await page.click('#create button[type=submit]');
  await page.waitForSelector('#create .form-err:has-text("ETAPPE_ROUTER")');
  assert.ok(page.url().endsWith('#/'), 'no trip was created');
  for (let i = errors.length - 1; i >= 0; i -= 1) if (/status of 422/.test(errors[i])) errors.splice(i, 1);

  assert.deepEqual(errors, [], 'no script errors');
  console.log(`FIGURE journey_seconds ${((Date.now() - started) / 1000).toFixed(1)}`);
  await visitor.close();

  // Figures: a 30-day trip's page, first and repeat visit.
  const id30 = await page.evaluate(async (gpxUrl) => {
    const me = await (await fetch('/users/me')).json();
    const res = await fetch('/trips', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': me.csrfToken },
      body: JSON.stringify({ sourceUrl: gpxUrl, maxDistancePerDay: 32, title: 'Thirty days' }) });
    return (await res.json()).id;
  }, LONG_GPX);
  let last30 = '';
  await waitFor(async () => {
    const d = await page.evaluate(async (id) => (await fetch(`/trips/${id}/detail`)).json(), id30);
    last30 = `partial ${d.partial}, ${d.stages && d.stages.length} days, status ${d.status}, ${JSON.stringify(d.unavailable)}`;
    return !d.partial && d.stages.length >= 30;
  }, 'the 30-day trip', 60000).catch((e) => { throw new Error(`${e.message}: ${last30}`); });
  const state = await context.storageState();
  const fresh = await browser.newContext({ viewport: DESKTOP, storageState: state });
  const p30 = await fresh.newPage();
  const measure = async () => {
    await p30.waitForSelector('#days details.day >> nth=29');
    await p30.waitForFunction(() => performance.getEntriesByName('etappe-interactive').length > 0);
    return p30.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const paint = performance.getEntriesByName('first-contentful-paint')[0];
      const bytes = performance.getEntriesByType('resource').reduce((s, r) => s + r.transferSize, nav.transferSize);
      return { fcp: paint ? paint.startTime : null, tti: performance.getEntriesByName('etappe-interactive').at(-1).startTime, bytes };
    });
  };
  await p30.goto(`${BASE}/#/trips/${id30}`);
  const first = await measure();
  await p30.reload();
  const repeat = await measure();
  console.log(`FIGURE first_paint_ms ${first.fcp?.toFixed(0)} interactive_ms ${first.tti.toFixed(0)} first_visit_bytes ${first.bytes}`);
  console.log(`FIGURE repeat_first_paint_ms ${repeat.fcp?.toFixed(0)} repeat_interactive_ms ${repeat.tti.toFixed(0)} repeat_visit_bytes ${repeat.bytes}`);
  assert.ok(first.fcp !== null && first.fcp < 1000, `first paint of a 30-day trip under 1 s (${first.fcp} ms)`);
  assert.ok(repeat.bytes < first.bytes, 'a repeat visit transfers less');
  await fresh.close();
  await context.close();
});

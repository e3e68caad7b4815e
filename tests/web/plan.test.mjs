// A plan fixed on the page, in place: a trip planned from places (routed by a real Valhalla
// on the Liechtenstein extract, started by tests/tests/e2e/web.rs; its start picked from the
// suggestions offered as the rider types, a place picked on the map), then a place its engine
// cannot reach — the days stay and the page says which place failed — then that place
// changed in the plan's own form, and the trip routed again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { launchChromium, waitFor, loginLink } from './support.mjs';

const BASE = process.env.ETAPPE_BASE;
const MAILBOX = process.env.ETAPPE_MAILBOX;
const OUT = process.env.ETAPPE_ARTEFACTS || 'artefacts';
fs.mkdirSync(OUT, { recursive: true });

let browser;
before(async () => {
  assert.ok(BASE && MAILBOX, 'ETAPPE_BASE and ETAPPE_MAILBOX are set');
  browser = await launchChromium();
});
after(async () => { if (browser) await browser.close(); });

const dayCount = (page) => page.locator('#days details.day').count();
const settled = async (page) => (await dayCount(page)) >= 1 && !(await page.locator('#progress').count());

test('a place the engine cannot reach keeps the days, says which, and is fixed in the plan', async () => {
  const email = `plan-${Date.now()}@example.org`;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(`${BASE}/login`);
  await page.fill('input[name=email]', email);
  await page.click('button[type=submit]');
  await page.waitForSelector('text=Check your mail');
  await page.goto(await waitFor(async () => loginLink(MAILBOX, email), 'the login mail'));
  await page.click('button[type=submit]');
  await page.waitForSelector('#create #new-plan');

  // Balzers, picked from the suggestions as the rider types; to Ruggell, by coordinates.
  await page.fill('#new-planFrom', 'Balzer');
  const suggestion = await waitFor(async () => {
    const values = await page.locator('#new-place-suggestions option').evaluateAll((os) => os.map((o) => o.value));
    return values.find((v) => v.startsWith('Balzers, '));
  }, 'a suggestion for "Balzer"');
  await page.fill('#new-planFrom', suggestion);
  await page.fill('#new-planTo', '47.2380,9.5254');
  await page.click('#create button[type=submit]');
  await page.waitForURL(/#\/trips\//);
  await waitFor(() => settled(page), 'the planned days');
  const days = await dayCount(page);
  const created = await page.evaluate(async (id) => (await fetch(`/trips/${id}/detail`)).json(), page.url().split('#/trips/')[1]);
  assert.equal(created.plan.from.name, 'Balzers', JSON.stringify(created.plan));

  // A place picked on the map instead of typed: the next tap fills the field.
  await page.locator('#plan-card > summary').click();
  await page.click('#plan-planVia-pick');
  const box = await page.locator('#map').boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await waitFor(async () => /^\d+\.\d{5},\d+\.\d{5}$/.test(await page.inputValue('#plan-planVia')), 'the picked point in the field');

  // Through Zürich, off the engine's map: the days stay, the page names the place.
  await page.fill('#plan-planVia', '47.37,8.54');
  await page.click('#route-again');
  await page.waitForSelector('#notice', { timeout: 45000 });
  const notice = await page.textContent('#notice');
  assert.match(notice, /47\.3700, 8\.5400/, notice);
  assert.match(notice, /are kept/, notice);
  await waitFor(() => settled(page), 'the kept days');
  assert.equal(await dayCount(page), days, 'the days of before are back');
  await page.screenshot({ path: path.join(OUT, 'plan-failed-kept.png'), fullPage: true });

  // Fixed in place: through Schaan instead, routed again; the notice goes.
  assert.ok(await page.locator('#plan-card').evaluate((el) => el.open), 'the plan is open beside the notice');
  await page.fill('#plan-planVia', '47.1658,9.5097');
  await page.click('#route-again');
  await waitFor(async () => !(await page.locator('#notice').count()) && (await settled(page)), 'the plan routed again');
  const tripId = page.url().split('#/trips/')[1];
  const detail = await page.evaluate(async (id) => (await fetch(`/trips/${id}/detail`)).json(), tripId);
  assert.equal(detail.plan.via[0].lat, 47.1658, JSON.stringify(detail.plan));
  assert.equal(detail.notice, undefined);
  assert.deepEqual(errors, [], 'no console error');
  await context.close();
});

// A fresh install: Etappe with no OpenStreetMap source (no extract imported, no Overpass),
// started by tests/tests/e2e/web.rs. The rider can still say where they sleep, by hand, and
// asking for nights at a place to sleep is refused with the sentence that says how to get
// a source, next to the switch.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { launchChromium, waitFor, loginLink } from './support.mjs';
import AxeBuilder from '@axe-core/playwright';

const BASE = process.env.ETAPPE_BASE;
const GPX = process.env.ETAPPE_GPX_URL;
const MAILBOX = process.env.ETAPPE_MAILBOX;
const OUT = process.env.ETAPPE_ARTEFACTS || 'artefacts';
fs.mkdirSync(OUT, { recursive: true });

let browser;
before(async () => {
  assert.ok(BASE && GPX && MAILBOX, 'ETAPPE_BASE, ETAPPE_GPX_URL and ETAPPE_MAILBOX are set');
  browser = await launchChromium();
});
after(async () => { if (browser) await browser.close(); });

test('a night chosen by hand on a fresh install, and nights at a place to sleep refused in words', async () => {
  const email = `fresh-${Date.now()}@example.org`;
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors = [];
  let expected = null;
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' && !(expected && expected.test(m.text()))) errors.push(m.text()); });
  await page.goto(`${BASE}/login`);
  await page.fill('input[name=email]', email);
  await page.click('button[type=submit]');
  await page.waitForSelector('text=Check your mail');
  await page.goto(await waitFor(async () => loginLink(MAILBOX, email), 'the login mail'));
  await page.click('button[type=submit]');
  await page.waitForSelector('#create');

  // Asking for nights at a place to sleep, with no source: refused at once, said by the switch.
  await page.fill('#new-sourceUrl', GPX);
  await page.check('#new-nights');
  expected = /status of 4\d\d/;
  await page.click('#create button[type=submit]');
  await page.waitForSelector('#new-nights-err:not(:empty)');
  expected = null;
  const said = await page.textContent('#new-nights-err');
  assert.match(said, /etappe osm import|Overpass/, said);
  assert.doesNotMatch(await page.textContent('#create'), /not_configured|nights must|invalid value/);
  assert.ok(page.url().endsWith('#/') || !page.url().includes('#/trips/'), 'no trip was created');

  // Anywhere, it is made; no candidates, and nothing pretends there are.
  await page.uncheck('#new-nights');
  await page.click('#create button[type=submit]');
  await page.waitForURL(/#\/trips\//);
  await waitFor(async () => (await page.locator('#days details.day').count()) >= 3 && !(await page.locator('#progress').count()), 'the days');
  const d1 = page.locator('#days details.day[data-day="1"]');
  await d1.locator(':scope > summary').click();
  assert.match(await d1.locator('.night').textContent(), /cannot be looked for/);
  await d1.locator('details.stay > summary').click();
  await d1.locator('input[name=name]').fill('Gasthof zur Post');
  await d1.locator('form[id$=-stay-form] button').click();
  await page.waitForSelector('#days details.day[data-day="1"] .night-now >> text=Gasthof zur Post');
  assert.match(await d1.locator('.night-now').textContent(), /your choice/);
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => v.id), [], 'axe on the fresh install');
  await page.screenshot({ path: path.join(OUT, 'fresh-night-phone.png') });
  assert.deepEqual(errors, [], 'no console error');
  await context.close();
});

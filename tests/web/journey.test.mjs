// The rider's journey in headless Chromium (Debian's package, driven by playwright-core),
// against an Etappe started by tests/tests/e2e/web.rs (ETAPPE_BASE), with a GPX served on
// loopback (ETAPPE_GPX_URL) and the login mail in a file mailbox (ETAPPE_MAILBOX).
// Screenshots go to ETAPPE_ARTEFACTS; figures are printed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { launchChromium, waitFor, loginLink } from './support.mjs';
import AxeBuilder from '@axe-core/playwright';

const BASE = process.env.ETAPPE_BASE;
const GPX = process.env.ETAPPE_GPX_URL;
const LONG_GPX = process.env.ETAPPE_LONG_GPX_URL;
const MAILBOX = process.env.ETAPPE_MAILBOX;
const OUT = process.env.ETAPPE_ARTEFACTS || 'artefacts';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
fs.mkdirSync(OUT, { recursive: true });

let browser;
before(async () => {
  assert.ok(BASE && GPX && MAILBOX, 'ETAPPE_BASE, ETAPPE_GPX_URL and ETAPPE_MAILBOX are set');
  browser = await launchChromium();
});
after(async () => { if (browser) await browser.close(); });

/// Fails on any serious or critical axe-core violation of the page as it is.
async function accessible(page, screen) {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [],
    `axe on ${screen}`);
}

/// A screenshot of the screen at the journey's size (each journey runs at one of both).
async function shots(page, name) {
  const vp = page.viewportSize();
  const size = vp.width > 600 ? 'desktop' : 'phone';
  await page.waitForTimeout(100);
  await page.screenshot({ path: path.join(OUT, `${name}-${size}.png`), fullPage: false });
}

const dayCount = (page) => page.locator('#days details.day').count();
const day = (page, n) => page.locator(`#days details.day[data-day="${n}"]`);
/// The stage id of day `n` as the page shows it.
const stageOf = (page, n) => day(page, n).getAttribute('data-stage');
const card = (page, stageId) => page.locator(`#days details.day[data-stage="${stageId}"]`);
async function openDay(page, n) {
  const d = day(page, n);
  if (!(await d.evaluate((el) => el.open))) await d.locator(':scope > summary').click();
  return d;
}
async function openEdit(page, n) {
  const d = await openDay(page, n);
  const edit = d.locator('details.edit');
  if (!(await edit.evaluate((el) => el.open))) await edit.locator(':scope > summary').click();
  return d;
}
/// No sideways scroll at phone width.
async function noSideScroll(page, screen) {
  const vp = page.viewportSize();
  if (vp.width > 400) return;
  const w = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(w <= vp.width, `${screen}: the page scrolls sideways at ${vp.width} px (${w} px wide)`);
}
async function check(page, screen) {
  await accessible(page, screen);
  await noSideScroll(page, screen);
}
/// Taps the map at `fx` of its width, its middle height (again if a live update redrew it).
async function tapMap(page, fx) {
  for (let tries = 0; ; tries += 1) {
    try {
      await page.locator('#map').scrollIntoViewIfNeeded({ timeout: 3000 });
      const box = await page.locator('#map').boundingBox();
      await page.mouse.click(box.x + box.width * fx, box.y + box.height / 2);
      return;
    } catch (err) {
      if (tries > 5) throw err;
      await page.waitForTimeout(300);
    }
  }
}
/// Taps the map until `offer` shows, as a rider taps again when a tap lands on a marker (its
/// popup takes the click) or on the map while a live update redraws it: a little to the side
/// each time, four taps at most.
async function tapUntil(page, fx, offer) {
  const sides = [0, -0.03, 0.03, -0.06];
  for (let i = 0; ; i += 1) {
    await tapMap(page, fx + sides[i]);
    try {
      await offer.first().waitFor({ timeout: 7500 });
      return;
    } catch (err) {
      if (i === sides.length - 1) throw err;
    }
  }
}
function isFit(bytes) { return bytes.length > 14 && bytes.subarray(8, 12).toString('latin1') === '.FIT'; }
async function download(page, click) {
  const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
  return fs.readFileSync(await dl.path());
}

test('every call of the page exists in /openapi.json with its method', async () => {
  const source = fs.readFileSync(new URL('../../services/web-assets/app/api.js', import.meta.url), 'utf8');
  const ops = [...source.matchAll(/\w+: \['(GET|POST|PATCH|PUT|DELETE)', '([^']+)'\]/g)].map((m) => [m[1], m[2]]);
  assert.ok(ops.length > 20, 'the client lists its operations');
  const doc = await (await fetch(`${BASE}/openapi.json`)).json();
  const missing = ops.filter(([method, p]) => !(doc.paths[p] && doc.paths[p][method.toLowerCase()]));
  assert.deepEqual(missing, [], 'operations the page calls that the API does not document');
});

test('day colours stay apart over a 30-day trip', async () => {
  const { colour } = await import('../../services/web-assets/app/map.js');
  const thirty = Array.from({ length: 30 }, (_, i) => colour(i));
  assert.equal(new Set(thirty).size, 30, 'thirty different colours');
  assert.notEqual(colour(0), colour(8), 'Day 1 and Day 9 differ');
  assert.notEqual(colour(0), colour(20), 'Day 1 and Day 21 differ');
});

/// A GPX of two pieces 10 km apart, without elevation (a recording paused on a train).
function gappedGpx() {
  const seg = (lat0) => Array.from({ length: 301 }, (_, i) => `<trkpt lat="${(lat0 + i * 0.0009).toFixed(6)}" lon="7.500000"></trkpt>`).join('');
  return Buffer.from(`<?xml version="1.0"?><gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>Gapped</name><trkseg>${seg(46.0)}</trkseg><trkseg>${seg(46.36)}</trkseg></trk></gpx>`);
}

test('the landing page says what Etappe is, how to log in and how an agent connects', async () => {
  const context = await browser.newContext({ viewport: PHONE });
  const page = await context.newPage();
  await page.goto(`${BASE}/`);
  const text = await page.textContent('body');
  assert.match(text, /multi-day bicycle trip/i);
  assert.match(text, /\/mcp/);
  assert.equal(await page.locator('a[href="/login"]').count() >= 1, true, 'a way to log in');
  await check(page, 'landing');
  await shots(page, 'landing');
  await page.setViewportSize(DESKTOP);
  await shots(page, 'landing');
  await context.close();
});

async function login(page, email) {
  await page.goto(`${BASE}/login`);
  await accessible(page, 'login');
  await page.fill('input[name=email]', email);
  await page.click('button[type=submit]');
  await page.waitForSelector('text=Check your mail');
  const link = await waitFor(async () => loginLink(MAILBOX, email), 'the login mail');
  await page.goto(link);
  await page.click('button[type=submit]');
  await page.waitForSelector('#create');
}

const stamp = Date.now();
// ETAPPE_WEB_SIZES=phone (or desktop) runs the journey at one size only, while working on it.
const SIZES = (process.env.ETAPPE_WEB_SIZES || 'phone,desktop').split(',');
for (const [size, viewport] of [['phone', PHONE], ['desktop', DESKTOP]].filter(([s]) => SIZES.includes(s))) {
  test(`the rider journey at ${viewport.width}×${viewport.height}`, async () => {
    const started = Date.now();
    const EMAIL = `rider-${size}-${stamp}@example.org`;
    const context = await browser.newContext({ viewport, acceptDownloads: true });
    const page = await context.newPage();
    const errors = [];
    // A refusal the journey asks for on purpose logs its status in the console: allowed
    // only while `expected` names it.
    let expected = null;
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      if (expected && expected.test(m.text())) return;
      errors.push(m.text());
    });
    page.on('dialog', (d) => d.accept());
    try {
      await journey();
    } catch (err) {
      // What the page showed when the journey failed, for the artefacts and the log.
      await page.screenshot({ path: path.join(OUT, `failed-${size}.png`), fullPage: true }).catch(() => {});
      const shown = await page.textContent('main').catch(() => '');
      throw new Error(`${err.message}\nconsole errors: ${JSON.stringify(errors)}\npage: ${String(shown).slice(0, 1500)}`, { cause: err });
    }
  async function journey() {
    await login(page, EMAIL);
    await check(page, 'trips');
    await shots(page, 'trips');

    // The settings show their defaults and what each means; a preset fills them.
    assert.equal(await page.inputValue('#new-maxDistancePerDay'), '80');
    assert.equal(await page.inputValue('#new-fatigueFactor'), '0.9');
    assert.equal(await page.inputValue('#new-averageSpeed'), '15');
    assert.match(await page.textContent('#new-fatigueFactor-means'), /Each day is 90 % of the previous one/);
    assert.match(await page.textContent('#create'), /End each day at a place to sleep/);
    await page.click('#new-preset-relaxed');
    assert.equal(await page.inputValue('#new-maxDistancePerDay'), '50');
    assert.match(await page.textContent('#new-fatigueFactor-means'), /85 %/);
    await page.click('#new-preset-touring');
    // Nothing to plan from: said in the rider's words, not the API's field names.
    await page.click('#create button[type=submit]');
    const said = await page.textContent('#create .form-err');
    assert.match(said, /Paste a route link/);
    assert.doesNotMatch(await page.textContent('#create'), /sourceUrl|invalid value/);

    // Create from the loopback GPX; the days appear without a reload.
    let loads = 0;
    page.on('load', () => { loads += 1; });
    await page.fill('#new-sourceUrl', GPX);
    await page.fill('#new-title', 'Alps <b>crossing</b>');
    await page.click('#create button[type=submit]');
    await page.waitForURL(/#\/trips\//);
    const tripId = page.url().split('#/trips/')[1];
    await waitFor(async () => (await dayCount(page)) >= 3 && !(await page.locator('#progress').count()), 'the days to appear');
    assert.equal(loads, 0, 'the days appeared without a reload');
    const events = Number(await page.getAttribute('body', 'data-events'));
    assert.ok(events >= 1, `live events reached the page (${events})`);
    // The title is text, never markup.
    assert.equal(await page.locator('h1').first().textContent(), 'Alps <b>crossing</b>');
    await page.waitForSelector('#map .leaflet-overlay-pane canvas', { state: 'attached' });
    await page.waitForSelector('#profile canvas');
    // The map tells the trip: start, finish, each day's end by number, a legend.
    assert.equal(await page.locator('#map .pin.start').count(), 1, 'a start marker');
    assert.equal(await page.locator('#map .pin.finish').count(), 1, 'a finish marker');
    assert.ok(await page.locator('#map .pin.end').count() >= 2, 'day ends with their numbers');
    assert.match(await page.textContent('.legend'), /start.*finish/s);

    // What OpenStreetMap (the Overpass stand-in) put along day 1: the tap at km 0.5 and the
    // bakery at km 10 in the day's list, the museum as a suggestion the rider can ride to.
    const d1 = await openDay(page, 1);
    await d1.locator('ul.found').waitFor({ timeout: 20000 });
    const along = await d1.locator('ul.found').textContent();
    assert.match(along, /Water: km 0\.5 \(Fontaine, \d+ m off\)/, along);
    assert.match(along, /Food: km 10 \(Boulangerie, \d+ m off\)/, along);
    assert.equal(await d1.locator('li.alert:has-text("museum") button').count(), 1, 'the suggested museum can be added as a detour');
    // A day reads like a day: its figures, its files, its profile.
    const facts = await d1.locator('.facts').textContent();
    assert.match(facts, /Highest point/);
    assert.match(facts, /Arrival/);
    assert.doesNotMatch(facts, /↑ 0 m/);
    // Riding time and arrival are the server's (the sunset rule's reckoning), not a guess.
    const day1 = (await page.evaluate(async (id) => (await fetch(`/trips/${id}/detail`)).json(), tripId)).stages[0];
    assert.match(day1.arrival, /^\d\d:\d\d/, JSON.stringify(day1));
    assert.ok(facts.includes(`about ${day1.arrival}`), `${facts} shows ${day1.arrival}`);
    assert.ok(day1.ridingHours > 0);
    // What the day rides on, read from OpenStreetMap (the Overpass stand-in's roads).
    assert.equal(typeof day1.unpavedShare, 'number', JSON.stringify(day1));
    assert.ok(facts.includes(`${Math.round(day1.unpavedShare * 100)} % unpaved`), facts);
    assert.ok(facts.includes(`${Math.round(day1.busyShare * 100)} % busy road`), facts);
    await d1.locator('.day-profile canvas').waitFor();
    // The day's profile is coloured by gradient, and says so.
    assert.match(await d1.locator('.legend.slopes').textContent(), /over 10 %.*under −10 %/s);
    // The day's profile runs to the day's length, not further.
    const dist1 = Number(await d1.getAttribute('data-sig'));
    const axisMax = await d1.locator('.day-profile').evaluate((el) => {
      const labels = [...el.querySelectorAll('.u-axis')][0];
      return Math.max(...[...(labels ? labels.querySelectorAll('.u-value') : [])].map((v) => Number(v.textContent.replace(/,/g, ''))).filter((x) => !Number.isNaN(x)));
    });
    assert.ok(!(axisMax > dist1 + 1e-6), `the day's axis stops at its length (${axisMax} > ${dist1})`);
    await check(page, 'trip');
    await shots(page, 'trip');

    // A tap on the map: a marker there, and the offer in the nearest day's card, in words.
    const offer = page.locator('#days .detour-slot button');
    await tapUntil(page, 0.5, offer);
    await page.waitForSelector('#map .pin.tap');
    assert.match(await page.locator('#days .detour-slot:has(button)').textContent(), /Near km [\d.]+ of day \d+/);
    assert.doesNotMatch(await page.locator('#days .detour-slot:has(button)').textContent(), /\d+\.\d{4}/, 'no raw coordinates');
    // With no router on this server the detour is a straight spur, and says it is estimated.
    const detoured = await page.locator('#days details.day:has(.detour-slot button)').getAttribute('data-stage');
    const [, nearKm, nearDay] = (await page.locator('#days .detour-slot:has(button)').textContent()).match(/Near km ([\d.]+) of day (\d+)/);
    await offer.first().click();
    await page.waitForSelector(`#days details.day[data-stage="${detoured}"] [id$=-detour-now] .estimated`, { timeout: 30000 });
    // A cut moved past the detour carries it to the day that now rides its point, and the
    // save says so (never just "Saved"): the day before ends just past it, or day 1 just
    // before it.
    const n = Number(nearDay);
    const holder = n > 1 ? n - 1 : n + 1;
    const mover = await openEdit(page, n > 1 ? n - 1 : 1);
    const moverKm = Number(await mover.getAttribute('data-sig'));
    await mover.locator('input[id$=-end]').fill(String(n > 1 ? (moverKm + Number(nearKm) + 0.3).toFixed(1) : (Number(nearKm) - 0.3).toFixed(1)));
    await mover.locator('form:has(input[id$=-end]) button[type=submit]').click();
    let toastText = '';
    await waitFor(async () => /detour of day \d+ moves to day \d+/.test(toastText = await page.textContent('#toast')),
      () => `the save naming the moved detour (near km ${nearKm} of day ${nearDay}; the page said "${toastText}")`);
    await waitFor(async () => (await day(page, holder).locator('[id$=-detour-now]').count()) === 1, `day ${holder} riding the detour`);
    const holderId = await stageOf(page, holder);
    await openDay(page, holder);
    await card(page, holderId).locator('[id$=-undetour]').click();
    await waitFor(async () => (await card(page, holderId).locator('[id$=-detour-now]').count()) === 0, 'the detour removed', 30000);
    // A tap can also end the day there.
    const endHere = page.locator('#days [id$=-end-here]').first();
    await tapUntil(page, 0.45, endHere);
    const ended = await page.locator('#days details.day:has([id$=-end-here])').getAttribute('data-stage');
    const wasKm = await card(page, ended).getAttribute('data-sig');
    await endHere.click();
    await waitFor(async () => (await card(page, ended).getAttribute('data-sig')) !== wasKm, 'the day ended where tapped');

    // A second tab reads the same version, and its rider starts typing.
    const tab = await context.newPage();
    tab.on('console', (m) => { if (m.type() === 'error' && !/status of 412/.test(m.text())) errors.push(`tab: ${m.text()}`); });
    await tab.goto(`${BASE}/#/trips/${tripId}`);
    await tab.waitForSelector('#days details.day[data-day="1"]');
    await openEdit(tab, 1);
    await day(tab, 1).locator('input[name=label]').fill('Evening ride to the lake');

    // Split day 1.
    const before = await dayCount(page);
    await openEdit(page, 1);
    await day(page, 1).locator('input[id$=-split]').fill('20');
    await day(page, 1).locator('form:has(input[id$=-split]) button').click();
    await waitFor(async () => (await dayCount(page)) === before + 1, 'the split');
    await shots(page, 'day');

    // The stale tab's edit meets "this trip changed elsewhere", and keeps what was typed.
    await day(tab, 1).locator('form:has(input[name=label]) button').click();
    await tab.waitForSelector('#conflict:not([hidden])');
    assert.match(await tab.textContent('#conflict'), /changed elsewhere/);
    assert.equal(await day(tab, 1).locator('input[name=label]').inputValue(), 'Evening ride to the lake');
    // Sent again on the fresh version, it lands.
    await day(tab, 1).locator('form:has(input[name=label]) button').click();
    await tab.waitForSelector('#days details.day[data-day="1"] summary >> text=Evening ride to the lake');
    await tab.close();
    await page.reload();
    await page.waitForSelector('#days details.day[data-day="1"] summary >> text=Evening ride to the lake');

    // State is the day's, not its number's: day 3's open panel, typed name and split value
    // stay with it when merging day 1 with the next day makes it day 2.
    const third = await stageOf(page, 3);
    const [km1, km2] = [Number(await day(page, 1).getAttribute('data-sig')), Number(await day(page, 2).getAttribute('data-sig'))];
    await openEdit(page, 3);
    await card(page, third).locator('input[name=label]').fill('Brenner day');
    await card(page, third).locator('input[id$=-split]').fill('12');
    await openEdit(page, 1);
    assert.equal(await day(page, 1).locator('.merge-previous').count(), 0, 'day 1 has no previous day');
    assert.equal(await day(page, 1).locator('.merge-next').textContent(), 'Merge with the next day');
    const merging = await dayCount(page);
    await day(page, 1).locator('.merge-next').click();
    await waitFor(async () => (await dayCount(page)) === merging - 1, 'the merge');
    // It merged with the next day: day 1 is now both.
    const merged = Number(await day(page, 1).getAttribute('data-sig'));
    assert.ok(Math.abs(merged - (km1 + km2)) < 0.2, `day 1 merged with the next (${km1} + ${km2} → ${merged})`);
    assert.equal(await card(page, third).getAttribute('data-day'), '2', 'the third day is day 2 now');
    assert.equal(await card(page, third).evaluate((el) => el.open && el.querySelector('details.edit').open), true, 'its panels are still open');
    assert.equal(await card(page, third).locator('input[name=label]').inputValue(), 'Brenner day');
    assert.equal(await card(page, third).locator('input[id$=-split]').inputValue(), '12');
    const now3 = day(page, 3).locator('input[name=label]');
    if (await now3.count()) assert.notEqual(await now3.inputValue(), 'Brenner day', 'the name did not move to the new day 3');
    await card(page, third).locator('form:has(input[name=label]) button').click();
    await page.waitForSelector(`#days details.day[data-stage="${third}"] summary >> text=Brenner day`);

    // A riding day cannot leave the route's order: the refusal is said plainly in its card.
    await openEdit(page, 1);
    await day(page, 1).locator('input[id$=-move]').fill('2');
    expected = /status of 4\d\d/;
    await day(page, 1).locator('form:has(input[id$=-move]) button').click();
    await waitFor(async () => ((await day(page, 1).locator('.day-err').textContent()) || '').length > 0, 'the move refusal');
    expected = null;
    const refusal = await day(page, 1).locator('.day-err').textContent();
    assert.doesNotMatch(refusal, /toIndex|invalid value|HTTP \d/, refusal);
    assert.equal(await day(page, 1).getAttribute('data-stage'), await stageOf(page, 1));

    // A rest day after day 1: its place on the map, no chart, no files.
    const withSplit = await dayCount(page);
    await day(page, 1).locator('button.rest').click();
    await waitFor(async () => (await dayCount(page)) === withSplit + 1, 'the rest day');
    await page.waitForSelector('#days details.day[data-day="2"] summary >> text=Rest day');
    const rest = await openDay(page, 2);
    assert.equal(await rest.locator('.day-profile, .no-heights').count(), 0, 'no chart for a rest day');
    assert.equal(await rest.locator('.dl-day-gpx, .dl-day-fit').count(), 0, 'no files for a rest day');
    await waitFor(async () => Number(await page.getAttribute('#map', 'data-zoom')) === 13, 'the rest day\'s place on the map', 10000)
      .catch(async (e) => { throw new Error(`${e.message}: zoom ${await page.getAttribute('#map', 'data-zoom')}, open ${await page.locator('#days details.day[open]').evaluateAll((d) => d.map((x) => x.dataset.day))}`); });
    assert.equal(await page.locator('#map .pin.rest').count(), 1);
    await check(page, 'rest day');
    await rest.scrollIntoViewIfNeeded();
    await shots(page, 'rest-day');
    // A rest day at the end can be removed.
    const count = await dayCount(page);
    await openEdit(page, count);
    await day(page, count).locator('button.rest').click();
    await waitFor(async () => (await dayCount(page)) === count + 1, 'a rest day at the end');
    await page.waitForSelector(`#days details.day[data-day="${count + 1}"] summary >> text=Rest day`);
    await openEdit(page, count + 1);
    await day(page, count + 1).locator('button[id$=-remove]').click();
    await waitFor(async () => (await dayCount(page)) === count, 'the rest day at the end removed');

    // The night, by hand: a place of the rider's own (works with no OpenStreetMap source).
    const n1 = await openDay(page, 1);
    await n1.locator('details.stay > summary').click();
    await n1.locator('input[name=name]').fill('Camping Seeblick');
    await n1.locator('form[id$=-stay-form] button').click();
    await page.waitForSelector('#days details.day[data-day="1"] .night-now >> text=Camping Seeblick');
    assert.match(await day(page, 1).locator('.night-now').textContent(), /your choice/);
    // Or one of the places found near the day's end (the stand-in's hotel), chosen by the rider.
    const candidate = day(page, 1).locator('ul.beds li:has-text("Hôtel du Relais") button');
    await candidate.click();
    await page.waitForSelector('#days details.day[data-day="1"] .night-now >> text=Hôtel du Relais');
    assert.match(await day(page, 1).locator('.night-now').textContent(), /your choice/);
    // Search wider: asked, or refused in words.
    await openDay(page, 1);
    expected = /status of 4\d\d/;
    await day(page, 1).locator('button[id$=-wider]').click();
    await waitFor(async () => ((await day(page, 1).locator('[id$=-said]').textContent()) + (await day(page, 1).locator('.day-err').textContent())).length > 0, 'search wider');
    expected = null;

    // Files of a day: GPX and FIT.
    const fit = await download(page, () => day(page, 1).locator('.dl-day-fit').click());
    assert.ok(isFit(fit), 'the day\'s FIT file is a FIT file');
    const dayGpx = await download(page, () => day(page, 1).locator('.dl-day-gpx').click());
    assert.match(dayGpx.toString('utf8'), /<gpx[\s>]/);
    const tripFit = await download(page, () => page.click('#dl-fit'));
    assert.ok(isFit(tripFit));

    // Settings: the trip's values, an error in the rider's words.
    await page.click('#settings > summary');
    assert.equal(await page.inputValue('#set-maxDistancePerDay'), '80');
    await page.fill('#set-maxDistancePerDay', '500');
    expected = /status of 422/;
    await page.click('#settings button[type=submit]');
    await page.waitForSelector('#set-maxDistancePerDay-err:not(:empty)');
    expected = null;
    const fieldErr = await page.textContent('#settings');
    assert.doesNotMatch(fieldErr, /maxDistancePerDay|invalid value/, fieldErr);
    assert.match(await page.textContent('#set-maxDistancePerDay-err'), /daily maximum/i);
    // Dates that force days over the cap: one warning for the trip, dates in words.
    const year = new Date().getFullYear() + 1;
    await page.fill('#set-maxDistancePerDay', '80');
    await page.fill('#set-startDate', `${year}-06-01`);
    await page.fill('#set-endDate', `${year}-06-03`);
    await page.click('#settings button[type=submit]');
    await page.waitForSelector('#over-cap');
    assert.match(await page.textContent('#over-cap'), /daily maximum of 80 km/);
    await waitFor(async () => /1–3 Jun/.test(await page.textContent('#trip-facts')), 'the dates in words');
    await check(page, 'settings');
    await page.locator('#over-cap').scrollIntoViewIfNeeded();
    await shots(page, 'settings');
    await page.goto(`${BASE}/#/`);
    await page.waitForSelector(`#trips li[data-trip="${tripId}"]`);
    assert.match(await page.textContent(`#trips li[data-trip="${tripId}"]`), /1–3 Jun \d{4}/, 'dates as "1–3 Jun 2027" in the list');
    await page.goto(`${BASE}/#/trips/${tripId}`);
    await page.waitForSelector('#share');

    // Share, and read the public page in a fresh context without cookies.
    await page.click('#make-link');
    await page.waitForSelector('#share-url');
    const shareUrl = await page.inputValue('#share-url');
    assert.match(shareUrl, /^https?:\/\/[^/]+\/s\/[\w-]+$/, "the full address, also after a live update");
    const visitor = await browser.newContext({ viewport, acceptDownloads: true });
    const pub = await visitor.newPage();
    pub.on('console', (m) => { if (m.type() === 'error' && !/status of 404/.test(m.text())) errors.push(`public: ${m.text()}`); });
    await pub.goto(shareUrl);
    await pub.waitForSelector('#days details.day');
    const text = await pub.textContent('body');
    assert.ok(!text.includes(GPX), 'the public page hides the source link');
    assert.ok(!text.includes(EMAIL), 'the public page hides the account');
    assert.equal(await pub.locator('#settings, #share, #nav a, details.edit').count(), 0, 'no settings, share, editing or account on the public page');
    await check(pub, 'public');
    await shots(pub, 'public');
    const json = await (await fetch(shareUrl, { headers: { Accept: 'application/json' } })).json();
    assert.ok(Array.isArray(json.stages) && json.stages.length === await dayCount(page));
    assert.ok(!JSON.stringify(json).includes(GPX));
    // The whole trip and each day, GPX and FIT, from the public page too.
    const gpx = await download(pub, () => pub.click('#dl-gpx'));
    assert.match(gpx.toString('utf8'), /<gpx[\s>]/);
    assert.ok(isFit(await download(pub, () => pub.click('#dl-fit'))));
    await pub.locator('#days details.day[data-day="1"] > summary').click();
    assert.ok(isFit(await download(pub, () => pub.locator('#days details.day[data-day="1"] .dl-day-fit').click())), 'a day\'s FIT from the public page');

    // Revoke: the public page says the link is gone.
    await page.click('#revoke');
    await page.waitForSelector('#make-link');
    const gone = await pub.reload();
    assert.equal(gone.status(), 404, 'a revoked link answers 404, page and all');
    await pub.waitForSelector('#gone');
    await accessible(pub, 'gone');
    await visitor.close();

    // History: a readable timeline; a past version with its own map and days, restored.
    await page.goto(`${BASE}/#/trips/${tripId}/history`);
    await page.waitForSelector('#timeline li');
    const timeline = await page.textContent('#timeline');
    assert.match(timeline, /you/);
    assert.doesNotMatch(timeline, /user:[0-9a-f-]{8}|\d{4}-\d\d-\d\dT\d\d:/, 'no raw actors or timestamps');
    assert.ok(await page.locator('#timeline li.internal details').count() >= 1, 'Etappe\'s own steps are folded');
    await check(page, 'history');
    await shots(page, 'history');
    const current = await page.evaluate(async (id) => (await fetch(`/trips/${id}/detail`)).json(), tripId);
    // The version just before the dates were set: the split, merged, rested days.
    let past = null;
    for (let v = current.version - 1; v >= 1 && !past; v -= 1) {
      const d = await page.evaluate(async ([id, n]) => (await fetch(`/trips/${id}/detail?version=${n}`)).json(), [tripId, v]);
      if (d.stages && d.stages.length && d.stages.length !== current.stages.length && !d.partial) past = d;
    }
    assert.ok(past, 'a past version with another number of days');
    const routeAsked = page.waitForRequest((r) => r.url().includes(`/trips/${tripId}/route?version=${past.version}`));
    await page.goto(`${BASE}/#/trips/${tripId}/v/${past.version}`);
    await routeAsked;
    await page.waitForSelector('#past-note');
    await page.waitForSelector('#map .leaflet-overlay-pane canvas', { state: 'attached' });
    assert.equal(await dayCount(page), past.stages.length, 'the past version\'s own days');
    assert.equal(await page.locator('#days form, details.edit').count(), 0, 'a past version is read-only');
    await check(page, 'past version');
    await page.evaluate(() => window.scrollTo(0, 0));
    await shots(page, 'past-version');
    await page.click('#restore');
    await page.waitForURL(new RegExp(`#/trips/${tripId}$`));
    await waitFor(async () => (await dayCount(page)) === past.stages.length, 'the restored days');
    const restored = await page.evaluate(async (id) => (await fetch(`/trips/${id}/detail`)).json(), tripId);
    assert.ok(restored.version > current.version, 'restoring is a new version');

    // Offline: the trip opened stays readable, its files too; writes are refused in words.
    await page.waitForFunction(() => navigator.serviceWorker && navigator.serviceWorker.controller);
    await page.reload();
    await page.waitForSelector('#days details.day');
    const firstFit = await day(page, 1).locator('.dl-day-fit').getAttribute('href');
    await waitFor(async () => page.evaluate(async (u) => !!(await caches.match(new URL(u, location.origin).href)), firstFit), 'the day files kept for offline');
    await context.setOffline(true);
    await page.reload();
    await page.waitForSelector('#offline');
    assert.match(await page.textContent('#offline'), /Offline — as of/);
    // The mark can come before the days are drawn from what was kept.
    await waitFor(async () => (await dayCount(page)) === past.stages.length, 'the days read offline', 15000);
    await shots(page, 'offline');
    const off1 = await openDay(page, 1);
    assert.match(await off1.locator('ul.found').textContent(), /Water: km 0\.5/);
    assert.match(await off1.locator('.night-now').textContent(), /Night/);
    await page.waitForSelector('#profile canvas');
    assert.ok(isFit(await download(page, () => off1.locator('.dl-day-fit').click())), 'a day\'s FIT offline');
    await openEdit(page, 1);
    await off1.locator('input[name=label]').fill('Typed offline');
    await off1.locator('form:has(input[name=label]) button').click();
    await waitFor(async () => /offline/.test(await off1.locator('.day-err').textContent()), 'the offline refusal');
    assert.equal(await off1.locator('input[name=label]').inputValue(), 'Typed offline', 'nothing typed is lost');
    await check(page, 'offline');
    await context.setOffline(false);
    await page.evaluate(() => window.dispatchEvent(new Event('online')));
    // Back online, the page reads the trip again by itself: the offline mark goes.
    await waitFor(async () => (await page.locator('#offline').count()) === 0, 'back online');

    // Trips managed from the list: rename, duplicate, delete (with its confirmation).
    await page.goto(`${BASE}/#/`);
    await page.waitForSelector(`#trips li[data-trip="${tripId}"]`);
    const item = page.locator(`#trips li[data-trip="${tripId}"]`);
    await item.locator('button.rename').click();
    await item.locator('input[name=title]').fill('Alps by bike');
    await item.locator('form button[type=submit]').click();
    await page.waitForSelector(`#trips li[data-trip="${tripId}"] >> text=Alps by bike`);
    const listed = await page.locator('#trips li.trip').count();
    await page.locator(`#trips li[data-trip="${tripId}"] button.duplicate`).click();
    await waitFor(async () => (await page.locator('#trips li.trip').count()) === listed + 1, 'the copy');
    const copy = page.locator('#trips li.trip:has-text("Alps by bike (copy)")');
    await copy.waitFor();
    await copy.locator('button.delete').click();
    await check(page, 'delete confirmation');
    await shots(page, 'delete-confirmation');
    await copy.locator('button.confirm-delete').click();
    await waitFor(async () => (await page.locator('#trips li.trip').count()) === listed, 'the copy deleted');

    // A route that cannot be had: its reason once, a retry, and a way to remove the trip.
    await page.fill('#new-sourceUrl', GPX.replace(/[^/]+$/, 'missing.gpx'));
    await page.click('#create button[type=submit]');
    await page.waitForSelector('#retry', { timeout: 30000 });
    assert.equal(await page.locator('#progress .failure').count(), 1, 'the failure said once');
    assert.match(await page.textContent('#progress'), /Could not compute: /);
    await check(page, 'failed trip');
    await page.click('#remove-failed');
    await page.waitForURL(/#\/$/);
    await waitFor(async () => (await page.locator('#trips li.trip').count()) === listed, 'the failed trip removed');

    // Planning from places on a server without a routing engine: refused at once, saying which
    // setting it needs.
    await page.waitForSelector('#create #new-plan');
    await page.fill('#new-planFrom', 'Basel');
    await page.fill('#new-planTo', 'Wien');
    expected = /status of 422/;
    await page.click('#create button[type=submit]');
    await page.waitForSelector('#create .form-err:has-text("ETAPPE_ROUTER")');
    expected = null;
    assert.ok(page.url().endsWith('#/'), 'no trip was created');

    // The account: sessions named by browser and system.
    await page.goto(`${BASE}/#/account`);
    await page.waitForSelector('#token-form');
    assert.match(await page.textContent('#sessions'), /Chrome on Linux/);
    assert.doesNotMatch(await page.textContent('#sessions'), /Mozilla\//);
    await page.fill('#token-name', 'my script');
    await page.click('#token-form button[type=submit]');
    await page.waitForSelector('#token-created code');
    await check(page, 'account');
    await shots(page, 'account');

    // Missing data never looks real: a file without heights and with a break in it.
    await page.goto(`${BASE}/#/`);
    await page.waitForSelector('#create');
    await page.setInputFiles('#new-file', { name: 'gapped.gpx', mimeType: 'application/gpx+xml', buffer: gappedGpx() });
    assert.match(await page.textContent('#new-file-name'), /gapped\.gpx/);
    assert.doesNotMatch(await page.textContent('#drop'), /No file chosen/);
    await noSideScroll(page, 'file chosen');
    await page.click('#create button[type=submit]');
    await page.waitForURL(/#\/trips\//);
    await page.waitForSelector('#map .leaflet-overlay-pane canvas', { state: 'attached', timeout: 30000 });
    assert.match(await page.textContent('#trip-facts'), /climb unknown/);
    assert.doesNotMatch(await page.textContent('main'), /↑ 0 m/);
    const riding = await page.locator('#days details.day:not(:has-text("Rest day"))').count();
    await waitFor(async () => Number(await page.getAttribute('#map', 'data-pieces')) > riding, 'the break drawn as two pieces')
      .catch(async (e) => { throw new Error(`${e.message}: ${await page.getAttribute('#map', 'data-pieces')} pieces for ${riding} days`); });
    await openDay(page, 1);
    assert.ok(await day(page, 1).locator('.no-heights').count() === 1 || await day(page, 1).locator('.day-profile').count() === 0, 'no empty chart');
    await check(page, 'no heights');
    await shots(page, 'no-heights');

    assert.deepEqual(errors, [], 'no console error on the whole journey');
    console.log(`FIGURE journey_${size}_seconds ${((Date.now() - started) / 1000).toFixed(1)}`);
    if (size !== 'desktop') { await context.close(); return; }

    // Figures: a 30-day trip's page, first and repeat visit, and what it keeps offline.
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
    await p30.waitForFunction(() => navigator.serviceWorker && navigator.serviceWorker.controller);
    await p30.reload();
    const repeat = await measure();
    console.log(`FIGURE first_paint_ms ${first.fcp?.toFixed(0)} interactive_ms ${first.tti.toFixed(0)} first_visit_bytes ${first.bytes}`);
    console.log(`FIGURE repeat_first_paint_ms ${repeat.fcp?.toFixed(0)} repeat_interactive_ms ${repeat.tti.toFixed(0)} repeat_visit_bytes ${repeat.bytes}`);
    assert.ok(first.fcp !== null && first.fcp < 1000, `first paint of a 30-day trip under 1 s (${first.fcp} ms)`);
    assert.ok(repeat.bytes < first.bytes, 'a repeat visit transfers less');
    // What the worker keeps for this trip (its detail, lines and every file) and for the page.
    const lastFit = await p30.locator('#days details.day >> nth=29').locator('.dl-day-fit').getAttribute('href');
    await waitFor(async () => p30.evaluate(async (u) => !!(await caches.match(new URL(u, location.origin).href)), lastFit), 'the 30-day trip kept', 60000);
    const kept = await p30.evaluate(async (id) => {
      let trip = 0, data = 0, page = 0, files = 0;
      for (const name of await caches.keys()) {
        const cache = await caches.open(name);
        for (const req of await cache.keys()) {
          const size = (await (await cache.match(req)).arrayBuffer()).byteLength;
          if (req.url.includes(id)) {
            trip += size; files += 1;
            if (/\/(detail|route)$/.test(new URL(req.url).pathname)) data += size;
          } else if (name.startsWith('etappe-shell-')) page += size;
        }
      }
      return { trip, data, page, files };
    }, id30);
    console.log(`FIGURE offline_trip_bytes ${kept.trip} (detail and lines ${kept.data}, GPX and FIT files ${kept.trip - kept.data}) offline_trip_entries ${kept.files} offline_page_bytes ${kept.page}`);
    await fresh.close();
    await context.close();
  }
  });
}

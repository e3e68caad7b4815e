// The rider's page: a few screens over the REST API, routed by the URL's hash
// (#/ the trips, #/trips/{id} a trip, #/trips/{id}/history, #/trips/{id}/v/{n} a past
// version, #/account) and, for a share link, by its path (/s/{code}). Plain ES modules and
// one small view helper (dom.js): no framework, no build step, nothing inline (the CSP
// forbids it), and every third-party text goes in as text.
import { T } from './strings.js';
import { h, mount, toast } from './dom.js';
import { call, path, setCsrf, ApiError, logout as endSession } from './api.js';
import { drawMap } from './map.js';
import { drawProfile } from './profile.js';

const main = () => document.getElementById('main');
let me = null;
let live = null; // the EventSource of the trip on screen

const SETTINGS = [
  // name, label, type, min, max, step
  ['startDate', T.startDate, 'date'],
  ['endDate', T.endDate, 'date'],
  ['maxDistancePerDay', T.maxDistance, 'number', 30, 300, 1],
  ['averageSpeed', T.speed, 'number', 5, 50, 0.5],
  ['fatigueFactor', T.fatigue, 'number', 0.5, 1, 0.05],
  ['elevationPenalty', T.penalty, 'number', 0, 10000, 1],
  ['departureHour', T.departure, 'number', 0, 23, 1],
];
const ACCOMMODATION_TYPES = ['camp_site', 'hostel', 'alpine_hut', 'chalet', 'guest_house', 'hotel', 'wilderness_hut'];

function fieldId(prefix, name) { return `${prefix}-${name}`; }

/// The settings inputs, each with its label, its range and a slot for its error.
function settingsFields(prefix, values = {}) {
  const rows = SETTINGS.map(([name, label, type, min, max, step]) => {
    const id = fieldId(prefix, name);
    const range = min !== undefined ? ` (${min}–${max})` : '';
    return h('div', { class: 'field' },
      h('label', { for: id }, label + range),
      h('input', { id, name, type, min, max, step, value: values[name] ?? '', 'aria-describedby': `${id}-err` }),
      h('span', { class: 'err', id: `${id}-err` }));
  });
  const ebikeId = fieldId(prefix, 'ebikeMode');
  rows.push(h('div', { class: 'field check' },
    h('input', { id: ebikeId, name: 'ebikeMode', type: 'checkbox', checked: values.ebikeMode }),
    h('label', { for: ebikeId }, T.ebike)));
  const enabled = values.enabledAccommodationTypes || [];
  rows.push(h('fieldset', { class: 'field types' }, h('legend', {}, T.accommodationTypes),
    ACCOMMODATION_TYPES.map((t) => {
      const id = fieldId(prefix, `acc-${t}`);
      return h('span', { class: 'check' },
        h('input', { id, type: 'checkbox', name: 'enabledAccommodationTypes', value: t, checked: enabled.includes(t) }),
        h('label', { for: id }, t.replace('_', ' ')));
    })));
  return rows;
}

/// The settings a form holds (empty fields left out).
function readSettings(form) {
  const out = {};
  for (const [name, , type] of SETTINGS) {
    const v = form.elements[name].value.trim();
    if (v === '') continue;
    out[name] = type === 'number' ? Number(v) : v;
  }
  out.ebikeMode = form.elements.ebikeMode.checked;
  const types = [...form.querySelectorAll('input[name=enabledAccommodationTypes]:checked')].map((i) => i.value);
  if (types.length) out.enabledAccommodationTypes = types;
  return out;
}

/// Shows an API refusal next to the fields it names, or as a message.
function showErrors(form, prefix, error) {
  form.querySelectorAll('.err').forEach((e) => { e.textContent = ''; });
  const fields = error instanceof ApiError ? error.fields() : {};
  let placed = false;
  for (const [name, message] of Object.entries(fields)) {
    // A plan's fields come as plan.from, plan.via[2]…: they sit by their inputs.
    const plan = /^plan\.(from|to|via|profile)/.exec(name);
    const input = plan ? `plan${plan[1][0].toUpperCase()}${plan[1].slice(1)}` : name.replace(/^\//, '');
    const slot = document.getElementById(`${fieldId(prefix, input)}-err`);
    if (slot) { slot.textContent = message; placed = true; }
  }
  const general = form.querySelector('.form-err');
  if (general) general.textContent = placed ? '' : T.error + error.message;
}

function nav() {
  const el = document.getElementById('nav');
  if (!me) { mount(el); return; }
  mount(el,
    h('a', { href: '#/' }, T.myTrips),
    h('a', { href: '#/account' }, T.account),
    h('button', { type: 'button', class: 'link', onclick: logout }, T.logout));
}

async function logout() {
  await endSession().catch(() => {});
  location.href = '/login';
}

function fmtDate(d) { return d || ''; }

// ---------- the trips ----------

async function tripsScreen() {
  const search = h('input', { id: 'search', type: 'search', placeholder: T.search, 'aria-label': T.search });
  const list = h('ul', { class: 'trips', 'aria-live': 'polite' });
  const load = async () => {
    const page = await call('listTrips', {}, { query: { title: search.value.trim(), itemsPerPage: 30 } });
    const items = page.items.slice().sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    const wanted = search.value.trim().toLowerCase();
    const shown = items.filter((t) => !wanted || (t.title || '').toLowerCase().includes(wanted));
    mount(list, shown.length ? shown.map((t) => h('li', {},
      h('a', { href: `#/trips/${t.id}` }, t.title || T.untitled),
      h('span', { class: 'muted' }, ' · ', [fmtDate(t.startDate), t.endDate ? `–${t.endDate}` : ''].join(''), ' ',
        T.days(t.stageCount), ' · ', T.km(t.totalDistance), ' · ', T.status[t.status] || t.status)))
      : h('li', { class: 'muted' }, T.noTrips));
  };
  search.addEventListener('input', load);
  mount(main(), h('h1', {}, T.myTrips), search, list, createForm());
  await load();
}

function createForm() {
  const prefix = 'new';
  let file = null;
  const fileInput = h('input', { id: 'new-file', type: 'file', accept: '.gpx,application/gpx+xml' });
  const fileName = h('span', { class: 'muted' });
  fileInput.addEventListener('change', () => { file = fileInput.files[0] || null; fileName.textContent = file ? file.name : ''; });
  const drop = h('div', { class: 'drop', id: 'drop' }, h('label', { for: 'new-file' }, T.dropHint), ' ', fileInput, fileName);
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault(); drop.classList.remove('over');
    file = e.dataTransfer.files[0] || null; fileName.textContent = file ? file.name : '';
  });
  const submit = h('button', { type: 'submit' }, T.create);
  const form = h('form', { class: 'card', id: 'create', novalidate: true },
    h('h2', {}, T.newTrip),
    h('div', { class: 'field' }, h('label', { for: 'new-sourceUrl' }, T.sourceUrl),
      h('input', { id: 'new-sourceUrl', name: 'sourceUrl', type: 'url', inputmode: 'url', 'aria-describedby': 'new-sourceUrl-err' }),
      h('span', { class: 'err', id: 'new-sourceUrl-err' })),
    h('div', { class: 'field' }, h('span', {}, T.gpxFile), drop),
    planFields(),
    h('div', { class: 'field' }, h('label', { for: 'new-title' }, T.title), h('input', { id: 'new-title', name: 'title', maxlength: 200 }),
      h('span', { class: 'err', id: 'new-title-err' })),
    h('div', { class: 'grid' }, settingsFields(prefix)),
    h('p', { class: 'form-err err', role: 'alert' }),
    submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true; submit.textContent = T.creating;
    try {
      const settings = readSettings(form);
      const title = form.elements.title.value.trim();
      if (title) settings.title = title;
      let trip;
      if (file) {
        const data = new FormData();
        data.append('file', file, file.name);
        data.append('settings', new Blob([JSON.stringify(settings)], { type: 'application/json' }));
        trip = await call('uploadGpx', {}, { form: data });
      } else if (form.elements.planFrom.value.trim() || form.elements.planTo.value.trim()) {
        const via = form.elements.planVia.value.split(';').map((v) => v.trim()).filter(Boolean);
        const plan = { from: form.elements.planFrom.value.trim(), to: form.elements.planTo.value.trim(), profile: form.elements.planProfile.value };
        if (via.length) plan.via = via;
        trip = await call('createTrip', {}, { body: { plan, ...settings } });
      } else {
        trip = await call('createTrip', {}, { body: { sourceUrl: form.elements.sourceUrl.value.trim(), ...settings } });
      }
      location.hash = `#/trips/${trip.id}`;
    } catch (err) {
      showErrors(form, prefix, err);
    } finally {
      submit.disabled = false; submit.textContent = T.create;
    }
  });
  return form;
}

/// "Plan from places": from, via and to, each with suggestions from the place search as the
/// rider types, and the riding profile; the server routes it (no link needed).
function planFields() {
  const suggestions = h('datalist', { id: 'place-suggestions' });
  let pending = null;
  const suggest = (input) => {
    clearTimeout(pending);
    const q = input.value.split(';').pop().trim();
    if (q.length < 2 || /^-?[0-9.]+\s*,/.test(q)) return;
    pending = setTimeout(async () => {
      try {
        const found = await call('geocode', {}, { query: { q, limit: 5 } });
        mount(suggestions, found.items.map((p) => h('option', { value: p.name }, p.displayName)));
      } catch { /* suggestions are a help, not a need */ }
    }, 250);
  };
  const place = (name, label, hint) => {
    const id = `new-${name}`;
    const input = h('input', { id, name, list: 'place-suggestions', autocomplete: 'off', 'aria-describedby': `${id}-err` });
    input.addEventListener('input', () => suggest(input));
    return h('div', { class: 'field' }, h('label', { for: id }, label, hint ? [' ', h('span', { class: 'muted' }, hint)] : null), input,
      h('span', { class: 'err', id: `${id}-err` }));
  };
  return h('fieldset', { class: 'field plan', id: 'plan' }, h('legend', {}, T.planFromPlaces),
    h('p', { class: 'muted' }, T.planHint),
    place('planFrom', T.planFrom), place('planVia', T.planVia, T.planViaHint), place('planTo', T.planTo),
    h('div', { class: 'field' }, h('label', { for: 'new-planProfile' }, T.planProfile),
      h('select', { id: 'new-planProfile', name: 'planProfile' }, ['touring', 'road', 'gravel', 'mountain'].map((p) => h('option', { value: p }, T.profiles[p])))),
    suggestions);
}

// ---------- a trip ----------

/// What the rider typed and which panels were open, kept across a reload.
function keepTyped() {
  const values = {};
  main().querySelectorAll('input[id], select[id], textarea[id]').forEach((el) => {
    values[el.id] = el.type === 'checkbox' ? el.checked : el.value;
  });
  const open = [...main().querySelectorAll('details[open][id]')].map((d) => d.id);
  return { values, open };
}

function restoreTyped(kept) {
  if (!kept) return;
  for (const [id, v] of Object.entries(kept.values)) {
    const el = document.getElementById(id);
    if (!el || el.type === 'file') continue;
    if (el.type === 'checkbox') el.checked = v; else el.value = v;
  }
  for (const id of kept.open) { const d = document.getElementById(id); if (d) d.open = true; }
}

function progressPanel(trip, progress) {
  const cats = Object.entries(trip.computationStatus || {});
  const failed = Object.entries(trip.unavailable || {});
  return h('section', { class: 'card progress', id: 'progress', 'aria-live': 'polite' },
    h('h2', {}, T.progress),
    h('ul', {}, cats.map(([cat, st]) => h('li', { 'data-category': cat, 'data-state': st },
      h('span', { class: `dot ${st}` }), ' ', T.categories[cat] || cat, ': ', T.computation[st] || st))),
    progress ? h('p', { class: 'step' }, h('progress', { max: 100, value: progress.pct, 'aria-label': T.progress }), ' ', progress.message || progress.step) : null,
    failed.length && trip.status === 'failed' ? [
      failed.map(([cat, why]) => h('p', { class: 'err' }, `${T.categories[cat] || cat}: ${T.failedBecause}${why}`)),
      h('button', { type: 'button', id: 'retry', onclick: () => call('analyse', { id: trip.id }).then(() => route()).catch((e) => toast(T.error + e.message)) }, T.retry),
    ] : null);
}

/// The day's alerts, most severe first; a sight suggested along the way gets a button that
/// re-routes the day through it (`detour`, when the rider may edit).
function alertList(alerts, detour) {
  if (!alerts || !alerts.length) return null;
  const order = { critical: 0, warning: 1, nudge: 2 };
  const sorted = alerts.slice().sort((a, b) => (order[a.severity] ?? 3) - (order[b.severity] ?? 3));
  return h('ul', { class: 'alerts', 'aria-label': T.alerts }, sorted.map((a) => {
    const point = a.parameters && a.parameters.actionPoint;
    const visit = detour && a.code === 'cultural_poi_suggestion' && point && point.lat != null
      ? [' ', h('button', { type: 'button', class: 'small', onclick: () => detour(point) }, T.visit)] : null;
    return h('li', { class: `alert ${a.severity}` }, h('strong', {}, (T.severity[a.severity] || a.severity) + ': '), a.message, visit);
  }));
}

/// What the day passes, one line per kind of stop: "Water: km 0.5, 34 · Food: km 10 (bakery)…".
/// Names are OpenStreetMap data, shown as text.
function foundList(found) {
  if (!found) return null;
  if (!found.length) return h('p', { class: 'found muted' }, T.foundNone);
  const rows = Object.keys(T.found).map((category) => {
    const items = found.filter((f) => f.category === category);
    if (!items.length) return null;
    const shown = items.slice(0, 8).map((f) => `km ${f.km}${f.name ? ` (${f.name})` : category === 'resupply' ? ` (${f.kind.replace('_', ' ')})` : ''}`);
    if (items.length > 8) shown.push(T.more(items.length - 8));
    return h('li', {}, h('strong', {}, T.found[category] + ': '), shown.join(', '));
  });
  return h('ul', { class: 'found', 'aria-label': T.alongTheWay }, rows);
}

/// A day's weather in one line: what is known of it, nothing invented.
function weatherText(w) {
  const parts = [T.weatherState[w.state] || w.state];
  if (w.temperatureMinC != null && w.temperatureMaxC != null) parts.push(`${Math.round(w.temperatureMinC)}–${Math.round(w.temperatureMaxC)} °C`);
  if (w.precipitationProbability != null) parts.push(T.rain(Math.round(w.precipitationProbability)));
  if (w.windSpeedKmh != null) parts.push(T.wind(Math.round(w.windSpeedKmh), w.relativeWind || ''));
  return parts.join(' · ');
}

function dayCard(trip, stage, ctx) {
  const n = stage.dayNumber;
  const id = `day-${n}`;
  const act = (fn) => async (e) => {
    e.preventDefault();
    try {
      const detail = await fn(new FormData(e.target.closest('form') || undefined));
      if (detail && detail.version) { toast(T.saved); ctx.replace(detail); }
    } catch (err) { ctx.failed(err); }
  };
  const sleep = stage.selectedAccommodation;
  const readOnly = ctx.readOnly;
  const summary = h('summary', {},
    h('span', { class: `swatch c${(n - 1) % 8}`, 'aria-hidden': 'true' }), h('strong', {}, stage.label || T.day(n)),
    ' ', h('span', { class: 'muted' }, stage.date || ''), ' · ',
    stage.isRestDay ? T.restDay : [T.km(stage.distance), ' · ', T.climb(stage.elevation)]);
  const body = [
    h('p', {}, stage.startLabel || '', ' → ', stage.endLabel || ''),
    alertList(stage.alerts, readOnly || stage.isRestDay ? null : async (point) => {
      try {
        await call('detour', { id: trip.id, stageId: stage.stageId }, { body: { waypointLat: point.lat, waypointLon: point.lon } });
        toast(T.detourAsked);
      } catch (err) { ctx.failed(err); }
    }),
    foundList(stage.found),
    h('p', {}, h('strong', {}, T.sleep + ': '), sleep ? sleep.name || sleep.type : T.noSleep),
    stage.weather ? h('p', { class: 'weather' }, h('strong', {}, T.weather + ': '), weatherText(stage.weather)) : null,
    h('div', { class: 'day-profile', id: `profile-${n}` }),
  ];
  if (!readOnly) {
    const pre = `d${n}`;
    body.push(
      h('p', {}, h('a', { href: ctx.file('stageGpx', stage.stageId), download: '' }, T.dayGpx(n))),
      stage.isRestDay ? null : h('form', { class: 'inline', onsubmit: act((f) => call('split', { id: trip.id }, { version: ctx.version(), body: { stageId: stage.stageId, distance: Number(f.get('km')) } })) },
        h('label', { for: `${pre}-split` }, T.splitAt), h('input', { id: `${pre}-split`, name: 'km', type: 'number', min: 1, max: Math.floor(stage.distance) - 1, step: 0.1, value: Math.round(stage.distance / 2) }),
        h('button', { type: 'submit' }, T.split)),
      stage.isRestDay ? null : h('form', { class: 'inline', onsubmit: act((f) => call('updateStage', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { distance: Number(f.get('km')) } })) },
        h('label', { for: `${pre}-end` }, T.moveEnd, ' ', h('span', { class: 'muted' }, T.pickOnProfile)), h('input', { id: `${pre}-end`, name: 'km', type: 'number', min: 1, step: 0.1 }),
        h('button', { type: 'submit' }, T.save)),
      h('form', { class: 'inline', onsubmit: act((f) => call('updateStage', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { label: f.get('label') } })) },
        h('label', { for: `${pre}-label` }, T.rename), h('input', { id: `${pre}-label`, name: 'label', maxlength: 200, value: stage.label || '' }),
        h('button', { type: 'submit' }, T.save)),
      h('form', { class: 'inline', onsubmit: act((f) => call('moveStage', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { toIndex: Number(f.get('to')) - 1 } })) },
        h('label', { for: `${pre}-move` }, T.moveTo), h('input', { id: `${pre}-move`, name: 'to', type: 'number', min: 1, max: trip.stages.length, value: n }),
        h('button', { type: 'submit' }, T.save)),
      stage.accommodations && stage.accommodations.length ? h('form', { class: 'inline', onsubmit: act((f) => {
        const [lat, lon] = String(f.get('acc')).split(',').map(Number);
        return call('chooseAccommodation', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { lat, lon } });
      }) }, h('label', { for: `${pre}-acc` }, T.chooseSleep),
        h('select', { id: `${pre}-acc`, name: 'acc' }, stage.accommodations.map((a) => h('option', { value: `${a.lat},${a.lon}` }, `${a.name || a.type} (${a.type})`))),
        h('button', { type: 'submit' }, T.save)) : null,
      stage.detour ? h('p', { class: 'detour', id: `${pre}-detour-now` },
        T.detourNow(stage.detour.addedDistance, stage.detour.estimated), ' ',
        h('button', { type: 'button', class: 'small', id: `${pre}-undetour`, onclick: act(() => call('removeDetour', { id: trip.id, stageId: stage.stageId })) }, T.removeDetour)) : null,
      stage.isRestDay ? null : h('p', { id: `${pre}-detour`, class: 'muted', 'aria-live': 'polite' }, T.detourHint),
      stage.detourFailure ? h('p', { class: 'err' }, stage.detourFailure) : null,
      h('div', { class: 'buttons' },
        h('button', { type: 'button', class: 'rest', onclick: act(() => call('restDay', { id: trip.id, stageId: stage.stageId }, { version: ctx.version() })) }, T.restAfter),
        n < trip.stages.length ? h('button', { type: 'button', onclick: act(() => call('deleteStage', { id: trip.id, stageId: stage.stageId }, { version: ctx.version() })) }, stage.isRestDay ? T.remove : T.merge) : null),
    );
  }
  const details = h('details', { id, class: 'day', 'data-stage': stage.stageId }, summary, body);
  details.addEventListener('toggle', () => { if (details.open) ctx.openDay(stage, n); });
  return details;
}

function sharePanel(trip) {
  const box = h('section', { class: 'card', id: 'share' }, h('h2', {}, T.share));
  const render = (link) => {
    mount(box, h('h2', {}, T.share), link
      ? [h('p', {}, h('label', { for: 'share-url' }, T.publicLink), ' ', h('input', { id: 'share-url', readonly: true, value: link.url, size: 40 })),
        h('button', { type: 'button', id: 'copy', onclick: () => navigator.clipboard.writeText(link.url).then(() => toast(T.copied), () => toast(link.url)) }, T.copy), ' ',
        h('button', { type: 'button', id: 'revoke', onclick: () => call('unshare', { id: trip.id }).then(() => render(null)).catch((e) => toast(T.error + e.message)) }, T.revokeLink)]
      : h('button', { type: 'button', id: 'make-link', onclick: () => call('share', { id: trip.id }).then(render).catch((e) => toast(T.error + e.message)) }, T.makeLink),
    h('h3', {}, T.downloads),
    h('p', {}, h('a', { href: path('tripGpx', { id: trip.id }), download: '', id: 'dl-gpx' }, T.gpx), ' · ', h('a', { href: path('tripFit', { id: trip.id }), download: '' }, T.fit)));
  };
  call('getShare', { id: trip.id }).then(render, () => render(null));
  return box;
}

function settingsPanel(trip, ctx) {
  const prefix = 'set';
  const submit = h('button', { type: 'submit' }, T.saveSettings);
  const form = h('form', { novalidate: true },
    h('p', { class: 'warn' }, T.recut),
    h('div', { class: 'grid' }, settingsFields(prefix, trip)),
    h('p', { class: 'form-err err', role: 'alert' }), submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const detail = await call('updateTrip', { id: trip.id }, { version: ctx.version(), body: readSettings(form) });
      toast(T.saved);
      if (detail && detail.version) ctx.replace(detail); else route();
    } catch (err) {
      if (err.conflict) ctx.failed(err); else showErrors(form, prefix, err);
    }
  });
  return h('details', { class: 'card', id: 'settings' }, h('summary', {}, h('strong', {}, T.settings)), form);
}

/// A trip's page; `opts.version` shows a past version read-only, `opts.code` a share link.
async function tripScreen(id, opts = {}) {
  const readOnly = !!(opts.version || opts.code);
  let detail;
  try {
    detail = opts.code ? await call('sharedTrip', { code: opts.code })
      : await call('detail', { id }, { query: opts.version ? { version: opts.version } : null });
  } catch (err) {
    if (opts.code && err.status === 404) {
      mount(main(), h('h1', {}, T.goneTitle), h('p', { id: 'gone' }, T.gone));
      return;
    }
    throw err;
  }
  let current = detail;
  let progress = null;
  let lines = null;
  const ctx = {
    readOnly,
    version: () => current.version,
    file: (op, stageId) => path(op, { id, stageId }),
    replace: (d) => { current = d; delete main().dataset.dirty; render(); },
    failed: async (err) => {
      if (err.conflict) {
        const kept = keepTyped();
        current = await call('detail', { id });
        delete main().dataset.dirty;
        await render(kept);
        const c = document.getElementById('conflict');
        c.textContent = T.conflict;
        c.hidden = false;
      } else toast(T.error + err.message);
    },
    openDay: (stage, n) => {
      if (ctx.map) ctx.map.focus(stage.stageId);
      const el = document.getElementById(`profile-${n}`);
      const endInput = document.getElementById(`d${n}-end`);
      if (el && lines && !el.firstChild) {
        const day = lines.days.find((d) => d.stageId === stage.stageId);
        if (day) drawProfile(el, [day], document.getElementById('readout'), (km) => {
          if (endInput) { endInput.value = km.toFixed(1); endInput.focus(); }
        });
      }
      if (ctx.map && !readOnly && !stage.isRestDay) {
        ctx.map.onClick((at) => {
          const box = document.getElementById(`d${n}-detour`);
          if (!box) return;
          mount(box, h('button', { type: 'button', onclick: async () => {
            try {
              await call('detour', { id, stageId: stage.stageId }, { body: { waypointLat: at.lat, waypointLon: at.lng } });
              mount(box, T.detourAsked);
            } catch (err) { ctx.failed(err); }
          } }, T.detourThrough(at.lat.toFixed(4), at.lng.toFixed(4))));
        });
      }
    },
  };
  const loadLines = async () => {
    if (current.partial || !current.stages.length) { lines = null; return; }
    try { lines = opts.code ? await call('sharedRoute', { code: opts.code }) : await call('route', { id }); } catch { lines = null; }
  };
  const render = async (given) => {
    await loadLines();
    // What is typed and open now (a click during the fetch included) survives the render.
    const kept = given || keepTyped();
    const t = current;
    const title = t.title || T.untitled;
    document.title = `${title} · Etappe`;
    const header = h('div', { class: 'trip-head' },
      h('h1', {}, opts.version ? T.pastVersion(opts.version) + ' — ' + title : title),
      h('p', { class: 'muted' }, [t.startDate, t.endDate].filter(Boolean).join(' – '), t.startDate ? ' · ' : '', T.days(t.stageCount),
        ' · ', T.km(t.totalDistance), t.stageCount ? [' · ', T.climb(t.totalElevation)] : null),
      t.elevation && t.elevation.missingReason ? h('p', { class: 'muted', id: 'elevation-note' }, t.elevation.missingReason) : null,
      opts.version ? h('p', {}, h('a', { href: `#/trips/${id}` }, T.backToTrip)) : null,
      !readOnly ? h('p', {}, h('a', { href: `#/trips/${id}/history` }, T.history)) : null);
    const mapEl = h('div', { id: 'map', class: 'map', role: 'region', 'aria-label': T.map });
    const profEl = h('div', { id: 'profile', class: 'profile', role: 'img', 'aria-label': T.profile });
    const readout = h('p', { id: 'readout', class: 'muted', 'aria-live': 'polite' });
    const days = h('section', { id: 'days', 'aria-label': T.days(t.stages.length) },
      t.stages.map((s) => dayCard(t, s, ctx)));
    mount(main(),
      header,
      h('p', { id: 'conflict', class: 'warn', role: 'alert', hidden: true }),
      !readOnly && (t.partial || t.status === 'failed') ? progressPanel(t, progress) : null,
      t.stages.length ? [mapEl, profEl, readout] : null,
      days,
      !readOnly ? [sharePanel(t), settingsPanel(t, ctx)] : null,
      opts.code ? h('p', {}, h('a', { id: 'dl-gpx', href: path('sharedGpx', { code: opts.code }), download: '' }, T.gpx)) : null);
    if (lines && t.stages.length) {
      ctx.map = drawMap(mapEl, lines, t.stages);
      drawProfile(profEl, lines.days, readout);
    }
    restoreTyped(kept);
  };
  await render();
  if (!readOnly) follow(id, async (kind, data) => {
    if (kind === 'progress') {
      progress = data;
      const p = document.querySelector('#progress .step');
      if (p || current.partial) { const fresh = progressPanel(current, progress); const old = document.getElementById('progress'); if (old) old.replaceWith(fresh); }
    } else if (kind === 'trip') {
      const changed = data.version !== current.version || data.partial !== current.partial
        || JSON.stringify(data.computationStatus) !== JSON.stringify(current.computationStatus);
      if (changed && !main().dataset.dirty) {
        const fresh = await call('detail', { id });
        // The rider may have started typing meanwhile: then the page stays as it is.
        if (main().dataset.dirty) return;
        current = fresh;
        await render();
      }
    }
  });
}

/// Follows a trip over SSE; the browser reconnects by itself, and every pushed fact is also
/// a GET, so a reconnect answers the current state first and nothing is missed.
function follow(id, onEvent) {
  if (live) live.close();
  const es = new EventSource(path('events', { id }));
  live = es;
  for (const kind of ['trip', 'progress']) {
    es.addEventListener(kind, (e) => {
      document.body.dataset.events = String(Number(document.body.dataset.events || 0) + 1);
      try { onEvent(kind, JSON.parse(e.data)); } catch { /* ignore a bad frame */ }
    });
  }
  es.addEventListener('deleted', () => { es.close(); location.hash = '#/'; });
  es.addEventListener('unauthorized', () => { es.close(); location.href = '/login?next=/'; });
  es.onerror = () => { if (es.readyState !== EventSource.CLOSED) toast(T.reconnecting); };
}

// ---------- history ----------

async function historyScreen(id) {
  const [history, current] = await Promise.all([call('history', { id }), call('detail', { id })]);
  // Each structural version can be opened read-only; the timeline tells what happened.
  const versions = [];
  for (let v = current.version; v >= 1; v -= 1) versions.push(v);
  mount(main(), h('h1', {}, T.history),
    h('p', {}, h('a', { href: `#/trips/${id}` }, T.backToTrip)),
    h('ol', { class: 'timeline', id: 'timeline', reversed: true }, (history.items || []).slice().reverse().map((e) => h('li', {},
      h('strong', {}, e.summary || e.type), ' ', h('span', { class: 'muted' }, [e.at, e.actor].filter(Boolean).join(' · '))))),
    h('h2', {}, T.versions),
    h('ul', { class: 'versions', id: 'versions' }, versions.map((v) => h('li', {},
      h('a', { href: `#/trips/${id}/v/${v}` }, T.version(v))))));
}

// ---------- the account ----------

async function accountScreen() {
  const [sessions, tokens, agentList] = await Promise.all([call('sessions'), call('tokens'),
    call('agents').catch(() => ({ items: [] }))]);
  const list = (x) => (Array.isArray(x) ? x : x.items || x.sessions || x.tokens || []);
  const created = h('p', { id: 'token-created', 'aria-live': 'polite' });
  const tokenForm = h('form', { class: 'inline', id: 'token-form' },
    h('label', { for: 'token-name' }, T.tokenName), h('input', { id: 'token-name', name: 'name', required: true, maxlength: 100 }),
    h('fieldset', {}, h('legend', {}, T.scopes), ['trips:read', 'trips:write'].map((s) => h('span', { class: 'check' },
      h('input', { type: 'checkbox', id: `scope-${s}`, name: 'scopes', value: s, checked: true }), h('label', { for: `scope-${s}` }, s)))),
    h('button', { type: 'submit' }, T.createToken));
  tokenForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const f = new FormData(tokenForm);
      const made = await call('createToken', {}, { body: { label: f.get('name'), scopes: f.getAll('scopes') } });
      await accountScreen();
      mount(document.getElementById('token-created'), T.tokenShown, ' ', h('code', {}, made.token || ''));
    } catch (err) { toast(T.error + err.message); }
  });
  const agents = agentList.items || [];
  mount(main(), h('h1', {}, T.account), h('p', {}, me.email),
    h('section', { class: 'card' }, h('h2', {}, T.sessions), h('ul', {}, list(sessions).map((s) => h('li', {},
      s.userAgent || s.agent || s.id, ' ', h('span', { class: 'muted' }, s.lastSeenAt || s.createdAt || ''), s.id === me.currentSession ? ` (${T.thisSession})` : '', ' ',
      s.id === me.currentSession ? null : h('button', { type: 'button', onclick: () => call('revokeSession', { id: s.id }).then(accountScreen) }, T.revoke))))),
    h('section', { class: 'card' }, h('h2', {}, T.tokens), h('ul', {}, list(tokens).map((t) => h('li', {},
      t.label || t.id, ' ', h('span', { class: 'muted' }, (t.scopes || []).join(' ')), ' ',
      h('button', { type: 'button', onclick: () => call('revokeToken', { id: t.id }).then(accountScreen) }, T.revoke)))), tokenForm, created),
    agents.length ? h('section', { class: 'card' }, h('h2', {}, T.agents), h('ul', {}, agents.map((a) => h('li', {},
      a.clientName || a.clientId, ' ', h('span', { class: 'muted' }, (a.scopes || []).join(' ')), ' ',
      h('button', { type: 'button', onclick: () => call('revokeAgent', { id: a.grantId }).then(accountScreen) }, T.revoke))))) : null,
    h('section', { class: 'card' },
      h('p', {}, h('a', { href: path('exportAccount'), download: 'etappe-account.json' }, T.exportData)),
      h('button', { type: 'button', class: 'danger', onclick: async () => {
        if (!confirm(T.confirmDelete)) return;
        await call('deleteAccount', {}, { body: { confirm: me.email } });
        location.href = '/login';
      } }, T.deleteAccount)));
}

// ---------- routing ----------

async function route() {
  if (live) { live.close(); live = null; }
  delete main().dataset.dirty;
  const shared = location.pathname.match(/^\/s\/([^/.]+)$/);
  try {
    if (shared) {
      document.getElementById('nav').replaceChildren();
      await tripScreen(null, { code: shared[1] });
      return;
    }
    if (!me) {
      try { me = await call('me'); } catch (err) {
        if (err.status === 401) { location.href = '/login?next=/'; return; }
        throw err;
      }
      setCsrf(me.csrfToken);
      nav();
    }
    const hash = location.hash.replace(/^#/, '') || '/';
    let m;
    if ((m = hash.match(/^\/trips\/([\w-]+)\/history$/))) await historyScreen(m[1]);
    else if ((m = hash.match(/^\/trips\/([\w-]+)\/v\/(\d+)$/))) await tripScreen(m[1], { version: Number(m[2]) });
    else if ((m = hash.match(/^\/trips\/([\w-]+)$/))) await tripScreen(m[1]);
    else if (hash === '/account') await accountScreen();
    else await tripsScreen();
    document.body.dataset.ready = hash;
  } catch (err) {
    mount(main(), h('p', { class: 'err', role: 'alert' }, T.error + err.message));
  }
  performance.mark('etappe-interactive');
}

// Once the rider types, live updates no longer re-render (that would lose the text); an
// edit sent from a stale version then meets the 412 and its "changed elsewhere" message.
main().addEventListener('input', () => { main().dataset.dirty = '1'; });
window.addEventListener('hashchange', route);
route();

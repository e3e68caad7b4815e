// A trip's page: its header, the map with its legend, the whole trip's profile, the days,
// downloads, sharing and settings. `opts.version` shows a past version (its own days, map
// and profile) with "Restore this version"; `opts.code` is the read-only page of a share link.
import { T } from './strings.js';
import { h, mount, toast } from './dom.js';
import { call, path, offlineState, withoutAsking } from './api.js';
import { drawMap } from './map.js';
import { drawProfile, SLOPE_COLOURS } from './profile.js';
import { dayCard, sid } from './day.js';
import { settingsFields, readSettings, showErrors, SETTINGS, planFields, planChanges } from './settings.js';
import { dateRange, plain, localTime } from './words.js';
import { keepForOffline, forgetTrip } from './offline.js';

let live = null; // the EventSource of the trip on screen
export function stopFollowing() { if (live) { live.close(); live = null; } }

const main = () => document.getElementById('main');

/// What the rider typed and which panels were open, kept across a render. A value is kept
/// by its element's id, which names the day's stage id; a split or end km only while its day
/// keeps its length (a merged day has another).
function keepTyped() {
  const values = {};
  main().querySelectorAll('input[data-typed][id], select[data-typed][id], textarea[data-typed][id]').forEach((el) => {
    const card = el.closest('details.day');
    values[el.id] = { v: el.type === 'checkbox' ? el.checked : el.value, sig: card ? card.dataset.sig : null };
  });
  const open = [...main().querySelectorAll('details[open][id]')].map((d) => d.id);
  return { values, open };
}

function restoreTyped(kept) {
  if (!kept) return;
  for (const [id, { v, sig }] of Object.entries(kept.values)) {
    const el = document.getElementById(id);
    if (!el || el.type === 'file') continue;
    const card = el.closest('details.day');
    if (/-(split|end)$/.test(id) && card && card.dataset.sig !== sig) continue;
    if (el.type === 'checkbox') el.checked = v; else el.value = v;
    el.dataset.typed = '1';
  }
  // Reopened by the page, not by the rider: the map keeps the day the rider last opened.
  for (const id of kept.open) { const d = document.getElementById(id); if (d && !d.open) { d.dataset.restoring = '1'; d.open = true; } }
}

function progressPanel(trip, progress, onRemove) {
  const cats = Object.entries(trip.computationStatus || {});
  // One sentence per distinct reason, with the categories it stopped.
  const reasons = new Map();
  // A failed route says why once, on the route; the others only wait for it.
  const said = trip.status === 'failed' && trip.unavailable && trip.unavailable.route ? { route: trip.unavailable.route } : trip.unavailable;
  for (const [cat, why] of Object.entries(said || {})) {
    if (!reasons.has(why)) reasons.set(why, []);
    reasons.get(why).push(T.categories[cat] || cat);
  }
  const failed = trip.status === 'failed';
  return h('section', { class: 'card progress', id: 'progress', 'aria-live': 'polite' },
    h('h2', {}, failed ? T.status.failed : T.progress),
    failed ? null : h('ul', {}, cats.map(([cat, st]) => h('li', { 'data-category': cat, 'data-state': st },
      h('span', { class: `dot ${st}` }), ' ', T.categories[cat] || cat, ': ', T.computation[st] || st))),
    progress && !failed ? h('p', { class: 'step' }, h('progress', { max: 100, value: progress.pct, 'aria-label': T.progress }), ' ', progress.message || progress.step) : null,
    failed ? [
      [...reasons].map(([why, names]) => h('p', { class: 'err failure' }, T.failedBecause, why, reasons.size > 1 ? ` (${names.join(', ')})` : '')),
      h('div', { class: 'buttons' },
        h('button', { type: 'button', id: 'retry', onclick: () => call('analyse', { id: trip.id }).then(() => location.reload()).catch((e) => toast(plain(e))) }, T.retry),
        h('button', { type: 'button', class: 'danger', id: 'remove-failed', onclick: onRemove }, T.removeTrip)),
    ] : null);
}

/// What the colours of a day's profile mean.
function slopeLegend() {
  return h('ul', { class: 'legend slopes', 'aria-label': T.slopes }, T.slopeClasses.map((label, i) => {
    const sw = h('span', { class: 'swatch', 'aria-hidden': 'true' });
    sw.style.backgroundColor = SLOPE_COLOURS[i];
    return h('li', {}, sw, label);
  }), h('li', {}, h('span', { class: 'pin dot water-dot', 'aria-hidden': 'true' }), T.legendItems.water),
  h('li', {}, h('span', { class: 'pin dot food-dot', 'aria-hidden': 'true' }), T.legendItems.food),
  h('li', {}, h('span', { class: 'pin dot night-dot', 'aria-hidden': 'true' }), T.legendItems.night));
}

function legend() {
  const item = (cls, text, label) => h('li', {}, h('span', { class: `pin ${cls}`, 'aria-hidden': 'true' }, text), ' ', label);
  const L = T.legendItems;
  return h('ul', { class: 'legend', 'aria-label': T.legend },
    item('start', 'S', L.start), item('finish', 'F', L.finish), item('end', '3', L.end), item('rest', 'R', L.rest),
    item('dot night-dot', '', L.night), item('dot bed-dot', '', L.bed), item('dot water-dot', '', L.water),
    item('dot food-dot', '', L.food), item('ring', '', L.critical));
}

function sharePanel(trip) {
  const box = h('section', { class: 'card', id: 'share' });
  const render = (given) => {
    // The detail names the link by its path; the rider copies the full address.
    const link = given && { ...given, url: new URL(given.url, location.origin).href };
    mount(box, h('h2', {}, T.share), link
      ? [h('p', {}, h('label', { for: 'share-url' }, T.publicLink), ' ', h('input', { id: 'share-url', readonly: true, value: link.url, size: 32 })),
        h('div', { class: 'buttons' },
          h('button', { type: 'button', id: 'copy', onclick: () => navigator.clipboard.writeText(link.url).then(() => toast(T.copied), () => toast(link.url)) }, T.copy),
          h('button', { type: 'button', id: 'revoke', class: 'secondary', onclick: () => call('unshare', { id: trip.id }).then(() => render(null)).catch((e) => toast(plain(e))) }, T.revokeLink))]
      : h('button', { type: 'button', id: 'make-link', onclick: () => call('share', { id: trip.id }).then(render).catch((e) => toast(plain(e))) }, T.makeLink));
  };
  render(trip.share);
  return box;
}

function downloads(files) {
  return h('section', { class: 'card', id: 'downloads' }, h('h2', {}, T.downloads),
    h('p', {}, T.wholeTripFiles, ' ', h('a', { href: files.gpx, download: '', id: 'dl-gpx' }, T.gpx), ' · ',
      h('a', { href: files.fit, download: '', id: 'dl-fit' }, T.fit)),
    h('p', { class: 'muted' }, T.dayFilesHint));
}

/// A planned trip's places, to change (a place that failed is fixed here, in place).
function planPanel(trip, ctx) {
  const submit = h('button', { type: 'submit', id: 'route-again' }, T.routeAgain);
  const fields = planFields('plan', trip.plan);
  // Each place can be picked on the map instead of typed: the next tap fills it.
  for (const input of fields.querySelectorAll('input[list]')) {
    input.after(h('button', { type: 'button', class: 'link pick', id: `${input.id}-pick`, onclick: () => {
      ctx.pickingPlace = input.id;
      toast(T.pickOnMapNow);
      document.getElementById('map')?.scrollIntoView({ block: 'center' });
    } }, T.pickOnMap));
  }
  const form = h('form', { novalidate: true }, fields, h('p', { class: 'form-err err', role: 'alert' }), submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const plan = planChanges(form, trip.plan);
    if (!plan) { toast(T.nothingChanged); return; }
    try {
      const detail = await call('updateTrip', { id: trip.id }, { version: ctx.version(), body: { plan } });
      toast(T.saved);
      ctx.replace(detail && detail.version ? detail : await call('detail', { id: trip.id }));
    } catch (err) {
      if (err.conflict) ctx.failed(err); else showErrors(form, 'plan', err);
    }
  });
  return h('details', { class: 'card', id: 'plan-card', open: trip.status === 'failed' || !!trip.notice }, h('summary', {}, h('strong', {}, T.thePlan)), form);
}

function settingsPanel(trip, ctx) {
  const prefix = 'set';
  const submit = h('button', { type: 'submit' }, T.saveSettings);
  const form = h('form', { novalidate: true },
    h('p', { class: 'warn' }, T.recut),
    settingsFields(prefix, trip),
    h('p', { class: 'form-err err', role: 'alert' }), submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const all = readSettings(form, { clearDates: true });
    const changed = {};
    // The place types are a set here: the same ones in another order keep the rider's order.
    const same = (k, v) => (k === 'enabledAccommodationTypes'
      ? JSON.stringify([...(v || [])].sort()) === JSON.stringify([...(trip[k] || [])].sort())
      : JSON.stringify(v ?? null) === JSON.stringify(trip[k] ?? null));
    for (const [k, v] of Object.entries(all)) if (!same(k, v)) changed[k] = v;
    if (!Object.keys(changed).length) { toast(T.nothingChanged); return; }
    try {
      const detail = await call('updateTrip', { id: trip.id }, { version: ctx.version(), body: changed });
      toast(T.saved);
      ctx.replace(detail && detail.version ? detail : await call('detail', { id: trip.id }));
    } catch (err) {
      if (err.conflict) ctx.failed(err); else showErrors(form, prefix, err);
    }
  });
  return h('details', { class: 'card', id: 'settings' }, h('summary', {}, h('strong', {}, T.settings)), form);
}

/// Days the dates force over the daily maximum, as one trip-level warning.
function overCap(t) {
  if (!t.maxDistancePerDay || !(t.startDate && t.endDate)) return null;
  const over = t.stages.filter((s) => !s.isRestDay && s.distance > t.maxDistancePerDay + 0.05).length;
  return over ? h('p', { class: 'warn', id: 'over-cap', role: 'note' }, T.overCap(over, t.maxDistancePerDay)) : null;
}

/// A trip's page.
export async function tripScreen(id, opts = {}) {
  const readOnly = !!(opts.version || opts.code);
  let detail, now = null;
  try {
    if (opts.code) detail = await call('sharedTrip', { code: opts.code });
    else if (opts.version) [detail, now] = await Promise.all([call('detail', { id }, { query: { version: opts.version } }), call('detail', { id })]);
    else detail = await call('detail', { id });
  } catch (err) {
    if (opts.code && err.status === 404) {
      mount(main(), h('h1', {}, T.goneTitle), h('p', { id: 'gone' }, T.gone));
      return;
    }
    if (err.offline) { mount(main(), h('h1', {}, T.offline), h('p', { id: 'not-kept' }, T.notKept)); return; }
    throw err;
  }
  let current = detail;
  let progress = null;
  let lines = null;
  let stayTarget = null;
  let lastFocused = null; // the day the rider last opened, shown on the map
  let pendingTap = null; // a point tapped on the map, its offer not acted on yet
  const card = (stage) => document.getElementById(`day-${stage.stageId}`);
  const ctx = {
    readOnly,
    version: () => current.version,
    line: (stageId) => (lines ? lines.days.find((d) => d.stageId === stageId) : null),
    file: (kind, stageId) => (opts.code ? path(`sharedStage${kind}`, { code: opts.code, stageId }) : path(`stage${kind}`, { id, stageId })),
    act: (stage, fn) => async (e) => {
      e.preventDefault();
      const form = e.target.closest('form');
      const data = form ? new FormData(form) : new FormData();
      try {
        let d;
        try {
          d = await fn(data);
        } catch (err) {
          // The edit would remove something the rider made: ask, naming it, then send it again.
          if (!err.removes || !err.removes.length) throw err;
          if (!confirm(T.confirmLoss(err.removes))) return;
          d = await withoutAsking(() => fn(data));
        }
        if (d && d.version) { toast(T.savedAnd(d.alsoChanged)); ctx.replace(d); }
      } catch (err) { ctx.failed(err, stage); }
    },
    replace: (d) => { current = d; delete main().dataset.dirty; render(); },
    // What was said to a day (a search asked for, a detour) stays with it across renders.
    said: new Map(),
    say: (stage, text) => { ctx.said.set(stage.stageId, text); const el = document.getElementById(`${sid(stage)}-said`); if (el) el.textContent = text; else toast(text); },
    failed: async (err, stage) => {
      if (err.conflict) {
        const kept = keepTyped();
        current = await call('detail', { id });
        delete main().dataset.dirty;
        await render(kept);
        const c = document.getElementById('conflict');
        c.textContent = T.conflict;
        c.hidden = false;
        return;
      }
      const slot = stage && document.getElementById(`${sid(stage)}-err`);
      if (slot) slot.textContent = plain(err); else toast(plain(err));
    },
    stayOpen: (stage) => { stayTarget = stage.stageId; },
    openDay: (stage, focus = true) => {
      if (focus) lastFocused = stage.stageId;
      if (ctx.map && focus) ctx.map.focus(stage.stageId);
      const el = document.getElementById(`${sid(stage)}-profile`);
      const endInput = document.getElementById(`${sid(stage)}-end`);
      const day = ctx.line(stage.stageId);
      if (el && day && !el.firstChild) {
        drawProfile(el, [day], document.getElementById('readout'), (km) => {
          if (endInput) { endInput.value = km.toFixed(1); endInput.dataset.typed = '1'; const edit = document.getElementById(`${sid(stage)}-edit`); if (edit) edit.open = true; endInput.focus(); }
        }, { [stage.stageId]: stage.distance }, {
          gradient: true,
          marks: [...(stage.found || []).filter((f) => f.category === 'water' || f.category === 'resupply').map((f) => ({ km: f.km, kind: f.category })),
            ...(stage.selectedAccommodation ? [{ km: stage.distance, kind: 'night' }] : [])],
        });
        el.after(slopeLegend());
      }
    },
  };
  /// A tap on the map: the coordinates of an open "I'm staying at…" form, else a detour
  /// through the point on the riding day nearest to it, offered in that day's card.
  const tapped = (at) => {
    // A plan field waiting for a point takes the one tapped ("Pick on the map").
    const picking = ctx.pickingPlace && document.getElementById(ctx.pickingPlace);
    if (picking) {
      const point = `${at.lat.toFixed(5)},${at.lng.toFixed(5)}`;
      picking.value = picking.name === 'planVia' && picking.value.trim() ? `${picking.value.trim()}; ${point}` : point;
      ctx.pickingPlace = null;
      ctx.map.mark(at, T.pickedHere);
      picking.focus();
      return;
    }
    const stayForm = stayTarget && document.getElementById(`s-${stayTarget}-stay`);
    if (stayForm && stayForm.open) {
      const lat = document.getElementById(`s-${stayTarget}-stay-lat`), lon = document.getElementById(`s-${stayTarget}-stay-lon`);
      lat.value = at.lat.toFixed(5); lon.value = at.lng.toFixed(5);
      lat.dataset.typed = '1'; lon.dataset.typed = '1';
      ctx.map.mark(at, T.stayHere);
      return;
    }
    const near = ctx.map.nearest(at);
    if (!near) return;
    pendingTap = at;
    offerTap(at, near);
  };
  /// The offer of a tap in the card of the day it is nearest to; a live update that redraws
  /// the page puts it back (`pendingTap`), until the rider acts on it.
  const offerTap = (at, near) => {
    const stage = current.stages.find((s) => s.stageId === near.stageId);
    if (!stage) return;
    const label = T.detourAlong(near.km.toFixed(1), near.dayNumber);
    ctx.map.mark(at, label);
    const el = card(stage);
    if (!el) return;
    el.open = true;
    const edit = document.getElementById(`${sid(stage)}-edit`);
    if (edit) edit.open = true;
    const box = document.getElementById(`${sid(stage)}-detour`);
    if (!box) return;
    mount(box, h('span', {}, label, '. ', T.detourFor(near.dayNumber), ' '), h('button', { type: 'button', id: `${sid(stage)}-detour-go`, onclick: async () => {
      pendingTap = null;
      try {
        await call('detour', { id, stageId: stage.stageId }, { body: { waypointLat: at.lat, waypointLon: at.lng } });
        mount(box, T.detourAsked);
      } catch (err) { ctx.failed(err, stage); }
    } }, T.detourThrough), ' ', h('button', { type: 'button', class: 'secondary', id: `${sid(stage)}-end-here`, onclick: ctx.act(stage, () => { pendingTap = null; return call('updateStage', { id, stageId: stage.stageId }, { version: ctx.version(), body: { endPoint: { lat: at.lat, lon: at.lng } } }); }) }, T.endHere));
    box.scrollIntoView({ block: 'nearest' });
  };
  const loadLines = async () => {
    // The days' lines as soon as the days exist (their analysis may still run).
    if (!current.stages.length) { lines = null; return; }
    try {
      lines = opts.code ? await call('sharedRoute', { code: opts.code })
        : await call('route', { id }, { query: opts.version ? { version: opts.version } : null });
    } catch { lines = null; }
  };
  const removeTrip = async () => {
    // A trip with no days and no link loses nothing: it goes without a question.
    const loses = current.stages.length > 0 || !!current.share;
    if (loses && !confirm(T.confirmDelete(current.title || T.untitled))) return;
    try { await call('deleteTrip', { id }); await forgetTrip(id); toast(T.deleted); location.hash = '#/'; } catch (err) { toast(plain(err)); }
  };
  const offlineNote = () => (offlineState.at ? h('p', { class: 'warn', id: 'offline', role: 'status' }, T.offlineAsOf(localTime(offlineState.at))) : null);
  const render = async (given) => {
    await loadLines();
    // What is typed and open now (a click during the fetch included) survives the render.
    const kept = given || keepTyped();
    const t = current;
    const title = t.title || (t.partial ? T.computingTitle : T.untitled);
    document.title = `${title} · Etappe`;
    const files = opts.code ? { gpx: path('sharedGpx', { code: opts.code }), fit: path('sharedFit', { code: opts.code }) }
      : { gpx: path('tripGpx', { id }), fit: path('tripFit', { id }) };
    const header = h('div', { class: 'trip-head' },
      h('h1', {}, opts.version ? `${T.pastVersion(opts.version)} — ${title}` : title),
      h('p', { class: 'muted', id: 'trip-facts' }, t.startDate ? [dateRange(t.startDate, t.endDate), ' · '] : null,
        t.partial && !t.stages.length ? T.status.draft : [T.days(t.stageCount), ' · ', T.km(t.totalDistance), t.stageCount ? [' · ', T.climb(t.totalElevation)] : null]),
      t.elevation && t.elevation.missingReason ? h('p', { class: 'muted', id: 'elevation-note' }, t.elevation.missingReason) : null,
      readOnly ? null : overCap(t),
      opts.version ? [h('p', { class: 'warn', id: 'past-note' }, T.pastVersionNote(opts.version, now.version)),
        h('div', { class: 'buttons' }, h('button', { type: 'button', id: 'restore', onclick: async () => {
          try {
            await call('restore', { id }, { version: now.version, body: { version: opts.version } });
            toast(T.restored(opts.version));
            location.hash = `#/trips/${id}`;
          } catch (err) { toast(plain(err)); }
        } }, T.restore), h('a', { href: `#/trips/${id}`, class: 'button-link' }, T.backToTrip))] : null,
      !readOnly ? h('p', {}, h('a', { href: `#/trips/${id}/history` }, T.history)) : null);
    const mapEl = h('div', { id: 'map', class: 'map', role: 'region', 'aria-label': T.map });
    const profEl = h('div', { id: 'profile', class: 'profile', role: 'img', 'aria-label': T.profile });
    const readout = h('p', { id: 'readout', class: 'muted', 'aria-live': 'polite' });
    const toggles = h('div', { class: 'toggles', role: 'group', 'aria-label': T.layers },
      ['found', 'beds'].map((name) => {
        const input = h('input', { type: 'checkbox', id: `show-${name}`, checked: true });
        input.addEventListener('change', () => { if (ctx.map) ctx.map.toggle(name, input.checked); });
        return h('span', { class: 'check' }, input, h('label', { for: `show-${name}` }, name === 'found' ? T.showFound : T.showBeds));
      }));
    const days = h('section', { id: 'days', 'aria-label': T.days(t.stages.length) },
      t.stages.map((s, i) => dayCard(t, s, i, ctx)));
    mount(main(),
      offlineNote(),
      header,
      h('p', { id: 'conflict', class: 'warn', role: 'alert', hidden: true }),
      t.notice && !readOnly ? h('p', { class: 'warn', id: 'notice', role: 'status' }, t.notice) : null,
      !readOnly && (t.partial || t.status === 'failed') ? progressPanel(t, progress, removeTrip) : null,
      !readOnly && t.plan && !opts.version ? planPanel(t, ctx) : null,
      t.stages.length ? [mapEl, toggles, legend(), profEl, readout] : null,
      days,
      t.stages.length && !opts.version ? downloads(files) : null,
      !readOnly ? [sharePanel(t), settingsPanel(t, ctx)] : null);
    if (lines && t.stages.length) {
      ctx.map = drawMap(mapEl, lines, t.stages);
      if (ctx.map && !readOnly) ctx.map.onClick(tapped);
      const lengths = Object.fromEntries(t.stages.map((s) => [s.stageId, s.distance]));
      if (!drawProfile(profEl, lines.days, readout, null, lengths)) mount(profEl, h('p', { class: 'muted' }, T.noHeightsTrip));
    }
    restoreTyped(kept);
    for (const d of main().querySelectorAll('details.day[open]')) ctx.openDay(current.stages.find((s) => s.stageId === d.dataset.stage), false);
    if (pendingTap && ctx.map && !readOnly) { const near = ctx.map.nearest(pendingTap); if (near) offerTap(pendingTap, near); }
    const focused = current.stages.find((s) => s.stageId === lastFocused);
    if (focused && ctx.map && document.getElementById(`day-${focused.stageId}`)?.open) ctx.map.focus(focused.stageId);
    if (!opts.version && !t.partial && t.stages.length) {
      const urls = [files.gpx, files.fit];
      for (const s of t.stages) if (!s.isRestDay) urls.push(ctx.file('Gpx', s.stageId), ctx.file('Fit', s.stageId));
      keepForOffline(urls, `${opts.code || id}:${t.version}`);
    }
  };
  offlineState.listeners = [() => { const old = document.getElementById('offline'); const fresh = offlineNote(); if (old) old.replaceWith(fresh || ''); else if (fresh) main().prepend(fresh); }];
  await render();
  if (!readOnly && navigator.onLine !== false) follow(id, async (kind, data) => {
    if (kind === 'progress') {
      progress = data;
      const p = document.querySelector('#progress .step');
      if (p || current.partial) { const fresh = progressPanel(current, progress, removeTrip); const old = document.getElementById('progress'); if (old) old.replaceWith(fresh); }
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
  stopFollowing();
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
  es.onerror = () => { if (es.readyState !== EventSource.CLOSED && navigator.onLine !== false) toast(T.reconnecting); };
}

export { SETTINGS };

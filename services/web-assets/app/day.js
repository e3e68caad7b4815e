// One day of a trip as a card: what the day is (distance, climb, time, what it passes, the
// night, the weather), then, behind "Edit this day", what can be changed. Every id in a
// card carries the day's stage id, never its number: after a merge or a move, an open
// panel, a typed name or a split value stays with its day.
import { T } from './strings.js';
import { h } from './dom.js';
import { call } from './api.js';
import { colour } from './map.js';
import { dayDate } from './words.js';

/// The id prefix of everything in the card of `stage`.
export const sid = (stage) => `s-${stage.stageId}`;

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

/// What the day passes, one line per kind of stop: "Water: km 0.5 (Fontaine, 20 m off), km 34
/// (120 m off) · Food: km 10 (bakery, 40 m off)…".
/// Names are OpenStreetMap data, shown as text.
function foundList(found) {
  if (!found) return h('p', { class: 'found muted' }, T.foundUnknown);
  if (!found.length) return h('p', { class: 'found muted' }, T.foundNone);
  const rows = Object.keys(T.found).map((category) => {
    const items = found.filter((f) => f.category === category);
    if (!items.length) return null;
    // Where the rider leaves the route for it, what it is and how far off it lies.
    const shown = items.slice(0, 8).map((f) => {
      const what = f.name || (category === 'resupply' ? f.kind.replace('_', ' ') : null);
      const off = f.offRouteM != null ? T.offRouteShort(f.offRouteM) : null;
      const bits = [what, off].filter(Boolean).join(', ');
      return `km ${f.km}${bits ? ` (${bits})` : ''}`;
    });
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

function hours(x) {
  const hh = Math.floor(x), mm = Math.round((x - hh) * 60);
  return mm === 60 ? `${hh + 1} h 00` : `${hh} h ${String(mm).padStart(2, '0')}`;
}

/// The day in figures: distance, climb and descent, highest point, riding time, arrival.
function facts(trip, stage, line) {
  const samples = (line && line.profile) || [];
  let top = null;
  for (const [km, m] of samples) if (top === null || m > top[1]) top = [km, m];
  // Riding time and arrival are the server's, reckoned as the sunset rule reckons them, so
  // the day and its alert never disagree.
  const speed = trip.averageSpeed;
  const dep = trip.departureHour ?? 8;
  const row = (k, v) => [h('dt', {}, k), h('dd', {}, v)];
  return h('dl', { class: 'facts', 'aria-label': T.facts },
    row(T.distance, T.km(stage.distance)),
    row(T.climbing, `${T.climb(stage.elevation)} · ${T.descent(stage.elevationLoss)}`),
    row(T.highest, top ? T.highestAt(top[1], top[0]) : T.unknown),
    stage.unpavedShare != null ? row(T.roads, T.roadsValue(stage.unpavedShare, stage.busyShare)) : null,
    stage.ridingHours != null ? row(T.riding, T.ridingValue(hours(stage.ridingHours))) : null,
    stage.arrival ? row(T.arrival, T.arrivalValue(stage.arrival, `${String(dep).padStart(2, '0')}:00`, speed)) : null);
}

function bedName(a) { return a.name || T.accommodationType[a.type] || a.type; }

function bedLine(a) {
  const bits = [T.accommodationType[a.type] || a.type];
  if (a.km != null) bits.push(`km ${Number(a.km).toFixed(1)}`);
  if (a.distanceToEndM != null) bits.push(T.fromEnd(a.distanceToEndM));
  else if (a.offRouteM != null) bits.push(T.offRoute(a.offRouteM));
  if (a.priceMinEur != null) bits.push(T.fromPrice(a.priceMinEur));
  return bits.join(' · ');
}

/// The night: where, who chose it, what else there is, and the rider's own place.
function nightSection(trip, stage, ctx) {
  const pre = sid(stage);
  const sleep = stage.selectedAccommodation;
  const night = stage.night;
  const chosen = h('p', { class: 'night-now', id: `${pre}-night` }, h('strong', {}, T.sleep + ': '),
    sleep ? [bedName(sleep), ' ', h('span', { class: 'muted' }, `(${T.chosenBy[sleep.chosenBy] || T.chosenBy.rider})`)] : T.noSleep);
  if (ctx.readOnly) return h('section', { class: 'night', 'aria-label': T.sleep }, chosen);
  const why = night && night.outcome === 'no_bed_in_window' && night.why ? h('p', { class: 'warn' }, night.why) : null;
  const noSource = trip.unavailable && trip.unavailable.accommodations ? h('p', { class: 'muted' }, T.noSource(trip.unavailable.accommodations)) : null;
  const seen = new Set();
  const beds = [...(stage.accommodations || []), ...((night && night.passedOver) || [])].filter((a) => {
    const key = `${a.lat},${a.lon}`;
    if (a.lat == null || seen.has(key) || (sleep && sleep.lat === a.lat && sleep.lon === a.lon)) return false;
    seen.add(key);
    return true;
  });
  const list = beds.length ? h('ul', { class: 'beds', 'aria-label': T.chooseSleep }, beds.map((a) => h('li', {},
    h('strong', {}, bedName(a)), ' ', h('span', { class: 'muted' }, bedLine(a)), ' ',
    h('button', { type: 'button', class: 'small', 'aria-label': `${T.sleepHere}: ${bedName(a)}`, onclick: ctx.act(stage, () => call('chooseAccommodation', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { lat: a.lat, lon: a.lon } })) }, T.sleepHere))))
    : h('p', { class: 'muted' }, T.noCandidates);
  const stay = h('details', { class: 'stay', id: `${pre}-stay` }, h('summary', {}, T.stayingAt),
    h('form', { class: 'inline', id: `${pre}-stay-form`, onsubmit: ctx.act(stage, (f) => call('manualAccommodation', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { name: String(f.get('name')).trim(), lat: Number(f.get('lat')), lon: Number(f.get('lon')) } })) },
      h('label', { for: `${pre}-stay-name` }, T.stayName), h('input', { id: `${pre}-stay-name`, name: 'name', maxlength: 200, required: true }),
      h('label', { for: `${pre}-stay-lat` }, T.stayLat), h('input', { id: `${pre}-stay-lat`, name: 'lat', type: 'number', step: 'any', min: -90, max: 90, required: true, value: stage.endPoint.lat.toFixed(5), class: 'coord' }),
      h('label', { for: `${pre}-stay-lon` }, T.stayLon), h('input', { id: `${pre}-stay-lon`, name: 'lon', type: 'number', step: 'any', min: -180, max: 180, required: true, value: stage.endPoint.lon.toFixed(5), class: 'coord' }),
      h('button', { type: 'submit' }, T.stayAt)),
    h('p', { class: 'muted' }, T.stayHint));
  stay.addEventListener('toggle', () => { if (stay.open) ctx.stayOpen(stage); });
  const wider = h('button', { type: 'button', class: 'secondary', id: `${pre}-wider`, onclick: async () => {
    try {
      await call('scan', { id: trip.id }, { body: { stageId: stage.stageId, radiusKm: 15 } });
      ctx.say(stage, T.searching);
    } catch (err) { ctx.failed(err, stage); }
  } }, T.searchWider);
  return h('section', { class: 'night', 'aria-label': T.sleep }, chosen, why, noSource,
    h('p', { class: 'muted' }, beds.length ? T.candidates(beds.length) : ''), list, h('div', { class: 'buttons' }, wider), stay);
}

/// The card of one day. `index` is its place in the trip (0-based).
export function dayCard(trip, stage, index, ctx) {
  const n = stage.dayNumber;
  const pre = sid(stage);
  const line = ctx.line(stage.stageId);
  const stages = trip.stages;
  const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
  swatch.style.backgroundColor = colour(n - 1);
  const summary = h('summary', {},
    swatch, h('strong', {}, stage.label || T.day(n)), stage.label ? h('span', { class: 'muted' }, ` (${T.day(n)})`) : null,
    stage.date ? [' ', h('span', { class: 'muted' }, dayDate(stage.date))] : null, ' · ',
    stage.isRestDay ? T.restDayAt(stage.endLabel) : [T.km(stage.distance), ' · ', T.climb(stage.elevation)],
    (stage.alerts || []).some((a) => a.severity === 'critical') ? [' ', h('span', { class: 'badge' }, T.severity.critical)] : null);
  const readOnly = ctx.readOnly;
  const hasHeights = line && (line.profile || []).length > 1;
  const body = [
    stage.isRestDay ? h('p', {}, T.restDayAt(stage.endLabel)) : h('p', {}, stage.startLabel || '', ' → ', stage.endLabel || ''),
    stage.isRestDay ? null : facts(trip, stage, line),
    alertList(stage.alerts, readOnly || stage.isRestDay ? null : async (point) => {
      try {
        await call('detour', { id: trip.id, stageId: stage.stageId }, { body: { waypointLat: point.lat, waypointLon: point.lon } });
        ctx.say(stage, T.detourAsked);
      } catch (err) { ctx.failed(err, stage); }
    }),
    stage.isRestDay ? null : foundList(stage.found),
    nightSection(trip, stage, ctx),
    stage.weather ? h('p', { class: 'weather' }, h('strong', {}, T.weather + ': '), weatherText(stage.weather)) : null,
    stage.detour ? h('p', { class: 'detour', id: `${pre}-detour-now` },
      T.detourNow(stage.detour.addedDistance), stage.detour.estimated ? [' ', h('strong', { class: 'estimated' }, `(${T.estimated})`), ' ', h('span', { class: 'muted' }, T.estimatedWhy)] : null,
      readOnly ? null : [' ', h('button', { type: 'button', class: 'small', id: `${pre}-undetour`, onclick: ctx.act(stage, () => call('removeDetour', { id: trip.id, stageId: stage.stageId })) }, T.removeDetour)]) : null,
    stage.isRestDay ? null : hasHeights ? h('div', { class: 'day-profile', id: `${pre}-profile`, role: 'img', 'aria-label': T.dayProfile(n) })
      : h('p', { class: 'muted no-heights' }, T.noHeights),
    stage.isRestDay ? null : h('p', { class: 'files' }, T.dayFiles(n), ' ',
      h('a', { href: ctx.file('Gpx', stage.stageId), download: '', class: 'dl-day-gpx', 'aria-label': T.dayGpx(n) }, T.gpx), ' · ',
      h('a', { href: ctx.file('Fit', stage.stageId), download: '', class: 'dl-day-fit', 'aria-label': T.dayFit(n) }, T.fit)),
    h('p', { class: 'err day-err', id: `${pre}-err`, role: 'alert' }),
    h('p', { class: 'muted', id: `${pre}-said`, 'aria-live': 'polite' }, ctx.said ? ctx.said.get(stage.stageId) || '' : ''),
  ];
  if (!readOnly) body.push(editPanel(trip, stage, index, ctx));
  const details = h('details', { id: `day-${stage.stageId}`, class: 'day', 'data-stage': stage.stageId, 'data-day': String(n), 'data-sig': String(stage.distance) }, summary, ...body);
  details.addEventListener('toggle', () => {
    const restoring = !!details.dataset.restoring;
    delete details.dataset.restoring;
    if (details.open) ctx.openDay(stage, !restoring);
  });
  return details;

  function editPanel() {
    const del = (into) => ctx.act(stage, () => call('deleteStage', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), query: into ? { mergeInto: into } : null }));
    const hasPrev = index > 0, hasNext = index < stages.length - 1;
    const forms = stage.isRestDay ? [
      h('form', { class: 'inline', onsubmit: ctx.act(stage, (f) => call('moveStage', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { toIndex: Number(f.get('to')) } })) },
        h('label', { for: `${pre}-move` }, T.moveRest),
        h('select', { id: `${pre}-move`, name: 'to' }, stages.map((s, i) => (s.isRestDay ? null
          : h('option', { value: String(i < index ? i + 1 : i), selected: i === index - 1 }, T.day(s.dayNumber)))).filter(Boolean)),
        h('button', { type: 'submit' }, T.moveRestTo)),
      h('div', { class: 'buttons' }, h('button', { type: 'button', class: 'danger', id: `${pre}-remove`, onclick: del(null) }, T.removeRest)),
    ] : [
      h('form', { class: 'inline', onsubmit: ctx.act(stage, (f) => call('split', { id: trip.id }, { version: ctx.version(), body: { stageId: stage.stageId, distance: Number(f.get('km')) } })) },
        h('label', { for: `${pre}-split` }, T.splitAt), h('input', { id: `${pre}-split`, name: 'km', type: 'number', min: 1, max: Math.max(1, Math.floor(stage.distance) - 1), step: 0.1, value: Math.round(stage.distance / 2) }),
        h('button', { type: 'submit' }, T.split)),
      h('form', { class: 'inline', onsubmit: ctx.act(stage, (f) => call('updateStage', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { distance: Number(f.get('km')) } })) },
        h('label', { for: `${pre}-end` }, T.moveEnd, ' ', h('span', { class: 'muted' }, T.pickOnProfile)), h('input', { id: `${pre}-end`, name: 'km', type: 'number', min: 1, step: 0.1 }),
        h('button', { type: 'submit' }, T.save)),
      h('p', { id: `${pre}-detour`, class: 'muted detour-slot', 'aria-live': 'polite' }, T.detourHint),
      h('form', { class: 'inline', onsubmit: ctx.act(stage, (f) => call('moveStage', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { toIndex: Number(f.get('to')) - 1 } })) },
        h('label', { for: `${pre}-move` }, T.moveTo), h('input', { id: `${pre}-move`, name: 'to', type: 'number', min: 1, max: stages.length, value: index + 1 }),
        h('button', { type: 'submit' }, T.moveRestTo)),
      h('div', { class: 'buttons' },
        h('button', { type: 'button', class: 'rest', id: `${pre}-rest`, onclick: ctx.act(stage, () => call('restDay', { id: trip.id, stageId: stage.stageId }, { version: ctx.version() })) }, T.restAfter),
        hasPrev ? h('button', { type: 'button', class: 'secondary merge-previous', id: `${pre}-merge-previous`, onclick: del('previous') }, T.mergePrevious) : null,
        hasNext ? h('button', { type: 'button', class: 'secondary merge-next', id: `${pre}-merge-next`, onclick: del('next') }, T.mergeNext) : null),
    ];
    return h('details', { class: 'edit', id: `${pre}-edit` }, h('summary', {}, stage.isRestDay ? T.editRest : T.edit),
      h('form', { class: 'inline', onsubmit: ctx.act(stage, (f) => call('updateStage', { id: trip.id, stageId: stage.stageId }, { version: ctx.version(), body: { label: f.get('label') } })) },
        h('label', { for: `${pre}-label` }, T.rename), h('input', { id: `${pre}-label`, name: 'label', maxlength: 200, value: stage.label || '' }),
        h('button', { type: 'submit' }, T.save)),
      forms);
  }
}

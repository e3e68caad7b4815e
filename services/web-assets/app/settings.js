// The settings of a trip, as a form: every field starts from its value (or Etappe's
// default, shown), says in one line what it does, and a preset fills several at once.
import { T } from './strings.js';
import { h, mount } from './dom.js';
import { ApiError, call } from './api.js';
import { plain, reword } from './words.js';

export const DEFAULTS = {
  maxDistancePerDay: 80, averageSpeed: 15, fatigueFactor: 0.9, elevationPenalty: 50, departureHour: 8, nights: 'anywhere',
};

export const SETTINGS = [
  // name, label, type, min, max, step
  ['startDate', T.startDate, 'date'],
  ['endDate', T.endDate, 'date'],
  ['days', T.days, 'number', 1, 365, 1],
  ['maxDistancePerDay', T.maxDistance, 'number', 10, 300, 1],
  ['averageSpeed', T.speed, 'number', 5, 50, 0.5],
  ['fatigueFactor', T.fatigue, 'number', 0.5, 1, 0.05],
  ['elevationPenalty', T.penalty, 'number', 0, 10000, 1],
  ['departureHour', T.departure, 'number', 0, 23, 1],
];
export const ACCOMMODATION_TYPES = ['camp_site', 'hostel', 'alpine_hut', 'chalet', 'guest_house', 'hotel', 'wilderness_hut'];
const PRESETS = {
  relaxed: { maxDistancePerDay: 50, fatigueFactor: 0.85, averageSpeed: 12 },
  touring: { maxDistancePerDay: 80, fatigueFactor: 0.9, averageSpeed: 15 },
  sporty: { maxDistancePerDay: 120, fatigueFactor: 0.95, averageSpeed: 22 },
};

export function fieldId(prefix, name) { return `${prefix}-${name}`; }

function meaning(name, value) {
  const m = T.meaning[name];
  return typeof m === 'function' ? m(value) : m;
}

/// The settings inputs, each with its label, its range, its meaning and a slot for its error.
export function settingsFields(prefix, values = {}) {
  const given = { ...DEFAULTS, ...Object.fromEntries(Object.entries(values).filter(([, v]) => v != null)) };
  const notes = {};
  const rows = SETTINGS.map(([name, label, type, min, max, step]) => {
    const id = fieldId(prefix, name);
    const range = min !== undefined ? ` (${min}–${max})` : '';
    const note = h('span', { class: 'meaning muted', id: `${id}-means` }, meaning(name, given[name]));
    notes[name] = note;
    const input = h('input', { id, name, type, min, max, step, value: given[name] ?? '', 'aria-describedby': `${id}-means ${id}-err` });
    if (typeof T.meaning[name] === 'function') input.addEventListener('input', () => { note.textContent = meaning(name, Number(input.value) || undefined); });
    return h('div', { class: 'field' },
      h('label', { for: id }, label + range), input, note,
      h('span', { class: 'err', id: `${id}-err` }));
  });
  const ebikeId = fieldId(prefix, 'ebikeMode');
  rows.push(h('div', { class: 'field' }, h('span', { class: 'check' },
    h('input', { id: ebikeId, name: 'ebikeMode', type: 'checkbox', checked: given.ebikeMode, 'aria-describedby': `${ebikeId}-means` }),
    h('label', { for: ebikeId }, T.ebike)), h('span', { class: 'meaning muted', id: `${ebikeId}-means` }, T.meaning.ebikeMode)));
  const nightsId = fieldId(prefix, 'nights');
  rows.push(h('div', { class: 'field' }, h('span', { class: 'check' },
    h('input', { id: nightsId, name: 'nights', type: 'checkbox', checked: given.nights === 'at_accommodation', 'aria-describedby': `${nightsId}-means ${nightsId}-err` }),
    h('label', { for: nightsId }, T.nightsSwitch)), h('span', { class: 'meaning muted', id: `${nightsId}-means` }, T.meaning.nights),
    h('span', { class: 'err', id: `${nightsId}-err` })));
  const enabled = values.enabledAccommodationTypes || ACCOMMODATION_TYPES;
  rows.push(h('fieldset', { class: 'field types' }, h('legend', {}, T.accommodationTypes),
    ACCOMMODATION_TYPES.map((t) => {
      const id = fieldId(prefix, `acc-${t}`);
      return h('span', { class: 'check' },
        h('input', { id, type: 'checkbox', name: 'enabledAccommodationTypes', value: t, checked: enabled.includes(t) }),
        h('label', { for: id }, T.accommodationType[t] || t));
    })));
  const said = h('p', { class: 'muted', 'aria-live': 'polite', id: `${prefix}-preset-said` });
  const presets = h('div', { class: 'field presets' }, h('span', {}, T.presets),
    h('div', { class: 'buttons' }, Object.keys(PRESETS).map((p) => h('button', { type: 'button', class: 'secondary', id: `${prefix}-preset-${p}`, onclick: (e) => {
      const form = e.target.closest('form');
      for (const [name, v] of Object.entries(PRESETS[p])) {
        const input = form.elements[name];
        input.value = v;
        input.dispatchEvent(new Event('input', { bubbles: true }));
      }
      said.textContent = T.presetChosen(T.preset[p].split(':')[0]);
    } }, T.preset[p]))), said);
  return [presets, h('div', { class: 'grid' }, rows)];
}

/// The settings a form holds (empty fields left out; on an edit, a cleared date or number
/// of days is null).
export function readSettings(form, { clearDates = false } = {}) {
  const out = {};
  for (const [name, , type] of SETTINGS) {
    const v = form.elements[name].value.trim();
    if (v === '') { if (clearDates && (type === 'date' || name === 'days')) out[name] = null; continue; }
    out[name] = type === 'number' ? Number(v) : v;
  }
  out.ebikeMode = form.elements.ebikeMode.checked;
  out.nights = form.elements.nights.checked ? 'at_accommodation' : 'anywhere';
  const types = [...form.querySelectorAll('input[name=enabledAccommodationTypes]:checked')].map((i) => i.value);
  if (types.length) out.enabledAccommodationTypes = types;
  return out;
}

/// Shows an API refusal next to the fields it names (in the rider's words), or as a message.
export function showErrors(form, prefix, error) {
  form.querySelectorAll('.err').forEach((e) => { e.textContent = ''; });
  const fields = error instanceof ApiError ? error.fields() : {};
  let placed = false;
  for (const [name, message] of Object.entries(fields)) {
    // A plan's fields come as plan.from, plan.via[2]…: they sit by their inputs.
    const plan = /^plan\.(from|to|via|profile)/.exec(name);
    const input = plan ? `plan${plan[1][0].toUpperCase()}${plan[1].slice(1)}` : name.replace(/^\//, '');
    const slot = document.getElementById(`${fieldId(prefix, input)}-err`);
    if (slot) { slot.textContent = reword(message); placed = true; }
  }
  if (!placed && error && error.problem && error.problem.code === 'not_configured' && /nights|accommodation|OpenStreetMap/i.test(error.message)) {
    const slot = document.getElementById(`${fieldId(prefix, 'nights')}-err`);
    if (slot) { slot.textContent = reword(error.message); placed = true; }
  }
  const general = form.querySelector('.form-err');
  if (general) mount(general, placed ? T.fixMarked : plain(error));
}

/// How a place of a plan reads in its field: its name, else its coordinates.
export const placeText = (p) => (p ? p.name || `${p.lat.toFixed(5)},${p.lon.toFixed(5)}` : '');

/// "Plan from places": from, via and to, each with suggestions from the place search as the
/// rider types, and the riding profile; the server routes it (no link needed). With `plan`
/// (a planned trip's), the fields start from its places, to change them.
/// The places picked from the suggestions, by the text the pick put in its field: sent as
/// their coordinates, so the place the rider saw is the place planned.
const picked = new Map();

/// A plan field's text as the API takes it: a picked suggestion as {lat, lon, name}, anything
/// else as typed (a name the server resolves near the plan's other places, or "lat,lon").
export const placeValue = (text) => {
  const p = picked.get(text.trim());
  return p ? { lat: p.lat, lon: p.lon, name: p.name } : text.trim();
};

/// How a suggestion reads in its field: its name and where it is, so two places of one name
/// differ ("Steg, near Triesenberg, Liechtenstein").
const suggestionText = (p) => [p.name, p.region || p.countryCode].filter(Boolean).join(', ');

export function planFields(prefix, plan = null) {
  const suggestions = h('datalist', { id: `${prefix}-place-suggestions` });
  let pending = null;
  const suggest = (input) => {
    clearTimeout(pending);
    const q = input.value.split(';').pop().trim();
    if (q.length < 2 || /^-?[0-9.]+\s*,/.test(q) || picked.has(q)) return;
    // The places already picked in the other fields rank the nearest first.
    const near = [...input.form?.querySelectorAll('input[list]') || []]
      .filter((other) => other !== input)
      .flatMap((other) => other.value.split(';').map((t) => picked.get(t.trim())))
      .find(Boolean);
    pending = setTimeout(async () => {
      try {
        const query = { q, limit: 8, ...(near ? { near: `${near.lat},${near.lon}` } : {}) };
        const found = await call('geocode', {}, { query });
        mount(suggestions, found.items.map((p) => {
          picked.set(suggestionText(p), p);
          return h('option', { value: suggestionText(p) }, `${p.type}${p.distanceKm != null ? ` · ${p.distanceKm} km` : ''}`);
        }));
      } catch { /* suggestions are a help, not a need */ }
    }, 250);
  };
  const place = (name, label, value, hint) => {
    const id = `${prefix}-${name}`;
    const input = h('input', { id, name, list: `${prefix}-place-suggestions`, autocomplete: 'off', value, 'aria-describedby': `${id}-err` });
    input.addEventListener('input', () => suggest(input));
    return h('div', { class: 'field' }, h('label', { for: id }, label, hint ? [' ', h('span', { class: 'muted' }, hint)] : null), input,
      h('span', { class: 'err', id: `${id}-err` }));
  };
  const profile = h('select', { id: `${prefix}-planProfile`, name: 'planProfile' },
    ['touring', 'road', 'gravel', 'mountain'].map((p) => h('option', { value: p, selected: plan ? plan.profile === p : false }, T.profiles[p])));
  return h('fieldset', { class: 'field plan', id: `${prefix}-plan` }, h('legend', {}, plan ? T.thePlan : T.planFromPlaces),
    h('p', { class: 'muted' }, plan ? T.planChangeHint : T.planHint),
    place('planFrom', T.planFrom, placeText(plan && plan.from)),
    place('planVia', T.planVia, plan ? (plan.via || []).map(placeText).join('; ') : '', T.planViaHint),
    place('planTo', T.planTo, placeText(plan && plan.to)),
    h('div', { class: 'field' }, h('label', { for: `${prefix}-planProfile` }, T.planProfile), profile),
    suggestions);
}

/// What a plan form changes of `plan`: a place left as it reads keeps its coordinates (it is
/// not looked up again), a changed one is sent as typed; `null` when nothing changed.
export function planChanges(form, plan) {
  const out = {};
  const keep = (p) => ({ lat: p.lat, lon: p.lon, ...(p.name ? { name: p.name } : {}) });
  for (const [field, key] of [['planFrom', 'from'], ['planTo', 'to']]) {
    const typed = form.elements[field].value.trim();
    if (typed !== placeText(plan[key])) out[key] = placeValue(typed);
  }
  const was = (plan.via || []).map(placeText);
  const via = form.elements.planVia.value.split(';').map((v) => v.trim()).filter(Boolean);
  if (JSON.stringify(via) !== JSON.stringify(was)) {
    out.via = via.map((text) => { const i = was.indexOf(text); return i >= 0 ? keep(plan.via[i]) : placeValue(text); });
  }
  if (form.elements.planProfile.value !== plan.profile) out.profile = form.elements.planProfile.value;
  return Object.keys(out).length ? out : null;
}

// The trips: the list (each trip renamed, duplicated or deleted from it; a computing trip
// with its title and state; a failed one removable) and the form of a new trip.
import { T } from './strings.js';
import { h, mount, toast } from './dom.js';
import { call } from './api.js';
import { settingsFields, readSettings, showErrors, planFields, placeValue } from './settings.js';
import { dateRange, plain } from './words.js';
import { forgetTrip } from './offline.js';

const main = () => document.getElementById('main');

function key() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function tripItem(t, reload) {
  const title = t.title || (t.status === 'draft' ? T.computingTitle : T.untitled);
  const li = h('li', { class: 'trip', 'data-trip': t.id });
  const facts = t.status === 'draft' && !t.stageCount ? [T.status.draft]
    : [t.startDate ? dateRange(t.startDate, t.endDate) : null, T.days(t.stageCount), T.km(t.totalDistance), t.status === 'ready' ? null : T.status[t.status] || t.status].filter(Boolean);
  const say = h('p', { class: 'err', role: 'alert' });
  const show = () => mount(li,
    h('a', { href: `#/trips/${t.id}`, class: 'trip-title' }, title),
    h('span', { class: 'muted' }, ' · ', facts.join(' · ')),
    h('div', { class: 'buttons manage', role: 'group', 'aria-label': T.manage(title) },
      h('button', { type: 'button', class: 'small secondary rename', onclick: renaming }, T.renameTrip),
      h('button', { type: 'button', class: 'small secondary duplicate', onclick: duplicate }, T.duplicate),
      h('button', { type: 'button', class: 'small danger delete', onclick: asking }, t.status === 'failed' ? T.removeTrip : T.deleteTrip)),
    say);
  const renaming = () => {
    const input = h('input', { id: `title-${t.id}`, name: 'title', maxlength: 200, value: t.title || '', required: true });
    const form = h('form', { class: 'inline rename-form', onsubmit: async (e) => {
      e.preventDefault();
      const value = input.value.trim();
      if (!value) { say.textContent = T.titleNeeded; return; }
      try {
        const d = await call('detail', { id: t.id });
        await call('updateTrip', { id: t.id }, { version: d.version, body: { title: value } });
        toast(T.saved);
        reload();
      } catch (err) { say.textContent = plain(err); }
    } }, h('label', { for: `title-${t.id}` }, T.newTitle), input, h('button', { type: 'submit' }, T.save),
    h('button', { type: 'button', class: 'secondary', onclick: show }, T.cancel));
    mount(li, form, say);
    input.focus();
  };
  const duplicate = async () => {
    try {
      await call('duplicateTrip', { id: t.id }, { headers: { 'Idempotency-Key': key() } });
      toast(T.duplicated);
      reload();
    } catch (err) { say.textContent = plain(err); }
  };
  const asking = () => {
    const yes = h('button', { type: 'button', class: 'danger confirm-delete', onclick: async () => {
      try { await call('deleteTrip', { id: t.id }); await forgetTrip(t.id); toast(T.deleted); reload(); } catch (err) { say.textContent = plain(err); }
    } }, T.confirmYes);
    mount(li, h('p', { role: 'alert' }, T.confirmDelete(title)), h('div', { class: 'buttons' }, yes,
      h('button', { type: 'button', class: 'secondary', onclick: show }, T.cancel)), say);
    yes.focus();
  };
  show();
  return li;
}

export async function tripsScreen() {
  const search = h('input', { id: 'search', type: 'search', placeholder: T.search, 'aria-label': T.search });
  const list = h('ul', { class: 'trips', id: 'trips', 'aria-live': 'polite' });
  const load = async () => {
    const page = await call('listTrips', {}, { query: { title: search.value.trim(), itemsPerPage: 30 } });
    const items = page.items.slice().sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    const wanted = search.value.trim().toLowerCase();
    const shown = items.filter((t) => !wanted || (t.title || '').toLowerCase().includes(wanted));
    mount(list, shown.length ? shown.map((t) => tripItem(t, load)) : h('li', { class: 'muted' }, T.noTrips));
    document.body.dataset.listed = String(Date.now());
  };
  search.addEventListener('input', load);
  mount(main(), h('h1', {}, T.myTrips), search, list, createForm());
  await load();
}

function createForm() {
  const prefix = 'new';
  let file = null;
  const fileInput = h('input', { id: 'new-file', type: 'file', accept: '.gpx,application/gpx+xml', class: 'file' });
  const fileName = h('span', { class: 'muted', id: 'new-file-name', 'aria-live': 'polite' });
  const pick = (f) => {
    file = f || null;
    mount(fileName, file ? [T.fileChosen(file.name), ' ', h('button', { type: 'button', class: 'small secondary', onclick: () => { fileInput.value = ''; pick(null); } }, T.clearFile)] : '');
  };
  fileInput.addEventListener('change', () => pick(fileInput.files[0]));
  const drop = h('div', { class: 'drop', id: 'drop' }, T.dropHint, ' ', h('label', { for: 'new-file', class: 'file-label' }, T.chooseFile), fileInput, ' ', fileName);
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault(); drop.classList.remove('over');
    pick(e.dataTransfer.files[0]);
  });
  const submit = h('button', { type: 'submit' }, T.create);
  const form = h('form', { class: 'card', id: 'create', novalidate: true },
    h('h2', {}, T.newTrip),
    h('div', { class: 'field' }, h('label', { for: 'new-sourceUrl' }, T.sourceUrl),
      h('input', { id: 'new-sourceUrl', name: 'sourceUrl', type: 'url', inputmode: 'url', 'aria-describedby': 'new-sourceUrl-err' }),
      h('span', { class: 'err', id: 'new-sourceUrl-err' })),
    h('div', { class: 'field' }, h('span', {}, T.gpxFile), drop),
    planFields('new'),
    h('div', { class: 'field' }, h('label', { for: 'new-title' }, T.title), h('input', { id: 'new-title', name: 'title', maxlength: 200 }),
      h('span', { class: 'err', id: 'new-title-err' })),
    h('details', { class: 'settings-new', id: 'new-settings', open: true }, h('summary', {}, T.settings), settingsFields(prefix)),
    h('p', { class: 'form-err err', role: 'alert' }),
    submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const link = form.elements.sourceUrl.value.trim();
    const planned = form.elements.planFrom.value.trim() || form.elements.planTo.value.trim();
    if (!file && !link && !planned) {
      form.querySelectorAll('.err').forEach((x) => { x.textContent = ''; });
      mount(form.querySelector('.form-err'), T.needRoute);
      return;
    }
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
      } else if (planned) {
        const via = form.elements.planVia.value.split(';').map((v) => v.trim()).filter(Boolean).map(placeValue);
        const plan = { from: placeValue(form.elements.planFrom.value), to: placeValue(form.elements.planTo.value), profile: form.elements.planProfile.value };
        if (via.length) plan.via = via;
        trip = await call('createTrip', {}, { body: { plan, ...settings } });
      } else {
        trip = await call('createTrip', {}, { body: { sourceUrl: link, ...settings } });
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


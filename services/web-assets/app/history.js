// A trip's history as a timeline: local time, who did it ("you", "Etappe", an agent), the
// rider's own steps shown and Etappe's internal steps folded; each version can be opened.
import { T } from './strings.js';
import { h, mount } from './dom.js';
import { call } from './api.js';
import { localTime } from './words.js';

const main = () => document.getElementById('main');

/// Steps Etappe takes by itself after an edit, even when the edit asked for them.
const INTERNAL = /^(Analysis (requested|started|completed)|Days requested|Route computation started|Route computed|Accommodations found|Weather|Labels)/i;

function who(actor, me) {
  if (!actor || /^(system|worker|etappe)/i.test(actor)) return 'etappe';
  if (me && actor === `user:${me.id}`) return 'you';
  if (/^user:/.test(actor)) return 'you';
  if (/^(agent|oauth|client|token|mcp)/i.test(actor)) return 'agent';
  return 'etappe';
}

export async function historyScreen(id, me) {
  const [history, current] = await Promise.all([call('history', { id }), call('detail', { id })]);
  const items = (history.items || history || []).slice().reverse();
  // Runs of Etappe's own steps fold into one line that opens.
  const rows = [];
  let run = [];
  const flush = () => {
    if (!run.length) return;
    const steps = run;
    rows.push(h('li', { class: 'internal' }, h('details', {}, h('summary', {}, T.internalSteps(steps.length), ' ',
      h('span', { class: 'muted' }, [...new Set([localTime(steps[steps.length - 1].at), localTime(steps[0].at)])].join(' – '))),
    h('ul', {}, steps.map((e) => h('li', {}, e.summary || e.eventType, ' ', h('span', { class: 'muted' }, localTime(e.at))))))));
    run = [];
  };
  for (const e of items) {
    const by = INTERNAL.test(e.summary || '') ? 'etappe' : who(e.actor, me);
    if (by === 'etappe') { run.push(e); continue; }
    flush();
    rows.push(h('li', { class: 'step' }, h('strong', {}, e.summary || e.eventType), ' ',
      h('span', { class: 'muted' }, `${localTime(e.at)} · ${by === 'you' ? T.you : T.anAgent}`)));
  }
  flush();
  const versions = [];
  for (let v = current.version; v >= 1; v -= 1) versions.push(v);
  mount(main(), h('h1', {}, T.history),
    h('p', {}, h('a', { href: `#/trips/${id}` }, T.backToTrip)),
    h('ol', { class: 'timeline', id: 'timeline' }, rows),
    h('h2', {}, T.versions),
    h('ul', { class: 'versions', id: 'versions' }, versions.map((v) => h('li', {},
      v === current.version ? h('span', {}, T.currentVersion(v)) : h('a', { href: `#/trips/${id}/v/${v}` }, T.version(v))))));
}

// The account: sessions by browser and system, tokens, agents, the data and its deletion.
import { T } from './strings.js';
import { h, mount, toast } from './dom.js';
import { call, path } from './api.js';
import { browserName, localTime, plain } from './words.js';
import { forgetOffline } from './offline.js';

const main = () => document.getElementById('main');

export async function accountScreen(me) {
  const [sessions, tokens, agentList] = await Promise.all([call('sessions'), call('tokens'),
    call('agents').catch(() => ({ items: [] }))]);
  const list = (x) => (Array.isArray(x) ? x : x.items || x.sessions || x.tokens || []);
  const again = () => accountScreen(me);
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
      await again();
      mount(document.getElementById('token-created'), T.tokenShown, ' ', h('code', {}, made.token || ''));
    } catch (err) { toast(plain(err)); }
  });
  const agents = agentList.items || [];
  mount(main(), h('h1', {}, T.account), h('p', {}, me.email),
    h('section', { class: 'card' }, h('h2', {}, T.sessions), h('ul', { id: 'sessions' }, list(sessions).map((s) => h('li', {},
      h('strong', {}, browserName(s.userAgent || s.agent)), ' ', h('span', { class: 'muted' }, T.lastSeen(localTime(s.lastSeenAt || s.createdAt))),
      s.id === me.currentSession ? ` (${T.thisSession})` : '', ' ',
      s.id === me.currentSession ? null : h('button', { type: 'button', class: 'small secondary', onclick: () => call('revokeSession', { id: s.id }).then(again).catch((e) => toast(plain(e))) }, T.revoke))))),
    h('section', { class: 'card' }, h('h2', {}, T.tokens), h('ul', {}, list(tokens).map((t) => h('li', {},
      t.label || t.id, ' ', h('span', { class: 'muted' }, (t.scopes || []).join(' ')), ' ',
      h('button', { type: 'button', class: 'small secondary', onclick: () => call('revokeToken', { id: t.id }).then(again).catch((e) => toast(plain(e))) }, T.revoke)))), tokenForm, created),
    agents.length ? h('section', { class: 'card' }, h('h2', {}, T.agents), h('ul', {}, agents.map((a) => h('li', {},
      a.clientName || a.clientId, ' ', h('span', { class: 'muted' }, (a.scopes || []).join(' ')), ' ',
      h('button', { type: 'button', class: 'small secondary', onclick: () => call('revokeAgent', { id: a.grantId }).then(again).catch((e) => toast(plain(e))) }, T.revoke))))) : null,
    h('section', { class: 'card' },
      h('p', {}, h('a', { href: path('exportAccount'), download: 'etappe-account.json' }, T.exportData)),
      h('button', { type: 'button', class: 'danger', onclick: async () => {
        if (!confirm(T.confirmDeleteAccount)) return;
        try {
          await call('deleteAccount', {}, { body: { confirm: me.email } });
          await forgetOffline();
          location.href = '/login';
        } catch (err) { toast(plain(err)); }
      } }, T.deleteAccount)));
}

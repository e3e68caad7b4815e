// The rider's page: a few screens over the REST API, routed by the URL's hash
// (#/ the trips, #/trips/{id} a trip, #/trips/{id}/history, #/trips/{id}/v/{n} a past
// version, #/account) and, for a share link, by its path (/s/{code}). Plain ES modules, one
// per screen, and one small view helper (dom.js): no framework, no build step, nothing
// inline (the CSP forbids it), and every third-party text goes in as text.
import { T } from './strings.js';
import { h, mount } from './dom.js';
import { call, setCsrf, offlineState, logout as endSession } from './api.js';
import { plain, localTime } from './words.js';
import { register, forgetOffline } from './offline.js';
import { tripScreen, stopFollowing } from './trip.js';
import { tripsScreen } from './trips.js';
import { historyScreen } from './history.js';
import { accountScreen } from './account.js';

const main = () => document.getElementById('main');
let me = null;

function nav() {
  const el = document.getElementById('nav');
  if (!me) { mount(el); return; }
  mount(el,
    h('a', { href: '#/' }, T.myTrips),
    h('a', { href: '#/account' }, T.account),
    h('button', { type: 'button', class: 'link', onclick: logout }, T.logout));
}

/// Logging out also forgets the trips kept for offline reading on this device.
async function logout() {
  await endSession().catch(() => {});
  await forgetOffline();
  location.href = '/login';
}

/// "Offline — as of …" on any screen read from the kept copy (the trip's page draws its own).
function offlineMark() {
  const old = document.getElementById('offline');
  if (!offlineState.at) { if (old) old.remove(); return; }
  const fresh = h('p', { class: 'warn', id: 'offline', role: 'status' }, T.offlineAsOf(localTime(offlineState.at)));
  if (old) old.replaceWith(fresh); else main().prepend(fresh);
}

async function route() {
  stopFollowing();
  offlineState.listeners = [offlineMark];
  delete main().dataset.dirty;
  delete document.body.dataset.ready;
  const shared = location.pathname.match(/^\/s\/([^/.]+)$/);
  try {
    if (shared) {
      document.getElementById('nav').replaceChildren();
      await tripScreen(null, { code: shared[1] });
      document.body.dataset.ready = location.pathname;
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
    if ((m = hash.match(/^\/trips\/([\w-]+)\/history$/))) await historyScreen(m[1], me);
    else if ((m = hash.match(/^\/trips\/([\w-]+)\/v\/(\d+)$/))) await tripScreen(m[1], { version: Number(m[2]) });
    else if ((m = hash.match(/^\/trips\/([\w-]+)$/))) await tripScreen(m[1]);
    else if (hash === '/account') await accountScreen(me);
    else await tripsScreen();
    if (!/^\/trips\/[\w-]+(\/v\/\d+)?$/.test(hash)) offlineMark();
    document.body.dataset.ready = hash;
  } catch (err) {
    mount(main(), h('p', { class: 'err', role: 'alert' }, err && err.offline ? T.notKept : plain(err)));
  }
  performance.mark('etappe-interactive');
}

// Once the rider types, live updates no longer re-render (that would lose the text); an
// edit sent from a stale version then meets the 412 and its "changed elsewhere" message.
// What was typed is marked, so a render puts it back on the same day.
main().addEventListener('input', (e) => {
  main().dataset.dirty = '1';
  if (e.target && e.target.dataset) e.target.dataset.typed = '1';
});
window.addEventListener('hashchange', route);
// Back online: the screen is read again, unless the rider is typing (then one read clears
// the offline mark and the next edit meets any change made meanwhile).
register(() => { if (!main().dataset.dirty) route(); else call('me').catch(() => {}); });
route();

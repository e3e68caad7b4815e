// The service worker of the rider's page (served at /sw.js after `ASSETS`, the hashed files,
// and `VERSION`). It keeps the page's files, the shell, and every trip the rider opened —
// its detail, lines and files — so the trip reads offline; online it always asks the
// network first, so what it keeps is the latest. Writes are never kept nor replayed: the
// page refuses them offline and keeps what was typed.
/* global ASSETS, VERSION */
const SHELL = `etappe-shell-${VERSION}`;
const DATA = 'etappe-data-v1';

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(SHELL).then((c) => c.addAll(ASSETS)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k.startsWith('etappe-shell-') && k !== SHELL).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

/// The data answers kept: the rider's own, the trips', the share links' and their files.
function keptPath(p) {
  return p === '/users/me' || p === '/trips' || /^\/trips\/[\w-]+(\/detail|\/route|\.gpx|\.fit|\/stages\/[\w-]+\/export\.(gpx|fit))$/.test(p)
    || /^\/s\/[\w-]+(\/route|\.gpx|\.fit|\/stages\/[\w-]+\.(gpx|fit))?$/.test(p);
}

/// A copy of `response` stamped with when it was kept (and without Vary: each is kept
/// under its own key).
async function stamped(response) {
  const headers = new Headers(response.headers);
  headers.delete('vary');
  headers.set('x-etappe-kept-at', String(Date.now()));
  return new Response(await response.blob(), { status: response.status, statusText: response.statusText, headers });
}

/// The kept answer, marked as read offline (`x-etappe-offline-at`: when it was kept).
function offline(kept) {
  const headers = new Headers(kept.headers);
  headers.set('x-etappe-offline-at', kept.headers.get('x-etappe-kept-at') || '0');
  return new Response(kept.body, { status: kept.status, statusText: kept.statusText, headers });
}

async function networkFirst(request, key) {
  const cache = await caches.open(DATA);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(key, await stamped(response.clone()));
    // A trip deleted or a link revoked is not kept any longer.
    else if (response.status === 404 || response.status === 410) await cache.delete(key);
    return response;
  } catch (err) {
    const kept = await cache.match(key);
    if (kept) return offline(kept);
    return new Response(JSON.stringify({ title: 'Offline', detail: 'Not kept for offline reading', status: 503 }),
      { status: 503, headers: { 'content-type': 'application/problem+json', 'x-etappe-offline-at': '0' } });
  }
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin) return;
  const p = url.pathname;
  if (p.startsWith('/assets/')) {
    event.respondWith(caches.match(request).then((hit) => hit || fetch(request).then(async (response) => {
      if (response.ok) (await caches.open(SHELL)).put(request, response.clone());
      return response;
    })));
    return;
  }
  if (request.mode === 'navigate' && (p === '/' || /^\/s\/[\w-]+$/.test(p))) {
    // The page's shell for this path (only the shell is kept, never the landing page).
    const key = new Request(`/__shell${p === '/' ? '/' : p}`);
    event.respondWith((async () => {
      const cache = await caches.open(DATA);
      try {
        const response = await fetch(request);
        if (response.ok && response.headers.get('x-etappe-shell')) await cache.put(key, await stamped(response.clone()));
        else if (response.status === 404) await cache.delete(key);
        return response;
      } catch (err) {
        const kept = await cache.match(key);
        if (kept) return offline(kept);
        throw err;
      }
    })());
    return;
  }
  if (keptPath(p)) event.respondWith(networkFirst(request, url.href));
});

/// `{keep: [urls], tag}` from the page: the trip's files, fetched once per version of it.
self.addEventListener('message', (event) => {
  const { keep, tag } = event.data || {};
  if (!Array.isArray(keep)) return;
  event.waitUntil((async () => {
    const cache = await caches.open(DATA);
    const marker = `/__kept/${encodeURIComponent(tag || '')}`;
    if (tag && await cache.match(marker)) return;
    for (const u of keep) {
      try {
        const response = await fetch(u, { credentials: 'same-origin' });
        if (response.ok) await cache.put(new URL(u, self.location.origin).href, await stamped(response));
      } catch { return; }
    }
    if (tag) await cache.put(marker, new Response('1'));
  })());
});

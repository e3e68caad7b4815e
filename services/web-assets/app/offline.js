// The trip in your pocket: registers the service worker (which keeps the page and every trip
// opened), asks it to keep a trip's files, and offers those files offline too.
import { T } from './strings.js';
import { toast } from './dom.js';

export function register(onBack) {
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker.register('/sw.js').catch(() => { /* the page works without it */ });
  // A new version of the page took over: the next load runs it.
  const had = !!navigator.serviceWorker.controller;
  navigator.serviceWorker.addEventListener('controllerchange', () => { if (had) toast(T.newVersion); });
  window.addEventListener('online', () => { toast(T.backOnline); onBack(); });
  window.addEventListener('offline', () => toast(T.offline));
  // Offline, a file link is fetched by the page (so the worker answers it) and saved.
  document.addEventListener('click', async (e) => {
    const a = e.target.closest && e.target.closest('a[download]');
    if (!a || a.dataset.saved || navigator.onLine !== false) return;
    e.preventDefault();
    try {
      const res = await fetch(a.href);
      if (!res.ok) throw new Error(String(res.status));
      const blob = await res.blob();
      const name = decodeURIComponent(new URL(a.href).pathname.split('/').pop()) || 'etappe';
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = a.getAttribute('download') || name;
      link.dataset.saved = '1';
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    } catch { toast(T.fileNotKept); }
  });
}

/// Asks the worker to keep `urls` (a trip's GPX and FIT files) under `tag` (the trip and its
/// version): fetched once per version, in the background.
export function keepForOffline(urls, tag) {
  if (!('serviceWorker' in navigator) || navigator.onLine === false) return;
  navigator.serviceWorker.ready.then((reg) => { if (reg.active) reg.active.postMessage({ keep: urls, tag }); }).catch(() => {});
}

/// Drops what was kept for offline reading (the page's own files stay).
export async function forgetOffline() {
  if (!('caches' in window)) return;
  const names = await caches.keys().catch(() => []);
  await Promise.all(names.filter((n) => n.startsWith('etappe-data-')).map((n) => caches.delete(n)));
}

/// Drops what was kept of one trip (deleted), its files too.
export async function forgetTrip(id) {
  if (!('caches' in window)) return;
  for (const name of (await caches.keys().catch(() => [])).filter((n) => n.startsWith('etappe-data-'))) {
    const cache = await caches.open(name);
    for (const req of await cache.keys()) if (new URL(req.url).pathname.startsWith(`/trips/${id}`)) await cache.delete(req);
  }
}

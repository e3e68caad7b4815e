// The one client of Etappe's REST API the page uses. Every call goes through `call`, which
// names its operation as [METHOD, path template]; OPERATIONS lists them all, and the browser
// test checks each against /openapi.json, so the page cannot drift from the API.
// Writes send the session's CSRF token (X-CSRF-Token) and, on edits, the version read (If-Match).

export const OPERATIONS = {
  me: ['GET', '/users/me'],
  listTrips: ['GET', '/trips'],
  createTrip: ['POST', '/trips'],
  uploadGpx: ['POST', '/trips/gpx-upload'],
  detail: ['GET', '/trips/{id}/detail'],
  updateTrip: ['PATCH', '/trips/{id}'],
  deleteTrip: ['DELETE', '/trips/{id}'],
  duplicateTrip: ['POST', '/trips/{id}/duplicate'],
  restore: ['POST', '/trips/{id}/restore'],
  route: ['GET', '/trips/{id}/route'],
  events: ['GET', '/trips/{id}/events'],
  analyse: ['POST', '/trips/{id}/analyze'],
  scan: ['POST', '/trips/{id}/accommodations/scan'],
  split: ['POST', '/trips/{id}/stages'],
  updateStage: ['PATCH', '/trips/{id}/stages/{stageId}'],
  deleteStage: ['DELETE', '/trips/{id}/stages/{stageId}'],
  moveStage: ['PATCH', '/trips/{id}/stages/{stageId}/move'],
  restDay: ['POST', '/trips/{id}/stages/{stageId}/rest-day'],
  detour: ['POST', '/trips/{id}/stages/{stageId}/poi-waypoint'],
  removeDetour: ['DELETE', '/trips/{id}/stages/{stageId}/poi-waypoint'],
  geocode: ['GET', '/geocode/search'],
  chooseAccommodation: ['PATCH', '/trips/{id}/stages/{stageId}/accommodation'],
  manualAccommodation: ['POST', '/trips/{id}/stages/{stageId}/accommodations/manual'],
  share: ['POST', '/trips/{id}/share'],
  unshare: ['DELETE', '/trips/{id}/share'],
  tripGpx: ['GET', '/trips/{id}.gpx'],
  tripFit: ['GET', '/trips/{id}.fit'],
  stageGpx: ['GET', '/trips/{id}/stages/{stageId}/export.gpx'],
  stageFit: ['GET', '/trips/{id}/stages/{stageId}/export.fit'],
  history: ['GET', '/trips/{id}/history'],
  sessions: ['GET', '/users/me/sessions'],
  revokeSession: ['DELETE', '/users/me/sessions/{id}'],
  tokens: ['GET', '/users/me/tokens'],
  createToken: ['POST', '/users/me/tokens'],
  revokeToken: ['DELETE', '/users/me/tokens/{id}'],
  agents: ['GET', '/users/me/agents'],
  revokeAgent: ['DELETE', '/users/me/agents/{id}'],
  exportAccount: ['GET', '/users/me/export'],
  deleteAccount: ['DELETE', '/users/me'],
  sharedTrip: ['GET', '/s/{code}'],
  sharedRoute: ['GET', '/s/{code}/route'],
  sharedGpx: ['GET', '/s/{code}.gpx'],
  sharedFit: ['GET', '/s/{code}.fit'],
  sharedStageGpx: ['GET', '/s/{code}/stages/{stageId}.gpx'],
  sharedStageFit: ['GET', '/s/{code}/stages/{stageId}.fit'],
};

/// A refusal of the API: `status`, the problem+json body, and `conflict` for a 412.
export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
    this.conflict = status === 412;
    // An edit that would remove what the rider made, asked first: the sentences to ask with.
    this.removes = status === 428 && this.problem.code === 'confirmation_required' ? (this.problem.removes || []) : [];
    this.offline = status === 0;
  }
  /// Messages per field (`errors: [{field, message}]` in a 422), for showing next to inputs.
  fields() {
    const out = {};
    for (const e of this.problem.errors || []) {
      const name = e.field || e.name || e.pointer || '';
      out[name] = e.message || e.detail || '';
    }
    return out;
  }
}

let csrf = null;
export function setCsrf(token) { csrf = token; }

/// The concrete path of an operation.
export function path(op, params = {}) {
  const [, template] = OPERATIONS[op];
  return template.replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent(params[k]));
}

/// When the last answer came from the offline copy: the time it was kept (ms), else null.
export const offlineState = { at: null, listeners: [] };
function noteOffline(at) {
  if (offlineState.at === at) return;
  offlineState.at = at;
  for (const fn of offlineState.listeners) fn(at);
}

// An edit of the days asks first when it would remove something the rider made
// (`Prefer: handling=strict`, answered 428 with what it would remove); `withoutAsking`
// sends the same edit again once the rider agreed.
let askFirst = true;

/// Runs `fn` with its edits made without asking first (the rider has agreed).
export async function withoutAsking(fn) {
  askFirst = false;
  try { return await fn(); } finally { askFirst = true; }
}

/// Calls `op`; answers the parsed JSON (or null), `{body, etag}` when `withEtag`. Offline, a
/// write is refused before it is sent (nothing is lost: the page keeps what was typed), and
/// a read answers the copy the service worker kept (its time is noted in `offlineState`).
export async function call(op, params = {}, { body, query, version, form, withEtag, headers: extra } = {}) {
  const [method] = OPERATIONS[op];
  if (method !== 'GET' && navigator.onLine === false) throw new ApiError(0, null);
  let url = path(op, params);
  if (query) {
    const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== '' && v != null));
    if ([...q].length) url += `?${q}`;
  }
  const headers = { Accept: 'application/json', ...(extra || {}) };
  if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
  if (version != null) headers['If-Match'] = `"${version}"`;
  if (version != null && askFirst) headers.Prefer = 'handling=strict';
  let payload;
  if (form) payload = form;
  else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, { method, headers, body: payload, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, null);
  }
  if (method === 'GET' && op !== 'events') {
    const kept = res.headers.get('x-etappe-offline-at');
    noteOffline(kept ? Number(kept) : null);
  }
  const text = await res.text();
  let json = null;
  if (text) { try { json = JSON.parse(text); } catch { json = null; } }
  if (res.status === 503 && res.headers.get('x-etappe-offline-at') === '0') throw new ApiError(0, null);
  if (!res.ok) throw new ApiError(res.status, json);
  return withEtag ? { body: json, etag: res.headers.get('ETag') } : json;
}

/// Ends the session: a route of the login pages (not of the REST API, so not in OPERATIONS).
export async function logout() {
  await fetch('/auth/logout', { method: 'POST', headers: { 'X-CSRF-Token': csrf || '' }, credentials: 'same-origin' });
}

// The rider's words: dates as "1–3 Jun 2027", times in the browser's own zone, a session as
// "Chrome on Linux", and the API's refusals without its field names.
import { T } from './strings.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function parts(iso) {
  const [y, m, d] = String(iso).split('-').map(Number);
  return { y, m, d };
}

/// "1 Jun 2027"; "1–3 Jun 2027"; "30 Jun – 2 Jul 2027"; "30 Dec 2027 – 2 Jan 2028".
export function dateRange(start, end) {
  if (!start && !end) return '';
  if (!start || !end || start === end) {
    const p = parts(start || end);
    return `${p.d} ${MONTHS[p.m - 1]} ${p.y}`;
  }
  const a = parts(start), b = parts(end);
  if (a.y !== b.y) return `${a.d} ${MONTHS[a.m - 1]} ${a.y} – ${b.d} ${MONTHS[b.m - 1]} ${b.y}`;
  if (a.m !== b.m) return `${a.d} ${MONTHS[a.m - 1]} – ${b.d} ${MONTHS[b.m - 1]} ${b.y}`;
  return `${a.d}–${b.d} ${MONTHS[b.m - 1]} ${b.y}`;
}

/// A day's date, "Tue 1 Jun".
export function dayDate(iso) {
  if (!iso) return '';
  const p = parts(iso);
  const wd = new Date(Date.UTC(p.y, p.m - 1, p.d)).toLocaleDateString('en-GB', { weekday: 'short', timeZone: 'UTC' });
  return `${wd} ${p.d} ${MONTHS[p.m - 1]}`;
}

/// A moment in the browser's zone: "4 Dec 2026, 21:05".
export function localTime(at) {
  if (at == null || at === '') return '';
  const d = typeof at === 'number' ? new Date(at) : new Date(at);
  if (Number.isNaN(d.getTime())) return String(at);
  return d.toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/// A session's browser and system from its user-agent string: "Chrome on Linux".
export function browserName(ua) {
  if (!ua) return T.unknownBrowser;
  const browser = /Edg\//.test(ua) ? 'Edge' : /OPR\//.test(ua) ? 'Opera' : /Firefox\//.test(ua) ? 'Firefox'
    : /(Chrome|Chromium|HeadlessChrome)\//.test(ua) ? 'Chrome' : /Safari\//.test(ua) ? 'Safari'
      : /curl\//i.test(ua) ? 'curl' : null;
  const os = /Android/.test(ua) ? 'Android' : /iPhone|iPad|iOS/.test(ua) ? 'iOS' : /Windows/.test(ua) ? 'Windows'
    : /Mac OS X|Macintosh/.test(ua) ? 'macOS' : /CrOS/.test(ua) ? 'ChromeOS' : /Linux/.test(ua) ? 'Linux' : null;
  if (browser && os) return `${browser} on ${os}`;
  return browser || os || T.unknownBrowser;
}

/// The API's field names as the rider knows them.
const FIELD_WORDS = {
  sourceUrl: 'The route link', maxDistancePerDay: 'The daily maximum', averageSpeed: 'The average speed',
  fatigueFactor: 'The fatigue factor', elevationPenalty: 'The climbing penalty', departureHour: 'The departure hour',
  startDate: 'The first day', endDate: 'The last day', title: 'The title', ebikeMode: 'E-bike',
  enabledAccommodationTypes: 'The places to sleep', nights: 'Ending each day at a place to sleep', label: 'The name',
  distance: 'The km', toIndex: 'The position', lat: 'The latitude', lon: 'The longitude', name: 'The name',
  version: 'The version', file: 'The file', 'plan.from': 'From', 'plan.to': 'To', 'plan.via': 'Via', radiusKm: 'The radius',
  waypointLat: 'The latitude', waypointLon: 'The longitude',
};
const FIELD_RE = new RegExp(`\\b(${Object.keys(FIELD_WORDS).map((k) => k.replace('.', '\\.')).join('|')})\\b`, 'g');

/// A sentence of the API with its field names in the rider's words.
export function reword(text) {
  if (!text) return '';
  let out = String(text)
    .replace(/^(Something went wrong: )?invalid value\(s\)[:.]?\s*/i, '')
    .replace(/\/([a-zA-Z]+)/g, '$1')
    .replace(/\bmust be an https link\b/, 'must be a web address starting with https://');
  out = out.replace(FIELD_RE, (_, k) => FIELD_WORDS[k]);
  out = out.replace(/^The (\w)/, 'The $1').replace(/(^|\. )([a-z])/g, (_, a, b) => a + b.toUpperCase());
  return out;
}

/// What a refusal says to the rider, in one sentence or two, never a field name.
export function plain(err) {
  if (!err) return T.somethingWrong;
  if (err.offline) return T.offlineWrite;
  if (err.conflict) return T.conflict;
  const p = err.problem || {};
  const fields = (p.errors || []).map((e) => reword(e.message || e.detail || '')).filter(Boolean);
  if (fields.length) return fields.join(' ');
  if (err.status === 401) return T.loggedOut;
  if (err.status === 423) return T.locked;
  if (err.status === 429) return T.tooFast;
  if (err.status >= 500) return T.serverTrouble;
  const said = reword(p.detail || p.title || '');
  return said || T.somethingWrong;
}

// The map: Leaflet with its Canvas renderer, each day's ridden pieces as lines (a break in
// the route is never drawn as road), day colours that stay apart on a 30-day trip, start and
// finish, each day's end with its number, nights with their names, rest days at their place,
// places along the way and beds as pins that a toggle hides. Tiles come from the server's
// ETAPPE_TILE_URL (attribution shown); with none, or offline, the route still draws on the
// plain background. `/route` already simplifies the lines for a map.
import { T } from './strings.js';

/// The colour of day `i` (0-based): Okabe–Ito first, then hues a golden angle apart, with
/// two lightnesses, so Day 1 and Day 9 (or Day 21) never look alike.
const BASE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7a5c00'];
export function colour(i) {
  if (i < BASE.length) return BASE[i];
  const hue = Math.round((i * 137.508) % 360);
  const light = i % 2 ? 38 : 30;
  return `hsl(${hue}, 80%, ${light}%)`;
}

function icon(L, cls, text, label) {
  const el = document.createElement('span');
  el.className = `pin ${cls}`;
  el.textContent = text;
  el.setAttribute('aria-hidden', 'true');
  return L.divIcon({ html: el, className: 'pin-box', iconSize: null, iconAnchor: [0, 0], tooltipAnchor: [8, 0], title: label });
}

const FOUND_PIN = { water: ['water', '≈'], resupply: ['food', 'F'], bike_shop: ['bike', 'B'], railway_station: ['station', 'T'] };

/// Draws `lines` (GET /route) and `stages` into `el`; answers the map's handle.
export function drawMap(el, lines, stages) {
  const L = window.L;
  if (!L) return null;
  const map = L.map(el, { preferCanvas: true, zoomSnap: 0.25, keyboard: true });
  const tiles = document.body.dataset.tiles;
  if (tiles) {
    L.tileLayer(tiles, {
      maxZoom: 18,
      attribution: '© <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors',
    }).addTo(map);
  }
  const renderer = L.canvas({ padding: 0.3 });
  const byStage = new Map();
  const riding = lines.days.filter((d) => !d.isRestDay);
  // The view first: Leaflet draws a layer against the view it is added to.
  const all = [];
  for (const day of riding) for (const piece of day.pieces && day.pieces.length ? day.pieces : [day.points]) all.push(...piece);
  const ends = stages.map((s) => [s.endPoint.lat, s.endPoint.lon]);
  if (all.length) map.fitBounds(all, { padding: [16, 16] });
  else if (ends.length) map.setView(ends[0], 12);
  else map.setView([47, 8], 5);
  let drawn = 0;
  lines.days.forEach((day, i) => {
    if (day.isRestDay) return;
    const pieces = (day.pieces && day.pieces.length ? day.pieces : (day.points.length ? [day.points] : []))
      .filter((p) => p.length > 1);
    if (!pieces.length) return;
    const group = L.featureGroup();
    for (const piece of pieces) {
      L.polyline(piece, { color: '#fff', weight: 7, opacity: 0.9, renderer, interactive: false }).addTo(group);
      L.polyline(piece, { color: colour(i), weight: 4, renderer }).bindTooltip(T.day(day.dayNumber)).addTo(group);
    }
    group.addTo(map);
    byStage.set(day.stageId, group);
    drawn += pieces.length;
  });
  // How many ridden pieces are drawn (a break in the route is never drawn as a line).
  el.dataset.pieces = String(drawn);
  const extras = { found: L.layerGroup().addTo(map), beds: L.layerGroup().addTo(map) };
  const points = new Map();
  // Start and finish.
  const firstRiding = stages.find((s) => !s.isRestDay);
  const lastRiding = stages.slice().reverse().find((s) => !s.isRestDay);
  if (firstRiding) L.marker([firstRiding.startPoint.lat, firstRiding.startPoint.lon], { icon: icon(L, 'start', 'S', T.start), keyboard: false })
    .bindTooltip(`${T.start}${firstRiding.startLabel ? `: ${firstRiding.startLabel}` : ''}`).addTo(map);
  for (const stage of stages) {
    const end = [stage.endPoint.lat, stage.endPoint.lon];
    points.set(stage.stageId, end);
    const sleep = stage.selectedAccommodation;
    const finish = stage === lastRiding;
    const name = stage.isRestDay ? T.restDayAt(stage.endLabel) : finish ? `${T.finish}${stage.endLabel ? `: ${stage.endLabel}` : ''}`
      : T.endOfDay(stage.dayNumber, stage.endLabel);
    const tip = [name, sleep ? T.nightAt(sleep.name || T.accommodationType[sleep.type] || sleep.type) : null].filter(Boolean).join(' · ');
    const marker = L.marker(end, {
      icon: icon(L, stage.isRestDay ? 'rest' : finish ? 'finish' : 'end', stage.isRestDay ? 'R' : finish ? 'F' : String(stage.dayNumber), tip),
      keyboard: false, zIndexOffset: stage.isRestDay ? 200 : 0,
    }).bindTooltip(tip);
    marker.addTo(map);
    if (sleep && sleep.lat != null) {
      L.circleMarker([sleep.lat, sleep.lon], { radius: 7, color: '#1f2328', fillColor: '#ffd33d', fillOpacity: 1, weight: 2, renderer })
        .bindTooltip(T.nightAt(sleep.name || T.accommodationType[sleep.type] || sleep.type)).addTo(map);
    }
    if ((stage.alerts || []).some((a) => a.severity === 'critical')) {
      L.circleMarker(end, { radius: 13, color: '#b3261e', fill: false, weight: 2, renderer, interactive: false }).addTo(map);
    }
    for (const f of stage.found || []) {
      const pin = FOUND_PIN[f.category];
      if (!pin || f.lat == null) continue;
      L.circleMarker([f.lat, f.lon], { radius: 4, color: '#1f2328', weight: 1, fillColor: pin[0] === 'water' ? '#56B4E9' : pin[0] === 'food' ? '#E69F00' : pin[0] === 'bike' ? '#009E73' : '#CC79A7', fillOpacity: 1, renderer })
        .bindTooltip(`${T.found[f.category]}${f.name ? `: ${f.name}` : ''} (km ${f.km})`).addTo(extras.found);
    }
    const beds = [...(stage.accommodations || []), ...((stage.night && stage.night.passedOver) || [])];
    const seen = new Set();
    for (const a of beds) {
      const key = `${a.lat},${a.lon}`;
      if (a.lat == null || seen.has(key) || (sleep && sleep.lat === a.lat && sleep.lon === a.lon)) continue;
      seen.add(key);
      L.circleMarker([a.lat, a.lon], { radius: 5, color: '#1f2328', weight: 1, fillColor: '#ffffff', fillOpacity: 1, renderer })
        .bindTooltip(`${a.name || T.accommodationType[a.type] || a.type} (${T.accommodationType[a.type] || a.type}) · ${T.day(stage.dayNumber)}`).addTo(extras.beds);
    }
  }
  // The zoom, for the browser test (a rest day must not zoom into a single point).
  const zoomed = () => { el.dataset.zoom = String(map.getZoom()); };
  map.on('zoomend', zoomed);
  zoomed();
  let onClick = null;
  let tapped = null;
  map.on('click', (e) => { if (onClick) onClick(e.latlng); });
  return {
    map,
    /// What a click on the map does (a detour through the point clicked), or null.
    onClick(fn) { onClick = fn; },
    /// Shows (or, with null, removes) the marker of the point tapped.
    mark(at, label) {
      if (tapped) { tapped.remove(); tapped = null; }
      if (!at) return;
      tapped = L.marker(at, { icon: icon(L, 'tap', '+', label), keyboard: false }).bindTooltip(label, { permanent: true, direction: 'top' }).addTo(map);
    },
    /// Shows one layer of pins or hides it (`found`, `beds`).
    toggle(name, on) { if (on) extras[name].addTo(map); else extras[name].remove(); },
    /// A riding day fills the view; a rest day shows its place.
    focus(stageId) {
      const line = byStage.get(stageId);
      if (line) { map.fitBounds(line.getBounds(), { padding: [16, 16], animate: false }); return; }
      const at = points.get(stageId);
      if (at) map.setView(at, 13, { animate: false });
    },
    /// The riding day nearest to a point and the km along it, measured to the point's foot
    /// on the nearest stretch of line (not its nearest vertex: a simplified line keeps a
    /// vertex only where it bends, so on a straight kilometre the vertex can lie far off
    /// the point the rider meant, and "Near km" would say so).
    nearest(at) {
      const tap = map.latLngToLayerPoint(at);
      let best = null;
      for (const day of riding) {
        let km = 0;
        for (const piece of day.pieces && day.pieces.length ? day.pieces : [day.points]) {
          for (let i = 0; i < piece.length; i += 1) {
            const a = L.latLng(piece[i]);
            let foot = a, along = 0;
            if (i > 0) {
              const from = L.latLng(piece[i - 1]);
              const point = L.LineUtil.closestPointOnSegment(tap, map.latLngToLayerPoint(from), map.latLngToLayerPoint(a));
              foot = map.layerPointToLatLng(point);
              along = map.distance(from, foot) / 1000;
            }
            const d = map.distance(foot, at);
            if (!best || d < best.d) best = { d, stageId: day.stageId, dayNumber: day.dayNumber, km: km + along };
            if (i > 0) km += map.distance(piece[i - 1], piece[i]) / 1000;
          }
        }
      }
      return best;
    },
  };
}

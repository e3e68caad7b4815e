// The map: Leaflet with its Canvas renderer, one polyline per day in a repeating palette,
// day boundaries and nights as circle markers, alerts as red rings. Tiles come from the
// server's ETAPPE_TILE_URL (attribution shown); with none, or offline, the route still
// draws on the plain background. `/route` already simplifies the lines for a map.
import { T } from './strings.js';

export const PALETTE = ['#1f6feb', '#d1242f', '#1a7f37', '#8250df', '#bf5700', '#0a7d8c', '#9a6700', '#cf222e'];

export function colour(i) { return PALETTE[i % PALETTE.length]; }

/// Draws `lines` (GET /route) and `stages` into `el`; answers {map, focus(stageId)}.
export function drawMap(el, lines, stages) {
  const L = window.L;
  if (!L) return null;
  const map = L.map(el, { preferCanvas: true, zoomSnap: 0.25 });
  const tiles = document.body.dataset.tiles;
  if (tiles) {
    L.tileLayer(tiles, {
      maxZoom: 18,
      attribution: '© <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors',
    }).addTo(map);
  }
  const renderer = L.canvas({ padding: 0.3 });
  const byStage = new Map();
  const all = [];
  lines.days.forEach((day, i) => {
    if (!day.points.length) return;
    const line = L.polyline(day.points, { color: colour(i), weight: 4, renderer });
    line.bindTooltip(T.day(day.dayNumber));
    line.addTo(map);
    byStage.set(day.stageId, line);
    all.push(...day.points);
  });
  for (const stage of stages) {
    const end = [stage.endPoint.lat, stage.endPoint.lon];
    const night = L.circleMarker(end, { radius: 6, color: '#222', fillColor: '#fff', fillOpacity: 1, weight: 2, renderer });
    const names = [T.day(stage.dayNumber), stage.endLabel].filter(Boolean).join(': ');
    night.bindTooltip(names);
    night.addTo(map);
    if ((stage.alerts || []).some((a) => a.severity !== 'nudge')) {
      L.circleMarker(end, { radius: 11, color: '#d1242f', fill: false, weight: 2, renderer }).addTo(map);
    }
  }
  if (all.length) map.fitBounds(all, { padding: [16, 16] });
  else map.setView([47, 8], 5);
  let onClick = null;
  map.on('click', (e) => { if (onClick) onClick(e.latlng); });
  return {
    map,
    /// What a click on the map does (a detour through the point clicked), or null.
    onClick(fn) { onClick = fn; },
    focus(stageId) {
      const line = byStage.get(stageId);
      if (line) map.fitBounds(line.getBounds(), { padding: [16, 16] });
    },
  };
}

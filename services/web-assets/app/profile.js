// The elevation profile: uPlot over the points of GET /route, km on x, metres on y, one
// series per day (so the days keep the map's colours); hovering shows km, altitude and the
// gradient of the segment under the cursor.
import { T } from './strings.js';
import { colour } from './map.js';

function haversine(a, b) {
  const r = 6371e3, rad = Math.PI / 180;
  const dLat = (b[0] - a[0]) * rad, dLon = (b[1] - a[1]) * rad;
  const s = Math.sin(dLat / 2) ** 2 + Math.cos(a[0] * rad) * Math.cos(b[0] * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * r * Math.asin(Math.sqrt(s));
}

/// The profile's columns: xs (km), one altitude column per day (null outside it).
export function columns(days) {
  const xs = [], ys = days.map(() => []), owner = [];
  let km = 0, prev = null;
  days.forEach((day, d) => {
    day.points.forEach((p, i) => {
      if (prev) km += haversine(prev, p) / 1000;
      prev = p;
      xs.push(km);
      owner.push(d);
      days.forEach((_, e) => ys[e].push(e === d ? (day.elevations ? day.elevations[i] : null) : null));
    });
  });
  return { xs, ys, owner };
}

/// Draws the profile of `days` into `el` and the hover read-out into `readout`.
export function drawProfile(el, days, readout) {
  const uPlot = window.uPlot;
  if (!uPlot || !days.length) return null;
  const { xs, ys, owner } = columns(days);
  const width = Math.max(280, el.clientWidth || 600);
  const series = [{ label: T.km0 }].concat(days.map((d, i) => ({
    label: T.day(d.dayNumber), stroke: colour(i), width: 2, fill: colour(i) + '22', spanGaps: false,
  })));
  const plot = new uPlot({
    width, height: 180, legend: { show: false }, cursor: { y: false },
    scales: { x: { time: false } },
    axes: [{ label: 'km', stroke: 'currentColor' }, { label: 'm', stroke: 'currentColor' }],
    series,
    hooks: {
      setCursor: [(u) => {
        const i = u.cursor.idx;
        if (i == null || !readout) return;
        const alt = ys[owner[i]][i];
        let grad = 0;
        if (i > 0 && xs[i] > xs[i - 1] && alt != null && ys[owner[i - 1]][i - 1] != null) {
          grad = ((alt - ys[owner[i - 1]][i - 1]) / ((xs[i] - xs[i - 1]) * 1000)) * 100;
        }
        readout.textContent = `${xs[i].toFixed(1)} ${T.km0} · ${T.alt} ${alt == null ? '–' : Math.round(alt)} m · ${T.gradient} ${grad.toFixed(1)} %`;
      }],
    },
  }, [xs, ...ys], el);
  return plot;
}

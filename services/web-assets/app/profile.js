// The elevation profile: uPlot over the samples of GET /route (`profile` of each day), km on x, metres on y, one
// series per day (so the days keep the map's colours); hovering shows km, altitude and the
// gradient of the segment under the cursor.
import { T } from './strings.js';
import { colour } from './map.js';

/// The profile's columns: xs (km from the first day's start), one altitude column per day
/// (null outside it), and which day owns each x. A day's offset is its ridden length
/// (`lengths`, by stage id) when known, so the axis ends where the trip does.
export function columns(days, lengths = {}) {
  const xs = [], ys = days.map(() => []), owner = [];
  let offset = 0;
  days.forEach((day, d) => {
    const samples = day.profile || [];
    for (const [km, m] of samples) {
      xs.push(offset + km);
      owner.push(d);
      days.forEach((_, e) => ys[e].push(e === d ? m : null));
    }
    offset += lengths[day.stageId] ?? (samples.length ? samples[samples.length - 1][0] : 0);
  });
  return { xs, ys, owner, total: offset };
}

/// GraphHopper's six slope classes (over 10 %, 6–10, 3–6, −6…3, −10…−6, under −10 %).
export const SLOPE_COLOURS = ['#a40e26', '#d55e00', '#e69f00', '#5e9c36', '#4393c3', '#2166ac'];
export function slopeClass(g) {
  return g > 10 ? 0 : g > 6 ? 1 : g > 3 ? 2 : g >= -6 ? 3 : g >= -10 ? 4 : 5;
}
const MARK_COLOURS = { water: '#56B4E9', resupply: '#E69F00', night: '#ffd33d' };

/// Draws the profile of `days` into `el` and the hover read-out into `readout`. With
/// `gradient`, the line is coloured by slope class; `marks` ({km, kind}: water, resupply,
/// night) are pinned along the top.
export function drawProfile(el, days, readout, onPick, lengths = {}, { gradient = false, marks = [] } = {}) {
  const uPlot = window.uPlot;
  days = days.filter((d) => (d.profile || []).length > 1);
  if (!uPlot || !days.length) return null;
  const { xs, ys, owner, total } = columns(days, lengths);
  const width = Math.max(280, el.clientWidth || 600);
  const series = [{ label: T.km0 }].concat(days.map((d, i) => ({
    label: T.day(d.dayNumber), stroke: colour(d.dayNumber - 1), width: 2, spanGaps: false,
  })));
  const plot = new uPlot({
    width, height: 180, legend: { show: false }, cursor: { y: false },
    scales: {
      x: { time: false, range: () => [0, Math.max(total, xs[xs.length - 1] || 0)] },
      // At least 200 m from bottom to top, so a gentle day is not drawn as a mountain.
      y: { range: (u, lo, hi) => { const mid = (lo + hi) / 2, half = Math.max(100, (hi - lo) / 2 + 10); return [Math.floor(mid - half), Math.ceil(mid + half)]; } },
    },
    axes: [{ label: 'km', stroke: 'currentColor' }, { label: 'm', stroke: 'currentColor' }],
    series,
    hooks: {
      draw: [(u) => {
        const ctx = u.ctx;
        ctx.save();
        if (gradient) {
          ctx.lineWidth = 3 * devicePixelRatio;
          for (let i = 1; i < xs.length; i += 1) {
            const a = ys[owner[i - 1]][i - 1], b = ys[owner[i]][i];
            if (a == null || b == null || owner[i] !== owner[i - 1] || xs[i] <= xs[i - 1]) continue;
            ctx.strokeStyle = SLOPE_COLOURS[slopeClass(((b - a) / ((xs[i] - xs[i - 1]) * 1000)) * 100)];
            ctx.beginPath();
            ctx.moveTo(u.valToPos(xs[i - 1], 'x', true), u.valToPos(a, 'y', true));
            ctx.lineTo(u.valToPos(xs[i], 'x', true), u.valToPos(b, 'y', true));
            ctx.stroke();
          }
        }
        for (const m of marks) {
          ctx.fillStyle = MARK_COLOURS[m.kind] || '#ffffff';
          ctx.strokeStyle = '#1f2328';
          ctx.lineWidth = devicePixelRatio;
          ctx.beginPath();
          ctx.arc(u.valToPos(m.km, 'x', true), u.bbox.top + 6 * devicePixelRatio, 4 * devicePixelRatio, 0, 2 * Math.PI);
          ctx.fill();
          ctx.stroke();
        }
        ctx.restore();
      }],
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
  // A click picks the km under the cursor (moving a day's end on the profile).
  if (onPick) plot.over.addEventListener('click', () => { const i = plot.cursor.idx; if (i != null) onPick(xs[i]); });
  // Follows the width of its box (a phone turned, a window resized).
  new ResizeObserver(() => {
    if (el.clientWidth && Math.abs(el.clientWidth - plot.width) > 4) plot.setSize({ width: el.clientWidth, height: 180 });
  }).observe(el);
  return plot;
}

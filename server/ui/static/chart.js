// A hand-drawn SVG line chart of matches over time by action (no chart library: nothing to download).
//
// Readable at a glance: every action has its own colour AND its own marker shape and line style (deny a
// solid line with squares, warn a dashed line with triangles...), so deny and warn stay apart without
// colour; the legend's buttons show and hide series; hovering or focusing a time bucket shows its exact
// figures; and, given opts.link, every bucket with evaluations is a link to the events behind it.
import { h } from './dom.js';

export const ACTION_COLORS = { deny: '#b42318', steer: '#b54708', warn: '#8a6d00', allow: '#067647', log: '#475467' };
// SHAPES: the marker of each action; DASHES: its line style.
export const SHAPES = { deny: 'square', steer: 'diamond', warn: 'triangle', allow: 'circle', log: 'cross' };
const DASHES = { deny: '', steer: '6 3', warn: '3 3', allow: '', log: '1 3' };
const SVGNS = 'http://www.w3.org/2000/svg';
const LONG_RANGES = new Set(['24h', '7d', '30d']);

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

// marker draws the shape of an action centred on (x, y).
export function marker(action, x, y, r, extra) {
  const c = ACTION_COLORS[action];
  const a = Object.assign({ fill: c, stroke: c }, extra || {});
  switch (SHAPES[action]) {
    case 'square': return s('rect', Object.assign({ x: x - r, y: y - r, width: 2 * r, height: 2 * r }, a));
    case 'diamond': return s('path', Object.assign({ d: `M${x},${y - r * 1.3}L${x + r * 1.3},${y}L${x},${y + r * 1.3}L${x - r * 1.3},${y}Z` }, a));
    case 'triangle': return s('path', Object.assign({ d: `M${x},${y - r * 1.3}L${x + r * 1.2},${y + r}L${x - r * 1.2},${y + r}Z` }, a));
    case 'cross': return s('path', Object.assign({ d: `M${x - r},${y - r}L${x + r},${y + r}M${x + r},${y - r}L${x - r},${y + r}`, fill: 'none', 'stroke-width': 2 }, a));
    default: return s('circle', Object.assign({ cx: x, cy: y, r }, a));
  }
}

// legendSwatch is a small SVG of an action's line and marker, for legends and tables.
export function legendSwatch(action) {
  const sv = s('svg', { width: 26, height: 12, viewBox: '0 0 26 12', 'aria-hidden': 'true', class: 'swatch' },
    s('line', { x1: 1, x2: 25, y1: 6, y2: 6, stroke: ACTION_COLORS[action], 'stroke-width': 2, 'stroke-dasharray': DASHES[action] || null }),
    marker(action, 13, 6, 3.5));
  return sv;
}

export function timeLabel(d, range) {
  return LONG_RANGES.has(range)
    ? d.toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
    : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: range === '1m' || range === '5m' ? '2-digit' : undefined });
}

// bucketWidth is the width in ms of the buckets of a time series (0 when it cannot be told).
export function bucketWidth(points) {
  return points.length > 1 ? new Date(points[1].timestamp) - new Date(points[0].timestamp) : 0;
}

// matchesChart draws the matches of each action per time bucket of series (the stats timeseries).
// width is the pixel width the chart will get, so that its text keeps a readable size on phones.
// opts.link(start, end, action?) returns the events URL of a time interval (and action), or null.
export function matchesChart(series, range, width, opts) {
  opts = opts || {};
  const W = Math.round(Math.max(300, Math.min(1200, width || 720))), H = W < 560 ? 200 : 240, L = 40, R = 12, T = 10, B = 28;
  const points = series || [];
  const actions = Object.keys(ACTION_COLORS);
  let peak = 0;
  for (const p of points) for (const a of actions) peak = Math.max(peak, (p.action_counts || {})[a] || 0);
  // Round the scale up to a multiple of steps with whole-number ticks.
  const steps = Math.max(1, Math.min(4, peak));
  const max = Math.max(1, Math.ceil(peak / steps) * steps);
  const x = (i) => L + (points.length <= 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (points.length - 1));
  const y = (v) => T + (H - T - B) * (1 - v / max);
  const total = points.reduce((n, p) => n + (p.match_count || 0), 0);
  const titleId = 'chart-title-' + (opts.id || 'main');
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'group', 'aria-labelledby': titleId, preserveAspectRatio: 'xMidYMid meet' },
    s('title', { id: titleId }, `Matches over time by action: ${total} match${total === 1 ? '' : 'es'} in ${points.length} time bucket${points.length === 1 ? '' : 's'}`));
  for (let i = 0; i <= steps; i++) {
    const v = (max * i) / steps;
    svg.append(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: '#e5e7eb' }));
    svg.append(s('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 12, fill: '#5b6575' }, String(v)));
  }
  if (points.length) {
    const first = new Date(points[0].timestamp), last = new Date(points[points.length - 1].timestamp);
    svg.append(s('text', { x: L, y: H - 8, 'font-size': 12, fill: '#5b6575' }, timeLabel(first, range)));
    if (points.length > 1) svg.append(s('text', { x: W - R, y: H - 8, 'font-size': 12, fill: '#5b6575', 'text-anchor': 'end' }, timeLabel(last, range)));
  } else {
    svg.append(s('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'font-size': 14, fill: '#5b6575' }, 'No evaluations in this range'));
  }
  for (const a of actions) {
    const vals = points.map((p) => (p.action_counts || {})[a] || 0);
    if (!vals.some(Boolean)) continue; // an action that never matched stays off the chart (and its legend says 0)
    const d = vals.map((v, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const g = s('g', { 'data-action': a });
    g.append(s('path', { d, fill: 'none', stroke: ACTION_COLORS[a], 'stroke-width': 2, 'stroke-linejoin': 'round', 'stroke-dasharray': DASHES[a] || null }));
    // Markers on the buckets with matches, unless they would crowd into a band (then the line style
    // alone tells the series apart).
    if (vals.filter(Boolean).length <= W / 8) vals.forEach((v, i) => { if (v) g.append(marker(a, +x(i).toFixed(1), +y(v).toFixed(1), 3.5)); });
    svg.append(g);
  }

  // Hover and focus targets, one per bucket: the tooltip shows its exact figures; with a link, the bucket
  // (when it holds evaluations) leads to its events.
  const tip = h('div', { class: 'chart-tip', role: 'status', hidden: true });
  const width1 = bucketWidth(points);
  const col = points.length > 1 ? (W - L - R) / (points.length - 1) : (W - L - R);
  const cursor = s('line', { y1: T, y2: H - B, stroke: '#98a2b3', 'stroke-dasharray': '2 2', visibility: 'hidden' });
  svg.append(cursor);
  points.forEach((p, i) => {
    const start = new Date(p.timestamp), end = new Date(start.getTime() + width1);
    const counts = p.action_counts || {};
    const parts = actions.filter(a => counts[a]).map(a => `${counts[a]} ${a}`);
    const label = `${timeLabel(start, range)}: ${p.execution_count || 0} evaluation${p.execution_count === 1 ? '' : 's'}` +
      (parts.length ? ', ' + parts.join(', ') : '') + (p.error_count ? `, ${p.error_count} error${p.error_count === 1 ? '' : 's'}` : '');
    const rect = s('rect', { x: Math.max(L, x(i) - col / 2), y: T, width: Math.min(col, W - R - Math.max(L, x(i) - col / 2)), height: H - T - B, fill: 'transparent', class: 'hit' });
    const href = p.execution_count && opts.link ? opts.link(start, end) : null;
    const target = href ? s('a', { href, 'aria-label': label + ' (show these events)', class: 'bucket' }, rect) : rect;
    const show = () => {
      cursor.setAttribute('x1', x(i)); cursor.setAttribute('x2', x(i)); cursor.setAttribute('visibility', 'visible');
      tip.replaceChildren(h('div', {}, h('strong', {}, timeLabel(start, range)),
        h('div', {}, `${p.execution_count || 0} evaluations, ${p.match_count || 0} matches`),
        actions.filter(a => counts[a]).map(a => h('div', {}, legendSwatch(a), ` ${a}: ${counts[a]}`)),
        p.error_count ? h('div', {}, `errors: ${p.error_count}`) : null,
        href ? h('div', { class: 'muted small' }, 'Click to see these events') : null));
      tip.hidden = false;
      tip.style.left = `${(100 * x(i)) / W}%`;
      tip.classList.toggle('flip', x(i) > W * 0.6);
    };
    const hide = () => { tip.hidden = true; cursor.setAttribute('visibility', 'hidden'); };
    target.addEventListener('mouseenter', show);
    target.addEventListener('focus', show);
    target.addEventListener('mouseleave', hide);
    target.addEventListener('blur', hide);
    target.dataset.bucket = p.timestamp;
    svg.append(target);
  });

  const sums = {};
  for (const a of actions) sums[a] = points.reduce((n, p) => n + ((p.action_counts || {})[a] || 0), 0);
  const legend = h('div', { class: 'legend', role: 'group', 'aria-label': 'Series (press to show or hide)' }, actions.map(a => {
    const b = h('button', { type: 'button', class: 'series', 'aria-pressed': 'true', dataset: { action: a }, id: (opts.id || 'main') + '-series-' + a,
      onclick: () => {
        const on = b.getAttribute('aria-pressed') !== 'true';
        b.setAttribute('aria-pressed', String(on));
        const g = svg.querySelector(`g[data-action="${a}"]`);
        if (g) g.style.display = on ? '' : 'none';
      } }, legendSwatch(a), `${a} (${sums[a].toLocaleString()})`);
    return b;
  }));
  return h('figure', { class: 'chart' }, h('div', { class: 'chart-box' }, svg, tip), h('figcaption', {}, legend));
}

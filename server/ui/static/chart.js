// A hand-drawn SVG line chart of matches over time by action (no chart library: nothing to download).
import { h } from './dom.js';

export const ACTION_COLORS = { deny: '#b42318', steer: '#b54708', warn: '#8a6d00', allow: '#067647', log: '#475467' };
const SVGNS = 'http://www.w3.org/2000/svg';
const LONG_RANGES = new Set(['24h', '7d', '30d']);

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

function label(d, range) {
  return LONG_RANGES.has(range)
    ? d.toLocaleString([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
    : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: range === '1m' || range === '5m' ? '2-digit' : undefined });
}

// matchesChart draws the matches of each action per time bucket of series (the stats timeseries).
// width is the pixel width the chart will get, so that its text keeps a readable size on phones.
export function matchesChart(series, range, width) {
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
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': 'chart-title', preserveAspectRatio: 'xMidYMid meet' },
    s('title', { id: 'chart-title' }, `Matches over time by action: ${total} match${total === 1 ? '' : 'es'} in ${points.length} time bucket${points.length === 1 ? '' : 's'}`));
  for (let i = 0; i <= steps; i++) {
    const v = (max * i) / steps;
    svg.append(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: '#e5e7eb' }));
    svg.append(s('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 12, fill: '#5b6575' }, String(v)));
  }
  if (points.length) {
    const first = new Date(points[0].timestamp), last = new Date(points[points.length - 1].timestamp);
    svg.append(s('text', { x: L, y: H - 8, 'font-size': 12, fill: '#5b6575' }, label(first, range)));
    if (points.length > 1) svg.append(s('text', { x: W - R, y: H - 8, 'font-size': 12, fill: '#5b6575', 'text-anchor': 'end' }, label(last, range)));
  } else {
    svg.append(s('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'font-size': 14, fill: '#5b6575' }, 'No evaluations in this range'));
  }
  for (const a of actions) {
    const vals = points.map((p) => (p.action_counts || {})[a] || 0);
    if (!vals.some(Boolean)) continue; // an action that never matched stays off the chart (and its legend says 0)
    const d = vals.map((v, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const g = s('g', { 'data-action': a });
    g.append(s('path', { d, fill: 'none', stroke: ACTION_COLORS[a], 'stroke-width': 2, 'stroke-linejoin': 'round' }));
    if (points.length <= W / 12) {
      vals.forEach((v, i) => { if (v) g.append(s('circle', { cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 3, fill: ACTION_COLORS[a] }, s('title', {}, `${a}: ${v}`))); });
    }
    svg.append(g);
  }
  const sums = {};
  for (const a of actions) sums[a] = points.reduce((n, p) => n + ((p.action_counts || {})[a] || 0), 0);
  const legend = h('div', { class: 'legend' }, actions.map(a => {
    const el = h('span', { dataset: { action: a } }, `${a} (${sums[a]})`);
    el.style.setProperty('--c', ACTION_COLORS[a]);
    return el;
  }));
  return h('figure', { class: 'chart' }, svg, h('figcaption', {}, legend));
}

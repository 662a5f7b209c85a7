// A hand-drawn SVG line chart of matches over time by action (no chart library: nothing to download).
import { h } from './dom.js';

export const ACTION_COLORS = { deny: '#b42318', steer: '#b54708', warn: '#a16207', allow: '#067647', log: '#475467' };
const SVGNS = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

export function matchesChart(series) {
  const W = 720, H = 220, L = 40, R = 10, T = 10, B = 28;
  const points = series || [];
  const actions = Object.keys(ACTION_COLORS);
  let max = 1;
  for (const p of points) for (const a of actions) max = Math.max(max, (p.action_counts || {})[a] || 0);
  const x = (i) => L + (points.length <= 1 ? 0 : (i * (W - L - R)) / (points.length - 1));
  const y = (v) => T + (H - T - B) * (1 - v / max);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Matches over time by action' });
  for (let i = 0; i <= 4; i++) {
    const v = Math.round((max * i) / 4);
    svg.append(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: '#e5e7eb' }));
    svg.append(s('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#5b6575' }, String(v)));
  }
  if (points.length) {
    const first = new Date(points[0].timestamp), last = new Date(points[points.length - 1].timestamp);
    svg.append(s('text', { x: L, y: H - 8, 'font-size': 11, fill: '#5b6575' }, first.toLocaleTimeString()));
    svg.append(s('text', { x: W - R, y: H - 8, 'font-size': 11, fill: '#5b6575', 'text-anchor': 'end' }, last.toLocaleTimeString()));
  }
  for (const a of actions) {
    const d = points.map((p, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y((p.action_counts || {})[a] || 0).toFixed(1)}`).join(' ');
    if (d) svg.append(s('path', { d, fill: 'none', stroke: ACTION_COLORS[a], 'stroke-width': 2, 'data-action': a }));
  }
  const legend = h('div', { class: 'legend' }, actions.map(a => {
    const el = h('span', {}, a);
    el.style.setProperty('--c', ACTION_COLORS[a]);
    return el;
  }));
  return h('div', { class: 'chart' }, svg, legend);
}

// Pieces shared by the pages that show statistics (overview, agent, control): the time range picker,
// the figures above the fold, and links to the events behind a figure.
import { h } from './dom.js';
import { bucketWidth } from './chart.js';

export const RANGES = ['1m', '5m', '15m', '1h', '6h', '24h', '7d', '30d'];
const RANGE_MS = { '1m': 60e3, '5m': 300e3, '15m': 900e3, '1h': 3600e3, '6h': 6 * 3600e3, '24h': 24 * 3600e3, '7d': 7 * 86400e3, '30d': 30 * 86400e3 };

export function rangeSelect(id, value) {
  return h('select', { id }, RANGES.map(r => h('option', { value: r, selected: r === value }, r)));
}

// eventsHref is the events page filtered as f says: agent, controls (ids), actions, matched, from, to
// (Dates), errored, stage, step_type, trace.
export function eventsHref(f) {
  const u = new URLSearchParams();
  if (f.agent) u.set('agent', f.agent);
  if (f.controls && f.controls.length) u.set('control', f.controls.join(','));
  if (f.actions && f.actions.length) u.set('action', f.actions.join(','));
  if (f.matched !== undefined && f.matched !== null) u.set('matched', String(f.matched));
  if (f.errored) u.set('errored', 'true');
  if (f.shadow !== undefined && f.shadow !== null) u.set('shadow', String(f.shadow));
  if (f.stage) u.set('stage', f.stage);
  if (f.step_type) u.set('step_type', f.step_type);
  if (f.trace) u.set('trace', f.trace);
  if (f.from) u.set('from', f.from.toISOString());
  if (f.to) u.set('to', f.to.toISOString());
  const q = u.toString();
  return '#/events' + (q ? '?' + q : '');
}

// windowOf returns the interval the statistics cover: from the time series when there is one (its
// buckets are aligned as the server's window is), else the range back from now.
export function windowOf(series, range) {
  if (series && series.length) {
    const from = new Date(series[0].timestamp);
    const w = bucketWidth(series) || RANGE_MS[range];
    return { from, to: new Date(new Date(series[series.length - 1].timestamp).getTime() + w) };
  }
  const to = new Date();
  return { from: new Date(to.getTime() - RANGE_MS[range]), to };
}

export const n = (v) => Number(v || 0).toLocaleString();

// figures is the row of headline figures; each count is a link to its events (base holds the filters
// common to all of them, such as the agent, the control and the time window).
export function figures(t, base, extra) {
  const c = t.action_counts || {};
  // data-stat sits on the number itself (the tests read it).
  const link = (label, value, f, stat, cls) => h('a', { class: 'figure' + (cls ? ' ' + cls : ''), href: eventsHref(Object.assign({}, base, f)) },
    h('strong', { dataset: { stat } }, n(value)), h('span', {}, label));
  return h('div', { class: 'figures' },
    evaluationsFigure(link('evaluations', t.execution_count, {}, 'execution_count')),
    link('matches', t.match_count, { matched: true }, 'match_count'),
    link('denials', c.deny, { actions: ['deny'], matched: true }, 'deny', 'deny'),
    link('steers', c.steer, { actions: ['steer'], matched: true }, 'steer', 'steer'),
    link('warnings', c.warn, { actions: ['warn'], matched: true }, 'warn', 'warn'),
    link('errors', t.error_count, { errored: true }, 'error_count', 'error'),
    extra || null);
}

// evaluationsFigure says what the evaluations figure counts: control evaluations (one per control run on a
// request), not requests, which guard_evaluations_total at /metrics counts: the two differ by design.
function evaluationsFigure(a) {
  a.title = 'Control evaluations: one per control evaluated on a request. guard_evaluations_total (at /metrics) counts requests to POST /evaluation, so it is smaller when a request runs several controls.';
  a.setAttribute('aria-describedby', 'evaluations-note');
  a.append(h('span', { id: 'evaluations-note', class: 'sr-only' }, ' (control evaluations, not requests)'));
  return a;
}

// p95Figure shows the p95 evaluation time, saying what it was computed over.
export function p95Figure(t) {
  const has = t.p95_duration_ms !== undefined && t.p95_duration_ms !== null;
  return h('div', { class: 'figure', title: has ? `95th percentile of the newest ${n(t.p95_sample_size)} control evaluations of the range` : 'no durations in this range' },
    h('strong', { dataset: { stat: 'p95' } }, has ? fmtMS(t.p95_duration_ms) : '—'), h('span', {}, 'p95 time'));
}

export function fmtMS(ms) {
  if (ms >= 1000) return (ms / 1000).toFixed(2) + ' s';
  if (ms >= 10) return ms.toFixed(0) + ' ms';
  return ms.toFixed(ms >= 1 ? 1 : 3) + ' ms';
}

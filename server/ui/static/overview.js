// The overview, the dashboard's landing page: the whole fleet over a time range (GET /observability/stats
// without agent_name), with its figures above the fold, a time series, the top agents and controls by
// denials, the controls in error and the controls in shadow (what they would have done: never part of the
// figures). Every count leads to the events behind it.
import { h, table, errorBox } from './dom.js';
import { api, qs } from './api.js';
import { matchesChart } from './chart.js';
import { rangeSelect, eventsHref, windowOf, figures, p95Figure, n } from './statsview.js';
import { recentChanges } from './audit.js';

const TOP = 5;

export async function overviewView(el) {
  const range = rangeSelect('ov-range', '1h');
  const auto = h('input', { type: 'checkbox', id: 'ov-auto' });
  const body = h('div', { id: 'overview-body', 'aria-live': 'polite' });
  el.append(h('div', { class: 'page-head' }, h('h1', {}, 'Overview'),
    h('div', { class: 'actions toolbar' }, h('div', { class: 'field' }, h('label', { for: range.id }, 'Time range'), range),
      h('button', { type: 'button', id: 'ov-refresh', onclick: () => load() }, 'Refresh'),
      h('label', { class: 'inline', for: auto.id }, auto, 'Every 10 s'))),
  body, recentChanges('ov-changes', null, 10));
  let timer = null;
  auto.addEventListener('change', () => {
    clearInterval(timer);
    if (auto.checked) timer = setInterval(() => { if (!body.isConnected) { clearInterval(timer); return; } load(); }, 10000);
  });
  range.addEventListener('change', () => load());

  let seq = 0;
  async function load() {
    const mine = ++seq;
    body.setAttribute('aria-busy', 'true');
    let st;
    try {
      st = await api.get('/observability/stats' + qs({ time_range: range.value, include_timeseries: 'true', include_p95: 'true' }));
    } catch (e) {
      if (mine !== seq) return;
      body.replaceChildren(e.code === 'OBSERVABILITY_DISABLED'
        ? h('div', { class: 'notice' }, 'Observability is disabled on this server (OBSERVABILITY_ENABLED=false): no statistics are recorded.')
        : errorBox(e));
      body.setAttribute('aria-busy', 'false');
      return;
    }
    if (mine !== seq) return;
    const t = st.totals;
    const win = windowOf(t.timeseries, range.value);
    const base = { from: win.from, to: win.to };
    const link = (f, text) => h('a', { href: eventsHref(Object.assign({}, base, f)) }, text);

    const agents = (st.agents || []).slice().sort((a, b) => (b.action_counts.deny - a.action_counts.deny) || (b.execution_count - a.execution_count)).slice(0, TOP);
    const controls = (st.controls || []).slice().sort((a, b) => (b.action_counts.deny - a.action_counts.deny) || (b.match_count - a.match_count)).slice(0, TOP);
    const failing = (st.controls || []).filter(c => c.error_count > 0).sort((a, b) => b.error_count - a.error_count);
    const shadow = (st.shadow || []).slice().sort((a, b) => (b.action_counts.deny - a.action_counts.deny) || (b.execution_count - a.execution_count));
    const ctlName = (c) => h('a', { href: `#/controls/${c.control_id}/activity` }, c.control_name || ('#' + c.control_id));

    body.replaceChildren(
      h('section', { class: 'card above-fold', 'aria-labelledby': 'ov-figures' },
        h('h2', { id: 'ov-figures', class: 'sr-only' }, 'Figures'),
        figures(t, base, p95Figure(t)),
        h('div', { id: 'overview-chart' }, matchesChart(t.timeseries || [], range.value, body.clientWidth - 34, {
          id: 'ov', link: (from, to) => eventsHref({ from, to }) }))),
      h('div', { class: 'grid2' },
        h('section', { 'aria-labelledby': 'ov-agents' }, h('h2', { id: 'ov-agents' }, 'Top agents by denials'),
          h('div', { id: 'top-agents' }, table(['Agent', 'Denials', 'Evaluations', 'Errors'], agents.map(a => h('tr', {},
            h('td', {}, h('a', { href: '#/agents/' + encodeURIComponent(a.agent_name) }, a.agent_name)),
            h('td', {}, link({ agent: a.agent_name, actions: ['deny'], matched: true }, n(a.action_counts.deny))),
            h('td', {}, link({ agent: a.agent_name }, n(a.execution_count))),
            h('td', {}, a.error_count ? link({ agent: a.agent_name, errored: true }, n(a.error_count)) : '0'))),
          'No agent was evaluated in this range.'))),
        h('section', { 'aria-labelledby': 'ov-controls' }, h('h2', { id: 'ov-controls' }, 'Top controls by denials'),
          h('div', { id: 'top-controls' }, table(['Control', 'Denials', 'Matches'], controls.map(c => h('tr', {},
            h('td', {}, ctlName(c)),
            h('td', {}, link({ controls: [c.control_id], actions: ['deny'], matched: true }, n(c.action_counts.deny))),
            h('td', {}, link({ controls: [c.control_id], matched: true }, n(c.match_count))))),
          'No control was evaluated in this range.')))),
      h('section', { 'aria-labelledby': 'ov-failing' }, h('h2', { id: 'ov-failing' }, 'Controls in error'),
        h('div', { id: 'failing-controls' }, table(['Control', 'Errors', 'Evaluations', h('th', { class: 'hide-narrow', scope: 'col' }, 'Error rate')], failing.map(c => h('tr', {},
          h('td', {}, ctlName(c)),
          h('td', {}, link({ controls: [c.control_id], errored: true }, n(c.error_count))),
          h('td', {}, link({ controls: [c.control_id] }, n(c.execution_count))),
          h('td', { class: 'hide-narrow' }, ((100 * c.error_count) / Math.max(1, c.execution_count)).toFixed(1) + ' %'))),
        'No control failed in this range.'))),
      h('section', { 'aria-labelledby': 'ov-shadow' }, h('h2', { id: 'ov-shadow' }, 'Controls in shadow'),
        h('p', { class: 'muted small' }, 'Evaluated on real traffic but never part of a decision: what each would have done.'),
        h('div', { id: 'shadow-controls' }, table(['Control', 'Would have denied', 'Would have steered', 'Evaluations'], shadow.map(c => h('tr', {},
          h('td', {}, ctlName(c)),
          h('td', {}, link({ controls: [c.control_id], actions: ['deny'], matched: true, shadow: true }, n(c.action_counts.deny))),
          h('td', {}, link({ controls: [c.control_id], actions: ['steer'], matched: true, shadow: true }, n(c.action_counts.steer))),
          h('td', {}, link({ controls: [c.control_id], shadow: true }, n(c.execution_count))))),
        // Four long headings: on a phone each control becomes a card (labelled rows), not a table to scroll.
        'No control in shadow was evaluated in this range.', { stack: true }))));
    body.setAttribute('aria-busy', 'false');
  }
  await load();
}

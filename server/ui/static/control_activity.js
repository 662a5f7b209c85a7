// A control's activity: its statistics across every agent (GET /observability/stats/controls/{id}
// without agent_name), broken down per agent, its time series and its recent events. Every figure links
// to the events behind it.
import { h, table, errorBox, badge, pageHead } from './dom.js';
import { api, qs } from './api.js';
import { matchesChart } from './chart.js';
import { rangeSelect, eventsHref, windowOf, figures, n, fmtMS } from './statsview.js';
import { fmtTimeTZ, showEvent } from './events.js';

export async function controlActivityView(el, id) {
  let control = null;
  try { control = await api.get('/controls/' + id); } catch (e) { if (e.code !== 'CONTROL_NOT_FOUND') throw e; }
  const name = control ? control.name : `#${id}`;
  const range = rangeSelect('ca-range', '1h');
  const body = h('div', { id: 'activity-body', 'aria-live': 'polite' });
  el.append(pageHead(`Activity of ${name}`,
    control ? h('a', { class: 'button', href: `#/controls/${id}`, id: 'edit-link' }, 'Edit') : null,
    h('a', { class: 'button', href: `#/controls/${id}/history`, id: 'history-link' }, 'History')),
  control ? h('p', { class: 'muted' }, badge(control.data && control.data.action && control.data.action.decision), ' ',
    control.enabled ? 'enabled' : 'disabled', control.data && control.data.description ? ' · ' + control.data.description : '')
    : h('div', { class: 'notice', role: 'status' }, 'This control does not exist (it may have been deleted); its recorded events remain.'),
  h('div', { class: 'toolbar' }, h('div', { class: 'field' }, h('label', { for: range.id }, 'Time range'), range),
    h('button', { type: 'button', id: 'ca-refresh', onclick: () => load() }, 'Refresh')),
  body);
  range.addEventListener('change', () => load());

  let seq = 0;
  async function load() {
    const mine = ++seq;
    body.setAttribute('aria-busy', 'true');
    let st, recent;
    try {
      [st, recent] = await Promise.all([
        api.get(`/observability/stats/controls/${id}` + qs({ time_range: range.value, include_timeseries: 'true' })),
        api.post('/observability/events/query', { control_ids: [id], limit: 10 }),
      ]);
    } catch (e) {
      if (mine !== seq) return;
      body.replaceChildren(e.code === 'OBSERVABILITY_DISABLED'
        ? h('div', { class: 'notice' }, 'Observability is disabled on this server (OBSERVABILITY_ENABLED=false): no statistics are recorded.')
        : errorBox(e));
      body.setAttribute('aria-busy', 'false');
      return;
    }
    if (mine !== seq) return;
    const c = st.stats;
    const win = windowOf(st.timeseries, range.value);
    const base = { controls: [id], from: win.from, to: win.to };
    const link = (f, text) => h('a', { href: eventsHref(Object.assign({}, base, f)) }, text);
    const extra = [
      h('div', { class: 'figure' }, h('strong', { dataset: { stat: 'avg_confidence' } }, (c.avg_confidence || 0).toFixed(2)), h('span', {}, 'avg confidence')),
      h('div', { class: 'figure' }, h('strong', { dataset: { stat: 'avg_duration' } }, fmtMS(c.avg_duration_ms || 0)), h('span', {}, 'avg time')),
    ];
    body.replaceChildren(
      h('section', { class: 'card above-fold', 'aria-label': 'Figures' },
        figures(c, base, extra),
        h('div', { id: 'activity-chart' }, matchesChart(st.timeseries || [], range.value, body.clientWidth - 34, {
          id: 'ca', link: (from, to) => eventsHref({ controls: [id], from, to }) }))),
      h('section', { 'aria-labelledby': 'ca-agents' }, h('h2', { id: 'ca-agents' }, 'By agent'),
        h('div', { id: 'activity-agents' }, table(['Agent', 'Evaluations', 'Matches', 'Errors'], (st.agents || []).map(a => h('tr', {},
          h('td', {}, h('a', { href: '#/agents/' + encodeURIComponent(a.agent_name) }, a.agent_name)),
          h('td', {}, link({ agent: a.agent_name }, n(a.execution_count))),
          h('td', {}, link({ agent: a.agent_name, matched: true }, n(a.match_count))),
          h('td', {}, a.error_count ? link({ agent: a.agent_name, errored: true }, n(a.error_count)) : '0'))),
        'No agent evaluated this control in this range.'))),
      h('section', { 'aria-labelledby': 'ca-recent' }, h('h2', { id: 'ca-recent' }, 'Recent events'),
        h('div', { id: 'activity-events' }, table(['When', 'Agent', 'Step', 'Action', 'Matched', h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Details'))],
          recent.events.map(ev => h('tr', {},
            h('td', { class: 'nowrap' }, fmtTimeTZ(ev.timestamp)),
            h('td', {}, ev.agent_name),
            h('td', {}, `${ev.step_type}/${ev.step_name} (${ev.check_stage})`),
            h('td', {}, badge(ev.action, !ev.matched)),
            h('td', {}, ev.error_message ? 'error' : ev.matched ? 'yes' : 'no'),
            h('td', {}, h('button', { type: 'button', class: 'link', 'aria-label': 'Details of the event at ' + fmtTimeTZ(ev.timestamp), onclick: () => showEvent(el, ev) }, 'Details')))),
          'No events recorded for this control.', { stack: true })),
        h('p', {}, h('a', { href: eventsHref({ controls: [id] }), id: 'all-control-events' }, 'All events of this control'))));
    body.setAttribute('aria-busy', 'false');
  }
  await load();
}

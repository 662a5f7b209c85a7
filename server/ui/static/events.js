// Recent observability events with the filters of POST /observability/events/query.
import { h, clear, field, fmtTime, badge, errorBox, table } from './dom.js';
import { api } from './api.js';

const ACTIONS = ['deny', 'steer', 'warn', 'log', 'allow'];

export async function eventsView(el) {
  const f = {
    agent_name: h('input', { type: 'text', id: 'ev-agent' }),
    control_ids: h('input', { type: 'text', id: 'ev-controls', placeholder: '1, 2' }),
    matched: h('select', { id: 'ev-matched' }, h('option', { value: '' }, 'any'), h('option', { value: 'true' }, 'matched'), h('option', { value: 'false' }, 'not matched')),
    stage: h('select', { id: 'ev-stage' }, h('option', { value: '' }, 'any'), h('option', { value: 'pre' }, 'pre'), h('option', { value: 'post' }, 'post')),
    step_type: h('input', { type: 'text', id: 'ev-type' }),
    trace_id: h('input', { type: 'text', id: 'ev-trace' }),
    start: h('input', { type: 'datetime-local', id: 'ev-start' }),
    end: h('input', { type: 'datetime-local', id: 'ev-end' }),
  };
  const actions = ACTIONS.map(a => h('input', { type: 'checkbox', id: 'ev-action-' + a, value: a }));
  const state = { offset: 0, limit: 50 };
  const results = h('div', { id: 'events-results' });
  el.append(h('h1', {}, 'Events'),
    h('form', { class: 'card', onsubmit: (e) => { e.preventDefault(); state.offset = 0; load(); } },
      h('div', { class: 'grid3' }, field('Agent', f.agent_name), field('Control ids', f.control_ids, 'comma-separated'), field('Matched', f.matched),
        field('Stage', f.stage), field('Step type', f.step_type), field('Trace id', f.trace_id), field('From', f.start), field('To', f.end)),
      h('fieldset', { class: 'field' }, h('legend', {}, 'Actions'), actions.map(a => h('label', { class: 'inline', for: a.id }, a, a.value))),
      h('button', { type: 'submit', class: 'primary' }, 'Search')),
    results);

  async function load() {
    clear(results);
    const q = { limit: state.limit, offset: state.offset };
    if (f.agent_name.value.trim()) q.agent_name = f.agent_name.value.trim().toLowerCase();
    const ids = f.control_ids.value.split(',').map(x => Number(x.trim())).filter(x => Number.isInteger(x) && x > 0);
    if (ids.length) q.control_ids = ids;
    if (f.matched.value) q.matched = f.matched.value === 'true';
    if (f.stage.value) q.check_stages = [f.stage.value];
    if (f.step_type.value.trim()) q.step_types = [f.step_type.value.trim()];
    if (f.trace_id.value.trim()) q.trace_id = f.trace_id.value.trim();
    if (f.start.value) q.start_time = new Date(f.start.value).toISOString();
    if (f.end.value) q.end_time = new Date(f.end.value).toISOString();
    const acts = actions.filter(a => a.checked).map(a => a.value);
    if (acts.length) q.actions = acts;
    let data;
    try { data = await api.post('/observability/events/query', q); }
    catch (e) {
      results.append(e.code === 'OBSERVABILITY_DISABLED'
        ? h('div', { class: 'notice' }, 'Observability is disabled on this server (OBSERVABILITY_ENABLED=false): no events are recorded.')
        : errorBox(e));
      return;
    }
    const rows = data.events.map(ev => h('tr', {},
      h('td', {}, fmtTime(ev.timestamp)), h('td', {}, ev.agent_name), h('td', {}, ev.control_name || String(ev.control_id)),
      h('td', {}, ev.check_stage), h('td', { class: 'hide-narrow' }, `${ev.step_type}/${ev.step_name}`),
      h('td', {}, badge(ev.action)), h('td', {}, ev.matched ? 'yes' : 'no'),
      h('td', { class: 'hide-narrow' }, ev.error_message || ''), h('td', { class: 'hide-narrow' }, ev.source)));
    results.append(table(['When', 'Agent', 'Control', 'Stage', h('th', { class: 'hide-narrow', scope: 'col' }, 'Step'), 'Action', 'Matched',
      h('th', { class: 'hide-narrow', scope: 'col' }, 'Error'), h('th', { class: 'hide-narrow', scope: 'col' }, 'Source')], rows, 'No events match.'));
    results.append(h('div', { class: 'pager' },
      h('button', { type: 'button', disabled: state.offset === 0, onclick: () => { state.offset = Math.max(0, state.offset - state.limit); load(); } }, 'Newer'),
      h('button', { type: 'button', disabled: state.offset + data.events.length >= data.total, onclick: () => { state.offset += state.limit; load(); } }, 'Older'),
      h('span', {}, `${data.total} in all`)));
  }
  await load();
}

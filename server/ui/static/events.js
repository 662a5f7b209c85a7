// Recent observability events with the filters of POST /observability/events/query.
import { h, clear, field, fmtTime, badge, errorBox, table } from './dom.js';
import { api } from './api.js';

const ACTIONS = ['deny', 'steer', 'warn', 'log', 'allow'];

// params (from #/events?agent_name=...&control_id=...&shadow=true) preset the filters: the links of a
// shadow control's report lead here.
export async function eventsView(el, params = new URLSearchParams()) {
  const f = {
    agent_name: h('input', { type: 'text', id: 'ev-agent', autocomplete: 'off' }),
    control_ids: h('input', { type: 'text', id: 'ev-controls', placeholder: '1, 2', inputmode: 'numeric' }),
    matched: h('select', { id: 'ev-matched' }, h('option', { value: '' }, 'any'), h('option', { value: 'true' }, 'matched'), h('option', { value: 'false' }, 'not matched')),
    stage: h('select', { id: 'ev-stage' }, h('option', { value: '' }, 'any'), h('option', { value: 'pre' }, 'pre'), h('option', { value: 'post' }, 'post')),
    step_type: h('input', { type: 'text', id: 'ev-type', placeholder: 'llm, tool…' }),
    trace_id: h('input', { type: 'text', id: 'ev-trace', autocomplete: 'off', spellcheck: 'false' }),
    start: h('input', { type: 'datetime-local', id: 'ev-start' }),
    end: h('input', { type: 'datetime-local', id: 'ev-end' }),
    shadow: h('select', { id: 'ev-shadow' }, h('option', { value: '' }, 'any'), h('option', { value: 'true' }, 'shadow only'), h('option', { value: 'false' }, 'enforced only')),
    limit: h('select', { id: 'ev-limit' }, [10, 25, 50, 100, 250].map(n => h('option', { value: n, selected: n === 25 }, String(n)))),
  };
  if (params.get('agent_name')) f.agent_name.value = params.get('agent_name');
  if (params.get('control_id')) f.control_ids.value = params.get('control_id');
  if (['true', 'false'].includes(params.get('shadow'))) f.shadow.value = params.get('shadow');
  f.limit.addEventListener('change', () => { state.offset = 0; load(); });
  const actions = ACTIONS.map(a => h('input', { type: 'checkbox', id: 'ev-action-' + a, value: a }));
  const state = { offset: 0 };
  const results = h('div', { id: 'events-results', 'aria-live': 'polite' });
  const wide = window.matchMedia('(min-width: 721px)').matches;
  const filters = h('details', { class: 'card filters', open: wide },
    h('summary', {}, 'Filters'),
    h('form', { id: 'events-form', onsubmit: (e) => { e.preventDefault(); state.offset = 0; load(); } },
      h('div', { class: 'grid3' }, field('Agent', f.agent_name), field('Control ids', f.control_ids, 'comma-separated'), field('Matched', f.matched),
        field('Stage', f.stage), field('Step type', f.step_type), field('Trace id', f.trace_id), field('From', f.start), field('To', f.end), field('Shadow', f.shadow, 'shadow: what a control in shadow mode would have done'),
        field('Rows per page', f.limit)),
      h('fieldset', { class: 'field' }, h('legend', {}, 'Actions'), actions.map(a => h('label', { class: 'inline', for: a.id }, a, a.value))),
      h('div', { class: 'toolbar' },
        h('button', { type: 'submit', class: 'primary', id: 'events-search' }, 'Search'),
        h('button', { type: 'reset', id: 'events-reset', onclick: () => setTimeout(() => { state.offset = 0; load(); }) }, 'Clear filters'))));
  el.append(h('h1', {}, 'Events'), filters, results);

  async function load() {
    const q = { limit: Number(f.limit.value), offset: state.offset };
    if (f.agent_name.value.trim()) q.agent_name = f.agent_name.value.trim().toLowerCase();
    const ids = f.control_ids.value.split(',').map(x => Number(x.trim())).filter(x => Number.isInteger(x) && x > 0);
    if (ids.length) q.control_ids = ids;
    if (f.matched.value) q.matched = f.matched.value === 'true';
    if (f.shadow.value) q.shadow = f.shadow.value === 'true';
    if (f.stage.value) q.check_stages = [f.stage.value];
    if (f.step_type.value.trim()) q.step_types = [f.step_type.value.trim()];
    if (f.trace_id.value.trim()) q.trace_id = f.trace_id.value.trim();
    if (f.start.value) q.start_time = new Date(f.start.value).toISOString();
    if (f.end.value) q.end_time = new Date(f.end.value).toISOString();
    const acts = actions.filter(a => a.checked).map(a => a.value);
    if (acts.length) q.actions = acts;
    results.setAttribute('aria-busy', 'true');
    let data;
    try { data = await api.post('/observability/events/query', q); }
    catch (e) {
      results.replaceChildren(e.code === 'OBSERVABILITY_DISABLED'
        ? h('div', { class: 'notice' }, 'Observability is disabled on this server (OBSERVABILITY_ENABLED=false): no events are recorded.')
        : errorBox(e));
      results.setAttribute('aria-busy', 'false');
      return;
    }
    const rows = data.events.map(ev => h('tr', {},
      h('td', { class: 'nowrap' }, fmtTime(ev.timestamp)),
      h('td', {}, h('a', { href: '#/agents/' + encodeURIComponent(ev.agent_name) }, ev.agent_name)),
      h('td', {}, h('a', { href: '#/controls/' + ev.control_id }, ev.control_name || '#' + ev.control_id)),
      h('td', { class: 'hide-narrow' }, ev.check_stage),
      h('td', {}, `${ev.step_type}/${ev.step_name}`, h('span', { class: 'muted narrow-only' }, ` (${ev.check_stage})`)),
      h('td', {}, badge(ev.action, !ev.matched), ev.shadow ? h('span', { class: 'shadow-tag muted small' }, ' shadow') : ''),
      h('td', {}, ev.matched ? 'yes' : 'no'),
      h('td', {}, ev.error_message || ''),
      h('td', { class: 'hide-narrow' }, ev.source),
      h('td', { class: 'mono' }, ev.trace_id ? h('button', { type: 'button', class: 'link', title: 'Show only this trace',
        onclick: () => { f.trace_id.value = ev.trace_id; state.offset = 0; load(); } }, ev.trace_id.slice(0, 12)) : '')));
    const shownTo = state.offset + data.events.length;
    results.replaceChildren(
      table(['When', 'Agent', 'Control', h('th', { scope: 'col', class: 'hide-narrow' }, 'Stage'), 'Step', 'Action', 'Matched', 'Error',
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Source'), 'Trace'], rows, 'No events match.', { stack: true }),
      h('div', { class: 'pager' },
        h('button', { type: 'button', id: 'events-newer', disabled: state.offset === 0, onclick: () => { state.offset = Math.max(0, state.offset - q.limit); load(); } }, 'Newer'),
        h('button', { type: 'button', id: 'events-older', disabled: shownTo >= data.total, onclick: () => { state.offset += q.limit; load(); } }, 'Older'),
        h('span', {}, data.total ? `${state.offset + 1}–${shownTo} of ${data.total}` : '0 events')));
    results.setAttribute('aria-busy', 'false');
  }
  await load();
}

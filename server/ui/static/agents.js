// Agents: the list with search and pagination, and one agent's detail with steps, linked controls and
// statistics.
import { h, clear, field, fmtTime, badge, errorBox, table } from './dom.js';
import { api, qs, session } from './api.js';
import { matchesChart } from './chart.js';

export async function agentsView(el) {
  const state = { name: '', cursors: [''], page: 0 };
  const search = h('input', { type: 'search', id: 'agent-search', placeholder: 'substring of the name' });
  const results = h('div', { id: 'agents-results' });
  el.append(h('h1', {}, 'Agents'),
    h('form', { class: 'toolbar', role: 'search', onsubmit: (e) => { e.preventDefault(); state.name = search.value.trim(); state.cursors = ['']; state.page = 0; load(); } },
      h('div', { class: 'grow' }, field('Search agents', search)),
      h('button', { type: 'submit' }, 'Search')),
    results);

  async function load() {
    clear(results);
    let data;
    try {
      data = await api.get('/agents' + qs({ name: state.name, limit: 20, cursor: state.cursors[state.page] }));
    } catch (e) { results.append(errorBox(e)); return; }
    const rows = data.agents.map(a => h('tr', {},
      h('td', {}, h('a', { href: '#/agents/' + encodeURIComponent(a.agent_name) }, a.agent_name)),
      h('td', { class: 'hide-narrow' }, a.agent_description || ''),
      h('td', { class: 'hide-narrow' }, a.agent_version || ''),
      h('td', {}, String(a.step_count)), h('td', {}, String(a.control_count)),
      h('td', { class: 'hide-narrow' }, fmtTime(a.updated_at))));
    results.append(table(['Name', h('th', { class: 'hide-narrow', scope: 'col' }, 'Description'), h('th', { class: 'hide-narrow', scope: 'col' }, 'Version'), 'Steps', 'Controls', h('th', { class: 'hide-narrow', scope: 'col' }, 'Updated')], rows, 'No agents registered yet.'));
    results.append(pager(data.pagination, state, load));
  }
  await load();
}

export function pager(p, state, load) {
  const prev = h('button', { type: 'button', disabled: state.page === 0, onclick: () => { state.page -= 1; load(); } }, 'Previous');
  const next = h('button', { type: 'button', disabled: !p.has_more, onclick: () => {
    state.cursors[state.page + 1] = p.next_cursor; state.page += 1; load(); } }, 'Next');
  return h('div', { class: 'pager' }, prev, next, h('span', {}, `${p.total} in all, page ${state.page + 1}`));
}

export async function agentView(el, name) {
  const data = await api.get('/agents/' + encodeURIComponent(name));
  const a = data.agent;
  el.append(h('h1', {}, 'Agent ', a.agent_name));
  el.append(h('section', { class: 'card', 'aria-labelledby': 'agent-meta' }, h('h2', { id: 'agent-meta' }, 'Details'),
    h('dl', { class: 'meta' },
      h('dt', {}, 'Description'), h('dd', {}, a.agent_description || '—'),
      h('dt', {}, 'Version'), h('dd', {}, a.agent_version || '—'),
      h('dt', {}, 'Created'), h('dd', {}, fmtTime(a.created_at)),
      h('dt', {}, 'Updated'), h('dd', {}, fmtTime(a.updated_at)),
      Object.entries(a.agent_metadata || {}).map(([k, v]) => [h('dt', {}, k), h('dd', {}, typeof v === 'string' ? v : JSON.stringify(v))]))));

  el.append(h('section', { 'aria-labelledby': 'agent-steps' }, h('h2', { id: 'agent-steps' }, 'Registered steps'),
    table(['Type', 'Name', 'Description'], (data.steps || []).map(s => h('tr', {}, h('td', {}, s.type), h('td', {}, s.name), h('td', {}, s.description || ''))), 'No steps registered.')));

  const controlsBox = h('section', { 'aria-labelledby': 'agent-controls' });
  el.append(controlsBox);
  const statsBox = h('section', { 'aria-labelledby': 'agent-stats' });
  el.append(statsBox);

  async function loadControls() {
    clear(controlsBox).append(h('h2', { id: 'agent-controls' }, 'Linked controls'));
    const msg = h('div', { 'aria-live': 'polite' });
    controlsBox.append(msg);
    const { controls } = await api.get('/agents/' + encodeURIComponent(name) + '/controls');
    const rows = controls.map(c => {
      const toggle = h('input', { type: 'checkbox', checked: c.enabled, disabled: session.readOnly, id: 'enabled-' + c.control_id,
        onchange: async (e) => {
          try { await api.patch('/controls/' + c.control_id, { enabled: e.target.checked }); await loadControls(); }
          catch (err) { msg.replaceChildren(errorBox(err)); e.target.checked = !e.target.checked; }
        } });
      return h('tr', {},
        h('td', {}, h('a', { href: '#/controls/' + c.control_id }, c.name)),
        h('td', {}, badge(c.control && c.control.action && c.control.action.decision)),
        h('td', {}, h('label', { class: 'inline', for: toggle.id }, toggle, c.enabled ? 'enabled' : 'disabled')),
        h('td', {}, h('button', { type: 'button', class: 'danger', disabled: session.readOnly, 'aria-label': 'Unlink ' + c.name,
          onclick: async () => {
            try { await api.del(`/agents/${encodeURIComponent(name)}/controls/${c.control_id}`); await loadControls(); }
            catch (err) { msg.replaceChildren(errorBox(err)); }
          } }, 'Unlink')));
    });
    controlsBox.append(table(['Control', 'Action', 'Enabled', ''], rows, 'No controls linked to this agent.'));

    // Link form: pick any control by name.
    let options = [];
    try { options = (await api.get('/controls?limit=100')).controls; } catch { /* the list is optional */ }
    const linked = new Set(controls.map(c => c.control_id));
    const select = h('select', { id: 'link-control' }, h('option', { value: '' }, 'Choose a control…'),
      options.filter(c => !linked.has(c.control_id)).map(c => h('option', { value: c.control_id }, `${c.name} (#${c.control_id})`)));
    controlsBox.append(h('form', { class: 'toolbar', onsubmit: async (e) => {
      e.preventDefault();
      if (!select.value) return;
      try { await api.post(`/agents/${encodeURIComponent(name)}/controls/${select.value}`); await loadControls(); }
      catch (err) { msg.replaceChildren(errorBox(err)); }
    } }, h('div', { class: 'grow' }, field('Link a control', select)),
    h('button', { type: 'submit', class: 'primary', disabled: session.readOnly }, 'Link')));
  }

  const range = h('select', { id: 'stats-range' }, ['1m', '5m', '15m', '1h', '6h', '24h', '7d', '30d'].map(r => h('option', { value: r, selected: r === '1h' }, r)));
  async function loadStats() {
    clear(statsBox).append(h('h2', { id: 'agent-stats' }, 'Statistics'),
      h('div', { class: 'toolbar' }, field('Time range', range), h('button', { type: 'button', id: 'stats-refresh', onclick: loadStats }, 'Refresh')));
    let st;
    try {
      st = await api.get('/observability/stats' + qs({ agent_name: name, time_range: range.value, include_timeseries: 'true' }));
    } catch (e) {
      statsBox.append(e.code === 'OBSERVABILITY_DISABLED' ? h('div', { class: 'notice' }, 'Observability is disabled on this server (OBSERVABILITY_ENABLED=false): no statistics are recorded.') : errorBox(e));
      return;
    }
    const t = st.totals;
    statsBox.append(h('div', { class: 'totals', id: 'stats-totals' },
      h('div', {}, h('strong', { 'data-stat': 'execution_count' }, String(t.execution_count)), 'evaluations'),
      h('div', {}, h('strong', { 'data-stat': 'match_count' }, String(t.match_count)), 'matches'),
      h('div', {}, h('strong', { 'data-stat': 'error_count' }, String(t.error_count)), 'errors'),
      Object.entries(t.action_counts || {}).map(([k, v]) => h('div', {}, h('strong', { 'data-stat': k }, String(v)), k))));
    statsBox.append(matchesChart(t.timeseries || []));
    statsBox.append(table(['Control', 'Evaluations', 'Matches', 'Errors', h('th', { class: 'hide-narrow', scope: 'col' }, 'Avg ms')],
      (st.controls || []).map(c => h('tr', {}, h('td', {}, c.control_name), h('td', {}, String(c.execution_count)), h('td', {}, String(c.match_count)),
        h('td', {}, String(c.error_count)), h('td', { class: 'hide-narrow' }, (c.avg_duration_ms || 0).toFixed(3)))), 'No evaluations in this range.'));
  }
  range.addEventListener('change', loadStats);
  await loadControls();
  await loadStats();
}

// Agents: the list with search and pagination, and one agent's detail with steps, linked controls and
// statistics.
import { h, field, fmtTime, badge, errorBox, table } from './dom.js';
import { api, qs, session } from './api.js';
import { matchesChart } from './chart.js';
import { eventsHref, windowOf, figures, p95Figure, n } from './statsview.js';
import { sessionHref } from './session.js';
import { fmtTimeTZ } from './events.js';

export async function agentsView(el) {
  const state = { name: '', cursors: [''], page: 0 };
  const search = h('input', { type: 'search', id: 'agent-search', placeholder: 'substring of the name' });
  const results = h('div', { id: 'agents-results', 'aria-live': 'polite' });
  let typing = null;
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => { state.name = search.value.trim(); state.cursors = ['']; state.page = 0; load(); }, 300);
  });
  el.append(h('h1', {}, 'Agents'),
    h('form', { class: 'toolbar', role: 'search', onsubmit: (e) => { e.preventDefault(); state.name = search.value.trim(); state.cursors = ['']; state.page = 0; load(); } },
      h('div', { class: 'grow' }, field('Search agents', search)),
      h('button', { type: 'submit' }, 'Search')),
    results);

  let seq = 0;
  async function load() {
    const mine = ++seq;
    results.setAttribute('aria-busy', 'true');
    let data;
    try {
      data = await api.get('/agents' + qs({ name: state.name, limit: 20, cursor: state.cursors[state.page] }));
    } catch (e) { if (mine === seq) { results.replaceChildren(errorBox(e)); results.setAttribute('aria-busy', 'false'); } return; }
    if (mine !== seq) return; // a newer search is on its way
    const rows = data.agents.map(a => h('tr', {},
      h('td', {}, h('a', { href: '#/agents/' + encodeURIComponent(a.agent_name) }, a.agent_name)),
      h('td', { class: 'hide-narrow' }, a.agent_description || ''),
      h('td', { class: 'hide-narrow' }, a.agent_version || ''),
      h('td', {}, String(a.step_count)), h('td', {}, String(a.control_count)),
      h('td', { class: 'hide-narrow' }, fmtTime(a.updated_at))));
    results.replaceChildren(table(['Name', h('th', { class: 'hide-narrow', scope: 'col' }, 'Description'), h('th', { class: 'hide-narrow', scope: 'col' }, 'Version'), 'Steps', 'Controls', h('th', { class: 'hide-narrow', scope: 'col' }, 'Updated')], rows, state.name ? `No agent matches “${state.name}”.` : 'No agents registered yet.'));
    results.append(pager(data.pagination, state, load));
    results.setAttribute('aria-busy', 'false');
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
  // Statistics come first: they are what an operator opens an agent's page for.
  const statsBox = h('section', { class: 'card above-fold', 'aria-labelledby': 'agent-stats' });
  el.append(statsBox);
  el.append(h('section', { class: 'card', 'aria-labelledby': 'agent-meta' }, h('h2', { id: 'agent-meta' }, 'Details'),
    h('dl', { class: 'meta' },
      h('dt', {}, 'Description'), h('dd', {}, a.agent_description || '—'),
      h('dt', {}, 'Version'), h('dd', {}, a.agent_version || '—'),
      // The client library the agent last named itself with (X-Agent-Control-SDK headers).
      h('dt', {}, 'SDK'), h('dd', { id: 'agent-sdk' }, data.sdk ? `${data.sdk.name} ${data.sdk.version} (last seen ${fmtTime(data.sdk.seen_at)})` : '—'),
      h('dt', {}, 'Created'), h('dd', {}, fmtTime(a.created_at)),
      h('dt', {}, 'Updated'), h('dd', {}, fmtTime(a.updated_at)),
      Object.entries(a.agent_metadata || {}).map(([k, v]) => [h('dt', {}, k), h('dd', {}, typeof v === 'string' ? v : JSON.stringify(v))]))));

  el.append(h('section', { 'aria-labelledby': 'agent-steps' }, h('h2', { id: 'agent-steps' }, 'Registered steps'),
    h('div', { id: 'agent-steps-table' },
      table(['Type', 'Name', 'Description'], (data.steps || []).map(s => h('tr', {}, h('td', {}, s.type), h('td', { class: 'mono' }, s.name), h('td', {}, s.description || ''))), 'No steps registered.'))));

  const sessionsBox = h('section', { class: 'card', 'aria-labelledby': 'agent-sessions-title' });
  el.append(sessionsBox);
  sessionsSection(sessionsBox, name);

  const controlsBox = h('section', { 'aria-labelledby': 'agent-controls' });
  el.append(controlsBox);
  const msg = h('div', { 'aria-live': 'polite', id: 'agent-message' });

  async function loadControls() {
    const { controls } = await api.get('/agents/' + encodeURIComponent(name) + '/controls');
    const rows = controls.map(c => {
      const toggle = h('input', { type: 'checkbox', checked: c.enabled, disabled: session.readOnly, id: 'enabled-' + c.control_id,
        onchange: async (e) => {
          const want = e.target.checked;
          e.target.disabled = true;
          try { await api.patch('/controls/' + c.control_id, { enabled: want }); msg.replaceChildren(); await loadControls(); }
          catch (err) { msg.replaceChildren(errorBox(err)); e.target.checked = !want; e.target.disabled = false; }
        } });
      return h('tr', {},
        h('td', {}, h('a', { href: '#/controls/' + c.control_id }, c.name)),
        h('td', {}, badge(c.control && c.control.action && c.control.action.decision)),
        h('td', {}, h('label', { class: 'inline', for: toggle.id }, toggle, c.enabled ? 'enabled' : 'disabled', h('span', { class: 'sr-only' }, ' (' + c.name + ')'))),
        h('td', {}, h('button', { type: 'button', class: 'danger', disabled: session.readOnly, dataset: { unlink: c.control_id }, 'aria-label': 'Unlink ' + c.name,
          onclick: async () => {
            try {
              await api.del(`/agents/${encodeURIComponent(name)}/controls/${c.control_id}`);
              msg.replaceChildren(h('div', { class: 'ok-box', role: 'status' }, `Unlinked ${c.name}.`));
              await loadControls();
            } catch (err) { msg.replaceChildren(errorBox(err)); }
          } }, 'Unlink')));
    });

    // Link form: pick any control by name (the first 100, newest first).
    let options = [];
    try { options = (await api.get('/controls?limit=100')).controls; } catch { /* the list is optional */ }
    const linked = new Set(controls.map(c => c.control_id));
    const free = options.filter(c => !linked.has(c.control_id));
    const select = h('select', { id: 'link-control', disabled: session.readOnly || !free.length },
      h('option', { value: '' }, free.length ? 'Choose a control…' : 'No other control to link'),
      free.map(c => h('option', { value: c.control_id }, `${c.name} (#${c.control_id}, ${c.decision || 'no data'})`)));
    const form = h('form', { class: 'toolbar', id: 'link-form', onsubmit: async (e) => {
      e.preventDefault();
      if (!select.value) { msg.replaceChildren(h('div', { class: 'notice', role: 'status' }, 'Choose a control to link first.')); select.focus(); return; }
      const picked = select.selectedOptions[0].textContent;
      try {
        await api.post(`/agents/${encodeURIComponent(name)}/controls/${select.value}`);
        msg.replaceChildren(h('div', { class: 'ok-box', role: 'status' }, `Linked ${picked}.`));
        await loadControls();
      } catch (err) { msg.replaceChildren(errorBox(err)); }
    } }, h('div', { class: 'grow' }, field('Link a control', select)),
    h('button', { type: 'submit', class: 'primary', id: 'link-submit', disabled: session.readOnly || !free.length }, 'Link'));

    const keepFocus = document.activeElement && controlsBox.contains(document.activeElement) ? document.activeElement.id : null;
    controlsBox.replaceChildren(h('h2', { id: 'agent-controls' }, 'Linked controls'), msg,
      h('div', { id: 'linked-controls' }, table(['Control', 'Action', 'Enabled', h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Unlink'))], rows, 'No controls linked to this agent.')),
      rows.length ? h('p', { class: 'muted small' }, 'Enabling or disabling a control applies to every agent that uses it; unlinking removes it from this agent only.') : null,
      form);
    if (keepFocus && document.getElementById(keepFocus)) document.getElementById(keepFocus).focus();
  }

  const range = h('select', { id: 'stats-range' }, ['1m', '5m', '15m', '1h', '6h', '24h', '7d', '30d'].map(r => h('option', { value: r, selected: r === '1h' }, r)));
  const refresh = h('button', { type: 'button', id: 'stats-refresh', onclick: () => loadStats() }, 'Refresh');
  const statsBody = h('div', { id: 'stats-body', 'aria-live': 'polite' });
  const auto = h('input', { type: 'checkbox', id: 'stats-auto' });
  let timer = null;
  auto.addEventListener('change', () => {
    clearInterval(timer);
    if (!auto.checked) return;
    timer = setInterval(() => { if (!statsBody.isConnected) { clearInterval(timer); return; } loadStats(); }, 10000);
  });
  statsBox.append(h('h2', { id: 'agent-stats' }, 'Statistics'),
    h('div', { class: 'toolbar' }, field('Time range', range), refresh,
      h('label', { class: 'inline', for: auto.id }, auto, 'Refresh every 10 s')), statsBody);
  let statsSeq = 0;
  async function loadStats() {
    const mine = ++statsSeq;
    statsBody.setAttribute('aria-busy', 'true');
    let st;
    try {
      st = await api.get('/observability/stats' + qs({ agent_name: name, time_range: range.value, include_timeseries: 'true', include_p95: 'true' }));
    } catch (e) {
      if (mine !== statsSeq) return;
      statsBody.replaceChildren(e.code === 'OBSERVABILITY_DISABLED' ? h('div', { class: 'notice' }, 'Observability is disabled on this server (OBSERVABILITY_ENABLED=false): no statistics are recorded.') : errorBox(e));
      statsBody.setAttribute('aria-busy', 'false');
      return;
    }
    if (mine !== statsSeq) return;
    const t = st.totals;
    const win = windowOf(t.timeseries, range.value);
    const base = { agent: name, from: win.from, to: win.to };
    const link = (f, text) => h('a', { href: eventsHref(Object.assign({}, base, f)) }, text);
    statsBody.replaceChildren(
      h('div', { id: 'stats-totals' }, figures(t, base, p95Figure(t))),
      h('div', { id: 'stats-chart' }, matchesChart(t.timeseries || [], range.value, statsBody.clientWidth, {
        id: 'agent', link: (from, to) => eventsHref({ agent: name, from, to }) })),
      h('h3', {}, 'By control'),
      h('div', { id: 'stats-controls' },
        table(['Control', 'Evaluations', 'Matches', 'Errors', h('th', { class: 'hide-narrow', scope: 'col' }, 'Avg confidence'), h('th', { class: 'hide-narrow', scope: 'col' }, 'Avg ms')],
          (st.controls || []).map(c => h('tr', {}, h('td', {}, h('a', { href: `#/controls/${c.control_id}/activity` }, c.control_name || ('#' + c.control_id))),
            h('td', {}, link({ controls: [c.control_id] }, n(c.execution_count))),
            h('td', {}, link({ controls: [c.control_id], matched: true }, n(c.match_count))),
            h('td', {}, c.error_count ? link({ controls: [c.control_id], errored: true }, n(c.error_count)) : '0'),
            h('td', { class: 'hide-narrow' }, (c.avg_confidence || 0).toFixed(2)), h('td', { class: 'hide-narrow' }, (c.avg_duration_ms || 0).toFixed(3)))),
          // Six columns at 390 px: each control becomes a card (labelled rows), like the overview's shadow table.
          'No evaluations in this range.', { stack: true })));
    if ((st.shadow || []).length) statsBody.append(shadowStats(name, st.shadow, range.value));
    statsBody.setAttribute('aria-busy', 'false');
  }
  range.addEventListener('change', () => loadStats());
  await loadControls();
  await loadStats();
}

// shadowStats lists what the agent's shadow controls would have done in the range, apart from the real
// decisions above, with links to those events.
function shadowStats(agent, shadow, range) {
  const verb = (c) => c.action_counts.deny ? ['denied', c.action_counts.deny] : c.action_counts.steer ? ['steered', c.action_counts.steer] : ['matched', c.match_count];
  return h('div', { id: 'stats-shadow' }, h('h3', {}, 'Shadow controls (not part of any decision)'),
    h('ul', {}, shadow.map(c => {
      const [v, n] = verb(c);
      return h('li', { class: 'shadow-line' }, h('a', { href: '#/controls/' + c.control_id }, c.control_name || ('#' + c.control_id)),
        ` would have ${v} ${n} of ${c.execution_count} steps in the last ${range}`, c.error_count ? ` (${c.error_count} errors)` : '', ' · ',
        h('a', { class: 'shadow-events', href: `#/events?agent=${encodeURIComponent(agent)}&control=${c.control_id}&shadow=true` }, 'events'));
    })));
}

// sessionsSection lists the agent's recent sessions (the distinct session ids of its newest events), each a
// link to the session view, and opens any session by its id.
async function sessionsSection(box, agent) {
  const input = h('input', { type: 'text', id: 'open-session-id', autocomplete: 'off', spellcheck: 'false', maxlength: 128 });
  const list = h('div', { id: 'agent-sessions', 'aria-live': 'polite', 'aria-busy': 'true' });
  box.append(h('h2', { id: 'agent-sessions-title' }, 'Sessions'),
    h('p', { class: 'muted small' }, 'Steps that share a context.session_id: open one to see its steps in order, the labels it acquired and its counters.'),
    list,
    h('form', { class: 'toolbar', id: 'open-session-form', onsubmit: (e) => {
      e.preventDefault();
      const id = input.value.trim();
      if (id) location.hash = sessionHref(agent, id);
      else input.focus();
    } }, h('div', { class: 'grow' }, field('Open a session by id', input)), h('button', { type: 'submit', id: 'open-session' }, 'Open')));
  // Only controls that read or write session state record every step of a session once; ask for their
  // events when the agent has such controls (fewer, more steps per event read), else for all of its events.
  let ids = [];
  try {
    const { controls } = await api.get('/agents/' + encodeURIComponent(agent) + '/controls');
    ids = controls.filter(c => usesSessions(c.control)).map(c => c.control_id);
  } catch { /* the whole list then */ }
  let data;
  try {
    data = await api.post('/observability/events/query', ids.length ? { agent_name: agent, control_ids: ids, limit: 500 } : { agent_name: agent, limit: 1000 });
  } catch (e) {
    list.replaceChildren(e.code === 'OBSERVABILITY_DISABLED' ? h('p', { class: 'muted' }, 'Observability is disabled: recent sessions are not listed; open one by its id.') : errorBox(e));
    list.setAttribute('aria-busy', 'false');
    return;
  }
  const seen = new Map(); // newest first
  for (const ev of data.events) {
    if (!ev.session_id) continue;
    let s = seen.get(ev.session_id);
    if (!s) { s = { id: ev.session_id, last: ev.timestamp, steps: new Set(), denied: false }; seen.set(ev.session_id, s); }
    if (ev.metadata && ev.metadata.session_step) s.steps.add(ev.metadata.session_step);
    if (ev.matched && !ev.shadow && ev.action === 'deny') s.denied = true;
  }
  const rows = [...seen.values()].slice(0, 20).map(s => h('tr', { dataset: { session: s.id } },
    h('td', {}, h('a', { class: 'mono', href: sessionHref(agent, s.id) }, s.id)),
    h('td', { class: 'nowrap' }, h('time', { datetime: s.last }, fmtTimeTZ(s.last))),
    h('td', {}, s.steps.size ? String(Math.max(...s.steps)) : '—'),
    h('td', {}, s.denied ? badge('deny') : '')));
  list.replaceChildren(table(['Session', 'Last step', 'Steps', 'Denied'], rows, 'No sessions among the agent\'s recent events.', { stack: true }));
  list.setAttribute('aria-busy', 'false');
}

// usesSessions tells whether control data reads session or agent state (a selector under session. or
// agent.) or acts on the session (action.session).
export function usesSessions(data) {
  if (!data) return false;
  if (data.action && data.action.session) return true;
  const walk = (c) => {
    if (!c || typeof c !== 'object') return false;
    const p = c.selector && c.selector.path;
    if (typeof p === 'string' && /^(session|agent)(\.|$)/.test(p)) return true;
    return ['and', 'or'].some(k => Array.isArray(c[k]) && c[k].some(walk)) || walk(c.not);
  };
  return walk(data.condition);
}

// The session view (#/agents/{agent}/sessions/{id}): the steps of one session in order with their
// decision, the labels the session acquired (and the step that added each), its counters, and the step a
// control denied on the session's history, highlighted, with the earlier steps that made it deny.
//
// Two reads: the session's events (POST /observability/events/query with agent_name and session_id, every
// evaluation of every step, grouped here by the step's number in metadata.session_step) and its live state
// (GET /agents/{agent}/sessions/{id}: labels, counters, the last step records). Either may be missing: the
// state expires after the session TTL while the events stay; observability may be off while the state is there.
import { h, badge, errorBox, table } from './dom.js';
import { api } from './api.js';
import { fmtTimeTZ, showEvent } from './events.js';

// Decisions from the strongest down: the step's decision is the strongest matched, enforced one.
const STRENGTH = { deny: 5, steer: 4, warn: 3, log: 2, observe: 2, allow: 1 };
const EVENTS_MAX = 1000;

export function sessionHref(agent, id) {
  return '#/agents/' + encodeURIComponent(agent) + '/sessions/' + encodeURIComponent(id);
}

export async function sessionView(el, agent, id) {
  el.append(h('h1', {}, 'Session ', h('span', { class: 'mono', id: 'session-id' }, id)),
    h('p', { class: 'muted' }, 'Agent ', h('a', { href: '#/agents/' + encodeURIComponent(agent), id: 'session-agent' }, agent), ' · ',
      h('a', { href: '#/events?agent=' + encodeURIComponent(agent) + '&session=' + encodeURIComponent(id), id: 'session-events' }, 'all events of this session')));
  const [state, events] = await Promise.all([
    api.get('/agents/' + encodeURIComponent(agent) + '/sessions/' + encodeURIComponent(id)).then(s => ({ s }), e => ({ e })),
    api.post('/observability/events/query', { agent_name: agent, session_id: id, limit: EVENTS_MAX }).then(d => ({ d }), e => ({ e })),
  ]);
  if (state.e && state.e.status !== 404 && events.e) throw state.e;
  const st = state.s || null;
  const evs = events.d ? events.d.events : [];

  const steps = stepsOf(evs, st);
  const causes = new Set();
  for (const s of steps) for (const f of s.history) if (f.step) causes.add(f.step);

  el.append(h('section', { class: 'card', 'aria-labelledby': 'session-summary' }, h('h2', { id: 'session-summary' }, 'Summary'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Steps'), h('dd', { id: 'session-steps-seen' }, st ? String(st.steps_seen) : String(steps.length)),
      h('dt', {}, 'Last update'), h('dd', {}, st ? fmtTimeTZ(st.updated_at) : '—'),
      h('dt', {}, 'Denied steps'), h('dd', { id: 'session-denied-count' }, String(steps.filter(s => s.decision === 'deny').length)),
      h('dt', {}, 'State'), h('dd', { id: 'session-state' }, st ? 'live' : (state.e && state.e.code === 'SESSION_NOT_FOUND'
        ? 'no live state: the session ran no control that keeps session state, or was idle past the session TTL'
        : (state.e ? state.e.message : '—'))))));

  // Steps, oldest first.
  const denied = steps.find(s => s.decision === 'deny' && s.history.length);
  const rows = steps.map(s => {
    const blocked = s.decision === 'deny' || s.decision === 'steer';
    const cls = [blocked ? 'session-denied' : null, causes.has(s.seq) ? 'session-cause' : null].filter(Boolean).join(' ') || null;
    const added = st ? st.labels.filter(l => l.step === s.seq) : [];
    return h('tr', { id: s.seq ? 'session-step-' + s.seq : null, class: cls, dataset: { seq: s.seq || '', step: s.name, decision: s.decision } },
      h('td', {}, s.seq ? String(s.seq) : '—'),
      h('td', { class: 'nowrap' }, s.at ? h('time', { datetime: s.at }, fmtTimeTZ(s.at)) : ''),
      h('td', {}, h('span', { class: 'mono' }, `${s.type}/${s.name}`), s.stages.length ? h('span', { class: 'muted small' }, ' (' + s.stages.join(', ') + ')') : null),
      h('td', {}, badge(s.decision), blocked ? h('strong', { class: 'deny-mark' }, ' ◀ ' + (s.decision === 'deny' ? 'denied' : 'steered') + (s.by ? ' by ' + s.by : '')) : null),
      h('td', {}, s.controls.length ? s.controls.map((c, i) => [i ? ', ' : '', h('button', { type: 'button', class: 'link', onclick: () => showEvent(el, c.ev) }, c.name), ' ', badge(c.action, !c.matched)]) : '—'),
      h('td', { class: 'session-labels-added' }, added.length ? added.map(l => l.label).join(', ') : ''),
      h('td', { class: 'session-why' }, s.history.length ? whyList(s.history) : (causes.has(s.seq) ? h('span', { class: 'muted' }, 'cited by the denied step') : '')));
  });
  el.append(h('section', { class: 'card', 'aria-labelledby': 'session-steps-title' }, h('h2', { id: 'session-steps-title' }, 'Steps in order'),
    denied ? h('p', { class: 'notice', id: 'session-deny-summary', role: 'note' }, `Step ${denied.seq || ''} (${denied.name}) was denied${denied.by ? ' by ' + denied.by : ''} on the session's history: `,
      whyText(denied.history)) : null,
    events.e && events.e.code === 'OBSERVABILITY_DISABLED' ? h('p', { class: 'notice' }, 'Observability is disabled on this server: the steps below are the session state\'s last records only.') : null,
    events.e && events.e.code !== 'OBSERVABILITY_DISABLED' ? errorBox(events.e) : null,
    evs.length >= EVENTS_MAX ? h('p', { class: 'muted small' }, `The newest ${EVENTS_MAX} events are shown: earlier steps are left out.`) : null,
    h('div', { id: 'session-steps' }, table(['#', 'When', 'Step', 'Decision', 'Controls', 'Labels added', 'Why'], rows, 'No steps recorded for this session.', { stack: true }))));

  // Labels and counters of the live state.
  const labelRows = st ? st.labels.map(l => h('tr', { dataset: { label: l.label } },
    h('td', { class: 'mono' }, l.label),
    h('td', {}, l.step ? h('a', { href: '#session-step-' + l.step, onclick: (e) => { e.preventDefault(); focusStep(l.step); } }, `step ${l.step} (${l.step_name})`) : l.step_name),
    h('td', {}, l.by))) : [];
  el.append(h('section', { class: 'card', 'aria-labelledby': 'session-labels-title' }, h('h2', { id: 'session-labels-title' }, 'Labels acquired'),
    h('div', { id: 'session-labels' }, table(['Label', 'Added by step', 'How'], labelRows, st ? 'No labels.' : 'No live state.', { stack: true }))));
  const counterTable = (list, empty) => table(['Kind', 'Name', 'Window', 'Value', 'Window start'], list.map(c => h('tr', {},
    h('td', {}, c.kind), h('td', { class: 'mono' }, c.name), h('td', {}, c.window || 'whole session'), h('td', {}, String(c.value)),
    h('td', {}, c.window_start ? fmtTimeTZ(c.window_start) : ''))), empty, { stack: true });
  el.append(h('section', { class: 'card', 'aria-labelledby': 'session-counters-title' }, h('h2', { id: 'session-counters-title' }, 'Counters'),
    h('div', { id: 'session-counters' }, counterTable(st ? st.counters : [], st ? 'No counters.' : 'No live state.')),
    st && st.agent_counters.length ? [h('h3', {}, 'Agent-wide (every session)'), h('div', { id: 'session-agent-counters' }, counterTable(st.agent_counters, ''))] : null));
}

function focusStep(seq) {
  const tr = document.getElementById('session-step-' + seq);
  if (!tr) return;
  tr.setAttribute('tabindex', '-1');
  tr.focus();
}

function whyText(history) {
  return history.map(f => {
    if (f.label && f.step) return `step ${f.step} (${f.step_name}) added label ${f.label}`;
    if (f.label) return `this step (${f.step_name}) carries label ${f.label}`;
    if (f.steps) return 'earlier steps ' + f.steps.join(', ');
    if (f.value !== undefined) return `${f.selector} = ${f.value}` + (f.window ? ' within ' + f.window : '');
    return f.selector;
  }).join('; ');
}

function whyList(history) {
  return h('ul', { class: 'plain' }, history.map(f => h('li', {}, f.label && f.step
    ? [h('a', { href: '#session-step-' + f.step, onclick: (e) => { e.preventDefault(); focusStep(f.step); } }, `step ${f.step} (${f.step_name})`), ` added label ${f.label}`]
    : whyText([f]))));
}

// stepsOf groups the events into steps (by metadata.session_step; an event without it, from before it was
// recorded, by its instant and step) and adds the state's step records that have no event, oldest first.
function stepsOf(evs, st) {
  const byKey = new Map();
  for (const ev of evs) {
    const md = ev.metadata || {};
    const seq = Number.isInteger(md.session_step) ? md.session_step : 0;
    const key = seq ? 'n' + seq : `t${ev.timestamp}|${ev.step_type}|${ev.step_name}`;
    let s = byKey.get(key);
    if (!s) {
      s = { seq, type: ev.step_type, name: ev.step_name, at: ev.timestamp, stages: [], decision: 'allow', by: '', controls: [], history: [] };
      byKey.set(key, s);
    }
    if (new Date(ev.timestamp) < new Date(s.at)) s.at = ev.timestamp;
    if (!s.stages.includes(ev.check_stage)) s.stages.push(ev.check_stage);
    s.controls.push({ name: ev.control_name || '#' + ev.control_id, action: ev.action, matched: ev.matched, ev });
    if (ev.matched && !ev.shadow && (STRENGTH[ev.action] || 0) > (STRENGTH[s.decision] || 0)) { s.decision = ev.action; s.by = ev.control_name || ''; }
    if (Array.isArray(md.session_history) && md.session_history.length) { s.history = md.session_history; s.by = ev.control_name || s.by; }
  }
  if (st) {
    for (const r of st.steps) {
      const s = byKey.get('n' + r.seq);
      if (s) { if ((STRENGTH[r.decision] || 0) > (STRENGTH[s.decision] || 0)) s.decision = r.decision; continue; }
      byKey.set('n' + r.seq, { seq: r.seq, type: r.type, name: r.name, at: r.at, stages: [], decision: r.decision, by: '', controls: [], history: [] });
    }
  }
  return [...byKey.values()].sort((a, b) => (a.seq && b.seq) ? a.seq - b.seq : new Date(a.at) - new Date(b.at) || a.seq - b.seq);
}

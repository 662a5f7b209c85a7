// Observability events: the filters of POST /observability/events/query (also read from and written to
// the page's URL, so that every chart point and count elsewhere can link to the events behind it), a live
// tail that polls for newer events with a time cursor, and a detail view of one event.
import { h, field, badge, errorBox, table } from './dom.js';
import { api } from './api.js';
import { sessionHref } from './session.js';

const ACTIONS = ['deny', 'steer', 'warn', 'log', 'allow'];
const LIVE_MS = 2000;

// TZ names the browser's time zone; every time on the page is shown in it, with its abbreviation.
const TZ = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

export function fmtTimeTZ(s) {
  if (!s) return '';
  const d = new Date(s);
  if (isNaN(d)) return s;
  return d.toLocaleString([], { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
}

function offsetText() {
  const m = -new Date().getTimezoneOffset();
  const sign = m >= 0 ? '+' : '-';
  const a = Math.abs(m);
  return `UTC${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

// localInput turns an ISO time into the value of a datetime-local input (local time, to the second).
function localInput(iso) {
  const d = new Date(iso);
  if (isNaN(d)) return '';
  const p = (x) => String(x).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// urlFilters reads the filters of the page's URL (#/events?agent=…&control=1,2&action=deny&…).
function urlFilters() {
  const i = location.hash.indexOf('?');
  return new URLSearchParams(i >= 0 ? location.hash.slice(i + 1) : '');
}

export async function eventsView(el) {
  const f = {
    agent_name: h('input', { type: 'text', id: 'ev-agent', autocomplete: 'off' }),
    control_ids: h('input', { type: 'text', id: 'ev-controls', placeholder: '1, 2', inputmode: 'numeric' }),
    matched: h('select', { id: 'ev-matched' }, h('option', { value: '' }, 'any'), h('option', { value: 'true' }, 'matched'), h('option', { value: 'false' }, 'not matched')),
    errored: h('select', { id: 'ev-errored' }, h('option', { value: '' }, 'any'), h('option', { value: 'true' }, 'with an error'), h('option', { value: 'false' }, 'without error')),
    stage: h('select', { id: 'ev-stage' }, h('option', { value: '' }, 'any'), h('option', { value: 'pre' }, 'pre'), h('option', { value: 'post' }, 'post')),
    step_type: h('input', { type: 'text', id: 'ev-type', placeholder: 'llm, tool…' }),
    trace_id: h('input', { type: 'text', id: 'ev-trace', autocomplete: 'off', spellcheck: 'false' }),
    session_id: h('input', { type: 'text', id: 'ev-session', autocomplete: 'off', spellcheck: 'false' }),
    start: h('input', { type: 'datetime-local', id: 'ev-start', step: 1 }),
    end: h('input', { type: 'datetime-local', id: 'ev-end', step: 1 }),
    shadow: h('select', { id: 'ev-shadow' }, h('option', { value: '' }, 'any'), h('option', { value: 'true' }, 'shadow only'), h('option', { value: 'false' }, 'enforced only')),
    limit: h('select', { id: 'ev-limit' }, [10, 25, 50, 100, 250].map(n => h('option', { value: n, selected: n === 25 }, String(n)))),
  };
  const actions = ACTIONS.map(a => h('input', { type: 'checkbox', id: 'ev-action-' + a, value: a }));
  const state = { offset: 0 };

  // The URL's filters fill the form.
  const u = urlFilters();
  f.agent_name.value = u.get('agent') || '';
  f.control_ids.value = (u.get('control') || '').split(',').filter(Boolean).join(', ');
  f.shadow.value = ['true', 'false'].includes(u.get('shadow')) ? u.get('shadow') : '';
  // A bare #/events opens on matches (what someone looking at events is after); a link says what it wants.
  f.matched.value = ['true', 'false'].includes(u.get('matched')) ? u.get('matched') : ([...u.keys()].length ? '' : 'true');
  f.errored.value = ['true', 'false'].includes(u.get('errored')) ? u.get('errored') : '';
  f.stage.value = ['pre', 'post'].includes(u.get('stage')) ? u.get('stage') : '';
  f.step_type.value = u.get('step_type') || '';
  f.trace_id.value = u.get('trace') || '';
  f.session_id.value = u.get('session') || '';
  if (u.get('from')) f.start.value = localInput(u.get('from'));
  if (u.get('to')) f.end.value = localInput(u.get('to'));
  const wanted = new Set((u.get('action') || '').split(','));
  for (const a of actions) a.checked = wanted.has(a.value);
  // Exact instants from a link (a chart bucket ends on a whole second, but keep the link's precision).
  const exact = { from: u.get('from'), to: u.get('to') };

  f.limit.addEventListener('change', () => { state.offset = 0; load(); });
  const results = h('div', { id: 'events-results', 'aria-live': 'polite' });
  const liveBtn = h('button', { type: 'button', id: 'events-live', 'aria-pressed': 'false', onclick: () => setLive(liveBtn.getAttribute('aria-pressed') !== 'true') }, 'Live tail');
  const liveStatus = h('span', { id: 'live-status', class: 'muted small', role: 'status' });
  const wide = window.matchMedia('(min-width: 721px)').matches;
  const activeFilters = [...u.keys()].length > 0;
  const filters = h('details', { class: 'card filters', open: wide || activeFilters },
    h('summary', {}, 'Filters'),
    h('form', { id: 'events-form', onsubmit: (e) => { e.preventDefault(); exact.from = exact.to = null; state.offset = 0; writeURL(); load(); } },
      h('div', { class: 'grid3' }, field('Agent', f.agent_name), field('Control ids', f.control_ids, 'comma-separated'), field('Matched', f.matched),
        field('Errors', f.errored), field('Stage', f.stage), field('Step type', f.step_type), field('Trace id', f.trace_id), field('Session id', f.session_id),
        field('From', f.start, TZ), field('To', f.end, TZ),
        field('Shadow', f.shadow, 'shadow: what a control in shadow mode would have done'), field('Rows per page', f.limit)),
      h('fieldset', { class: 'field' }, h('legend', {}, 'Actions'), actions.map(a => h('label', { class: 'inline', for: a.id }, a, a.value))),
      h('div', { class: 'toolbar' },
        h('button', { type: 'submit', class: 'primary', id: 'events-search' }, 'Search'),
        h('button', { type: 'reset', id: 'events-reset', onclick: () => setTimeout(() => { exact.from = exact.to = null; state.offset = 0; writeURL(); load(); }) }, 'Clear filters'))));
  el.append(h('div', { class: 'page-head' }, h('h1', {}, 'Events'), h('div', { class: 'actions' }, liveBtn)),
    h('p', { class: 'muted small', id: 'events-tz' }, `Times are shown in ${TZ} (${offsetText()}). `, liveStatus),
    filters, results);

  // query builds the request body of the form's filters.
  function query() {
    const q = { limit: Number(f.limit.value), offset: state.offset };
    if (f.agent_name.value.trim()) q.agent_name = f.agent_name.value.trim().toLowerCase();
    const ids = f.control_ids.value.split(',').map(x => Number(x.trim())).filter(x => Number.isInteger(x) && x > 0);
    if (ids.length) q.control_ids = ids;
    if (f.matched.value) q.matched = f.matched.value === 'true';
    if (f.errored.value) q.errored = f.errored.value === 'true';
    if (f.shadow.value) q.shadow = f.shadow.value === 'true';
    if (f.stage.value) q.check_stages = [f.stage.value];
    if (f.step_type.value.trim()) q.step_types = [f.step_type.value.trim()];
    if (f.trace_id.value.trim()) q.trace_id = f.trace_id.value.trim();
    if (f.session_id.value.trim()) q.session_id = f.session_id.value.trim();
    if (exact.from) q.start_time = new Date(exact.from).toISOString(); else if (f.start.value) q.start_time = new Date(f.start.value).toISOString();
    if (exact.to) q.end_time = new Date(exact.to).toISOString(); else if (f.end.value) q.end_time = new Date(f.end.value).toISOString();
    const acts = actions.filter(a => a.checked).map(a => a.value);
    if (acts.length) q.actions = acts;
    return q;
  }

  // writeURL puts the form's filters in the URL without reloading the page, so it can be shared.
  function writeURL() {
    const p = new URLSearchParams();
    const q = query();
    if (q.agent_name) p.set('agent', q.agent_name);
    if (q.control_ids) p.set('control', q.control_ids.join(','));
    if (q.actions) p.set('action', q.actions.join(','));
    if (q.matched !== undefined) p.set('matched', String(q.matched));
    if (q.errored !== undefined) p.set('errored', String(q.errored));
    if (q.shadow !== undefined) p.set('shadow', String(q.shadow));
    if (q.check_stages) p.set('stage', q.check_stages[0]);
    if (q.step_types) p.set('step_type', q.step_types[0]);
    if (q.trace_id) p.set('trace', q.trace_id);
    if (q.session_id) p.set('session', q.session_id);
    if (q.start_time) p.set('from', q.start_time);
    if (q.end_time) p.set('to', q.end_time);
    const s = p.toString();
    history.replaceState(null, '', '#/events' + (s ? '?' + s : ''));
  }

  let seen = new Set(), newest = null, tbody = null, seq = 0;

  function row(ev, fresh) {
    return h('tr', { class: fresh ? 'new' : null, dataset: { id: ev.control_execution_id } },
      h('td', { class: 'nowrap' }, h('time', { datetime: ev.timestamp }, fmtTimeTZ(ev.timestamp))),
      h('td', {}, h('a', { href: '#/agents/' + encodeURIComponent(ev.agent_name) }, ev.agent_name)),
      h('td', {}, h('a', { href: `#/controls/${ev.control_id}/activity` }, ev.control_name || '#' + ev.control_id)),
      h('td', { class: 'hide-narrow' }, ev.check_stage),
      h('td', {}, `${ev.step_type}/${ev.step_name}`, h('span', { class: 'muted narrow-only' }, ` (${ev.check_stage})`),
        ev.session_id ? [' · ', h('a', { class: 'session-link', href: sessionHref(ev.agent_name, ev.session_id), title: 'The session view: its steps in order, labels and counters',
          'aria-label': 'Session ' + ev.session_id }, 'session' + (ev.metadata && ev.metadata.session_step ? ' step ' + ev.metadata.session_step : ''))] : null),
      h('td', {}, badge(ev.action, !ev.matched), ev.shadow ? h('span', { class: 'shadow-tag muted small' }, ' shadow') : ''),
      h('td', {}, ev.matched ? 'yes' : 'no'),
      h('td', {}, ev.error_message || ''),
      h('td', { class: 'mono' }, ev.trace_id ? h('button', { type: 'button', class: 'link', title: 'Show only this trace', 'aria-label': 'Show only trace ' + ev.trace_id,
        onclick: () => { f.trace_id.value = ev.trace_id; exact.from = exact.to = null; state.offset = 0; writeURL(); load(); } }, ev.trace_id.slice(0, 12)) : ''),
      h('td', {}, h('button', { type: 'button', class: 'link', 'aria-label': 'Details of the event of ' + (ev.control_name || ev.control_id) + ' at ' + fmtTimeTZ(ev.timestamp),
        dataset: { details: ev.control_execution_id }, onclick: () => showEvent(el, ev) }, 'Details')));
  }

  async function load() {
    const mine = ++seq;
    const q = query();
    results.setAttribute('aria-busy', 'true');
    let data;
    try { data = await api.post('/observability/events/query', q); }
    catch (e) {
      if (mine !== seq) return;
      results.replaceChildren(e.code === 'OBSERVABILITY_DISABLED'
        ? h('div', { class: 'notice' }, 'Observability is disabled on this server (OBSERVABILITY_ENABLED=false): no events are recorded.')
        : errorBox(e));
      results.setAttribute('aria-busy', 'false');
      return;
    }
    if (mine !== seq) return;
    seen = new Set(data.events.map(e => e.control_execution_id));
    if (state.offset === 0 && data.events.length) newest = data.events[0].timestamp;
    const shownTo = state.offset + data.events.length;
    const t = table(['When', 'Agent', 'Control', h('th', { scope: 'col', class: 'hide-narrow' }, 'Stage'), 'Step', 'Action', 'Matched', 'Error', 'Trace',
      h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Details'))], data.events.map(ev => row(ev, false)), 'No events match.', { stack: true });
    tbody = t.querySelector('tbody');
    results.replaceChildren(t,
      h('div', { class: 'pager' },
        h('button', { type: 'button', id: 'events-newer', disabled: state.offset === 0, onclick: () => { state.offset = Math.max(0, state.offset - q.limit); load(); } }, 'Newer'),
        h('button', { type: 'button', id: 'events-older', disabled: shownTo >= data.total, onclick: () => { setLive(false); state.offset += q.limit; load(); } }, 'Older'),
        h('span', { id: 'events-count' }, data.total ? `${state.offset + 1}–${shownTo} of ${data.total}` : '0 events')));
    results.setAttribute('aria-busy', 'false');
  }

  // The live tail asks, every LIVE_MS, for the events from the newest one shown on (the cursor: start_time
  // is inclusive, so events of that same instant are asked again and told apart by their id), and adds
  // the new ones on top of the first page.
  let liveTimer = null, polling = false;
  function setLive(on) {
    clearTimeout(liveTimer);
    liveBtn.setAttribute('aria-pressed', String(on));
    liveBtn.textContent = on ? 'Pause live tail' : 'Live tail';
    if (!on) { liveStatus.textContent = liveStatus.textContent ? 'Live tail paused.' : ''; return; }
    exact.to = null; f.end.value = ''; // a tail has no end
    if (state.offset !== 0) { state.offset = 0; load(); }
    liveStatus.textContent = 'Live: waiting for new events…';
    tick();
  }
  async function tick() {
    if (!results.isConnected) return;
    if (!polling) {
      polling = true;
      try { await poll(); } catch (e) { liveStatus.textContent = 'Live tail: ' + (e.message || e); }
      polling = false;
    }
    if (liveBtn.getAttribute('aria-pressed') === 'true' && results.isConnected) liveTimer = setTimeout(tick, LIVE_MS);
  }
  async function poll() {
    const q = query();
    delete q.end_time;
    q.offset = 0;
    q.limit = 1000;
    if (newest && (!q.start_time || new Date(newest) > new Date(q.start_time))) q.start_time = newest;
    const data = await api.post('/observability/events/query', q);
    if (liveBtn.getAttribute('aria-pressed') !== 'true') return;
    const fresh = data.events.filter(e => !seen.has(e.control_execution_id));
    if (fresh.length) {
      for (const e of fresh) seen.add(e.control_execution_id);
      // Compare as times: RFC 3339 strings of varying fraction lengths do not sort as text.
      if (!newest || new Date(fresh[0].timestamp) >= new Date(newest)) newest = fresh[0].timestamp;
      if (!tbody || !tbody.isConnected) { await load(); }
      else {
        for (const tr of tbody.querySelectorAll('tr.new')) tr.classList.remove('new');
        tbody.prepend(...fresh.map(e => row(e, true)));
        const limit = Number(f.limit.value);
        while (tbody.children.length > limit) tbody.lastElementChild.remove();
        const c = document.getElementById('events-count');
        if (c) c.textContent = `newest ${tbody.children.length} shown`;
      }
    }
    liveStatus.textContent = `Live: checked at ${new Date().toLocaleTimeString()}, ${fresh.length} new.`;
  }
  await load();
}

// showEvent opens the detail view of one event: every field, its metadata, and links to its agent, its
// control, the other events of its trace and of its control.
export function showEvent(el, ev) {
  const old = document.getElementById('event-detail');
  if (old) old.remove();
  const dd = (v) => h('dd', {}, v === undefined || v === null || v === '' ? '—' : v);
  const dlg = h('dialog', { id: 'event-detail', 'aria-labelledby': 'event-detail-title' },
    h('h2', { id: 'event-detail-title' }, 'Event ', badge(ev.action, !ev.matched)),
    h('dl', { class: 'meta' },
      h('dt', {}, 'When'), dd(fmtTimeTZ(ev.timestamp)),
      h('dt', {}, 'UTC'), dd(h('span', { class: 'mono' }, ev.timestamp)),
      h('dt', {}, 'Agent'), dd(h('a', { href: '#/agents/' + encodeURIComponent(ev.agent_name) }, ev.agent_name)),
      h('dt', {}, 'Control'), dd(h('span', {}, h('a', { href: `#/controls/${ev.control_id}/activity` }, ev.control_name || '#' + ev.control_id),
        ev.control_version ? h('span', {}, ' (', h('a', { href: `#/controls/${ev.control_id}/history`, id: 'event-control-version' }, `version ${ev.control_version}`), ')') : null)),
      h('dt', {}, 'Stage'), dd(ev.check_stage),
      h('dt', {}, 'Step'), dd(`${ev.step_type}/${ev.step_name}`),
      h('dt', {}, 'Matched'), dd(ev.matched ? 'yes' : 'no'),
      h('dt', {}, 'Confidence'), dd(String(ev.confidence)),
      h('dt', {}, 'Duration'), dd(ev.execution_duration_ms !== undefined && ev.execution_duration_ms !== null ? ev.execution_duration_ms + ' ms' : ''),
      h('dt', {}, 'Evaluator'), dd(ev.evaluator_name),
      h('dt', {}, 'Selector'), dd(ev.selector_path && h('span', { class: 'mono' }, ev.selector_path)),
      h('dt', {}, 'Reason'), dd(ev.metadata && ev.metadata.reason ? h('span', { id: 'event-reason' }, ev.metadata.reason) : ''),
      h('dt', {}, 'Approval'), dd(ev.metadata && ev.metadata.approval_id
        ? h('a', { class: 'mono', id: 'event-approval', href: '#/approvals/' + encodeURIComponent(ev.metadata.approval_id) }, ev.metadata.approval_id) : ''),
      h('dt', {}, 'API key'), dd(ev.key_name ? h('span', { class: 'mono', id: 'event-key' }, ev.key_name) : ''),
      h('dt', {}, 'Error'), dd(ev.error_message),
      h('dt', {}, 'Source'), dd(ev.source),
      h('dt', {}, 'Trace'), dd(ev.trace_id && h('a', { class: 'mono', href: '#/events?trace=' + encodeURIComponent(ev.trace_id) }, ev.trace_id)),
      h('dt', {}, 'Session'), dd(ev.session_id && h('a', { class: 'mono', id: 'event-session', href: sessionHref(ev.agent_name, ev.session_id) }, ev.session_id)),
      h('dt', {}, 'Span'), dd(ev.span_id && h('span', { class: 'mono' }, ev.span_id)),
      h('dt', {}, 'Execution id'), dd(h('span', { class: 'mono' }, ev.control_execution_id))),
    ev.metadata && Object.keys(ev.metadata).length ? [h('h3', {}, 'Metadata'), h('pre', {}, JSON.stringify(ev.metadata, null, 2))] : null,
    h('div', { class: 'toolbar' },
      h('a', { class: 'button', href: '#/events?control=' + ev.control_id, id: 'event-control-events' }, 'Events of this control'),
      h('button', { type: 'button', id: 'close-event', onclick: () => dlg.close() }, 'Close')));
  dlg.addEventListener('close', () => dlg.remove());
  // A link inside leaves the page: close the dialog first so it does not stay over the next one.
  dlg.addEventListener('click', (e) => { if (e.target.closest('a')) dlg.close(); });
  el.append(dlg);
  dlg.showModal();
}

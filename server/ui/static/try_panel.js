// "Try it": evaluates the control being edited, as drafted (unsaved), on a sample step with
// POST /controls/try, and shows the result exactly as the engine returns it. The step is typed, or
// filled from an agent's registered steps or from a recorded event (events keep the step's type, name
// and stage, not its payload: the input is then typed).
import { h, field, badge, errorBox } from './dom.js';
import { api, session } from './api.js';

// parseValue reads a step payload: JSON when it parses as JSON, else the text itself.
function parseValue(s) {
  if (s.trim() === '') return undefined;
  try { return JSON.parse(s); } catch { return s; }
}

// draft returns { data, problems } for the form being edited.
export function tryPanel(draft, control) {
  const ro = session.readOnly;
  const t = {
    // aria-label (the label's own text) gives it a name that does not change as its options load.
    source: h('select', { id: 'try-source', 'aria-label': 'Step from' }, h('option', { value: '' }, 'Type a step…')),
    stage: h('select', { id: 'try-stage' }, h('option', { value: 'pre' }, 'pre'), h('option', { value: 'post' }, 'post')),
    type: h('input', { type: 'text', id: 'try-type', value: 'llm', autocomplete: 'off' }),
    name: h('input', { type: 'text', id: 'try-name', value: 'chat', autocomplete: 'off' }),
    input: h('textarea', { id: 'try-input', rows: 3, spellcheck: 'false' }),
    output: h('textarea', { id: 'try-output', rows: 2, spellcheck: 'false' }),
    context: h('textarea', { id: 'try-context', rows: 2, spellcheck: 'false', placeholder: '{"user_role": "guest"}' }),
  };
  const result = h('div', { id: 'try-result', 'aria-live': 'polite' });
  const options = new Map(); // option value -> step fields to fill in

  // The sources: every registered step of the first agents, and the recent events of this control.
  (async () => {
    try {
      const { agents } = await api.get('/agents?limit=20');
      const groups = await Promise.all(agents.map(async a => {
        const d = await api.get('/agents/' + encodeURIComponent(a.agent_name));
        return h('optgroup', { label: `Steps of ${a.agent_name}` }, (d.steps || []).map((s, i) => {
          const v = `step:${a.agent_name}:${i}`;
          options.set(v, { type: s.type, name: s.name });
          return h('option', { value: v }, `${s.type}/${s.name}`);
        }));
      }));
      t.source.append(...groups.filter(g => g.children.length));
    } catch { /* optional */ }
    try {
      const q = { limit: 15 };
      if (control) q.control_ids = [control.control_id];
      const { events } = await api.post('/observability/events/query', q);
      if (events.length) {
        t.source.append(h('optgroup', { label: control ? 'Recent events of this control' : 'Recent events' }, events.map((e, i) => {
          const v = `event:${i}`;
          options.set(v, { type: e.step_type, name: e.step_name, stage: e.check_stage });
          return h('option', { value: v }, `${new Date(e.timestamp).toLocaleTimeString()} ${e.agent_name}: ${e.step_type}/${e.step_name} (${e.check_stage})`);
        })));
      }
    } catch { /* optional: observability may be off */ }
    t.source.dataset.ready = 'true';
  })();
  t.source.addEventListener('change', () => {
    const o = options.get(t.source.value);
    if (!o) return;
    t.type.value = o.type; t.name.value = o.name;
    if (o.stage) t.stage.value = o.stage;
  });

  async function run() {
    const { data, problems } = draft();
    if (problems.length) {
      result.replaceChildren(h('div', { class: 'notice', role: 'status' }, 'Fix the control\'s problems first: ' + problems.map(p => (p.field ? p.field + ': ' : '') + p.message).join('; ')));
      return;
    }
    const step = { type: t.type.value.trim(), name: t.name.value.trim() };
    for (const k of ['input', 'output']) { const v = parseValue(t[k].value); if (v !== undefined) step[k] = v; }
    if (t.context.value.trim()) {
      try { step.context = JSON.parse(t.context.value); } catch { result.replaceChildren(errorBox('The context must be a JSON object.')); return; }
    }
    result.setAttribute('aria-busy', 'true');
    try {
      const res = await api.post('/controls/try', { data, step, stage: t.stage.value });
      const m = (res.matches || []).length, e = (res.errors || []).length;
      result.replaceChildren(
        h('div', { class: 'try-summary', id: 'try-summary' }, 'Decision ', badge(res.decision), ' · ',
          m ? `the control matched${res.matches[0].result && res.matches[0].result.message ? ' (' + res.matches[0].result.message + ')' : ''}` : e ? 'the evaluator failed' : 'the control did not match',
          res.is_safe ? ' · safe' : ' · not safe'),
        h('pre', { id: 'try-json' }, JSON.stringify(res, null, 2)));
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
    result.setAttribute('aria-busy', 'false');
  }

  return h('section', { class: 'card', id: 'try-panel', 'aria-labelledby': 'try-title' },
    h('h2', { id: 'try-title' }, 'Try it'),
    h('p', { class: 'muted small' }, 'Evaluates the control as drafted above (without saving it) on one step, and shows the result as the engine returns it.'),
    h('div', { class: 'grid3' }, field('Step from', t.source), field('Stage', t.stage), field('Step type', t.type), field('Step name', t.name)),
    h('div', { class: 'grid3' }, field('Input', t.input, 'text, or JSON'), field('Output', t.output, 'text, or JSON'), field('Context', t.context, 'JSON object')),
    h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'primary', id: 'try-run', disabled: ro, title: ro ? 'A read-only key cannot try controls' : null, onclick: run }, 'Try it')),
    result);
}

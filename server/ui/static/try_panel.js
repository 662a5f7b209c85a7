// "Try it": evaluates the control being edited, as drafted (unsaved), on a sample step with
// POST /controls/try, and shows the result exactly as the engine returns it. The step is typed, or
// filled from an agent's registered steps or from a recorded event (events keep the step's type, name
// and stage, not its payload: the input is then typed), or from an agent's captured steps (real traffic,
// redacted as stored: GET /steps/captured, admin key), which fill the payload too. "Use as test" hands
// the step being tried to the Tests section's form.
import { h, field, badge, errorBox } from './dom.js';
import { api, session, qs } from './api.js';

// parseValue reads a step payload: JSON when it parses as JSON, else the text itself.
function parseValue(s) {
  if (s.trim() === '') return undefined;
  try { return JSON.parse(s); } catch { return s; }
}

// showValue is parseValue's inverse: the text that reads back as v. A string is shown as itself unless
// it would read back as something else (JSON-looking text, blank text), then as a JSON string.
function showValue(v) {
  if (v === undefined) return '';
  if (typeof v === 'string' && v.trim() !== '' && parseValue(v) === v) return v;
  return JSON.stringify(v, null, 2);
}

// CAPTURED_PER_AGENT bounds the captured steps offered per agent (newest first).
const CAPTURED_PER_AGENT = 10;

// capturedLabel names a captured step in the picker: when, what, at which stage, what it got, and the
// start of its input.
function capturedLabel(c, step) {
  const input = step.input === undefined ? '' : typeof step.input === 'string' ? step.input : JSON.stringify(step.input);
  const snippet = input.length > 40 ? input.slice(0, 40) + '…' : input;
  return `${new Date(c.timestamp).toLocaleTimeString()} ${c.step_type}/${c.step_name} (${c.stage}, ${c.decision})${snippet ? ': ' + snippet : ''}`;
}

// draft returns { data, problems } for the form being edited.
// onUseAsTest(step, stage, expect), when given, receives the step being tried ("Use as test"); expect is
// 'match' or 'no_match' when the step was just tried as it stands, else undefined.
export function tryPanel(draft, control, onUseAsTest) {
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

  const note = h('p', { id: 'try-source-note', class: 'muted small', 'aria-live': 'polite' });

  // The sources: every registered step of the first agents, their captured steps (admin key only: they
  // hold payloads), and the recent events of this control.
  (async () => {
    try {
      const { agents } = await api.get('/agents?limit=20');
      const per = await Promise.all(agents.map(async a => {
        const d = await api.get('/agents/' + encodeURIComponent(a.agent_name));
        const steps = h('optgroup', { label: `Steps of ${a.agent_name}` }, (d.steps || []).map((s, i) => {
          const v = `step:${a.agent_name}:${i}`;
          options.set(v, { type: s.type, name: s.name });
          return h('option', { value: v }, `${s.type}/${s.name}`);
        }));
        let captured = null;
        if (!session.readOnly) {
          try {
            const page = await api.get('/steps/captured' + qs({ agent_name: a.agent_name, limit: CAPTURED_PER_AGENT }));
            if (page.steps.length) {
              captured = h('optgroup', { label: `Captured steps of ${a.agent_name}` }, page.steps.map(c => {
                const v = `captured:${a.agent_name}:${c.id}`;
                const step = c.step || {};
                options.set(v, { type: step.type || c.step_type, name: step.name || c.step_name, stage: c.stage, payload: step,
                  note: `Filled from a step of ${a.agent_name} captured at ${new Date(c.timestamp).toLocaleString()} (decided ${c.decision}), as stored: redacted.` });
                return h('option', { value: v }, capturedLabel(c, step));
              }));
            }
          } catch { /* optional: an agent without captured steps, or a key that cannot read them */ }
        }
        return { steps, captured };
      }));
      t.source.append(...per.map(p => p.steps).filter(g => g.children.length), ...per.map(p => p.captured).filter(Boolean));
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
    // A captured step has its payload: every field is filled (an absent one emptied).
    if (o.payload) {
      t.input.value = showValue(o.payload.input);
      t.output.value = showValue(o.payload.output);
      t.context.value = o.payload.context === undefined ? '' : JSON.stringify(o.payload.context, null, 2);
    }
    note.textContent = o.note || '';
  });

  // currentStep reads the panel into a step; it returns { step } or { error }.
  function currentStep() {
    const step = { type: t.type.value.trim(), name: t.name.value.trim() };
    for (const k of ['input', 'output']) { const v = parseValue(t[k].value); if (v !== undefined) step[k] = v; }
    if (t.context.value.trim()) {
      try { step.context = JSON.parse(t.context.value); } catch { return { error: 'The context must be a JSON object.' }; }
    }
    return { step };
  }
  // tried remembers the step and stage of the last result, to suggest a test's expectation.
  let tried = null;

  async function run() {
    const { data, problems } = draft();
    if (problems.length) {
      result.replaceChildren(h('div', { class: 'notice', role: 'status' }, 'Fix the control\'s problems first: ' + problems.map(p => (p.field ? p.field + ': ' : '') + p.message).join('; ')));
      return;
    }
    const { step, error } = currentStep();
    if (error) { result.replaceChildren(errorBox(error)); return; }
    result.setAttribute('aria-busy', 'true');
    tried = null;
    try {
      const res = await api.post('/controls/try', { data, step, stage: t.stage.value });
      const m = (res.matches || []).length, e = (res.errors || []).length;
      if (!e) tried = { key: JSON.stringify([step, t.stage.value, data]), expect: m ? 'match' : 'no_match' };
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

  // useAsTest puts the step being tried, and its stage, into the Tests section's form.
  const useStatus = h('span', { id: 'try-use-status', class: 'muted small', 'aria-live': 'polite' });
  function useAsTest() {
    const { step, error } = currentStep();
    if (error) { useStatus.replaceChildren(); result.replaceChildren(errorBox(error)); return; }
    const { data } = draft();
    const expect = tried && tried.key === JSON.stringify([step, t.stage.value, data]) ? tried.expect : undefined;
    onUseAsTest(step, t.stage.value, expect);
    useStatus.textContent = 'Copied to "Add a test from a sample step" in the Tests section.';
  }

  return h('section', { class: 'card', id: 'try-panel', 'aria-labelledby': 'try-title' },
    h('h2', { id: 'try-title' }, 'Try it'),
    h('p', { class: 'muted small' }, 'Evaluates the control as drafted above (without saving it) on one step, and shows the result as the engine returns it.'),
    h('div', { class: 'grid3' }, field('Step from', t.source), field('Stage', t.stage), field('Step type', t.type), field('Step name', t.name)),
    note,
    h('div', { class: 'grid3' }, field('Input', t.input, 'text, or JSON'), field('Output', t.output, 'text, or JSON'), field('Context', t.context, 'JSON object')),
    h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'primary', id: 'try-run', disabled: ro, title: ro ? 'A read-only key cannot try controls' : null, onclick: run }, 'Try it'),
      onUseAsTest ? h('button', { type: 'button', id: 'try-use-as-test', disabled: ro, title: ro ? 'A read-only key cannot add tests' : 'Add this step, at this stage, as one of the control\'s tests', onclick: useAsTest }, 'Use as test') : null,
      useStatus),
    result);
}

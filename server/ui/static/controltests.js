// Control tests and shadow mode in the control editor: the tests the control carries (data.tests), each
// with its outcome shown live through POST /controls/test as the condition is edited, a form to add one
// from a sample step, and what a shadow control would have done over the last 24 h.
import { h, clear, badge } from './dom.js';
import { api, qs } from './api.js';

// EXPECTS are the expectations a control's test can state.
const EXPECTS = [['match', 'matches'], ['no_match', 'does not match'], ['deny', 'decides deny'], ['steer', 'decides steer'], ['allow', 'decides allow']];

const expectOf = (v) => (v === 'match' || v === 'no_match') ? v : { decision: v };
const expectValue = (e) => typeof e === 'string' ? e : (e && e.decision) || 'match';

// testsPanel returns { el, tests(), refresh(data), fill(step, stage, expect) }: el is the editor's Tests
// section, tests() the tests as data.tests, refresh(data) runs them against the data being edited and
// shows each outcome, fill puts a sample step into the form that adds a test.
export function testsPanel(initial, ro, onChange) {
  let tests = (initial || []).map(t => ({ ...t }));
  const rows = h('tbody', { id: 'tests-rows' });
  const summary = h('span', { id: 'tests-summary', class: 'muted', 'aria-live': 'polite' });
  const problems = h('div', { class: 'problems', id: 'ctl-tests-problems', dataset: { field: 'tests' }, 'aria-live': 'polite' });
  let outcomes = [];

  function render() {
    clear(rows);
    tests.forEach((t, n) => {
      const o = outcomes[n];
      const state = !o ? h('span', { class: 'muted' }, '…')
        : h('span', { class: o.passed ? 'valid' : 'problem', title: o.message || '' }, o.passed ? 'pass' : 'FAIL');
      const got = o ? [o.outcome.replace('_', ' '), ' ', badge(o.decision)] : [];
      const expect = h('select', { 'aria-label': `Expectation of test ${t.name}`, disabled: ro, class: 'test-expect', onchange: (e) => {
        t.expect = expectOf(e.target.value); onChange();
      } }, EXPECTS.map(([v, label]) => h('option', { value: v, selected: expectValue(t.expect) === v }, label)));
      // data-label names each cell's column: on a phone each test is a labelled card (table.stack).
      rows.append(h('tr', { class: 'test-row', dataset: { index: String(n) } },
        h('td', { dataset: { label: 'Name' } }, t.name),
        h('td', { dataset: { label: 'Stage' } }, t.stage),
        h('td', { class: 'mono small', dataset: { label: 'Step' } }, JSON.stringify(t.step).slice(0, 120)),
        h('td', { dataset: { label: 'Expect' } }, expect),
        h('td', { class: 'test-outcome', dataset: { label: 'Outcome' } }, h('span', { class: 'cell' }, state, ' ', ...got, o && o.message ? h('div', { class: 'small muted test-message' }, o.message) : '')),
        h('td', {}, h('button', { type: 'button', class: 'test-remove', disabled: ro, 'aria-label': `Remove test ${t.name}`, onclick: () => {
          tests.splice(n, 1); outcomes.splice(n, 1); render(); onChange();
        } }, 'Remove'))));
    });
    const failed = outcomes.filter(o => o && !o.passed).length;
    summary.textContent = !tests.length ? 'No tests yet.' : outcomes.length !== tests.length ? `${tests.length} test(s)`
      : failed ? `${failed} of ${tests.length} failing: the control cannot be saved until they pass` : `${tests.length} passing`;
  }

  // The form that adds a test from a sample step.
  const a = {
    name: h('input', { type: 'text', id: 'test-name', disabled: ro, autocomplete: 'off' }),
    stage: h('select', { id: 'test-stage', disabled: ro }, h('option', { value: 'pre' }, 'pre'), h('option', { value: 'post' }, 'post')),
    expect: h('select', { id: 'test-expect', disabled: ro }, EXPECTS.map(([v, label]) => h('option', { value: v }, label))),
    step: h('textarea', { id: 'test-step', rows: 4, spellcheck: 'false', disabled: ro },
      JSON.stringify({ type: 'llm', name: 'chat', input: 'my ssn is 123-45-6789' }, null, 2)),
  };
  const addProblem = h('div', { class: 'problems', id: 'test-add-problems', 'aria-live': 'polite' });
  const addStatus = h('div', { class: 'muted small', id: 'test-add-status', 'aria-live': 'polite' });
  const add = h('button', { type: 'button', id: 'add-test', disabled: ro, onclick: () => {
    clear(addProblem); addStatus.textContent = '';
    let step;
    try { step = JSON.parse(a.step.value); } catch (e) { addProblem.append(h('div', { class: 'problem' }, 'Sample step: not valid JSON: ' + e.message)); return; }
    const name = a.name.value.trim() || `test ${tests.length + 1}`;
    if (tests.some(t => t.name === name)) { addProblem.append(h('div', { class: 'problem' }, 'Test name: another test has it')); return; }
    tests.push({ name, step, stage: a.stage.value, expect: expectOf(a.expect.value) });
    a.name.value = '';
    render(); onChange();
  } }, 'Add test');

  const el = h('section', { class: 'card', id: 'control-tests', 'aria-labelledby': 'tests-heading' },
    h('h2', { id: 'tests-heading' }, 'Tests'),
    h('p', { class: 'muted small' }, 'Examples the control must agree with: they run on every save (a failing test refuses the save) and live here as you edit. ',
      'The control is tested alone, as if enabled and enforced.'),
    h('div', { class: 'table-wrap' }, h('table', { class: 'tests stack' }, h('thead', {}, h('tr', {}, ...['Name', 'Stage', 'Step', 'Expect', 'Outcome', ''].map(x => h('th', { scope: 'col' }, x)))), rows)),
    summary, problems,
    h('fieldset', { class: 'field' }, h('legend', {}, 'Add a test from a sample step'),
      h('label', { for: a.step.id }, 'Sample step (JSON: type, name, input, output, context)'), a.step,
      h('div', { class: 'toolbar' },
        h('label', { for: a.name.id }, 'Name'), a.name,
        h('label', { for: a.stage.id }, 'Stage'), a.stage,
        h('label', { for: a.expect.id }, 'Expect'), a.expect, add),
      addStatus, addProblem));

  // fill puts a sample step (from the Try it panel: a registered, recorded, captured or typed step) and
  // its stage into the form, with the expectation its last try suggests, and takes the operator there
  // to name it and add it.
  function fill(step, stage, expect) {
    a.step.value = JSON.stringify(step, null, 2);
    a.stage.value = stage;
    if (expect) a.expect.value = expect;
    clear(addProblem);
    addStatus.textContent = 'Sample step filled from Try it' + (expect ? ` (it ${expect === 'match' ? 'matched' : 'did not match'} when tried)` : '') + ': name the test, check what it expects, then Add test.';
    a.name.scrollIntoView({ block: 'center' });
    a.name.focus();
  }

  let seq = 0;
  async function refresh(data) {
    if (!tests.length) { outcomes = []; render(); return; }
    const mine = ++seq;
    try {
      const res = await api.post('/controls/test', { data: { ...data, tests } });
      if (mine !== seq) return;
      outcomes = res.tests;
    } catch (e) {
      if (mine !== seq) return;
      outcomes = []; // the data is not valid yet: its problems are shown by the editor
    }
    render();
  }
  render();
  return { el, tests: () => tests, refresh, fill };
}

// shadowPanel shows what a shadow control would have done over the last 24 h, per agent it is linked
// to, with links to those events.
export async function shadowPanel(control) {
  const box = h('section', { class: 'card', id: 'shadow-report', 'aria-labelledby': 'shadow-heading' },
    h('h2', { id: 'shadow-heading' }, 'Shadow mode: what it would have done (last 24 h)'));
  let agents = [];
  try {
    const page = await api.get('/agents' + qs({ limit: 100 }));
    agents = page.agents || [];
  } catch (e) { box.append(h('p', { class: 'muted' }, 'Agents could not be listed.')); return box; }
  let any = false;
  for (const ag of agents) {
    const name = ag.agent_name;
    let st;
    try { st = await api.get(`/observability/stats/controls/${control.control_id}` + qs({ agent_name: name, time_range: '24h' })); } catch { continue; }
    const s = st.shadow;
    if (!s || !s.execution_count) continue;
    any = true;
    const verb = { deny: 'denied', steer: 'steered', warn: 'warned on', log: 'logged', observe: 'logged', allow: 'allowed' }[control.data.action.decision] || 'matched';
    const n = s.action_counts[control.data.action.decision === 'observe' ? 'log' : control.data.action.decision] ?? s.match_count;
    box.append(h('p', { class: 'shadow-line' }, `${name}: would have ${verb} ${n} of ${s.execution_count} steps`,
      s.error_count ? ` (${s.error_count} evaluation errors)` : '', ' · ',
      h('a', { href: `#/events?agent=${encodeURIComponent(name)}&control=${control.control_id}&shadow=true`, class: 'shadow-events' }, 'see those events')));
  }
  if (!any) box.append(h('p', { class: 'muted', id: 'shadow-none' }, 'No shadow evaluations recorded in the last 24 h.'));
  return box;
}

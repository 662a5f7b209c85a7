// Controls: the filtered list, and the editor that creates or edits one control with live validation
// through POST /controls/validate.
import { h, clear, field, fmtTime, badge, errorBox, table, pageHead } from './dom.js';
import { api, qs, session } from './api.js';
import { pager } from './agents.js';
import { replayPanel } from './replay.js';
import { testsPanel, shadowPanel } from './controltests.js';
import { conditionEditor } from './condition_editor.js';
import { tryPanel } from './try_panel.js';
import { templatePicker } from './control_templates.js';

export async function controlsView(el) {
  const state = { cursors: [''], page: 0 };
  const f = {
    name: h('input', { type: 'search', id: 'flt-name' }),
    enabled: h('select', { id: 'flt-enabled' }, h('option', { value: '' }, 'any'), h('option', { value: 'true' }, 'enabled'), h('option', { value: 'false' }, 'disabled')),
    tag: h('input', { type: 'text', id: 'flt-tag' }),
    step_type: h('input', { type: 'text', id: 'flt-type', placeholder: 'llm, tool…' }),
    stage: h('select', { id: 'flt-stage' }, h('option', { value: '' }, 'any'), h('option', { value: 'pre' }, 'pre'), h('option', { value: 'post' }, 'post')),
  };
  const results = h('div', { id: 'controls-results' });
  el.append(pageHead('Controls',
    session.readOnly
      ? h('button', { type: 'button', class: 'primary', id: 'new-control', disabled: true, title: 'A read-only key cannot create controls' }, 'New control')
      : h('a', { class: 'button primary', href: '#/controls/new', id: 'new-control' }, 'New control')),
  h('form', { class: 'toolbar', onsubmit: (e) => { e.preventDefault(); state.cursors = ['']; state.page = 0; load(); } },
    field('Name', f.name), field('Enabled', f.enabled), field('Tag', f.tag), field('Step type', f.step_type), field('Stage', f.stage),
    h('button', { type: 'submit' }, 'Filter')),
  results);

  let seq = 0;
  async function load() {
    const mine = ++seq;
    results.setAttribute('aria-busy', 'true');
    let data;
    try {
      data = await api.get('/controls' + qs({ name: f.name.value.trim(), enabled: f.enabled.value, tag: f.tag.value.trim(),
        step_type: f.step_type.value.trim(), stage: f.stage.value, limit: 20, cursor: state.cursors[state.page] }));
    } catch (e) { if (mine === seq) { results.replaceChildren(errorBox(e)); results.setAttribute('aria-busy', 'false'); } return; }
    if (mine !== seq) return; // a newer search is on its way
    const rows = data.controls.map(c => h('tr', {},
      h('td', {}, h('a', { href: '#/controls/' + c.control_id }, c.name),
        c.mode === 'shadow' ? h('span', { class: 'badge shadow', title: 'Shadow: evaluated and recorded, never part of a decision' }, 'shadow') : null),
      h('td', {}, badge(c.decision)),
      h('td', {}, c.enabled ? 'enabled' : h('span', { class: 'muted' }, 'disabled')),
      h('td', { class: 'hide-narrow' }, (c.stages || []).join(', ') || 'pre, post'),
      h('td', { class: 'hide-narrow' }, (c.step_types || []).join(', ') || 'all'),
      h('td', { class: 'hide-narrow' }, (c.tags || []).join(', ')),
      h('td', {}, String(c.agent_count)),
      h('td', { class: 'hide-narrow' }, fmtTime(c.updated_at))));
    results.replaceChildren(table(['Name', 'Action', 'State', h('th', { class: 'hide-narrow', scope: 'col' }, 'Stages'), h('th', { class: 'hide-narrow', scope: 'col' }, 'Step types'),
      h('th', { class: 'hide-narrow', scope: 'col' }, 'Tags'), 'Agents', h('th', { class: 'hide-narrow', scope: 'col' }, 'Updated')], rows, 'No controls match.'));
    results.append(pager(data.pagination, state, load));
    results.setAttribute('aria-busy', 'false');
  }
  await load();
}


const list = (s) => s.split(',').map(x => x.trim()).filter(Boolean);
const lines = (s) => s.split('\n').map(x => x.trim()).filter(Boolean);

// The decisions of the control language; observe is the reference implementation's name and behaves as log,
// but a control keeps the name it was saved with.
const DECISIONS = ['deny', 'steer', 'warn', 'log', 'observe', 'allow'];
const DEFAULT_CONDITION = { selector: { path: 'input' }, evaluator: { name: 'regex', config: { pattern: '\\b\\d{3}-\\d{2}-\\d{4}\\b' } } };

// NAME_RE is the contract's rule for control names.
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,254}$/;

// FIELD_OF maps a problem path (without the "data." prefix) to the editor field that shows it; the
// first matching prefix wins.
const FIELD_OF = [
  ['name', 'name'],
  ['description', 'description'], ['enabled', 'enabled'], ['execution', 'execution'], ['tags', 'tags'],
  ['scope.step_types', 'step_types'], ['scope.step_names', 'step_names'], ['scope.step_name_regex', 'step_name_regex'],
  ['scope.stages', 'stages'], ['scope', 'stages'],
  ['action.steering_context.required_actions', 'required_actions'], ['action.steering_context', 'steering_message'],
  ['action.decision', 'decision'], ['action.metadata', 'action_metadata'], ['action.session', 'action_session'], ['action', 'decision'],
  ['condition', 'condition'], ['selector', 'condition'], ['evaluator', 'condition'],
  ['mode', 'mode'], ['tests', 'tests'],
];

function fieldFor(path) {
  const p = path.replace(/^data(\.|$)/, '');
  for (const [prefix, key] of FIELD_OF) if (p === prefix || p.startsWith(prefix + '.')) return key;
  return 'form';
}

// flash is a message for the next editor shown (after a create, the page changes route).
let flash = null;

// controlEditView shows the editor of control controlId, or of a new control when controlId is null;
// prefill ({ name, data, title, omitted }) starts a new control from a rendered template.
export async function controlEditView(el, controlId, prefill) {
  let control = null, data = prefill ? prefill.data : null;
  if (controlId !== null) {
    try {
      control = await api.get('/controls/' + controlId);
    } catch (e) {
      if (e.code !== 'CONTROL_NOT_FOUND') throw e;
      // A deleted control keeps its history: offer it.
      el.append(h('h1', {}, `Control #${controlId}`), h('div', { class: 'notice', role: 'status' }, 'This control does not exist (it may have been deleted). ',
        h('a', { href: `#/controls/${controlId}/history`, id: 'history-link' }, 'See its version history'), '.'));
      return;
    }
    data = control.data;
  }
  const d = data || { description: '', enabled: true, execution: 'server', scope: { stages: ['pre'] }, condition: DEFAULT_CONDITION, action: { decision: 'deny' }, tags: [] };
  const sc = d.scope || {};
  const act = d.action || {};
  const steer = act.steering_context || {};
  const ro = session.readOnly;
  const i = {
    name: h('input', { type: 'text', id: 'ctl-name', value: control ? control.name : (prefill ? prefill.name : ''), required: true, disabled: ro, autocomplete: 'off', spellcheck: 'false' }),
    description: h('textarea', { id: 'ctl-description', disabled: ro, rows: 2 }, d.description || ''),
    enabled: h('input', { type: 'checkbox', id: 'ctl-enabled', checked: d.enabled !== false, disabled: ro }),
    execution: h('select', { id: 'ctl-execution', disabled: ro }, ['server', 'sdk'].map(x => h('option', { value: x, selected: (d.execution || 'server') === x }, x))),
    step_types: h('input', { type: 'text', id: 'ctl-step-types', value: (sc.step_types || []).join(', '), disabled: ro }),
    step_names: h('input', { type: 'text', id: 'ctl-step-names', value: (sc.step_names || []).join(', '), disabled: ro }),
    step_name_regex: h('input', { type: 'text', id: 'ctl-step-regex', value: sc.step_name_regex || '', disabled: ro, spellcheck: 'false' }),
    pre: h('input', { type: 'checkbox', id: 'ctl-stage-pre', checked: !sc.stages || sc.stages.includes('pre'), disabled: ro }),
    post: h('input', { type: 'checkbox', id: 'ctl-stage-post', checked: !sc.stages || sc.stages.includes('post'), disabled: ro }),
    decision: h('select', { id: 'ctl-decision', disabled: ro }, DECISIONS.map(x => h('option', { value: x, selected: (act.decision || 'deny') === x }, x === 'observe' ? 'observe (same as log)' : x))),
    steering_message: h('input', { type: 'text', id: 'ctl-steer-message', value: steer.message || '', disabled: ro }),
    required_actions: h('textarea', { id: 'ctl-steer-actions', disabled: ro, rows: 3 }, (steer.required_actions || []).join('\n')),
    action_metadata: h('textarea', { id: 'ctl-action-metadata', disabled: ro, rows: 3, spellcheck: 'false' }, act.metadata ? JSON.stringify(act.metadata, null, 2) : ''),
    action_session: h('textarea', { id: 'ctl-action-session', disabled: ro, rows: 3, spellcheck: 'false' }, act.session ? JSON.stringify(act.session, null, 2) : ''),
    tags: h('input', { type: 'text', id: 'ctl-tags', value: (d.tags || []).join(', '), disabled: ro }),
    condition: h('textarea', { id: 'ctl-condition', class: 'tall', spellcheck: 'false', disabled: ro }, JSON.stringify(d.condition || DEFAULT_CONDITION, null, 2)),
    mode: h('select', { id: 'ctl-mode', disabled: ro }, [['enforce', 'enforce'], ['shadow', 'shadow (record what it would do, never block)']].map(([v, l]) => h('option', { value: v, selected: (d.mode || 'enforce') === v }, l))),
  };
  const testsBox = testsPanel(d.tests, ro, () => schedule());
  // Short text areas grow with their content (up to a point) instead of hiding lines.
  for (const ta of [i.description, i.required_actions, i.action_metadata, i.action_session]) {
    const fit = () => { ta.rows = Math.min(14, Math.max(2, ta.value.split('\n').length)); };
    fit();
    ta.addEventListener('input', fit);
  }
  // inputsOf lists the inputs a problems box belongs to (to mark them aria-invalid).
  const inputsOf = (key) => key === 'stages' ? [i.pre, i.post] : i[key] ? [i[key]] : [];
  const status = h('div', { id: 'form-status', 'aria-live': 'polite' });
  const stagesProblems = h('div', { class: 'problems', id: 'ctl-stages-problems', dataset: { field: 'stages' }, 'aria-live': 'polite' });
  i.pre.setAttribute('aria-describedby', stagesProblems.id);
  i.post.setAttribute('aria-describedby', stagesProblems.id);
  const stagesBox = h('fieldset', { class: 'field' }, h('legend', {}, 'Stages'),
    h('label', { class: 'inline', for: i.pre.id }, i.pre, 'pre (before the call)'),
    h('label', { class: 'inline', for: i.post.id }, i.post, 'post (after the call)'),
    stagesProblems);
  const enabledProblems = h('div', { class: 'problems', id: 'ctl-enabled-problems', dataset: { field: 'enabled' } });
  i.enabled.setAttribute('aria-describedby', enabledProblems.id);
  const steerOnly = [];
  // The replay of the edit against the captured steps (replay.js); it reads the form as Save does.
  const replay = replayPanel({ control, name: () => i.name.value.trim(), draft: () => collect(), readOnly: ro });

  // collect reads the form into control data; problems holds what can be told without the server.
  function collect() {
    const problems = [];
    const name = i.name.value.trim();
    if (!name) problems.push({ field: 'name', message: 'is required' });
    else if (!NAME_RE.test(name)) problems.push({ field: 'name', message: 'must be 1-255 letters, digits, _ or -, starting with a letter or digit' });
    const out = {
      description: i.description.value, enabled: i.enabled.checked, execution: i.execution.value,
      scope: {}, action: { decision: i.decision.value }, tags: list(i.tags.value),
    };
    if (list(i.step_types.value).length) out.scope.step_types = list(i.step_types.value);
    if (list(i.step_names.value).length) out.scope.step_names = list(i.step_names.value);
    if (i.step_name_regex.value.trim()) out.scope.step_name_regex = i.step_name_regex.value.trim();
    out.scope.stages = [i.pre.checked && 'pre', i.post.checked && 'post'].filter(Boolean);
    if (i.decision.value === 'steer') {
      out.action.steering_context = { message: i.steering_message.value.trim(), required_actions: lines(i.required_actions.value) };
    }
    let jsonOK = true;
    if (i.action_metadata.value.trim()) {
      try { out.action.metadata = JSON.parse(i.action_metadata.value); } catch { jsonOK = false; problems.push({ field: 'data.action.metadata', message: 'is not valid JSON' }); }
    }
    if (i.action_session.value.trim()) {
      try { out.action.session = JSON.parse(i.action_session.value); } catch { jsonOK = false; problems.push({ field: 'data.action.session', message: 'is not valid JSON' }); }
    }
    if (act.redact) out.action.redact = act.redact; // not edited here: kept as loaded
    try { out.condition = JSON.parse(i.condition.value); } catch (e) { jsonOK = false; problems.push({ field: 'data.condition', message: 'is not valid JSON: ' + e.message }); }
    if (i.mode.value === 'shadow' || d.mode) out.mode = i.mode.value;
    if (testsBox.tests().length) out.tests = testsBox.tests();
    return { data: out, problems, jsonOK };
  }

  function showProblems(problems) {
    for (const box of el.querySelectorAll('.problems')) clear(box);
    for (const inp of Object.values(i)) inp.removeAttribute('aria-invalid');
    for (const p of problems) {
      const key = fieldFor(p.field || '');
      const box = el.querySelector(`.problems[data-field="${key}"]`) || el.querySelector('.problems[data-field="form"]');
      const rel = (p.field || '').replace(/^data(\.|$)/, '');
      box.append(h('div', { class: 'problem', dataset: { path: p.field || '' } }, (key === 'condition' && rel ? rel + ': ' : '') + p.message));
      for (const inp of inputsOf(key)) inp.setAttribute('aria-invalid', 'true');
    }
  }

  function syncSteer() {
    const on = i.decision.value === 'steer';
    for (const box of steerOnly) box.hidden = !on;
  }

  let timer = null, seq = 0;
  async function validate() {
    const { data: body, problems, jsonOK } = collect();
    const mine = ++seq;
    if (!jsonOK) { showProblems(problems); status.replaceChildren(); return false; }
    let serverProblems = [];
    try {
      await api.post('/controls/validate', { data: body });
    } catch (e) {
      if (mine !== seq) return false;
      if (e.status === 422) serverProblems = e.problems.length ? e.problems : [{ field: '', message: e.message }];
      else if (e.status === 403) return false; // read-only key: nothing to validate against
      else { status.replaceChildren(errorBox(e)); return false; }
    }
    if (mine !== seq) return false;
    testsBox.refresh(body);
    const all = problems.concat(serverProblems);
    showProblems(all);
    status.replaceChildren(all.length ? h('span', { class: 'problem-count' }, `${all.length} problem${all.length > 1 ? 's' : ''} to fix`)
      : h('span', { class: 'valid', id: 'valid-mark' }, 'Valid'));
    return all.length === 0;
  }
  const schedule = () => { clearTimeout(timer); timer = setTimeout(validate, 300); };

  const form = h('form', { class: 'card', id: 'control-form', novalidate: true, oninput: schedule, onchange: () => { syncSteer(); schedule(); }, onsubmit: async (e) => {
    e.preventDefault();
    if (ro) return;
    clearTimeout(timer);
    const { data: body, problems } = collect();
    if (problems.length) { showProblems(problems); status.replaceChildren(h('span', { class: 'problem-count' }, 'Fix the problems first')); return; }
    const save = form.querySelector('#save-control');
    save.disabled = true;
    try {
      if (control === null) {
        const res = await api.put('/controls', { name: i.name.value.trim(), data: body });
        flash = `Created control ${i.name.value.trim()}.`;
        location.hash = '#/controls/' + res.control_id;
        return;
      }
      if (i.name.value.trim() !== control.name) await api.patch('/controls/' + control.control_id, { name: i.name.value.trim() });
      const res = await api.put(`/controls/${control.control_id}/data`, { data: body });
      control = await api.get('/controls/' + control.control_id);
      showProblems([]);
      heading.textContent = `Control ${control.name}`;
      meta.textContent = metaText(control);
      status.replaceChildren(h('div', { class: 'ok-box', id: 'saved', role: 'status' }, `Saved as version ${res.version}.`));
    } catch (err) {
      if (err.status === 422) showProblems(err.problems);
      if (err.code === 'CONTROL_NAME_CONFLICT') showProblems([{ field: 'name', message: 'is already used by another control' }]);
      status.replaceChildren(errorBox(err));
    } finally {
      save.disabled = false;
    }
  } },
  h('div', { class: 'problems', id: 'ctl-form-problems', dataset: { field: 'form' }, 'aria-live': 'polite' }),
  h('div', { class: 'grid2' },
    h('div', {},
      field('Name', i.name, 'letters, digits, _ and -', 'name'),
      field('Description', i.description, null, 'description'),
      h('div', { class: 'field' }, h('label', { class: 'inline', for: i.enabled.id }, i.enabled, 'Enabled'), enabledProblems),
      field('Execution', i.execution, 'server: POST /evaluation; sdk: in the agent', 'execution'),
      field('Mode', i.mode, 'shadow: evaluated and recorded on real traffic, never part of the decision', 'mode'),
      field('Tags', i.tags, 'comma-separated', 'tags'),
      h('h2', {}, 'Scope'),
      field('Step types', i.step_types, 'comma-separated; empty: every type', 'step_types'),
      field('Step names', i.step_names, 'comma-separated exact names', 'step_names'),
      field('Step name regex', i.step_name_regex, 'searched in the step name', 'step_name_regex'),
      stagesBox,
      h('h2', {}, 'Action'),
      field('Decision', i.decision, null, 'decision'),
      steerOnly[steerOnly.push(field('Steering message', i.steering_message, 'required for steer', 'steering_message')) - 1],
      steerOnly[steerOnly.push(field('Required actions', i.required_actions, 'one per line', 'required_actions')) - 1],
      field('Action metadata (JSON)', i.action_metadata, 'optional, e.g. {"severity": "high"}', 'action_metadata'),
      field('Session effect (JSON)', i.action_session, 'optional, e.g. {"add_labels": ["untrusted"]} (docs/control-language.md, Sessions)', 'action_session')),
    h('div', {},
      h('h2', {}, 'Condition'),
      conditionEditor(i.condition, ro),
      field('Condition (JSON)', i.condition, 'a leaf {selector, evaluator} or {"and"|"or": [...]}, {"not": ...}', 'condition'),
      h('button', { type: 'button', id: 'format-condition', disabled: ro, onclick: () => {
        try { i.condition.value = JSON.stringify(JSON.parse(i.condition.value), null, 2); schedule(); }
        catch { validate(); }
      } }, 'Format JSON'),
      h('p', { class: 'muted small' }, 'See ', h('a', { href: '#/evaluators' }, 'the evaluators'), ' for their config schemas.'))),
  testsBox.el,
  h('div', { class: 'toolbar form-actions' }, h('button', { type: 'submit', class: 'primary', id: 'save-control', disabled: ro }, control ? 'Save' : 'Create control'), replay.button, status),
  replay.out);

  const heading = h('h1', {}, control ? `Control ${control.name}` : 'New control');
  const metaText = (c) => `#${c.control_id} · version ${c.version} · ${c.enabled ? 'enabled' : 'disabled'} · updated ${fmtTime(c.updated_at)}`;
  const meta = h('span', { class: 'grow muted', id: 'control-meta' }, control ? metaText(control) : '');
  el.append(heading);
  if (flash) { el.append(h('div', { class: 'ok-box', id: 'created', role: 'status' }, flash)); flash = null; }
  if (control === null && !ro) {
    if (prefill) {
      el.append(h('div', { class: 'notice', id: 'from-template', role: 'status' }, `Filled from the template ${prefill.title}. Review it, then create the control.`,
        prefill.omitted.length ? h('ul', {}, prefill.omitted.map(o => h('li', {}, `Its test "${o.name}" was left out: ${o.message}.`))) : null,
        ' ', h('a', { href: '#/controls/new', id: 'other-template', onclick: (e) => { e.preventDefault(); clear(el); controlEditView(el, null); } }, 'Start again')));
    } else {
      el.append(await templatePicker((r) => { clear(el); controlEditView(el, null, r).then(() => el.querySelector('#ctl-name').focus()); }));
    }
  }
  if (control) {
    el.append(h('div', { class: 'toolbar' }, meta,
      h('a', { class: 'button', href: `#/controls/${control.control_id}/activity`, id: 'activity-link' }, 'Activity'),
      h('a', { class: 'button', href: `#/controls/${control.control_id}/history`, id: 'history-link' }, 'History'),
      h('button', { type: 'button', id: 'toggle-enabled', disabled: ro, onclick: async () => {
        try { await api.patch('/controls/' + control.control_id, { enabled: !control.enabled }); clear(el); await controlEditView(el, control.control_id); }
        catch (err) { status.replaceChildren(errorBox(err)); }
      } }, control.enabled ? 'Disable' : 'Enable'),
      data && data.mode === 'shadow' ? h('button', { type: 'button', id: 'promote-control', disabled: ro, onclick: async () => {
        try { await api.patch('/controls/' + control.control_id, { mode: 'enforce' }); flash = 'Promoted: the control now enforces its decision.'; clear(el); await controlEditView(el, control.control_id); }
        catch (err) { status.replaceChildren(errorBox(err)); }
      } }, 'Promote to enforce') : '',
      h('button', { type: 'button', class: 'danger', id: 'delete-control', disabled: ro, onclick: () => confirmDelete(el, control) }, 'Delete')));
    if (!data) el.append(h('div', { class: 'notice' }, 'This control has no data yet: it is disabled until you save a condition and an action.'));
  }
  el.append(form);
  if (control && data && data.mode === 'shadow') el.append(await shadowPanel(control));
  // The name is not needed to try the draft.
  el.append(tryPanel(() => { const c = collect(); return { data: c.data, problems: c.problems.filter(p => p.field !== 'name') }; }, control,
    (step, stage, expect) => testsBox.fill(step, stage, expect)));
  syncSteer();
  if (!ro) validate();
}

// inUseAgents reads the agent names out of a CONTROL_IN_USE problem ("... linked to 2 agent(s): a, b; ...").
function inUseAgents(message) {
  const m = message.match(/agent\(s\): ([^;]+)/) || message.match(/: ([^;]+);/);
  return m ? m[1].split(',').map(a => a.trim()).filter(Boolean) : [];
}

function confirmDelete(el, control) {
  const out = h('div', { 'aria-live': 'polite' });
  const dlg = h('dialog', { id: 'delete-dialog', 'aria-labelledby': 'delete-title' },
    h('h2', { id: 'delete-title' }, `Delete control ${control.name}?`),
    h('p', {}, 'Its history stays readable and its name becomes free again.'),
    out,
    h('div', { class: 'toolbar' },
      h('button', { type: 'button', class: 'danger solid', id: 'confirm-delete', onclick: () => attempt(false) }, 'Delete'),
      h('button', { type: 'button', id: 'cancel-delete', onclick: () => dlg.close() }, 'Cancel')));
  dlg.addEventListener('close', () => dlg.remove());
  async function attempt(force) {
    try {
      await api.del(`/controls/${control.control_id}${force ? '?force=true' : ''}`);
      dlg.close();
      location.hash = '#/controls';
    } catch (err) {
      if (err.code === 'CONTROL_IN_USE') {
        const agents = inUseAgents(err.message);
        out.replaceChildren(h('div', { class: 'notice', id: 'in-use' }, 'These agents still use this control:',
          h('ul', {}, agents.map(a => h('li', {}, h('a', { href: '#/agents/' + encodeURIComponent(a), onclick: () => dlg.close() }, a))))),
        h('button', { type: 'button', class: 'danger solid', id: 'force-delete', onclick: () => attempt(true) }, 'Unlink from them and delete'));
        out.querySelector('#force-delete').focus();
      } else out.replaceChildren(errorBox(err));
    }
  }
  el.append(dlg);
  dlg.showModal();
}

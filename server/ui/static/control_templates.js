// Control templates on the "New control" page: pick one of GET /control-templates, fill the form built from
// its parameters, render it with POST /control-templates/{name}/render (the server checks every parameter
// and answers valid control data), and continue in the control editor, prefilled.
import { h, clear, field, errorBox } from './dom.js';
import { api } from './api.js';

const lines = (s) => s.split('\n').map(x => x.trim()).filter(Boolean);

// paramInput builds the input of one parameter and a read() that returns its value, or undefined when the
// field is left empty (the parameter is then not sent, and its default applies).
function paramInput(p) {
  const idOf = 'tpl-param-' + p.name;
  const hint = [p.type.replace('_', ' '), p.required ? 'required' : null].filter(Boolean).join(', ');
  const ph = p.example !== undefined ? (Array.isArray(p.example) ? p.example.join('\n') : String(p.example)) : '';
  if (p.type === 'boolean') {
    const box = h('input', { type: 'checkbox', id: idOf, checked: p.default === true });
    const problems = h('div', { class: 'problems', dataset: { field: 'parameters.' + p.name }, id: idOf + '-problems', 'aria-live': 'polite' });
    box.setAttribute('aria-describedby', problems.id);
    return { el: h('div', { class: 'field' }, h('label', { class: 'inline', for: idOf }, box, p.name), h('div', { class: 'hint small muted' }, p.description), problems),
      read: () => box.checked };
  }
  if (p.type === 'string_list' && p.values) {
    // A list of allowed values: one checkbox each.
    const boxes = p.values.map((v, n) => h('input', { type: 'checkbox', id: `${idOf}-${n}`, value: v, checked: (p.default || []).includes(v) }));
    const problems = h('div', { class: 'problems', dataset: { field: 'parameters.' + p.name }, id: idOf + '-problems', 'aria-live': 'polite' });
    for (const b of boxes) b.setAttribute('aria-describedby', problems.id);
    return { el: h('fieldset', { class: 'field', id: idOf }, h('legend', {}, p.name, h('span', { class: 'hint' }, ' ', hint)),
      h('div', { class: 'hint small muted' }, p.description),
      boxes.map((b, n) => h('label', { class: 'inline', for: b.id }, b, p.values[n])), problems),
    read: () => boxes.filter(b => b.checked).map(b => b.value) };
  }
  let input, read;
  if (p.type === 'enum') {
    input = h('select', { id: idOf }, p.values.map(v => h('option', { value: v, selected: p.default === v }, v)));
    read = () => input.value;
  } else if (p.type === 'string_list') {
    input = h('textarea', { id: idOf, rows: 3, placeholder: ph, spellcheck: 'false' }, (p.default || []).join('\n'));
    read = () => { const v = lines(input.value); return v.length ? v : undefined; };
  } else if (p.type === 'number') {
    input = h('input', { type: 'number', id: idOf, step: 'any', min: p.minimum, max: p.maximum, value: p.default !== undefined ? String(p.default) : '', placeholder: ph });
    read = () => input.value.trim() === '' ? undefined : Number(input.value);
  } else { // string, regex
    input = h(p.type === 'regex' ? 'textarea' : 'input', { type: p.type === 'regex' ? null : 'text', id: idOf, placeholder: ph, spellcheck: 'false',
      class: p.type === 'regex' ? 'mono' : null, rows: p.type === 'regex' ? 3 : null, value: p.type === 'regex' ? null : (p.default ?? '') },
    p.type === 'regex' ? (p.default ?? '') : null);
    read = () => input.value === '' ? undefined : input.value;
  }
  const f = field(p.name, input, hint, 'parameters.' + p.name);
  f.insertBefore(h('div', { class: 'hint small muted' }, p.description), input);
  return { el: f, read };
}

// templatePicker returns the "Start from a template" section, once the list of templates is loaded (so the
// page is complete when the router marks it rendered). onRendered({ name, data, omitted, title }) is called
// with the rendered control data once the server accepted the parameters.
export async function templatePicker(onRendered) {
  const out = h('div', { id: 'tpl-form' });
  const status = h('div', { id: 'tpl-status', 'aria-live': 'polite' });
  const select = h('select', { id: 'tpl-select' }, h('option', { value: '' }, 'Choose a template…'));
  const section = h('section', { class: 'card', id: 'templates', 'aria-labelledby': 'tpl-title' },
    h('h2', { id: 'tpl-title' }, 'Start from a template'),
    h('p', { class: 'muted small' }, 'A template is a tested control with parameters. Fill them in, then continue in the editor below the form.'),
    field('Template', select, null, 'template'), out, status);
  let templates = [];

  try {
    templates = (await api.get('/control-templates')).templates || [];
    const byCategory = {};
    for (const t of templates) (byCategory[t.category] = byCategory[t.category] || []).push(t);
    for (const [cat, ts] of Object.entries(byCategory)) {
      select.append(h('optgroup', { label: cat }, ts.map(t => h('option', { value: t.name }, t.title))));
    }
    section.dataset.loaded = 'true';
  } catch (e) {
    if (e.status === 401) throw e; // the login form is shown
    status.replaceChildren(errorBox(e));
  }

  select.addEventListener('change', () => {
    clear(out); status.replaceChildren();
    const t = templates.find(x => x.name === select.value);
    if (!t) return;
    const inputs = t.parameters.map(p => [p.name, paramInput(p)]);
    const form = h('form', { id: 'tpl-params', novalidate: true, onsubmit: async (e) => {
      e.preventDefault();
      for (const box of out.querySelectorAll('.problems')) clear(box);
      const parameters = {};
      for (const [name, inp] of inputs) { const v = inp.read(); if (v !== undefined) parameters[name] = v; }
      const btn = form.querySelector('#tpl-render');
      btn.disabled = true;
      try {
        const res = await api.post(`/control-templates/${encodeURIComponent(t.name)}/render`, { parameters });
        onRendered({ name: t.name, title: t.title, data: res.control_data, omitted: res.omitted_tests || [] });
      } catch (err) {
        if (err.status === 422) {
          for (const p of err.problems) {
            const box = out.querySelector(`.problems[data-field="${CSS.escape(p.field)}"]`);
            if (box) box.append(h('div', { class: 'problem', dataset: { path: p.field } }, p.message));
          }
          // Problems no parameter box shows (an unknown field) go in the status box.
          const rest = err.problems.filter(p => !out.querySelector(`.problems[data-field="${CSS.escape(p.field)}"]`));
          status.replaceChildren(rest.length ? errorBox(err) : h('span', { class: 'problem-count' }, 'Fix the parameters first'));
        } else status.replaceChildren(errorBox(err));
      } finally {
        btn.disabled = false;
      }
    } },
    h('p', { id: 'tpl-description' }, t.description),
    t.parameters.length ? h('h3', {}, 'Parameters') : null,
    inputs.map(([, inp]) => inp.el),
    h('div', { class: 'toolbar' }, h('button', { type: 'submit', class: 'primary', id: 'tpl-render' }, 'Use this template')));
    out.append(form);
  });
  return section;
}

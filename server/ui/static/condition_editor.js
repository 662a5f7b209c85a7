// The schema-aware condition editor: the condition as a tree (and, or, not, leaves), each leaf a form
// generated from its evaluator's JSON Schema (GET /evaluators). The raw JSON text area stays the source
// of truth: every change in the form rewrites it (and fires its input event, so live validation runs),
// and every valid edit of the JSON redraws the form.
import { h } from './dom.js';
import { api, evaluatorList } from './api.js';

const PATHS = ['input', 'output', 'name', 'type', 'context', '*'];
const DEFAULT_LEAF = () => ({ selector: { path: 'input' }, evaluator: { name: 'regex', config: { pattern: '' } } });

let uid = 0;
const nextId = (p) => `${p}-${++uid}`;

const kindOf = (n) => n && typeof n === 'object' && !Array.isArray(n)
  ? (Array.isArray(n.and) ? 'and' : Array.isArray(n.or) ? 'or' : n.not != null ? 'not' : 'leaf') : 'leaf'; // the server writes absent shapes as null

// firstLeaf finds the first leaf of a tree (to keep when a group becomes a leaf).
function firstLeaf(n) {
  const k = kindOf(n);
  if (k === 'leaf') return n;
  if (k === 'not') return firstLeaf(n.not);
  return n[k].length ? firstLeaf(n[k][0]) : DEFAULT_LEAF();
}

// convert turns node n into kind k, keeping what it can.
function convert(n, k) {
  const from = kindOf(n);
  if (from === k) return n;
  const kids = from === 'and' || from === 'or' ? n[from] : from === 'not' ? [n.not] : [n];
  if (k === 'leaf') return firstLeaf(n);
  if (k === 'not') return { not: kids.length === 1 ? kids[0] : { [from]: kids } };
  return { [k]: kids.length ? kids : [DEFAULT_LEAF()] };
}

export function conditionEditor(textarea, ro) {
  const box = h('div', { class: 'cond-editor', id: 'condition-form' }, h('p', { class: 'muted small' }, 'Loading the evaluators…'));
  let evaluators = [];
  let tree = null, written = '';

  function write() {
    written = JSON.stringify(tree, null, 2);
    textarea.value = written;
    textarea.dispatchEvent(new Event('input', { bubbles: true }));
  }

  function readTextarea() {
    try { tree = JSON.parse(textarea.value); return true; } catch { return false; }
  }

  // node renders the node at holder[key] (so that it can be replaced in place).
  function node(holder, key, depth, onRemove) {
    const n = holder[key];
    const k = kindOf(n);
    const kind = h('select', { id: nextId('cond-kind'), disabled: ro, class: 'cond-kind' },
      [['leaf', 'Evaluator'], ['and', 'All of (and)'], ['or', 'Any of (or)'], ['not', 'Not']].map(([v, t]) => h('option', { value: v, selected: v === k }, t)));
    kind.addEventListener('change', () => { holder[key] = convert(holder[key], kind.value); write(); render(); });
    const head = h('div', { class: 'cond-head' }, h('label', { for: kind.id, class: 'sr-only' }, 'Kind of condition'), kind,
      onRemove ? h('button', { type: 'button', class: 'link', disabled: ro, onclick: onRemove, 'aria-label': 'Remove this condition' }, 'Remove') : null);
    const wrap = h('fieldset', { class: 'cond-node cond-' + k, dataset: { kind: k, depth: String(depth) } }, h('legend', {}, head));
    if (k === 'leaf') wrap.append(leaf(n));
    else if (k === 'not') wrap.append(node(n, 'not', depth + 1, null));
    else {
      n[k].forEach((_, i) => wrap.append(node(n[k], i, depth + 1, n[k].length > 1 ? () => { n[k].splice(i, 1); write(); render(); } : null)));
      wrap.append(h('div', { class: 'toolbar' },
        h('button', { type: 'button', disabled: ro, class: 'cond-add', onclick: () => { n[k].push(DEFAULT_LEAF()); write(); render(); } }, k === 'and' ? 'Add a condition (and)' : 'Add a condition (or)')));
    }
    return wrap;
  }

  // leaf renders a selector and an evaluator with its config form.
  function leaf(n) {
    n.selector = n.selector && typeof n.selector === 'object' ? n.selector : { path: 'input' };
    n.evaluator = n.evaluator && typeof n.evaluator === 'object' ? n.evaluator : { name: 'regex', config: {} };
    const ev = n.evaluator;
    ev.config = ev.config && typeof ev.config === 'object' && !Array.isArray(ev.config) ? ev.config : {};
    const listId = nextId('paths');
    const path = h('input', { type: 'text', id: nextId('cond-path'), class: 'cond-path', value: n.selector.path || '', list: listId, disabled: ro, spellcheck: 'false' });
    path.addEventListener('input', () => { n.selector.path = path.value; write(); });
    const names = evaluators.map(e => e.name);
    if (ev.name && !names.includes(ev.name)) names.push(ev.name);
    const name = h('select', { id: nextId('cond-evaluator'), class: 'cond-evaluator', disabled: ro }, names.map(x => h('option', { value: x, selected: x === ev.name }, x)));
    name.addEventListener('change', () => { ev.name = name.value; ev.config = {}; write(); render(); });
    const schema = (evaluators.find(e => e.name === ev.name) || {}).config_schema || {};
    return h('div', { class: 'cond-leaf' },
      h('div', { class: 'grid2' },
        labelled('Selector path', path, 'input, output, context.user…', h('datalist', { id: listId }, PATHS.map(p => h('option', { value: p })))),
        labelled('Evaluator', name)),
      configForm(ev, schema));
  }

  function configForm(ev, schema) {
    const props = schema.properties || {};
    const required = new Set(schema.required || []);
    const cfg = ev.config;
    const set = (k, v) => { if (v === undefined) delete cfg[k]; else cfg[k] = v; write(); };
    // Required fields first, then the schema's order.
    const entries = Object.entries(props).sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)));
    const fields = entries.map(([k, p]) => schemaField(k, p || {}, cfg[k], required.has(k), (v) => set(k, v)));
    // Every evaluator takes on_error and timeout_ms: fields for them unless its schema lists them.
    const onErr = h('select', { id: nextId('cond-onerror'), disabled: ro },
      [['', 'deny (default)'], ['deny', 'deny'], ['allow', 'allow']].map(([v, t]) => h('option', { value: v, selected: (cfg.on_error || '') === v }, t)));
    onErr.addEventListener('change', () => set('on_error', onErr.value || undefined));
    const tmo = h('input', { type: 'number', id: nextId('cond-timeout'), min: 1, value: cfg.timeout_ms ?? '', disabled: ro });
    tmo.addEventListener('input', () => set('timeout_ms', tmo.value === '' ? undefined : Number(tmo.value)));
    const known = new Set([...Object.keys(props), 'on_error', 'timeout_ms']);
    const other = Object.keys(cfg).filter(k => !known.has(k));
    return h('div', { class: 'cond-config' }, fields,
      h('div', { class: 'grid2' }, props.on_error ? null : labelled('On error', onErr, 'deny fails closed'), props.timeout_ms ? null : labelled('Timeout (ms)', tmo, 'empty: the default')),
      other.length ? h('p', { class: 'muted small' }, 'Other config fields (kept, edit them in the JSON): ', other.join(', ')) : null);
  }

  // schemaField is the input of one config property, chosen by its JSON Schema type.
  function schemaField(k, p, value, req, set) {
    const id = nextId('cfg-' + k);
    const hint = [req ? 'required' : null, p.default !== undefined ? 'default ' + JSON.stringify(p.default) : null].filter(Boolean).join(', ');
    const label = (input, extra) => labelled(k, input, hint, extra, p.description);
    const items = p.items || {};
    if (Array.isArray(p.enum)) {
      const sel = h('select', { id, disabled: ro }, (req ? [] : [h('option', { value: '' }, '(default)')]).concat(p.enum.map(v => h('option', { value: JSON.stringify(v), selected: JSON.stringify(v) === JSON.stringify(value) }, String(v)))));
      sel.addEventListener('change', () => set(sel.value === '' ? undefined : JSON.parse(sel.value)));
      return label(sel);
    }
    if (p.type === 'boolean') {
      const cb = h('input', { type: 'checkbox', id, checked: value ?? p.default ?? false, disabled: ro });
      cb.addEventListener('change', () => set(cb.checked));
      return h('div', { class: 'field' }, h('label', { class: 'inline', for: id }, cb, k), p.description ? h('div', { class: 'muted small' }, p.description) : null);
    }
    if (p.type === 'integer' || p.type === 'number') {
      const inp = h('input', { type: 'number', id, value: value ?? '', min: p.minimum, max: p.maximum, step: p.type === 'integer' ? 1 : 'any', disabled: ro });
      inp.addEventListener('input', () => set(inp.value === '' ? undefined : Number(inp.value)));
      return label(inp);
    }
    if (p.type === 'array' && Array.isArray(items.enum)) {
      const cur = new Set(Array.isArray(value) ? value : []);
      const boxes = items.enum.map(v => h('input', { type: 'checkbox', id: nextId('cfg-' + k + '-' + v), value: v, checked: cur.has(v), disabled: ro }));
      const fs = h('fieldset', { class: 'field' }, h('legend', {}, k), boxes.map(b => h('label', { class: 'inline', for: b.id }, b, b.value)),
        p.description ? h('div', { class: 'muted small' }, p.description) : null);
      fs.addEventListener('change', () => { const v = boxes.filter(b => b.checked).map(b => b.value); set(v.length ? v : undefined); });
      return fs;
    }
    if (p.type === 'array' && (items.type === 'string' || !items.type)) {
      const ta = h('textarea', { id, rows: Math.min(8, Math.max(2, (Array.isArray(value) ? value.length : 0) + 1)), disabled: ro, spellcheck: 'false' },
        Array.isArray(value) ? value.join('\n') : '');
      ta.addEventListener('input', () => { const v = ta.value.split('\n').filter(x => x.trim() !== ''); set(v.length ? v : undefined); });
      return label(ta, null, 'one per line');
    }
    if (p.type === 'string' || !p.type) {
      const inp = h('input', { type: 'text', id, value: typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value), disabled: ro, spellcheck: 'false', class: k === 'pattern' ? 'mono' : null });
      inp.addEventListener('input', () => set(inp.value === '' && !req ? undefined : inp.value));
      return label(inp);
    }
    // Objects and anything else: JSON.
    const ta = h('textarea', { id, rows: 3, disabled: ro, spellcheck: 'false' }, value === undefined ? '' : JSON.stringify(value, null, 2));
    ta.addEventListener('input', () => { try { set(ta.value.trim() ? JSON.parse(ta.value) : undefined); ta.removeAttribute('aria-invalid'); } catch { ta.setAttribute('aria-invalid', 'true'); } });
    return label(ta);
  }

  function labelled(text, input, hint, extra, description) {
    return h('div', { class: 'field' }, h('label', { for: input.id }, text, hint ? h('span', { class: 'hint' }, ' ', hint) : null), input, extra || null,
      description ? h('div', { class: 'muted small' }, description) : null);
  }

  function render() {
    // The root node lives in tree: a holder whose one key reads and writes it.
    const root = {};
    Object.defineProperty(root, 'c', { get() { return tree; }, set(v) { tree = v; } });
    box.replaceChildren(node(root, 'c', 1, null));
  }

  function redraw() {
    if (!readTextarea()) {
      box.replaceChildren(h('p', { class: 'notice', id: 'condition-form-broken' }, 'The condition JSON below does not parse: fix it there, the form comes back once it does.'));
      return;
    }
    if (tree === null || typeof tree !== 'object' || Array.isArray(tree)) tree = DEFAULT_LEAF();
    render();
  }

  // A change typed into the JSON redraws the form (the form's own writes are recognised and skipped).
  textarea.addEventListener('input', () => { if (textarea.value !== written) redraw(); });
  api.get('/evaluators').then(r => { evaluators = evaluatorList(r); }).catch(() => {}).finally(() => {
    redraw();
    box.dataset.ready = 'true';
  });
  return box;
}

// Tiny DOM helpers. Everything is built with createElement/textContent, never innerHTML, so values from
// the API (names, messages, payloads) can never inject markup.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }

let uid = 0;
export function id(prefix) { uid += 1; return `${prefix}-${uid}`; }

// field builds a labelled form field; problems for it are shown in the element with data-problems.
export function field(labelText, input, hint, key) {
  const inputId = input.id || id('f');
  input.id = inputId;
  const problems = h('div', { class: 'problems', dataset: { field: key || '' }, id: inputId + '-problems', 'aria-live': 'polite' });
  input.setAttribute('aria-describedby', problems.id);
  return h('div', { class: 'field' },
    h('label', { for: inputId }, labelText, hint ? h('span', { class: 'hint' }, ' ', hint) : null),
    input, problems);
}

export function fmtTime(s) {
  if (!s) return '';
  const d = new Date(s);
  return isNaN(d) ? s : d.toLocaleString();
}

export function badge(action) {
  return h('span', { class: 'badge ' + (action || 'off') }, action || '—');
}

export function errorBox(err) {
  const msg = err && err.message ? err.message : String(err);
  const list = (err && err.problems || []).map(p => h('li', {}, (p.field ? p.field + ': ' : '') + p.message));
  return h('div', { class: 'error-box', role: 'alert' }, msg, list.length ? h('ul', {}, list) : null);
}

export function table(headers, rows, empty) {
  if (!rows.length) return h('p', { class: 'muted' }, empty || 'Nothing here yet.');
  return h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, headers.map(x => typeof x === 'string' ? h('th', { scope: 'col' }, x) : x))),
    h('tbody', {}, rows)));
}

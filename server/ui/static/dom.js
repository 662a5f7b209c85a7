// Tiny DOM helpers. Everything is built with createElement/textContent, never by parsing HTML strings, so values from
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

// badge shows an action; dim marks one that did not match (the event only says what it would decide).
export function badge(action, dim) {
  return h('span', { class: 'badge ' + (action || 'off') + (dim ? ' dim' : ''), title: dim ? action + ' (not matched)' : null }, action || '—');
}

export function errorBox(err) {
  const msg = err && err.message ? err.message : String(err);
  const list = (err && err.problems || []).map(p => h('li', {}, (p.field ? p.field + ': ' : '') + p.message));
  return h('div', { class: 'error-box', role: 'alert' }, msg, list.length ? h('ul', {}, list) : null);
}

// table builds a data table in a horizontally scrolling box. Every cell gets data-label (its column's
// header text) so that, with opts.stack, narrow screens show each row as a labelled card.
export function table(headers, rows, empty, opts) {
  if (!rows.length) return h('p', { class: 'muted empty' }, empty || 'Nothing here yet.');
  const ths = headers.map(x => typeof x === 'string' ? h('th', { scope: 'col' }, x) : x);
  const labels = ths.map(th => th.textContent.trim());
  for (const tr of rows) {
    [...tr.children].forEach((td, i) => {
      if (labels[i] && !td.dataset.label) td.dataset.label = labels[i];
      // A stacked cell is a two-column grid (label, value): keep its content in one grid item.
      if (opts && opts.stack && td.childNodes.length > 1) td.replaceChildren(h('span', { class: 'cell' }, [...td.childNodes]));
    });
  }
  return h('div', { class: 'table-wrap' }, h('table', { class: opts && opts.stack ? 'stack' : null },
    h('thead', {}, h('tr', {}, ths)),
    h('tbody', {}, rows)));
}

// pageHead is a page title with actions at its right (wrapping under it on narrow screens).
export function pageHead(title, ...actions) {
  return h('div', { class: 'page-head' }, h('h1', {}, title), actions.length ? h('div', { class: 'actions' }, actions) : null);
}

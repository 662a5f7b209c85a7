// Evaluators available on this server, with their config schemas: a table of the config fields, and the
// whole JSON Schema on demand.
import { h, table } from './dom.js';
import { api, evaluatorList } from './api.js';

function typeOf(p) {
  if (!p || typeof p !== 'object') return '';
  if (Array.isArray(p.type)) return p.type.join(' | ');
  if (p.type === 'array' && p.items) return `list of ${typeOf(p.items) || 'values'}`;
  if (p.type) return p.type;
  if (p.enum) return 'one of';
  if (p.oneOf || p.anyOf) return (p.oneOf || p.anyOf).map(typeOf).filter(Boolean).join(' | ');
  return '';
}

function details(p) {
  const extra = [];
  const en = p.enum || (p.items && p.items.enum);
  if (en) extra.push('values: ' + en.map(v => JSON.stringify(v)).join(', '));
  if (p.default !== undefined) extra.push('default: ' + JSON.stringify(p.default));
  if (p.minimum !== undefined || p.maximum !== undefined) extra.push(`range: ${p.minimum ?? '…'} to ${p.maximum ?? '…'}`);
  return [p.description || null, extra.length ? h('div', { class: 'muted small' }, extra.join(' · ')) : null];
}

function fieldsTable(schema) {
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const rows = Object.entries(props).map(([name, p]) => h('tr', {},
    h('td', { class: 'mono' }, name), h('td', {}, typeOf(p)), h('td', {}, required.has(name) ? 'yes' : ''), h('td', {}, details(p))));
  return table(['Field', 'Type', 'Required', 'Details'], rows, 'This evaluator takes no configuration.', { stack: true });
}

export async function evaluatorsView(el) {
  const evaluators = evaluatorList(await api.get('/evaluators'));
  el.append(h('h1', {}, 'Evaluators'),
    h('p', { class: 'muted' }, 'A control\'s condition uses an evaluator as {"selector": {"path": …}, "evaluator": {"name": …, "config": {…}}}.'));
  if (!evaluators.length) el.append(h('p', { class: 'muted' }, 'No evaluators are available.'));
  for (const ev of evaluators) {
    el.append(h('section', { class: 'card', 'aria-labelledby': 'ev-' + ev.name },
      h('h2', { id: 'ev-' + ev.name }, ev.name, ' ', h('span', { class: 'muted' }, 'v' + ev.version)),
      h('p', {}, ev.description),
      ev.requires_api_key ? h('p', { class: 'muted' }, 'Needs an API key on the server (configured).') : null,
      fieldsTable(ev.config_schema),
      h('details', {}, h('summary', {}, 'JSON Schema of the config'), h('pre', {}, JSON.stringify(ev.config_schema, null, 2)))));
  }
}

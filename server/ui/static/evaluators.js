// Evaluators available on this server, with their config schemas.
import { h } from './dom.js';
import { api } from './api.js';

export async function evaluatorsView(el) {
  const { evaluators } = await api.get('/evaluators');
  el.append(h('h1', {}, 'Evaluators'));
  if (!evaluators.length) el.append(h('p', { class: 'muted' }, 'No evaluators are available.'));
  for (const ev of evaluators) {
    el.append(h('section', { class: 'card', 'aria-labelledby': 'ev-' + ev.name },
      h('h2', { id: 'ev-' + ev.name }, ev.name, ' ', h('span', { class: 'muted' }, 'v' + ev.version)),
      h('p', {}, ev.description),
      ev.requires_api_key ? h('p', { class: 'muted' }, 'Needs an API key on the server (configured).') : null,
      h('details', {}, h('summary', {}, 'Config schema'), h('pre', {}, JSON.stringify(ev.config_schema, null, 2)))));
  }
}

// API keys (GET/POST /keys, docs/operations.md "Keys at runtime"): every key with its role, agents, source,
// status, expiry and last use; a form to create one (its secret shown once, in a box to copy); rotate and
// revoke for the keys made here. Only an admin key not limited to agents may see this page: others get the
// server's 403, shown as it is.
import { h, clear, field, errorBox, table, pageHead } from './dom.js';
import { fmtTimeTZ } from './events.js';
import { api } from './api.js';

// secretBox shows a secret once, with what to do with it.
function secretBox(name, secret, what) {
  const out = h('input', { type: 'text', readonly: true, value: secret, class: 'mono', id: 'new-secret', 'aria-label': 'Secret of ' + name });
  return h('div', { class: 'notice', role: 'status' },
    h('p', {}, `${what} Copy the secret of ${name} now: it is shown this once and never stored.`), out);
}

export async function keysView(el) {
  const list = await api.get('/keys');
  const status = h('div', { id: 'keys-status', 'aria-live': 'polite' });
  const reload = async (notice) => {
    const fresh = await api.get('/keys');
    clear(el);
    render(fresh.keys, notice);
  };
  const act = async (fn, what) => {
    clear(status);
    try {
      const k = await fn();
      await reload(k && k.key ? secretBox(k.name, k.key, what) : h('p', { role: 'status' }, what));
    } catch (e) {
      status.append(errorBox(e));
    }
  };
  function render(keys, notice) {
    const rows = keys.map(k => h('tr', { dataset: { key: k.name } },
      h('td', { class: 'mono' }, k.name),
      h('td', {}, k.role),
      h('td', {}, k.agents && k.agents.length ? k.agents.join(', ') : 'every agent'),
      h('td', {}, k.source),
      h('td', {}, h('span', { class: 'badge key-' + k.status }, k.status)),
      h('td', {}, k.expires_at ? fmtTimeTZ(k.expires_at) : 'never'),
      h('td', {}, k.last_used_at ? fmtTimeTZ(k.last_used_at) : '—'),
      h('td', {}, k.source === 'api' && k.status !== 'revoked'
        ? [h('button', { type: 'button', class: 'rotate', onclick: () => act(() => api.post('/keys/' + encodeURIComponent(k.name) + '/rotate'), `Rotated ${k.name}: the old secret is refused from now on.`) }, 'Rotate'),
           ' ',
           h('button', { type: 'button', class: 'danger revoke', onclick: () => {
             if (confirm(`Revoke ${k.name}? Every replica refuses it within a second.`)) act(() => api.del('/keys/' + encodeURIComponent(k.name)), `Revoked ${k.name}.`);
           } }, 'Revoke')]
        : (k.source === 'api' ? '' : h('span', { class: 'muted small' }, 'configured in the ' + k.source)))));
    const name = h('input', { type: 'text', name: 'name', required: true, autocomplete: 'off' });
    const role = h('select', { name: 'role' }, ['runtime', 'read', 'approve', 'admin'].map(r => h('option', { value: r }, r)));
    const agents = h('input', { type: 'text', name: 'agents', placeholder: 'support-bot, team-*' });
    const expires = h('input', { type: 'text', name: 'expires_in', placeholder: '720h' });
    const form = h('form', { class: 'card', id: 'new-key', onsubmit: (ev) => {
      ev.preventDefault();
      const body = { name: name.value.trim(), role: role.value };
      const ag = agents.value.split(',').map(s => s.trim()).filter(Boolean);
      if (ag.length) body.agents = ag;
      if (expires.value.trim()) body.expires_in = expires.value.trim();
      act(() => api.post('/keys', body), `Created ${body.name}.`);
    } },
    h('h2', {}, 'New key'),
    field('Name', name, 'letters, digits and . _ : @ -'),
    field('Role', role, 'read: reads only; runtime: evaluates and registers; approve: runtime and decides approvals; admin: everything'),
    field('Agents', agents, 'comma-separated names or patterns; empty: every agent'),
    field('Expires in', expires, 'a duration such as 720h; empty: never'),
    h('button', { type: 'submit' }, 'Create key'));
    el.append(pageHead('API keys'), status, notice || '',
      table(['Name', 'Role', 'Agents', 'Source', 'Status', 'Expires', 'Last used', ''], rows, 'No keys.', { stack: true }),
      form);
  }
  render(list.keys);
}

// Recent changes: the audit trail (GET /audit) as a list of who changed what, when, with the diff lines
// of each change. On the overview for the whole fleet, on a control's history page for that control. A key
// limited to agents sees the changes of its agents only (the server filters).
import { h, table, errorBox } from './dom.js';
import { api, qs } from './api.js';
import { fmtTimeTZ } from './events.js';

// ACTION_TEXT says each action in words.
const ACTION_TEXT = {
  'control.created': 'created', 'control.updated': 'updated', 'control.deleted': 'deleted',
  'control.data_replaced': 'data changed', 'control.restored': 'restored',
  'agent.control_linked': 'linked', 'agent.control_unlinked': 'unlinked',
  'agent.registered': 'agent registered', 'agent.updated': 'agent updated',
};

// recentChanges returns a section that loads the newest entries of the trail matching filter (e.g.
// { control_id: 3 }), at most limit of them.
export function recentChanges(id, filter, limit) {
  const body = h('div', { id: id + '-body', 'aria-live': 'polite' });
  const section = h('section', { id, 'aria-labelledby': id + '-title' },
    h('h2', { id: id + '-title' }, 'Recent changes'),
    h('p', { class: 'muted small' }, 'Control-plane changes, newest first, with the name of the API key that made them.'),
    body);
  (async () => {
    let page;
    try {
      page = await api.get('/audit' + qs(Object.assign({ limit: limit || 10 }, filter || {})));
    } catch (e) {
      body.replaceChildren(e.status === 404 && !filter ? h('p', { class: 'muted' }, 'This server keeps no audit trail.') : errorBox(e));
      return;
    }
    body.replaceChildren(table(['When', 'Key', 'Change', 'What'], page.entries.map(e => h('tr', { dataset: { auditId: e.id } },
      h('td', {}, fmtTimeTZ(e.timestamp)),
      h('td', {}, e.key_name || h('span', { class: 'muted' }, 'no key')),
      h('td', {}, ACTION_TEXT[e.action] || e.action,
        e.control_id ? h('span', {}, ' ', h('a', { href: `#/controls/${e.control_id}/history` }, `control #${e.control_id}`),
          e.version ? ` (v${e.version})` : '') : null,
        (e.agents || []).length ? h('span', { class: 'muted' }, ' · ' + e.agents.join(', ')) : null),
      h('td', {}, (e.changes || []).length
        ? h('ul', { class: 'changes' }, e.changes.slice(0, 4).map(c => h('li', {}, h('code', {}, c))),
          e.changes.length > 4 ? h('li', { class: 'muted' }, `and ${e.changes.length - 4} more`) : null)
        : h('span', { class: 'muted' }, '—')))),
    'No change recorded yet.', { stack: true }));
  })();
  return section;
}

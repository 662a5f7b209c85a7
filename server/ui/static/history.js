// A control's version history: the list of versions, a diff between any two, and restore.
import { h, clear, field, fmtTime, errorBox, table } from './dom.js';
import { api, qs, session } from './api.js';
import { lineDiff } from './diff.js';

const snapshot = (v) => JSON.stringify({ name: v.name, enabled: v.enabled, data: v.data }, null, 2);

export async function historyView(el, controlId) {
  const control = await api.get('/controls/' + controlId);
  const versions = [];
  let cursor = '';
  do {
    const page = await api.get(`/controls/${controlId}/versions` + qs({ limit: 100, cursor }));
    versions.push(...page.versions);
    cursor = page.pagination.has_more ? page.pagination.next_cursor : '';
  } while (cursor && versions.length < 1000);

  const msg = h('div', { 'aria-live': 'polite' });
  el.append(h('h1', {}, 'History of ', h('a', { href: '#/controls/' + controlId }, control.name)), msg);
  const rows = versions.map(v => h('tr', {},
    h('td', {}, String(v.version)), h('td', {}, v.event), h('td', {}, fmtTime(v.created_at)),
    h('td', {}, h('button', { type: 'button', disabled: session.readOnly || v.version === control.version, dataset: { restore: v.version },
      'aria-label': `Restore version ${v.version}`,
      onclick: async () => {
        try {
          const res = await api.post(`/controls/${controlId}/versions/${v.version}/restore`);
          msg.replaceChildren(h('div', { class: 'ok-box', id: 'restored' }, `Restored version ${v.version} as version ${res.version}.`));
          const keep = msg.firstChild;
          clear(el); await historyView(el, controlId); el.querySelector('[aria-live]').replaceChildren(keep);
        } catch (e) { msg.replaceChildren(errorBox(e)); }
      } }, 'Restore'))));
  el.append(table(['Version', 'Event', 'When', ''], rows, 'No versions.'));

  if (versions.length >= 1) {
    const opts = (sel) => versions.map(v => h('option', { value: v.version, selected: v.version === sel }, `v${v.version} (${v.event})`));
    const a = h('select', { id: 'diff-from' }, opts(versions[Math.min(1, versions.length - 1)].version));
    const b = h('select', { id: 'diff-to' }, opts(versions[0].version));
    const out = h('pre', { class: 'diff', id: 'diff-output', 'aria-live': 'polite' });
    async function show() {
      try {
        const [va, vb] = await Promise.all([api.get(`/controls/${controlId}/versions/${a.value}`), api.get(`/controls/${controlId}/versions/${b.value}`)]);
        clear(out);
        for (const [kind, line] of lineDiff(snapshot(va), snapshot(vb))) {
          out.append(Object.assign(document.createElement('span'), { className: kind, textContent: (kind === 'add' ? '+ ' : kind === 'del' ? '- ' : '  ') + line }));
        }
      } catch (e) { out.replaceChildren(String(e.message || e)); }
    }
    a.addEventListener('change', show); b.addEventListener('change', show);
    el.append(h('h2', {}, 'Compare versions'), h('div', { class: 'toolbar' }, field('From', a), field('To', b)), out);
    await show();
  }
}

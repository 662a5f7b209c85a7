// A control's version history: the list of versions, a diff between any two, and restore.
import { h, clear, field, fmtTime, errorBox, table } from './dom.js';
import { api, qs, session } from './api.js';
import { lineDiff } from './diff.js';
import { recentChanges } from './audit.js';

const snapshot = (v) => JSON.stringify({ name: v.name, enabled: v.enabled, data: v.data === undefined ? null : v.data }, null, 2);

export async function historyView(el, controlId, notice) {
  let control = null;
  try {
    control = await api.get('/controls/' + controlId);
  } catch (e) {
    if (e.code !== 'CONTROL_NOT_FOUND') throw e; // a deleted control keeps its versions
  }
  const versions = [];
  let cursor = '';
  do {
    const page = await api.get(`/controls/${controlId}/versions` + qs({ limit: 100, cursor }));
    versions.push(...page.versions);
    cursor = page.pagination.has_more ? page.pagination.next_cursor : '';
  } while (cursor && versions.length < 1000);

  const msg = h('div', { 'aria-live': 'polite', id: 'history-message' }, notice || null);
  if (control) {
    el.append(h('h1', {}, 'History of ', h('a', { href: '#/controls/' + controlId }, control.name)),
      h('p', { class: 'muted' }, `Current version ${control.version}. Restoring a version saves its name, state and data as a new version.`), msg);
  } else {
    const last = versions.length ? await api.get(`/controls/${controlId}/versions/${versions[0].version}`) : null;
    el.append(h('h1', {}, `History of ${last ? last.name : '#' + controlId} (deleted)`),
      h('p', { class: 'muted' }, 'This control was deleted; its versions stay readable. Restoring one brings the control back if its name is still free.'), msg);
    control = { version: -1 };
  }
  const rows = versions.map(v => h('tr', { class: v.version === control.version ? 'current' : null },
    h('td', {}, String(v.version), v.version === control.version ? h('span', { class: 'muted' }, ' (current)') : null),
    h('td', {}, v.event), h('td', {}, fmtTime(v.created_at)),
    h('td', {}, h('button', { type: 'button', disabled: session.readOnly || v.version === control.version, dataset: { restore: v.version },
      'aria-label': `Restore version ${v.version}`,
      onclick: async (e) => {
        e.target.disabled = true;
        try {
          const res = await api.post(`/controls/${controlId}/versions/${v.version}/restore`);
          const ok = h('div', { class: 'ok-box', id: 'restored', role: 'status' }, `Restored version ${v.version} as version ${res.version}.`);
          clear(el);
          await historyView(el, controlId, ok);
        } catch (err) { msg.replaceChildren(errorBox(err)); e.target.disabled = false; }
      } }, 'Restore'))));
  el.append(recentChanges('control-changes', { control_id: controlId }, 10));
  el.append(h('div', { id: 'versions' }, table(['Version', 'Event', 'When', h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Restore'))], rows, 'No versions.')));

  if (versions.length >= 1) {
    const opts = (sel) => versions.map(v => h('option', { value: v.version, selected: v.version === sel }, `v${v.version} (${v.event})`));
    const a = h('select', { id: 'diff-from' }, opts(versions[Math.min(1, versions.length - 1)].version));
    const b = h('select', { id: 'diff-to' }, opts(versions[0].version));
    const out = h('pre', { class: 'diff', id: 'diff-output', tabindex: '0', 'aria-label': 'Differences between the two versions' });
    const summary = h('p', { class: 'muted', id: 'diff-summary', 'aria-live': 'polite' });
    let seq = 0;
    async function show() {
      const mine = ++seq;
      try {
        const [va, vb] = await Promise.all([api.get(`/controls/${controlId}/versions/${a.value}`), api.get(`/controls/${controlId}/versions/${b.value}`)]);
        if (mine !== seq) return;
        const lines = lineDiff(snapshot(va), snapshot(vb));
        const added = lines.filter(l => l[0] === 'add').length, removed = lines.filter(l => l[0] === 'del').length;
        summary.textContent = added || removed ? `${removed} line${removed === 1 ? '' : 's'} removed, ${added} added.` : 'The two versions are identical.';
        clear(out);
        for (const [kind, line] of lines) {
          out.append(h('span', { class: kind }, (kind === 'add' ? '+ ' : kind === 'del' ? '- ' : '  ') + line));
        }
      } catch (e) { if (mine === seq) out.replaceChildren(String(e.message || e)); }
    }
    a.addEventListener('change', show); b.addEventListener('change', show);
    el.append(h('h2', {}, 'Compare versions'), h('div', { class: 'toolbar' }, field('From', a), field('To', b)), summary, out);
    await show();
  }
}

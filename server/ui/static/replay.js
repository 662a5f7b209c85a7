// Replay: the control editor's "Replay against the last 24 h" button. It sends the edited (unsaved)
// control as a one-control draft to POST /controls/replay, over the steps captured in the last 24 hours
// for every agent the control is linked to, and shows which decisions would change, before any save.
// A replay that runs longer than the server's synchronous wait comes back as a job, polled here.
import { h, badge, errorBox, table } from './dom.js';
import { api } from './api.js';

const DAY_MS = 24 * 3600 * 1000;
const POLL_MS = 500;

// replayPanel returns the button and the box the diff is shown in. draft() returns
// { data, problems } for the form as it is; control is the saved control (null for a new one) and
// name() the name typed in the form.
export function replayPanel({ control, name, draft, readOnly }) {
  const out = h('div', { id: 'replay-result', 'aria-live': 'polite' });
  const button = h('button', { type: 'button', id: 'replay-24h', disabled: readOnly, title: readOnly ? 'A read-only key cannot replay' : null,
    onclick: () => run() }, 'Replay against the last 24 h');

  async function run() {
    const { data, problems } = draft();
    if (problems.length) { out.replaceChildren(h('div', { class: 'notice' }, 'Fix the problems of the form first.')); return; }
    const entry = control ? { id: control.control_id, data } : { name: name(), data };
    const end = new Date();
    const body = { controls: [entry], start_time: new Date(end - DAY_MS).toISOString(), end_time: end.toISOString() };
    button.disabled = true;
    out.setAttribute('aria-busy', 'true');
    out.replaceChildren(h('p', { class: 'muted', id: 'replay-progress' }, 'Replaying…'));
    try {
      let job = await api.post('/controls/replay', body);
      while (job.status === 'running') {
        out.replaceChildren(h('p', { class: 'muted', id: 'replay-progress' }, `Replaying… ${job.progress.steps_done} of ${job.progress.steps_total} steps`));
        await new Promise(r => setTimeout(r, POLL_MS));
        job = await api.get('/controls/replay/jobs/' + encodeURIComponent(job.job_id));
      }
      if (job.status !== 'done') throw new Error(job.error ? job.error.detail : 'the replay failed');
      out.replaceChildren(render(job.result, control));
    } catch (err) {
      out.replaceChildren(errorBox(err));
    } finally {
      button.disabled = readOnly;
      out.removeAttribute('aria-busy');
    }
  }
  return { button, out };
}

const kindText = (k) => k.includes('_to_') ? k.replace('_to_', ' → ') : k.replaceAll('_', ' ');

function render(res, control) {
  const box = h('div', { class: 'card replay', id: 'replay-diff' });
  box.append(h('h2', {}, 'Replay of the last 24 h'));
  let line = `${res.steps_replayed} captured step${res.steps_replayed === 1 ? '' : 's'} replayed`;
  if (res.truncated) line += ` (only the oldest ${res.limit})`;
  box.append(h('p', { id: 'replay-summary' }, line + (res.steps_changed
    ? `: ${res.steps_changed} would change decision with this edit.`
    : ': no decision would change.')));
  if (res.message) box.append(h('p', { class: 'muted', id: 'replay-message' }, res.message));
  const kinds = Object.keys(res.changes).sort();
  if (kinds.length) {
    box.append(table(['Change', 'Steps'], kinds.map(k => h('tr', { dataset: { kind: k } }, h('td', {}, kindText(k)), h('td', {}, String(res.changes[k]))))));
  }
  const ctl = res.controls.find(c => control ? c.control_id === control.control_id : c.control_id === null);
  if (ctl) {
    box.append(h('p', { id: 'replay-control' }, `This control matched ${ctl.matched_current} step${ctl.matched_current === 1 ? '' : 's'}; with the edit it matches ${ctl.matched_draft} (`,
      `+${ctl.newly_matched} newly, −${ctl.no_longer_matched} no longer).`));
  }
  if (res.samples.length) {
    box.append(h('h3', {}, 'Examples'));
    for (const s of res.samples) {
      box.append(h('div', { class: 'replay-sample', dataset: { kind: s.kind } },
        h('div', {}, h('strong', {}, kindText(s.kind)), ` · ${s.agent_name} · ${s.stage} · ${new Date(s.timestamp).toLocaleString()}`),
        h('div', {}, 'now ', badge(s.current.decision), s.current.matched_controls.length ? ` (${s.current.matched_controls.join(', ')})` : '',
          ' → with the edit ', badge(s.draft.decision), s.draft.matched_controls.length ? ` (${s.draft.matched_controls.join(', ')})` : ''),
        h('pre', { class: 'replay-step' }, JSON.stringify(s.step, null, 2))));
    }
  }
  return box;
}

// Approvals (issue 25): the inbox of approval requests opened by controls with action.approval, and one
// request with the exact step that would run (redacted as captured steps are), to approve or reject with
// a comment. Deciding needs an admin key or a key with the approve permission (GET /access says which):
// another key sees the buttons disabled. After a decision the page shows the request as it now is.
import { h, errorBox, table, pageHead, field } from './dom.js';
import { api, qs, session } from './api.js';
import { fmtTimeTZ } from './events.js';

const statusBadge = (s) => h('span', { class: 'badge approval-' + s }, s);

// argsSummary is one line of what the step would run with (its input, redacted as stored), so that two
// requests of the same tool are told apart in the inbox: scalar fields as key=value, at most 80 characters.
export function argsSummary(step) {
  let s = step;
  if (typeof s === 'string') { try { s = JSON.parse(s); } catch { return ''; } }
  const input = s && s.input;
  let text;
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    text = Object.entries(input).filter(([, v]) => v === null || typeof v !== 'object')
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
  } else if (input !== undefined && input !== null) {
    text = typeof input === 'string' ? input : JSON.stringify(input);
  } else {
    return '';
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > 80 ? text.slice(0, 79) + '…' : text;
}

// approvalsView lists the pending requests first (the inbox), then the decided and expired ones (the
// history), newest first.
export async function approvalsView(el) {
  const [pending, all] = await Promise.all([
    api.get('/approvals' + qs({ status: 'pending', limit: 100 })),
    api.get('/approvals' + qs({ limit: 100 })),
  ]);
  el.append(pageHead('Approvals'));
  el.append(h('p', { class: 'muted' }, 'Steps refused by a control that asks a person. Approving lets that exact step run once; the agent retries it with the grant.'));
  const row = (a) => h('tr', { dataset: { id: a.id } },
    h('td', {}, h('a', { href: '#/approvals/' + encodeURIComponent(a.id) }, `${a.step_type} ${a.step_name}`)),
    h('td', { class: 'mono small approval-args' }, argsSummary(a.step)),
    h('td', {}, a.agent_name),
    h('td', {}, (a.controls && a.controls.length > 1 ? a.controls.map(c => c.control_name) : [a.control_name]).join(', ')),
    h('td', {}, statusBadge(a.status)),
    h('td', {}, fmtTimeTZ(a.created_at)));
  const heads = ['Step', 'Arguments', 'Agent', 'Control', 'Status', 'Opened'];
  el.append(h('section', { id: 'approvals-pending', 'aria-labelledby': 'approvals-pending-h' },
    h('h2', { id: 'approvals-pending-h' }, `Waiting for a decision (${pending.approvals.length})`),
    table(heads, pending.approvals.map(row), 'No request is waiting.', { stack: true })));
  const decided = all.approvals.filter(a => a.status !== 'pending');
  el.append(h('section', { id: 'approvals-history', 'aria-labelledby': 'approvals-history-h' },
    h('h2', { id: 'approvals-history-h' }, 'History'),
    table(heads, decided.map(row), 'No request was decided yet.', { stack: true })));
}

// approvalView shows one request: what would run, the decision, the grant's use; pending, the form.
export async function approvalView(el, id, known) {
  const a = known || await api.get('/approvals/' + encodeURIComponent(id));
  el.append(pageHead(`${a.step_type} ${a.step_name}`, h('a', { href: '#/approvals' }, 'All approvals')));
  const several = a.controls && a.controls.length > 1;
  const controlLink = (c) => [h('a', { href: '#/controls/' + c.control_id }, c.control_name), ` (version ${c.control_version})`];
  // A step several approval controls refuse has one request for them all: each is listed with its
  // message and approvers, and one decision decides for all of them.
  const controls = several ? [['Controls', h('ul', { class: 'approval-controls', id: 'approval-controls' }, a.controls.map(c =>
    h('li', {}, controlLink(c), c.message ? `: ${c.message}` : '', c.approvers && c.approvers.length ? ` (approvers: ${c.approvers.join(', ')})` : '')))]]
    : [
      ['Control', ...controlLink(a)],
      a.message ? ['Message', a.message] : null,
      a.approvers && a.approvers.length ? ['Approvers', a.approvers.join(', ')] : null,
    ];
  const facts = [
    ['Status', statusBadge(a.status)],
    ['Agent', a.agent_name],
    ...controls,
    ['Stage', a.stage],
    ['Opened', fmtTimeTZ(a.created_at)],
    ['Expires', fmtTimeTZ(a.expires_at)],
    a.decided_at ? ['Decided', `${fmtTimeTZ(a.decided_at)} by ${a.decided_by}${a.decided_via === 'mcp_elicitation' ? ' (answered in the MCP client)' : ''}`] : null,
    a.comment ? ['Comment', a.comment] : null,
    a.used_at ? ['Used', `${fmtTimeTZ(a.used_at)} (execution ${a.used_execution_id})`] : null,
    ['Payload hash', h('code', { class: 'hash' }, a.payload_hash)],
  ].filter(Boolean);
  el.append(h('div', { class: 'card', id: 'approval-facts' },
    h('dl', { class: 'facts' }, facts.map(([k, ...v]) => [h('dt', {}, k), h('dd', {}, v)]))));
  el.append(h('div', { class: 'card' }, h('h2', {}, 'What would run'),
    h('pre', { class: 'approval-step', id: 'approval-step', tabindex: 0, 'aria-label': 'The step as it would run' }, JSON.stringify(a.step, null, 2))));
  if (a.status !== 'pending') return;

  const comment = h('textarea', { id: 'approval-comment', rows: 2, maxlength: 2000 });
  const out = h('div', { id: 'approval-result', 'aria-live': 'polite' });
  const ro = !session.canApprove;
  const decide = async (decision) => {
    for (const b of buttons) b.disabled = true;
    try {
      const res = await api.post('/approvals/' + encodeURIComponent(id), { decision, comment: comment.value.trim() || undefined });
      // The page shows the request as decided: its status, who decided, when; no buttons.
      const decided = h('p', { id: 'approval-decided' }, `Request ${res.status}.`,
        res.status === 'approved' ? ' The agent may now run this exact step once.' : '');
      el.replaceChildren();
      await approvalView(el, id, res);
      el.append(h('div', { id: 'approval-result', 'aria-live': 'polite' }, decided));
    } catch (err) {
      out.replaceChildren(errorBox(err));
      for (const b of buttons) b.disabled = ro;
    }
  };
  const buttons = [
    h('button', { type: 'button', class: 'primary', id: 'approve', disabled: ro, onclick: () => decide('approve') }, 'Approve once'),
    h('button', { type: 'button', class: 'danger', id: 'reject', disabled: ro, onclick: () => decide('reject') }, 'Reject'),
  ];
  const form = h('div', { class: 'card', id: 'approval-form' }, h('h2', {}, 'Decide'),
    ro ? h('p', { class: 'notice' }, 'This key cannot decide: sign in with an admin key or a key with the approve permission.') : null,
    field('Comment (optional)', comment, 'recorded with the decision'),
    h('div', { class: 'actions' }, buttons));
  el.append(form, out);
}

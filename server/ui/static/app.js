// The dashboard's entry point: the hash router, the API-key session and the read-only banner.
//
// While a page renders, <main> carries aria-busy="true"; once it is done, aria-busy="false" and
// data-route names the route shown (screen readers and the browser tests both rely on this).
import { h, clear } from './dom.js';
import { session, probeAccess, ApiError } from './api.js';
import { agentsView, agentView } from './agents.js';
import { controlsView, controlEditView } from './controls.js';
import { historyView } from './history.js';
import { evaluatorsView } from './evaluators.js';
import { eventsView } from './events.js';
import { overviewView } from './overview.js';
import { controlActivityView } from './control_activity.js';
import { approvalsView, approvalView } from './approvals.js';
import { sessionView } from './session.js';
import { keysView } from './keys.js';

const main = document.getElementById('main');
const banner = document.getElementById('banner');
const sessionBox = document.getElementById('session');

const routes = [
  [/^#\/overview\/?$/, () => overviewView, 'overview', 'Overview'],
  [/^#\/controls\/(\d+)\/activity$/, (m) => (el) => controlActivityView(el, Number(m[1])), 'controls', 'Control activity'],
  [/^#\/agents\/?$/, () => agentsView, 'agents', 'Agents'],
  [/^#\/agents\/([^/]+)$/, (m) => (el) => agentView(el, decodeURIComponent(m[1])), 'agents', 'Agent'],
  [/^#\/agents\/([^/]+)\/sessions\/([^/]+)$/, (m) => (el) => sessionView(el, decodeURIComponent(m[1]), decodeURIComponent(m[2])), 'agents', 'Session'],
  [/^#\/controls\/?$/, () => controlsView, 'controls', 'Controls'],
  [/^#\/controls\/new$/, () => (el) => controlEditView(el, null), 'controls', 'New control'],
  [/^#\/controls\/(\d+)$/, (m) => (el) => controlEditView(el, Number(m[1])), 'controls', 'Control'],
  [/^#\/controls\/(\d+)\/history$/, (m) => (el) => historyView(el, Number(m[1])), 'controls', 'Control history'],
  [/^#\/evaluators\/?$/, () => evaluatorsView, 'evaluators', 'Evaluators'],
  [/^#\/events\/?(\?.*)?$/, () => eventsView, 'events', 'Events'],
  [/^#\/approvals\/?$/, () => approvalsView, 'approvals', 'Approvals'],
  [/^#\/approvals\/([^/]+)$/, (m) => (el) => approvalView(el, decodeURIComponent(m[1])), 'approvals', 'Approval'],
  [/^#\/keys\/?$/, () => keysView, 'keys', 'API keys'],
];

let loginShown = false;
let generation = 0;

function renderSession() {
  clear(sessionBox);
  if (session.key) {
    const kind = !session.readOnly ? '' : session.canApprove ? ' (approver key)' : ' (read-only key)';
    sessionBox.append(h('span', {}, 'Signed in' + kind),
      h('button', { type: 'button', id: 'sign-out', onclick: () => { session.key = ''; session.readOnly = false; session.canApprove = true; location.reload(); } }, 'Sign out'));
  }
  banner.textContent = !session.readOnly ? ''
    : session.canApprove
      ? 'Approver key: this API key can decide approval requests (Approvals) but not change controls, links or agents (a key limited to agents sees only theirs). Sign in with an admin key to make changes.'
      : 'Read-only: this API key can view but not change controls, links or agents (a key limited to agents sees only theirs). Sign in with an admin key to make changes.';
  document.body.classList.toggle('read-only', session.readOnly);
}

function done(route) {
  main.dataset.route = route;
  main.setAttribute('aria-busy', 'false');
}

function showLogin(err) {
  if (loginShown) return;
  loginShown = true;
  generation += 1; // a page still loading must not draw over the form
  clear(main);
  document.title = 'Sign in · guard';
  const input = h('input', { type: 'password', id: 'api-key', name: 'api-key', autocomplete: 'off', required: true });
  let msg;
  if (err && err.code === 'AUTH_INVALID_KEY') {
    msg = h('div', { class: 'error-box', id: 'login-error', role: 'alert' }, 'That API key was not accepted. Check it and try again.');
  } else {
    msg = h('p', {}, 'This server requires an API key. It is kept for this browser session only and sent with every request.');
  }
  session.key = ''; // a rejected key is not kept
  renderSession();
  const form = h('form', { class: 'card login', id: 'login-form', onsubmit: async (ev) => {
    ev.preventDefault();
    const key = input.value.trim();
    if (!key) { input.focus(); return; }
    session.key = key;
    loginShown = false;
    try {
      await probeAccess();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) { showLogin(e); return; }
      session.key = '';
      loginShown = false;
      showLogin(null);
      main.querySelector('form').prepend(h('div', { class: 'error-box', role: 'alert' }, 'The server could not be reached: ' + (e.message || e)));
      return;
    }
    renderSession();
    route();
  } },
  h('h1', {}, 'Sign in'), msg,
  h('div', { class: 'field' }, h('label', { for: 'api-key' }, 'API key'), input),
  h('button', { class: 'primary', type: 'submit', id: 'sign-in' }, 'Sign in'));
  main.append(form);
  done('login');
  input.focus();
}

session.onAuthNeeded = showLogin;

async function route() {
  if (loginShown) return;
  const gen = ++generation;
  const hash = location.hash || '#/overview';
  main.setAttribute('aria-busy', 'true');
  for (const [re, make, nav, title] of routes) {
    const m = hash.match(re);
    if (!m) continue;
    for (const a of document.querySelectorAll('[data-nav]')) {
      if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
    document.title = title + ' · guard';
    const view = h('div', { class: 'view' });
    clear(main).append(view);
    try {
      await make(m)(view);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return;
      if (gen === generation) view.append(h('div', { class: 'error-box', role: 'alert' }, e.message || String(e)));
    }
    if (gen === generation) done(hash);
    return;
  }
  document.title = 'Not found · guard';
  clear(main).append(h('h1', {}, 'Not found'), h('p', {}, 'No such page. ', h('a', { href: '#/overview' }, 'Go to the overview')));
  done(hash);
}

window.addEventListener('hashchange', () => { route(); main.focus({ preventScroll: true }); });

(async function start() {
  try {
    await probeAccess();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return; // the login form is shown
  }
  renderSession();
  if (!location.hash) location.replace('#/overview');
  route();
})();

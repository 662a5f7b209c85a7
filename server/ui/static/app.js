// The dashboard's entry point: the hash router, the API-key session and the read-only banner.
import { h, clear } from './dom.js';
import { session, probeAccess, ApiError } from './api.js';
import { agentsView, agentView } from './agents.js';
import { controlsView, controlEditView } from './controls.js';
import { historyView } from './history.js';
import { evaluatorsView } from './evaluators.js';
import { eventsView } from './events.js';

const main = document.getElementById('main');
const banner = document.getElementById('banner');
const sessionBox = document.getElementById('session');

const routes = [
  [/^#\/agents\/?$/, () => agentsView, 'agents'],
  [/^#\/agents\/([^/]+)$/, (m) => (el) => agentView(el, decodeURIComponent(m[1])), 'agents'],
  [/^#\/controls\/?$/, () => controlsView, 'controls'],
  [/^#\/controls\/new$/, () => (el) => controlEditView(el, null), 'controls'],
  [/^#\/controls\/(\d+)$/, (m) => (el) => controlEditView(el, Number(m[1])), 'controls'],
  [/^#\/controls\/(\d+)\/history$/, (m) => (el) => historyView(el, Number(m[1])), 'controls'],
  [/^#\/evaluators$/, () => evaluatorsView, 'evaluators'],
  [/^#\/events$/, () => eventsView, 'events'],
];

let loginShown = false;

function renderSession() {
  clear(sessionBox);
  if (session.key) {
    sessionBox.append(h('span', {}, session.readOnly ? 'Signed in (read-only key)' : 'Signed in'),
      h('button', { type: 'button', onclick: () => { session.key = ''; session.readOnly = false; location.reload(); } }, 'Sign out'));
  }
  banner.textContent = session.readOnly ? 'Read-only: this API key can view everything but cannot change controls, links or agents.' : '';
  document.body.classList.toggle('read-only', session.readOnly);
}

function showLogin(err) {
  if (loginShown) return;
  loginShown = true;
  clear(main);
  const input = h('input', { type: 'password', id: 'api-key', autocomplete: 'off', required: true });
  const msg = err && err.code === 'AUTH_INVALID_KEY'
    ? h('div', { class: 'error-box', role: 'alert' }, 'That API key was not accepted. Check it and try again.')
    : h('p', {}, 'This server requires an API key. It is kept for this browser session only.');
  const form = h('form', { class: 'card', onsubmit: async (ev) => {
    ev.preventDefault();
    session.key = input.value.trim();
    loginShown = false;
    try { await probeAccess(); } catch (e) { if (e instanceof ApiError && e.status === 401) { showLogin(e); return; } }
    renderSession();
    route();
  } },
  h('h1', {}, 'Sign in'), msg,
  h('div', { class: 'field' }, h('label', { for: 'api-key' }, 'API key'), input),
  h('button', { class: 'primary', type: 'submit' }, 'Sign in'));
  main.append(form);
  input.focus();
}

session.onAuthNeeded = showLogin;

async function route() {
  if (loginShown) return;
  const hash = location.hash || '#/agents';
  for (const [re, make, nav] of routes) {
    const m = hash.match(re);
    if (!m) continue;
    for (const a of document.querySelectorAll('[data-nav]')) {
      if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
    clear(main);
    try {
      await make(m)(main);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return;
      main.append(h('div', { class: 'error-box', role: 'alert' }, e.message || String(e)));
    }
    return;
  }
  clear(main).append(h('h1', {}, 'Not found'), h('p', {}, 'No such page. ', h('a', { href: '#/agents' }, 'Go to agents')));
}

window.addEventListener('hashchange', () => { route(); main.focus({ preventScroll: true }); });

(async function start() {
  try { await probeAccess(); } catch (e) { if (e instanceof ApiError && e.status === 401) { renderSession(); return; } }
  renderSession();
  if (!location.hash) location.replace('#/agents');
  route();
})();

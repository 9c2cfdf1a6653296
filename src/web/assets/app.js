// The web console (docs/web.md): one page, hash routes, each view drawn from the store and
// redrawn when it changes.
import {api, setToken, setUnauthorizedHandler, token} from './api.js';
import {h, clear} from './util.js';
import * as store from './store.js';
import {clusterView} from './cluster.js';
import {queueView} from './queue.js';
import {jobView} from './job.js';
import {usageView} from './usage.js';
import {powerView} from './power.js';

export const session = {user: '', admin: false};

const main = document.getElementById('main');
const live = document.getElementById('live');
const who = document.getElementById('who');
let current = null;  // {dispose()} of the view shown

const ROUTES = [
  ['cluster', 'Cluster', clusterView],
  ['queue', 'Queue', queueView],
  ['usage', 'Usage', usageView],
  ['power', 'Autoscaling', powerView],
];

function renderNav(active) {
  const nav = clear(document.getElementById('nav'));
  for (const [path, label] of ROUTES) {
    nav.appendChild(h('a', {href: '#/' + path, id: 'nav-' + path,
      'aria-current': active === path ? 'page' : undefined}, label));
  }
}

// Ends the view shown, then draws the next (make(main) builds it inside main).
function show(make) {
  if (current && current.dispose) current.dispose();
  current = null;
  clear(main);
  if (make) current = make(main);
}

function route() {
  if (!session.user) return;
  const parts = (location.hash.replace(/^#\/?/, '') || 'cluster').split('/');
  renderNav(parts[0]);
  if (parts[0] === 'job' && parts[1]) {
    show((root) => jobView(root, decodeURIComponent(parts[1]), session));
    return;
  }
  const r = ROUTES.find((x) => x[0] === parts[0]) || ROUTES[0];
  show((root) => r[2](root, session));
}

// The sign-in view: a token (as `berth token` prints it); the API's 401 message when refused.
function signIn(message) {
  store.stop();
  session.user = '';
  show(null);
  clear(document.getElementById('nav'));
  who.textContent = '';
  document.getElementById('signout').hidden = true;
  const input = h('input', {id: 'token', type: 'password', autocomplete: 'off',
    'aria-describedby': 'signin-help', required: true});
  const error = h('p', {id: 'signin-error', class: 'error', role: 'alert'}, message || '');
  const form = h('form', {id: 'signin', class: 'card narrow'},
      h('h1', {}, 'Sign in to berth'),
      h('p', {id: 'signin-help'}, 'Paste a token from ', h('code', {}, 'berth token'),
          ', or open the link that ', h('code', {}, 'berth web'), ' prints.'),
      h('label', {for: 'token'}, 'Token'), input,
      h('button', {type: 'submit', id: 'signin-submit'}, 'Sign in'), error);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    try {
      await begin();
    } catch (err) {
      setToken('');
      error.textContent = err.message;
    }
  });
  main.appendChild(form);
  input.focus();
}

async function begin() {
  const me = await api('/v1/whoami');
  session.user = me.user;
  session.admin = !!me.admin;
  who.textContent = `${me.user}${me.admin ? ' (operator)' : ''}`;
  document.getElementById('signout').hidden = false;
  store.start();
  route();
}

setUnauthorizedHandler((err) => {
  if (session.user) signIn(err.message);
});

store.subscribe(() => {
  const s = store.state.live;
  live.textContent = s === 'live' ? 'live' : s;
  live.className = 'live ' + s;
});

window.addEventListener('hashchange', route);

document.getElementById('signout').addEventListener('click', async () => {
  setToken('');
  if (document.cookie.includes('berth_csrf')) {
    try {
      await fetch('/ui/logout', {method: 'POST', credentials: 'same-origin',
        headers: {'X-CSRF-Token': (document.cookie.match(/berth_csrf=([^;]*)/) || [])[1] || ''}});
    } catch (e) {
      // signed out here anyway
    }
  }
  signIn('');
});

begin().catch((err) => signIn(token() ? err.message : ''));

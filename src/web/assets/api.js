// berth's REST API as the pages use it (docs/api.md): the caller's credential on every request,
// the CSRF header on every change, errors as the API's own message, and the watch stream.

const TOKEN_KEY = 'berth_token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function cookie(name) {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return '';
}

// The headers of a request: the bearer token typed in, else the session cookie (sent by the
// browser); a change also carries the CSRF cookie's value.
export function headers(method = 'GET') {
  const h = {};
  const t = token();
  if (t) h['Authorization'] = 'Bearer ' + t;
  if (method !== 'GET' && method !== 'HEAD') {
    const csrf = cookie('berth_csrf');
    if (csrf) h['X-CSRF-Token'] = csrf;
    h['Content-Type'] = 'application/json';
  }
  return h;
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The text of an error answer: the API's {"error": {"message"}}, Kubernetes' {"message"}, or
// the body itself.
async function errorOf(res) {
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    if (body.error && body.error.message) return body.error.message;
    if (body.message) return body.message;
  } catch (e) {
    // not JSON: the text itself
  }
  return text.trim() || res.status + ' ' + res.statusText;
}

let onUnauthorized = () => {};
export function setUnauthorizedHandler(f) {
  onUnauthorized = f;
}

// A JSON request; throws ApiError with the API's message when refused.
export async function api(path, {method = 'GET', body} = {}) {
  const res = await fetch(path, {
    method,
    headers: headers(method),
    credentials: 'same-origin',
    cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    const err = new ApiError(res.status, await errorOf(res));
    if (res.status === 401) onUnauthorized(err);
    throw err;
  }
  return res.json();
}

// Reads a streamed text response line by line; `onLine` gets each line. Returns when it ends.
export async function readLines(res, onLine, signal) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  while (!signal || !signal.aborted) {
    const {value, done} = await reader.read();
    if (done) break;
    buf += decoder.decode(value, {stream: true});
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      onLine(line);
    }
  }
  if (buf) onLine(buf);
}

// Follows GET /v1/watch: `onEvent` gets each event ({"type": "hello"|"job"|"lost"|...}),
// `onState` "live" or "reconnecting". Reconnects with backoff (1 s doubling to 30 s) until
// `stop()` is called.
export function watch(onEvent, onState) {
  const ctl = {stopped: false, abort: null};
  let delay = 1000;
  async function loop() {
    while (!ctl.stopped) {
      const abort = new AbortController();
      ctl.abort = abort;
      try {
        const res = await fetch('/v1/watch', {
          headers: headers(), credentials: 'same-origin', cache: 'no-store', signal: abort.signal,
        });
        if (res.status === 401) {
          onUnauthorized(new ApiError(401, await errorOf(res)));
          return;
        }
        if (!res.ok) throw new Error(await errorOf(res));
        await readLines(res, (line) => {
          if (!line.trim()) return;  // keep-alive
          let ev;
          try {
            ev = JSON.parse(line);
          } catch (e) {
            return;
          }
          if (ev.type === 'hello') {
            delay = 1000;
            onState('live');
          }
          onEvent(ev);
        }, abort.signal);
      } catch (e) {
        if (ctl.stopped) return;
      }
      if (ctl.stopped) return;
      onState('reconnecting');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(30000, delay * 2);
    }
  }
  loop();
  return {
    stop() {
      ctl.stopped = true;
      if (ctl.abort) ctl.abort.abort();
    },
  };
}

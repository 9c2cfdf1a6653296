// What the pages show, kept current: jobs (pending and running, both faces), nodes, partitions
// and power events. Lists load once, then the watch's events are applied as they come; a page
// redraws at most once a frame (`subscribe`).
import {api, watch} from './api.js';

export const state = {
  jobs: new Map(),  // id -> job record (as GET /v1/jobs gives it; watch events merged in)
  nodes: [],
  partitions: [],
  power: {enabled: false, events: []},
  usage: new Map(),  // job id -> [GET /v1/usage/jobs entries]
  live: 'connecting',
  version: 0,  // bumped on each change
  eventsApplied: 0,
};

const listeners = new Set();
let frame = 0;

function changed() {
  state.version++;
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    for (const f of listeners) f();
  });
}

export function subscribe(f) {
  listeners.add(f);
  return () => listeners.delete(f);
}

const TERMINAL = new Set(['COMPLETED', 'CANCELLED', 'FAILED', 'TIMEOUT', 'NODE_FAIL',
  'PREEMPTED', 'BOOT_FAIL', 'DEADLINE', 'OUT_OF_MEMORY']);
export function isTerminal(s) {
  return TERMINAL.has(s);
}

// Ended jobs stay listed this long after their end (squeue shows them for MinJobAge too).
const KEEP_ENDED_S = 300;

export async function loadJobs() {
  const r = await api('/v1/jobs');
  const jobs = new Map();
  for (const j of r.jobs) jobs.set(j.id, j);
  // Keep recently ended jobs the list no longer carries (their last event said how they ended).
  const now = Date.now() / 1000;
  for (const [id, j] of state.jobs) {
    if (!jobs.has(id) && isTerminal(j.state) && now - j.end_time < KEEP_ENDED_S) jobs.set(id, j);
  }
  state.jobs = jobs;
  changed();
}

export async function loadNodes() {
  const [n, p] = await Promise.all([api('/v1/nodes'), api('/v1/partitions')]);
  state.nodes = n.nodes;
  state.partitions = p.partitions;
  changed();
}

export async function loadPower() {
  state.power = await api('/v1/power');
  changed();
}

export async function loadUsage() {
  const r = await api('/v1/usage/jobs');
  const m = new Map();
  for (const u of r.jobs) {
    if (!m.has(u.job_id)) m.set(u.job_id, []);
    m.get(u.job_id).push(u);
  }
  state.usage = m;
  changed();
}

// Jobs that an event named but whose record we lack (a new submission: events carry no
// request): fetched together, a moment later.
const missing = new Set();
let missingTimer = 0;
function fetchMissingSoon(id) {
  missing.add(id);
  if (missingTimer) return;
  missingTimer = setTimeout(async () => {
    missingTimer = 0;
    const ids = [...missing].slice(0, 500);
    for (const id of ids) missing.delete(id);
    if (missing.size) fetchMissingSoon([...missing][0]);
    try {
      const r = await api('/v1/jobs?all=1&ids=' + ids.join(','));
      for (const j of r.jobs) {
        const old = state.jobs.get(j.id);
        // A later event may have come meanwhile: keep the newer state.
        state.jobs.set(j.id, old && old.request ? {...j, ...pick(old)} : j);
      }
      changed();
    } catch (e) {
      // the next list brings them
    }
  }, 200);
}

// The keys an event may have set after the fetched record was made.
function pick(j) {
  const out = {state: j.state};
  for (const k of ['start_time', 'end_time', 'allocation', 'partition', 'exit_code']) {
    if (k in j) out[k] = j[k];
  }
  return out;
}

// A pending job that changed (held, released, updated) gets its reason from the scheduling pass
// that follows: read such jobs again soon after and once more a little later. Beyond a few
// hundred at once, the periodic list catches up instead.
const REASONS_MAX = 300;
const reasonIds = new Set();
let reasonTimer = 0;
function refreshReasonSoon(id) {
  if (reasonIds.size >= REASONS_MAX) return;
  reasonIds.add(id);
  if (reasonTimer) return;
  reasonTimer = setTimeout(async () => {
    reasonTimer = 0;
    const ids = [...reasonIds];
    reasonIds.clear();
    for (const delay of [0, 1500]) {
      if (delay) await new Promise((r) => setTimeout(r, delay));
      try {
        const r = await api('/v1/jobs?ids=' + ids.join(','));
        for (const j of r.jobs) {
          const old = state.jobs.get(j.id);
          if (old && old.state === j.state && j.state === 'PENDING') {
            state.jobs.set(j.id, {...old, reason: j.reason, reason_detail: j.reason_detail,
              expected_start: j.expected_start, priority: j.priority});
          }
        }
        changed();
      } catch (e) {
        return;
      }
    }
  }, 300);
}

let nodesTimer = 0;
function refreshNodesSoon() {
  if (nodesTimer) return;
  nodesTimer = setTimeout(() => {
    nodesTimer = 0;
    loadNodes().catch(() => {});
  }, 500);
}

export function applyEvent(ev) {
  state.eventsApplied++;
  if (ev.type === 'hello' || ev.type === 'lost') {
    loadJobs().catch(() => {});
    refreshNodesSoon();
    return;
  }
  if (ev.type === 'job' && ev.job) {
    const j = ev.job;
    const old = state.jobs.get(j.id);
    if (!old) {
      state.jobs.set(j.id, j);
      fetchMissingSoon(j.id);
    } else {
      const merged = {...old, ...j, request: old.request};
      if (j.state !== 'PENDING') {
        delete merged.reason;
        delete merged.reason_detail;
        delete merged.expected_start;
      }
      if (!j.allocation) delete merged.allocation;
      state.jobs.set(j.id, merged);
      if (!old.request) fetchMissingSoon(j.id);
      else if (j.state === 'PENDING') refreshReasonSoon(j.id);
    }
    if (!old || old.state !== j.state) refreshNodesSoon();
    changed();
    return;
  }
  if (ev.type === 'node' && ev.node) {
    const i = state.nodes.findIndex((n) => n.name === ev.node.name);
    if (i >= 0) state.nodes[i] = {...state.nodes[i], ...ev.node};
    else state.nodes.push(ev.node);
    changed();
    return;
  }
  if (ev.type === 'power' && ev.power) {
    state.power.events = [...(state.power.events || []), ev.power].slice(-500);
    refreshNodesSoon();
    changed();
  }
}

let watcher = null;
let timers = [];

// Loads everything and follows the watch; lists are read again now and then, for what events
// do not carry (pending reasons come from scheduling passes; node changes without events).
export function start() {
  stop();
  watcher = watch(applyEvent, (s) => {
    state.live = s;
    changed();
  });
  loadNodes().catch(() => {});
  loadPower().catch(() => {});
  loadUsage().catch(() => {});
  timers = [
    setInterval(() => loadJobs().catch(() => {}), 10000),
    setInterval(() => loadNodes().catch(() => {}), 5000),
    setInterval(() => loadUsage().catch(() => {}), 15000),
    setInterval(() => loadPower().catch(() => {}), 30000),
  ];
}

export function stop() {
  if (watcher) watcher.stop();
  watcher = null;
  for (const t of timers) clearInterval(t);
  timers = [];
}

export function pollPendingReasons() {
  return loadJobs();
}

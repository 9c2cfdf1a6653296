// The queue: pending and running jobs of both faces, filtered and sorted, arrays folded as
// squeue folds them (the pending tasks on one row, "12_[3-9]"). Only the rows in view are in the
// DOM, so 10,000 jobs scroll and update as fast as 100.
import {h, clear, duration, time, shortState, expandArray, ranges} from './util.js';
import {state, subscribe, isTerminal} from './store.js';
import {jobButtons} from './actions.js';

const ROW_H = 30;

export function jobLabel(j) {
  if (j.array_job_id && j.array_task_id >= 0) return `${j.array_job_id}_${j.array_task_id}`;
  if (j.array_job_id && j.array_task_id === -1) {
    const started = new Set();
    for (const o of state.jobs.values()) {
      if (o.array_job_id === j.id && o.array_task_id >= 0) started.add(o.array_task_id);
    }
    const spec = j.request && j.request.array;
    const left = expandArray(spec).filter((t) => !started.has(t));
    const limit = spec && String(spec).includes('%') ? '%' + String(spec).split('%')[1] : '';
    return `${j.id}_[${left.length ? ranges(left) : ''}${limit}]`;
  }
  return String(j.id);
}

export function faceOf(j) {
  return j.k8s ? 'Pod' : 'Slurm';
}

export function gpusOf(j) {
  if (j.allocation && j.allocation.nodes) {
    return j.allocation.nodes.reduce((n, a) => n + (a.gpus ? a.gpus.length : 0), 0);
  }
  const r = j.request || {};
  const nodes = typeof r.nodes === 'number' ? r.nodes : parseInt(r.nodes || '1', 10) || 1;
  return r.gpus || (r.gpus_per_node || 0) * nodes || (r.gpus_per_task || 0) * (r.ntasks || 1);
}

function nodeCount(j) {
  if (j.allocation && j.allocation.nodes) return j.allocation.nodes.length;
  const r = j.request || {};
  return typeof r.nodes === 'number' ? r.nodes : parseInt(r.nodes || '1', 10) || 1;
}

function partitionOf(j) {
  if (j.partition) return j.partition;
  const p = j.request && j.request.partition;
  return Array.isArray(p) ? p.join(',') : p || '';
}

// The row's cells and sort keys, computed once per job change (a changed job is a new object;
// arrays' rows are not cached: their label depends on their tasks).
const rowCache = new WeakMap();
function rowOf(j) {
  let row = rowCache.get(j);
  if (!row) {
    row = makeRow(j);
    if (!j.array_job_id) rowCache.set(j, row);
  }
  return row;
}

function makeRow(j) {
  const r = j.request || {};
  const running = j.start_time > 0 && !isTerminal(j.state) && j.state !== 'PENDING';
  const where = j.state === 'PENDING' ? `(${j.reason || 'None'})` :
      (j.allocation ? j.allocation.nodes.map((a) => a.node).join(',') : '');
  return {
    job: j,
    id: jobLabel(j),
    face: faceOf(j),
    partition: partitionOf(j),
    name: (j.k8s && j.k8s.name) || r.name || '',
    user: r.user || '',
    account: r.account || '',
    state: j.state,
    // Sorting by time: the longer a job has run, the earlier it started; not running: first.
    time: running ? -j.start_time : -Infinity,
    start: running ? j.start_time : 0,
    nodes: nodeCount(j),
    gpus: gpusOf(j),
    gpuType: r.gpu_type || '',
    where,
    detail: j.state === 'PENDING' ? j.reason_detail || '' : '',
    expected: j.state === 'PENDING' && j.expected_start > 0 ? j.expected_start : 0,
  };
}

const COLUMNS = [
  ['id', 'JobID'], ['face', 'Face'], ['partition', 'Partition'], ['name', 'Name'],
  ['user', 'User'], ['account', 'Account'], ['state', 'State'], ['time', 'Time'],
  ['nodes', 'Nodes'], ['gpus', 'GPUs'], ['where', 'Nodelist (Reason)'],
  ['expected', 'Expected start'],
];

export function queueView(root, session) {
  const filters = {user: '', account: '', partition: '', state: 'active', gpu: '', face: ''};
  let sortKey = 'id';
  let sortDir = 1;
  let rows = [];
  let builtFor = -1;

  const field = (key, label, el) => h('label', {class: 'filter'}, label, el);
  const text = (key) => h('input', {id: 'f-' + key, type: 'search', oninput: (e) => {
    filters[key] = e.target.value.trim();
    builtFor = -1;
    draw();
  }});
  const stateSel = h('select', {id: 'f-state', onchange: (e) => {
    filters.state = e.target.value;
    builtFor = -1;
    draw();
  }}, ...[['active', 'pending and running'], ['PENDING', 'pending'], ['RUNNING', 'running'],
    ['ended', 'ended'], ['all', 'all']].map(([v, l]) => h('option', {value: v}, l)));
  const faceSel = h('select', {id: 'f-face', onchange: (e) => {
    filters.face = e.target.value;
    builtFor = -1;
    draw();
  }}, h('option', {value: ''}, 'both'), h('option', {value: 'Slurm'}, 'Slurm jobs'),
  h('option', {value: 'Pod'}, 'Pods'));
  const gpuSel = h('select', {id: 'f-gpu', onchange: (e) => {
    filters.gpu = e.target.value;
    builtFor = -1;
    draw();
  }});
  const count = h('span', {id: 'queue-count', class: 'muted', 'aria-live': 'polite'});
  const headRow = h('tr');
  const tbody = h('tbody', {id: 'queue-rows'});
  const table = h('table', {class: 'queue', id: 'queue-table'}, h('thead', {}, headRow), tbody);
  const scroller = h('div', {class: 'scroller', id: 'queue-scroller', tabindex: '0'}, table);
  scroller.addEventListener('scroll', () => paint());

  for (const [key, label] of COLUMNS) {
    headRow.appendChild(h('th', {scope: 'col'}, h('button', {class: 'sort', 'data-key': key,
      onclick: () => {
        if (sortKey === key) sortDir = -sortDir;
        else {
          sortKey = key;
          sortDir = 1;
        }
        builtFor = -1;
        draw();
      }}, label)));
  }
  headRow.appendChild(h('th', {scope: 'col'}, 'Actions'));

  root.appendChild(h('section', {class: 'card'},
      h('h1', {}, 'Queue ', count),
      h('div', {class: 'filters'}, field('user', 'User', text('user')),
          field('account', 'Account', text('account')),
          field('partition', 'Partition', text('partition')), field('state', 'State', stateSel),
          field('gpu', 'GPU type', gpuSel), field('face', 'Face', faceSel)),
      scroller));

  function matches(j) {
    const r = j.request || {};
    const f = filters;
    if (f.state === 'active' && isTerminal(j.state)) return false;
    if (f.state === 'ended' && !isTerminal(j.state)) return false;
    if (f.state === 'PENDING' && j.state !== 'PENDING') return false;
    if (f.state === 'RUNNING' && (j.state === 'PENDING' || isTerminal(j.state))) return false;
    if (f.user && !(r.user || '').includes(f.user)) return false;
    if (f.account && !(r.account || '').includes(f.account)) return false;
    if (f.partition && !partitionOf(j).includes(f.partition)) return false;
    if (f.gpu && (r.gpu_type || '') !== f.gpu) return false;
    if (f.face && faceOf(j) !== f.face) return false;
    return true;
  }

  function build() {
    rows = [];
    for (const j of state.jobs.values()) {
      if (matches(j)) rows.push(rowOf(j));
    }
    const numeric = (a) => (a.job.array_job_id || a.job.id) * 100000 + (a.job.array_task_id + 1 || 0);
    rows.sort((a, b) => {
      let c;
      if (sortKey === 'id') c = numeric(a) - numeric(b);
      else {
        const x = a[sortKey];
        const y = b[sortKey];
        if (x === y) c = 0;
        else c = typeof x === 'number' ? (x < y ? -1 : 1) : String(x).localeCompare(String(y));
        if (c === 0) c = numeric(a) - numeric(b);
      }
      return c * sortDir;
    });
    builtFor = state.version;
  }

  // The rows' elements, one per row object (a job's row is new only when the job changed), so
  // that a repaint keeps the elements (and the focus, and a click under way) of unchanged rows.
  const rowEls = new WeakMap();
  let shown = [];  // the row objects in the DOM, in order
  let shownPads = '';

  function paint() {
    const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_H) - 5);
    const visible = Math.ceil((scroller.clientHeight || 600) / ROW_H) + 10;
    const last = Math.min(rows.length, first + visible);
    const want = rows.slice(first, last);
    const pads = `${first}/${rows.length - last}`;
    if (pads === shownPads && want.length === shown.length &&
        want.every((r, i) => r === shown[i])) {
      refreshTimes();
      return;
    }
    shown = want;
    shownPads = pads;
    const frag = document.createDocumentFragment();
    const pad = (n) => {
      const tr = h('tr', {class: 'pad', 'aria-hidden': 'true'});
      tr.style.height = n * ROW_H + 'px';
      return tr;
    };
    if (first > 0) frag.appendChild(pad(first));
    for (const r of want) {
      let tr = rowEls.get(r);
      if (!tr) {
        tr = rowEl(r);
        rowEls.set(r, tr);
      }
      frag.appendChild(tr);
    }
    if (last < rows.length) frag.appendChild(pad(rows.length - last));
    const focused = document.activeElement;
    clear(tbody).appendChild(frag);
    if (focused && focused !== document.activeElement && tbody.contains(focused)) focused.focus();
    table.setAttribute('aria-rowcount', String(rows.length + 1));
    refreshTimes();
  }

  // Running jobs' times, in place.
  function refreshTimes() {
    const now = Date.now() / 1000;
    for (const r of shown) {
      if (!r.start) continue;
      const td = rowEls.get(r).querySelector('td.time');
      if (td) td.textContent = duration(now - r.start);
    }
  }

  function rowEl(r) {
    const j = r.job;
    return h('tr', {'data-job': String(j.id), class: 'st-' + j.state},
        h('td', {}, h('a', {href: '#/job/' + encodeURIComponent(r.id.includes('[') ? j.id : r.id)},
            r.id)),
        h('td', {}, r.face),
        h('td', {}, r.partition),
        h('td', {class: 'name'}, r.name),
        h('td', {}, r.user),
        h('td', {}, r.account),
        h('td', {}, h('span', {class: 'badge st-' + j.state, title: j.state},
            shortState(j.state) + ' ' + j.state.toLowerCase())),
        h('td', {class: 'num time'}, ''),
        h('td', {class: 'num'}, r.nodes),
        h('td', {class: 'num'}, r.gpus ? `${r.gpus}${r.gpuType ? ' ' + r.gpuType : ''}` : ''),
        h('td', {class: 'where', title: r.detail || r.where}, r.where,
            r.detail ? h('span', {class: 'detail'}, ' ' + r.detail) : ''),
        h('td', {}, r.expected ? time(r.expected) : ''),
        h('td', {class: 'actions'}, jobButtons(j, session)));
  }

  function gpuTypes() {
    const types = new Set();
    for (const n of state.nodes) for (const g of n.gpus || []) if (g) types.add(g);
    const want = [''].concat([...types].sort());
    if (gpuSel.options.length === want.length) return;
    clear(gpuSel);
    for (const t of want) gpuSel.appendChild(h('option', {value: t}, t || 'any'));
    gpuSel.value = filters.gpu;
  }

  function draw() {
    gpuTypes();
    if (builtFor !== state.version) build();
    count.textContent = `${rows.length} jobs`;
    paint();
  }

  draw();
  const unsub = subscribe(draw);
  const timer = setInterval(refreshTimes, 1000);
  return {dispose() {
    unsub();
    clearInterval(timer);
  }, draw};
}

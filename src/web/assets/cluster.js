// The cluster: every node as a tile with its GPUs as cells (which job holds each, shared, idle,
// drained, down, powered down, powering up), grouped by partition; allocation and measured use;
// charts of the cluster's history (GET /v1/history).
import {api} from './api.js';
import {h, clear, mib} from './util.js';
import {state, subscribe, isTerminal} from './store.js';
import {lineChart} from './svg.js';
import {nodeAction} from './actions.js';

// What a GPU that no job holds shows, from its node's state (each with a text label).
export function idleGpuState(nodeState) {
  const s = nodeState || '';
  if (s.includes('POWERING_UP')) return ['boot', 'powering up'];
  if (s.includes('POWERED_DOWN') || s.includes('POWERING_DOWN')) return ['off', 'powered down'];
  if (s.startsWith('DOWN') || s.includes('NOT_RESPONDING')) return ['down', 'down'];
  if (s.startsWith('DRAIN')) return ['drained', 'drained'];
  return ['idle', 'idle'];
}

// node -> device index -> [job ids], from the running jobs' allocations.
function gpuHolders() {
  const m = new Map();
  for (const j of state.jobs.values()) {
    if (!j.allocation || isTerminal(j.state)) continue;
    for (const a of j.allocation.nodes || []) {
      if (!m.has(a.node)) m.set(a.node, new Map());
      const byIndex = m.get(a.node);
      for (const g of a.gpus || []) {
        if (!byIndex.has(g)) byIndex.set(g, []);
        byIndex.get(g).push(j.id);
      }
    }
  }
  return m;
}

function bar(label, used, total, fmt = (x) => x) {
  const frac = total > 0 ? Math.min(1, used / total) : 0;
  const fill = h('span', {class: 'fill'});
  fill.style.width = (frac * 100).toFixed(1) + '%';
  return h('div', {class: 'meter', role: 'meter', 'aria-valuemin': '0',
    'aria-valuemax': String(total), 'aria-valuenow': String(used), 'aria-label': label},
  h('span', {class: 'track'}, fill), h('span', {class: 'meter-text'},
      `${label} ${fmt(used)}/${fmt(total)}`));
}

function stateClass(s) {
  return 'ns-' + (s || '').split('+')[0].toLowerCase();
}

// A node's GPUs' measured use (GET /v1/nodes' gpu_utilization, from its agent's NVML), as
// [percent or null per device], [] when its agent measures none.
function gpuUse(n) {
  return (n.gpu_utilization || []).map((u) => (typeof u === 'number' ? u : null));
}

function nodeTile(n, holders, session, measured) {
  const use = gpuUse(n);
  const cells = (n.gpus || []).map((type, i) => {
    const jobs = (holders.get(n.name) || new Map()).get(i) || [];
    let cls;
    let label;
    if (jobs.length > 1) {
      cls = 'shared';
      label = `shared ${jobs.join('+')}`;
    } else if (jobs.length === 1) {
      cls = 'alloc';
      label = `job ${jobs[0]}`;
    } else {
      [cls, label] = idleGpuState(n.state);
    }
    const u = use[i] ?? null;
    const title = `GPU ${i}${type ? ' (' + type + ')' : ''}: ${label}` +
      (u === null ? '' : `, ${u}% busy (measured)`);
    let meter = '';
    if (u !== null) {
      const fill = h('span', {class: 'fill'});
      fill.style.width = Math.max(0, Math.min(100, u)) + '%';
      meter = h('span', {class: 'gpu-use', 'data-util': String(u)},
          h('span', {class: 'track'}, fill), `${u}%`);
    }
    const cell = h(jobs.length === 1 ? 'a' : 'span', {class: 'gpu g-' + cls, title,
      'data-gpu': String(i), 'data-state': cls,
      href: jobs.length === 1 ? '#/job/' + jobs[0] : undefined},
    h('span', {class: 'gpu-idx'}, String(i)), h('span', {class: 'gpu-label'}, label), meter);
    return cell;
  });
  const m = measured.get(n.name);
  const actions = [];
  if (session.admin) {
    const drained = (n.state || '').startsWith('DRAIN');
    actions.push(h('button', {class: 'small', 'data-action': drained ? 'resume' : 'drain',
      onclick: () => nodeAction(n.name, drained ? 'resume' : 'drain')},
    drained ? 'Resume' : 'Drain'));
  }
  return h('article', {class: 'node ' + stateClass(n.state), 'data-node': n.name},
      h('header', {}, h('h3', {}, n.name),
          h('span', {class: 'badge ' + stateClass(n.state), 'data-state': n.state}, n.state),
          n.reservation_state ? h('span', {class: 'badge'}, n.reservation_state) : ''),
      n.reason ? h('p', {class: 'reason'}, 'Reason: ' + n.reason) : '',
      bar('CPUs', n.alloc_cpus || 0, n.cpus || 0),
      bar('Memory', n.alloc_mem_mib || 0, n.mem_mib || 0, mib),
      (n.gpus || []).length ? bar('GPUs', n.alloc_gpus || 0, n.gpus.length) : '',
      m || gpuBusyText(use) ? h('p', {class: 'measured'}, 'Measured: ' + [
        m ? `${m.cpus.toFixed(1)} CPUs busy, ${mib(Math.round(m.mem / 1048576))} in use` : '',
        gpuBusyText(use)].filter((x) => x).join(', ')) : '',
      cells.length ? h('div', {class: 'gpus', role: 'list', 'aria-label': 'GPUs'}, cells) : '',
      actions.length ? h('div', {class: 'node-actions'}, actions) : '');
}

// "GPUs 65% busy" over the measured devices of a node, '' when none is measured.
function gpuBusyText(use) {
  const known = use.filter((u) => u !== null);
  if (!known.length) return '';
  const mean = known.reduce((a, b) => a + b, 0) / known.length;
  return `GPUs ${Math.round(mean)}% busy`;
}

const LEGEND = [['alloc', 'job N: allocated'], ['shared', 'shared by jobs'], ['idle', 'idle'],
  ['drained', 'drained'], ['down', 'down'], ['off', 'powered down'], ['boot', 'powering up']];

const SERIES = ['gpus_allocated', 'gpus_used', 'jobs_running', 'jobs_pending'];

export function clusterView(root, session) {
  let range = '1h';
  const summary = h('div', {class: 'summary', id: 'cluster-summary'});
  const groups = h('div', {id: 'cluster-nodes'});
  const charts = h('div', {class: 'charts', id: 'cluster-charts'});
  const rangeSel = h('select', {id: 'history-range', onchange: (e) => {
    range = e.target.value;
    loadHistory();
  }}, ...['1h', '1d', '1w'].map((r) => h('option', {value: r}, r)));
  root.appendChild(h('section', {class: 'card'}, h('h1', {}, 'Cluster'), summary,
      h('div', {class: 'legend', 'aria-label': 'GPU states'}, LEGEND.map(([c, l]) =>
        h('span', {class: 'gpu g-' + c}, h('span', {class: 'gpu-label'}, l)))), groups));
  root.appendChild(h('section', {class: 'card'}, h('h2', {}, 'History ',
      h('label', {}, 'range ', rangeSel)), charts));

  // Measured use per node: CPU time's rate between two readings, and the working sets.
  const prev = new Map();
  function measure() {
    const out = new Map();
    for (const [id, readings] of state.usage) {
      for (const u of readings) {
        const key = id + '@' + u.node;
        const p = prev.get(key);
        let rate = 0;
        if (p && u.time_ms > p.time_ms) rate = (u.cpu_seconds - p.cpu_seconds) * 1000 / (u.time_ms - p.time_ms);
        if (!p || u.time_ms !== p.time_ms) prev.set(key, {...u, rate});
        else rate = p.rate || 0;
        const o = out.get(u.node) || {cpus: 0, mem: 0};
        o.cpus += Math.max(0, rate);
        o.mem += u.memory_bytes || 0;
        out.set(u.node, o);
      }
    }
    return out;
  }

  let drawnStructure = '';
  const tiles = new Map();  // node name -> {sig, els: its tiles (one per partition)}
  function draw() {
    const holders = gpuHolders();
    const measured = measure();
    let cpus = 0, acpus = 0, mem = 0, amem = 0, gpus = 0, agpus = 0, gpuBusy = 0, gpuMeasured = 0;
    for (const n of state.nodes) {
      for (const u of gpuUse(n)) {
        if (u === null) continue;
        gpuMeasured++;
        gpuBusy += u / 100;
      }
      cpus += n.cpus || 0;
      acpus += n.alloc_cpus || 0;
      mem += n.mem_mib || 0;
      amem += n.alloc_mem_mib || 0;
      gpus += (n.gpus || []).length;
      agpus += n.alloc_gpus || 0;
    }
    let busy = 0;
    for (const m of measured.values()) busy += m.cpus;
    let pending = 0, running = 0;
    for (const j of state.jobs.values()) {
      if (j.state === 'PENDING') pending++;
      else if (!isTerminal(j.state)) running++;
    }
    clear(summary).append(
        h('span', {}, `${state.nodes.length} nodes`),
        bar('CPUs allocated', acpus, cpus), bar('Memory allocated', amem, mem, mib),
        bar('GPUs allocated', agpus, gpus),
        h('span', {}, `${busy.toFixed(1)} CPUs busy (measured)`),
        gpuMeasured ? h('span', {id: 'gpus-busy'},
            `${gpuBusy.toFixed(1)} of ${gpuMeasured} measured GPUs busy`) : '',
        h('span', {}, `${running} running, ${pending} pending`));
    // By partition; a node in several partitions shows in each.
    const byPart = new Map();
    for (const p of state.partitions) byPart.set(p.name, []);
    for (const n of state.nodes) {
      const parts = n.partitions && n.partitions.length ? n.partitions : ['(no partition)'];
      for (const p of parts) {
        if (!byPart.has(p)) byPart.set(p, []);
        byPart.get(p).push(n);
      }
    }
    // A tile is redrawn only when what it shows changed, and the groups only when a node or a
    // partition came or went: a drawn tile keeps its buttons (and their focus) meanwhile.
    const structure = JSON.stringify([[...byPart].map(([p, ns]) => [p, ns.map((n) =>
      [n.name, n.topology || ''])]), state.partitions]);
    const tileSig = (n) => {
      const {last_seen: _seen, ...shown} = n;
      const m = measured.get(n.name);
      return JSON.stringify([shown, [...(holders.get(n.name) || new Map())],
        m ? [m.cpus.toFixed(1), Math.round(m.mem / 1048576)] : null, session.admin]);
    };
    if (structure === drawnStructure) {
      for (const n of state.nodes) {
        const sig = tileSig(n);
        const drawn = tiles.get(n.name);
        if (!drawn || drawn.sig === sig) continue;
        drawn.sig = sig;
        drawn.els = drawn.els.map((el) => {
          const fresh = nodeTile(n, holders, session, measured);
          el.replaceWith(fresh);
          return fresh;
        });
      }
      return;
    }
    drawnStructure = structure;
    tiles.clear();
    clear(groups);
    for (const [name, nodes] of byPart) {
      const p = state.partitions.find((x) => x.name === name);
      // Within a partition, by topology block where the nodes say (n.topology), else one group.
      const blocks = new Map();
      for (const n of nodes) {
        const b = n.topology || '';
        if (!blocks.has(b)) blocks.set(b, []);
        blocks.get(b).push(n);
      }
      const sec = h('section', {class: 'partition', 'data-partition': name},
          h('h2', {}, `Partition ${name}`, p ? h('span', {class: 'muted'},
              ` ${p.state}${p.default ? ', default' : ''}, ${p.total_nodes} nodes, ` +
              `${p.total_gpus} GPUs`) : ''));
      for (const [block, ns] of blocks) {
        if (block) sec.appendChild(h('h3', {}, 'Block ' + block));
        sec.appendChild(h('div', {class: 'tiles'}, ns.map((n) => {
          const el = nodeTile(n, holders, session, measured);
          if (!tiles.has(n.name)) tiles.set(n.name, {sig: tileSig(n), els: []});
          tiles.get(n.name).els.push(el);
          return el;
        })));
      }
      groups.appendChild(sec);
    }
  }

  async function loadHistory() {
    clear(charts);
    try {
      const r = await api(`/v1/history?series=${SERIES.join(',')}&range=${range}`);
      const sr = r.series || {};
      const pts = (k) => sr[k] || [];
      charts.append(
          lineChart([{name: 'GPUs allocated', points: pts('gpus_allocated'), step: true},
            {name: 'GPUs used', points: pts('gpus_used'), step: true}],
          {title: `GPUs allocated and used, last ${range}`, yLabel: 'GPUs'}),
          lineChart([{name: 'running jobs', points: pts('jobs_running'), step: true},
            {name: 'pending jobs', points: pts('jobs_pending'), step: true}],
          {title: `Running and pending jobs, last ${range}`, yLabel: 'jobs'}));
    } catch (e) {
      charts.appendChild(h('p', {class: 'muted', id: 'history-missing'},
          e.status === 404 ? 'no history yet' : 'history: ' + e.message));
    }
  }

  draw();
  loadHistory();
  const unsub = subscribe(draw);
  const timer = setInterval(loadHistory, 60000);
  return {dispose() {
    unsub();
    clearInterval(timer);
  }};
}

// One job: request vs allocation, timeline, nodes and GPUs, the output's tail (followed while it
// runs), efficiency and seff's advice, the script or the Pod manifest, and the actions.
import {api, headers, readLines} from './api.js';
import {h, clear, duration, time, mib, pct, shortState} from './util.js';
import {state, subscribe, isTerminal} from './store.js';
import {timeline} from './svg.js';
import {jobButtons} from './actions.js';
import {jobLabel, gpusOf} from './queue.js';

const TAIL_BYTES = 64 * 1024;

// Where a job's output is read: its Pod's log (Slurm jobs are Pods "job-ID" in namespace
// "slurm"; docs/kubernetes.md).
function logPath(j) {
  const ns = j.k8s && j.k8s.namespace ? j.k8s.namespace : 'slurm';
  const name = j.k8s && j.k8s.name ? j.k8s.name : 'job-' + j.id;
  return `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}`;
}

function dl(pairs) {
  return h('dl', {class: 'facts'}, pairs.filter((p) => p[1] !== '' && p[1] !== undefined)
      .flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function requestRows(j) {
  const r = j.request || {};
  const alloc = j.allocation && j.allocation.nodes ? j.allocation.nodes : [];
  const sum = (k) => alloc.reduce((n, a) => n + (a[k] || 0), 0);
  const reqMem = r.mem_per_node !== undefined ? `${mib(r.mem_per_node)} per node` :
      r.mem_per_cpu ? `${mib(r.mem_per_cpu)} per CPU` :
      r.mem_per_gpu ? `${mib(r.mem_per_gpu)} per GPU` : 'default';
  const reqGpus = r.gpus ? `${r.gpus}` : r.gpus_per_node ? `${r.gpus_per_node} per node` :
      r.gpus_per_task ? `${r.gpus_per_task} per task` : '0';
  return [
    ['Nodes', String(r.nodes || 1), alloc.length ? String(alloc.length) : ''],
    ['CPUs', r.cpus_per_task ? `${r.cpus_per_task} per task × ${r.ntasks || 1}` :
        `${r.ntasks || 1} task(s)`, alloc.length ? String(sum('cpus')) : ''],
    ['Memory', reqMem, alloc.length ? mib(sum('mem_mib')) : ''],
    ['GPUs', reqGpus + (r.gpu_type ? ' ' + r.gpu_type : ''), alloc.length ? String(gpusOf(j)) : ''],
    ['Time limit', duration(typeof r.time_limit === 'number' ? r.time_limit : -1) ||
        String(r.time_limit || 'partition default'), duration(j.time_limit)],
    ['Partition', Array.isArray(r.partition) ? r.partition.join(',') : r.partition || '',
      j.partition || ''],
  ];
}

function efficiency(j) {
  const alloc = j.allocation && j.allocation.nodes ? j.allocation.nodes : [];
  const cpus = alloc.reduce((n, a) => n + (a.cpus || 0), 0);
  const mem = alloc.reduce((n, a) => n + (a.mem_mib || 0), 0);
  const now = Date.now() / 1000;
  const end = j.end_time > 0 && isTerminal(j.state) ? j.end_time : now;
  const elapsed = j.start_time > 0 ? Math.max(0, end - j.start_time) : 0;
  let cpuSec = j.usage ? j.usage.cpu_seconds : 0;
  let rss = j.usage ? j.usage.max_rss_mib : 0;
  const live = state.usage.get(j.id) || [];
  if (!isTerminal(j.state) && live.length) {
    cpuSec = live.reduce((n, u) => n + u.cpu_seconds, 0);
    rss = live.reduce((n, u) => n + (u.max_rss_bytes || u.max_memory_bytes || 0), 0) / 1048576;
  }
  const gpu = j.usage ? j.usage.gpu_utilization : -1;
  return [
    ['Elapsed', duration(elapsed)],
    ['CPU efficiency', cpus && elapsed ? `${pct(100 * cpuSec / (cpus * elapsed))} of ` +
        `${cpus} CPUs (${cpuSec.toFixed(1)} CPU-s)` : ''],
    ['Memory efficiency', mem ? `${pct(100 * rss / mem)} of ${mib(mem)} (peak ` +
        `${mib(Math.round(rss))})` : ''],
    ['GPU utilisation', gpu >= 0 ? pct(gpu) : (gpusOf(j) ? 'not measured' : '')],
  ];
}

function marks(j) {
  const m = [];
  if (j.submit_time > 0) m.push({t: j.submit_time, label: 'submitted', cls: 'm-submit'});
  if (j.eligible_time > 0 && j.eligible_time !== j.submit_time) {
    m.push({t: j.eligible_time, label: 'eligible', cls: 'm-eligible'});
  }
  if (j.start_time > 0) m.push({t: j.start_time, label: 'started', cls: 'm-start'});
  if (j.preempt_end_time > 0) m.push({t: j.preempt_end_time, label: 'preempted', cls: 'm-end'});
  if (j.end_time > 0) {
    m.push({t: j.end_time, label: j.start_time > 0 ? 'ended' : 'ended (requeued)',
      cls: 'm-end'});
  }
  return m;
}

export function jobView(root, idText, session) {
  let job = null;
  let follower = null;
  let followed = '';
  const head = h('div', {id: 'job-head'});
  const body = h('div', {id: 'job-body'});
  const out = h('pre', {id: 'job-output', class: 'output', tabindex: '0',
    'aria-label': 'Output', 'aria-live': 'off'});
  const outNote = h('p', {class: 'muted', id: 'job-output-note'});
  const advice = h('ul', {id: 'job-advice'});
  const source = h('pre', {id: 'job-source', class: 'source', tabindex: '0'});
  root.appendChild(h('section', {class: 'card'}, head, body));
  root.appendChild(h('section', {class: 'card'}, h('h2', {}, 'Output'), outNote, out));
  root.appendChild(h('section', {class: 'card'}, h('h2', {}, 'Right-sizing advice (seff)'), advice));
  root.appendChild(h('section', {class: 'card'}, h('h2', {id: 'job-source-title'}, 'Script'), source));

  async function load() {
    try {
      job = await api('/v1/jobs/' + encodeURIComponent(idText));
    } catch (e) {
      clear(head).appendChild(h('p', {class: 'error', role: 'alert'}, e.message));
      return;
    }
    draw();
    follow();
    loadAdvice();
    loadSource();
  }

  function draw() {
    const j = job;
    const r = j.request || {};
    clear(head).append(
        h('h1', {}, `Job ${jobLabel(j)} `, h('span', {class: 'muted'}, r.name || ''), ' ',
            h('span', {class: 'badge st-' + j.state, id: 'job-state'},
                shortState(j.state) + ' ' + j.state.toLowerCase())),
        h('div', {class: 'actions', id: 'job-actions'}, jobButtons(j, session, load)));
    const pending = j.state === 'PENDING';
    const table = h('table', {class: 'compare'}, h('thead', {}, h('tr', {},
        h('th', {}, ''), h('th', {scope: 'col'}, 'Requested'), h('th', {scope: 'col'}, 'Allocated'))),
    h('tbody', {}, requestRows(j).map(([k, a, b]) => h('tr', {}, h('th', {scope: 'row'}, k),
        h('td', {}, a), h('td', {}, b)))));
    const alloc = j.allocation && j.allocation.nodes ? j.allocation.nodes : [];
    clear(body).append(
        dl([['User', r.user || ''], ['Account', r.account || ''], ['QoS', r.qos || ''],
          ['Face', j.k8s ? `Pod ${j.k8s.namespace}/${j.k8s.name}` : 'Slurm job'],
          ['Reason', pending ? j.reason || 'None' : ''],
          ['Detail', pending ? j.reason_detail || '' : ''],
          ['Expected start', pending && j.expected_start > 0 ? time(j.expected_start) : ''],
          ['Exit code', isTerminal(j.state) ? `${j.exit_code}:${j.term_signal}` : ''],
          ['Requeued', j.restart_count ? `${j.restart_count} time(s)` : ''],
          ['Message', j.message || '']]),
        h('h2', {}, 'Request and allocation'), table,
        h('h2', {}, 'Timeline'), timeline(marks(j), {title: 'Job timeline'}),
        h('ul', {class: 'times'}, marks(j).map((m) => h('li', {}, `${m.label}: ${time(m.t)}`))),
        alloc.length ? h('h2', {}, 'Nodes and GPUs') : '',
        alloc.length ? h('ul', {id: 'job-nodes'}, alloc.map((a) => h('li', {},
            `${a.node}: ${a.cpus} CPUs, ${mib(a.mem_mib)}` +
            (a.gpus && a.gpus.length ? `, GPUs ${a.gpus.join(',')}` : '')))) : '',
        h('h2', {}, 'Efficiency'), dl(efficiency(j)));
  }

  // The output's tail, then what is written, until the job ends (the log's follow stream).
  async function follow() {
    const j = job;
    if (!j || !j.start_time || j.start_time < 0) {
      outNote.textContent = 'No output yet: the job has not started.';
      return;
    }
    const key = `${j.id}/${j.restart_count}`;
    if (followed === key) return;
    followed = key;
    if (follower) follower.abort();
    const ctl = new AbortController();
    follower = ctl;
    const running = !isTerminal(j.state);
    outNote.textContent = running ? 'Following the output while the job runs.' :
        'The end of the output.';
    out.textContent = '';
    try {
      const res = await fetch(logPath(j) + `/log?limitBytes=${64 << 20}&tailLines=500` +
          (running ? '&follow=true' : ''), {headers: headers(), credentials: 'same-origin',
        signal: ctl.signal});
      if (!res.ok) {
        let msg = await res.text();
        try {
          msg = JSON.parse(msg).message || msg;
        } catch (e) {
          // text
        }
        outNote.textContent = 'Output: ' + msg;
        return;
      }
      await readLines(res, (line) => {
        out.textContent += line + '\n';
        if (out.textContent.length > TAIL_BYTES * 2) {
          out.textContent = out.textContent.slice(-TAIL_BYTES);
        }
        out.scrollTop = out.scrollHeight;
      }, ctl.signal);
      if (!ctl.signal.aborted) outNote.textContent = 'The end of the output (the job ended).';
    } catch (e) {
      if (!ctl.signal.aborted) outNote.textContent = 'Output: ' + e.message;
    }
  }

  async function loadAdvice() {
    clear(advice);
    if (!isTerminal(job.state)) {
      advice.appendChild(h('li', {class: 'muted'}, 'seff advises once the job has ended.'));
      return;
    }
    try {
      const r = await api('/v1/reports/advice?job=' + job.id);
      const s = r.suggestions || [];
      if (!s.length) advice.appendChild(h('li', {}, 'No suggestion: the request fits.'));
      for (const x of s) advice.appendChild(h('li', {}, 'Suggestion: ' + x));
    } catch (e) {
      advice.appendChild(h('li', {class: 'muted'}, e.message));
    }
  }

  async function loadSource() {
    const title = document.getElementById('job-source-title');
    if (job.k8s) {
      title.textContent = 'Pod manifest';
      try {
        const pod = await api(logPath(job));
        source.textContent = JSON.stringify(pod, null, 2);
      } catch (e) {
        source.textContent = e.message;
      }
      return;
    }
    title.textContent = 'Script';
    const r = job.request || {};
    source.textContent = r.script || (r.argv ? r.argv.join(' ') : '(not shown: not your job)');
  }

  // The live view tells when the job changes: read it again then.
  let seen = '';
  const unsub = subscribe(() => {
    const id = job ? job.id : Number(idText);
    const j = state.jobs.get(id);
    if (!j) return;
    const sig = `${j.state}/${j.start_time}/${j.end_time}/${j.restart_count}`;
    if (sig === seen) return;
    const first = seen === '';
    seen = sig;
    if (!first) load();
  });
  load();
  return {dispose() {
    unsub();
    if (follower) follower.abort();
  }};
}

// The usage review: `berth report usage` and `advice` over a chosen period, as tables and bar
// charts per account and user, exportable as CSV. The figures are the controller's own
// (GET /v1/reports/usage and /advice run the report's code), so they equal the CLI's.
import {api, headers} from './api.js';
import {h, clear, time} from './util.js';
import {notify} from './actions.js';
import {barChart} from './svg.js';

const FIELDS = [
  ['account', 'Account'], ['user', 'User'], ['jobs', 'Jobs'], ['cpu_hours', 'CPUHours'],
  ['cpu_hours_used', 'CPUHoursUsed'], ['cpu_efficiency', 'CPUEff'],
  ['mem_gib_hours', 'MemGiBHours'], ['mem_peak_gib_hours', 'MemPeakGiBHours'],
  ['mem_efficiency', 'MemEff'], ['gpu_hours', 'GPUHours'], ['gpu_hours_used', 'GPUHoursUsed'],
  ['gpu_utilization', 'GPUUtil'], ['gpu_hours_unmeasured', 'GPUHoursUnmeasured'],
];
const TOP_FIELDS = [
  ['job_id', 'JobID'], ['user', 'User'], ['account', 'Account'], ['name', 'JobName'],
  ['state', 'State'], ['hours', 'Hours'], ['cpu_efficiency', 'CPUEff'],
  ['mem_efficiency', 'MemEff'], ['gpu_utilization', 'GPUUtil'],
  ['idle_cpu_hours', 'IdleCPUHours'], ['idle_mem_gib_hours', 'IdleMemGiBHours'],
  ['idle_gpu_hours', 'IdleGPUHours'], ['score', 'Score'],
];

function cell(row, key) {
  const v = row[key];
  if (key === 'account') return v || '(none)';
  if (key === 'gpu_utilization' && v === null && row.gpu_hours > 0) return 'unknown';
  if (v === null || v === undefined) return '';
  if (key.endsWith('efficiency') || key === 'gpu_utilization') return v.toFixed(1) + '%';
  if (typeof v === 'number' && key !== 'jobs') return v.toFixed(2);
  return String(v);
}

function table(id, fields, rows) {
  return h('div', {class: 'table-wrap'}, h('table', {id, class: 'report'},
      h('thead', {}, h('tr', {}, fields.map(([, l]) => h('th', {scope: 'col'}, l)))),
      h('tbody', {}, rows.map((r) => h('tr', {'data-account': r.account, 'data-user': r.user},
          fields.map(([k]) => h('td', {'data-key': k}, cell(r, k))))))));
}

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], {type: 'text/csv'}));
  const a = h('a', {href: url, download: name});
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function localInput(t) {
  const d = new Date(t * 1000);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:` +
      p(d.getMinutes());
}

export function usageView(root, session) {
  const now = Math.floor(Date.now() / 1000);
  const start = h('input', {id: 'usage-start', type: 'datetime-local',
    value: localInput(now - 30 * 86400)});
  const end = h('input', {id: 'usage-end', type: 'datetime-local', value: localInput(now + 60)});
  const all = h('input', {id: 'usage-all', type: 'checkbox', checked: true});
  const out = h('div', {id: 'usage-out'});
  const form = h('form', {class: 'filters', id: 'usage-form'},
      h('label', {class: 'filter'}, 'From', start), h('label', {class: 'filter'}, 'To', end),
      h('label', {class: 'filter check'}, all, 'every user'),
      h('button', {type: 'submit', id: 'usage-run'}, 'Show'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    load();
  });
  root.appendChild(h('section', {class: 'card'}, h('h1', {}, 'Usage review'), form, out));
  let report = null;
  let query = '';

  async function load() {
    const s = Math.floor(new Date(start.value).getTime() / 1000);
    const e = Math.floor(new Date(end.value).getTime() / 1000);
    clear(out).appendChild(h('p', {class: 'muted'}, 'Loading...'));
    try {
      const q = `start=${s}&end=${e}&top=10${all.checked ? '&all=1' : ''}`;
      query = q;
      const [r, a] = await Promise.all([api('/v1/reports/usage?' + q),
        api(`/v1/reports/advice?start=${s}&end=${e}`).catch((err) => ({error: err.message}))]);
      report = r;
      draw(r, a);
    } catch (err) {
      clear(out).appendChild(h('p', {class: 'error', role: 'alert'}, err.message));
    }
  }

  function draw(r, a) {
    clear(out);
    out.dataset.start = r.start;
    out.dataset.end = r.end;
    out.append(
        h('p', {}, `Usage from ${time(r.start)} to ${time(r.end)}; each job counts for the ` +
            'part of its run inside the period.'),
        h('button', {id: 'usage-csv', onclick: exportCsv}, 'Export CSV'),
        table('usage-rows', FIELDS, r.rows.concat([{...r.total, account: 'total', user: ''}])));
    const rows = r.rows.map((x) => ({label: `${x.account || '(none)'}${x.user ? ' / ' + x.user : ''}`,
      x}));
    if (rows.length) {
      out.append(h('h2', {}, 'CPU-hours: allocated and used'),
          barChart(rows.map((o) => ({label: o.label, values: [o.x.cpu_hours, o.x.cpu_hours_used]})),
              ['CPU-hours allocated', 'CPU-hours used'], {title: 'CPU-hours per account and user'}),
          h('h2', {}, 'GPU-hours: allocated and used'),
          barChart(rows.map((o) => ({label: o.label, values: [o.x.gpu_hours, o.x.gpu_hours_used]})),
              ['GPU-hours allocated', 'GPU-hours used'], {title: 'GPU-hours per account and user'}),
          h('h2', {}, 'Memory GiB-hours: allocated and peak'),
          barChart(rows.map((o) => ({label: o.label,
            values: [o.x.mem_gib_hours, o.x.mem_peak_gib_hours]})),
          ['GiB-hours allocated', 'GiB-hours at peak'], {title: 'Memory per account and user'}));
    }
    out.append(h('h2', {}, 'Most over-provisioned jobs'),
        r.top_jobs.length ? table('usage-top', TOP_FIELDS, r.top_jobs) :
            h('p', {class: 'muted'}, 'None in this period.'));
    out.append(h('h2', {}, `Advice for ${session.user}`));
    if (a.error) {
      out.append(h('p', {class: 'muted'}, a.error));
    } else {
      const said = (a.resources || []).filter((x) => x.text);
      out.append(h('p', {}, `${a.jobs} of your jobs ended in this period.`),
          h('ul', {id: 'usage-advice'}, said.length ? said.map((x) => h('li', {}, x.text)) :
              h('li', {}, 'Nothing to advise: the requests fit.')));
    }
  }

  // The CLI's own CSV (`berth report usage --format csv`), made by the controller.
  async function exportCsv() {
    try {
      const res = await fetch('/v1/reports/usage?' + query + '&format=csv',
          {headers: headers(), credentials: 'same-origin', cache: 'no-store'});
      if (!res.ok) throw new Error(await res.text());
      download('berth-usage.csv', await res.text());
    } catch (err) {
      notify('Export CSV: ' + err.message, 'error');
    }
  }

  load();
  return {dispose() {}, report: () => report};
}

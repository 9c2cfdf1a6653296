// Small helpers: DOM building without innerHTML (every text is a text node), formats, hostlists.

// h('td', {class: 'x', onclick: f}, 'text', child, ...)
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? '' : v);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function duration(s) {
  if (s === undefined || s === null || s < 0) return '';
  if (s >= 4503599627370496) return 'UNLIMITED';
  const d = Math.floor(s / 86400);
  const hh = String(Math.floor((s % 86400) / 3600)).padStart(2, '0');
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(Math.floor(s % 60)).padStart(2, '0');
  if (d > 0) return `${d}-${hh}:${mm}:${ss}`;
  if (s >= 3600) return `${Number(hh)}:${mm}:${ss}`;
  return `${Number(mm)}:${ss}`;
}

export function time(t) {
  if (t === undefined || t === null || t < 0) return '';
  const d = new Date(t * 1000);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T` +
      `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function mib(m) {
  if (m === undefined || m === null) return '';
  if (m >= 1024 * 1024) return (m / 1024 / 1024).toFixed(1) + 'T';
  if (m >= 1024) return (m / 1024).toFixed(1) + 'G';
  return m + 'M';
}

export function pct(x) {
  return x === null || x === undefined || isNaN(x) ? '' : x.toFixed(1) + '%';
}

// "gpu[01-03],cpu7" -> ["gpu01", "gpu02", "gpu03", "cpu7"]
export function expandHostlist(s) {
  const out = [];
  if (!s) return out;
  const parts = [];
  let depth = 0;
  let cur = '';
  for (const c of s) {
    if (c === '[') depth++;
    if (c === ']') depth--;
    if (c === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  if (cur) parts.push(cur);
  for (const p of parts) {
    const m = p.match(/^(.*?)\[([^\]]*)\](.*)$/);
    if (!m) {
      out.push(p);
      continue;
    }
    for (const r of m[2].split(',')) {
      const [a, b] = r.split('-');
      const width = a.length;
      const lo = Number(a);
      const hi = b === undefined ? lo : Number(b);
      for (let i = lo; i <= hi; i++) out.push(m[1] + String(i).padStart(width, '0') + m[3]);
    }
  }
  return out;
}

// [1,2,3,5] -> "1-3,5"
export function ranges(nums) {
  const s = [...nums].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    out.push(j > i ? `${s[i]}-${s[j]}` : `${s[i]}`);
    i = j + 1;
  }
  return out.join(',');
}

// "0-15:4,20" -> [0, 4, 8, 12, 20] (the %N limit is ignored)
export function expandArray(spec) {
  const out = [];
  if (!spec) return out;
  for (const part of String(spec).split('%')[0].split(',')) {
    const [range, step] = part.split(':');
    const [a, b] = range.split('-');
    const lo = Number(a);
    const hi = b === undefined ? lo : Number(b);
    const st = Number(step || 1) || 1;
    for (let i = lo; i <= hi && out.length < 100000; i += st) out.push(i);
  }
  return out;
}

// Slurm's short state names (squeue's ST).
const SHORT = {
  PENDING: 'PD', RUNNING: 'R', CONFIGURING: 'CF', SUSPENDED: 'S', COMPLETING: 'CG',
  COMPLETED: 'CD', CANCELLED: 'CA', FAILED: 'F', TIMEOUT: 'TO', NODE_FAIL: 'NF',
  PREEMPTED: 'PR', BOOT_FAIL: 'BF', DEADLINE: 'DL', OUT_OF_MEMORY: 'OOM',
};
export function shortState(s) {
  return SHORT[s] || s;
}

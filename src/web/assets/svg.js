// Charts drawn as inline SVG (no library): lines over time, horizontal bars, step timelines.
const NS = 'http://www.w3.org/2000/svg';

function s(tag, attrs, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

function fmtTime(t) {
  const d = new Date(t * 1000);
  return d.toLocaleString([], {month: 'short', day: 'numeric', hour: '2-digit',
    minute: '2-digit'});
}

// series: [{name, cls, points: [[t, v], ...], step?: bool}]
export function lineChart(series, {width = 640, height = 200, title = '', yLabel = ''} = {}) {
  const pad = {l: 44, r: 12, t: 20, b: 28};
  const all = series.flatMap((x) => x.points);
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img',
    'aria-label': title});
  svg.appendChild(s('title', {}, title));
  if (!all.length) return svg;
  let t0 = Math.min(...all.map((p) => p[0]));
  let t1 = Math.max(...all.map((p) => p[0]));
  if (t1 === t0) t1 = t0 + 1;
  const vmax = Math.max(1, ...all.map((p) => p[1]));
  const x = (t) => pad.l + (t - t0) / (t1 - t0) * (width - pad.l - pad.r);
  const y = (v) => height - pad.b - v / vmax * (height - pad.t - pad.b);
  for (const frac of [0, 0.5, 1]) {
    const v = vmax * frac;
    svg.appendChild(s('line', {x1: pad.l, x2: width - pad.r, y1: y(v), y2: y(v), class: 'grid'}));
    svg.appendChild(s('text', {x: pad.l - 4, y: y(v) + 4, class: 'axis', 'text-anchor': 'end'},
        Number.isInteger(v) ? v : v.toFixed(1)));
  }
  svg.appendChild(s('text', {x: pad.l, y: height - 8, class: 'axis'}, fmtTime(t0)));
  svg.appendChild(s('text', {x: width - pad.r, y: height - 8, class: 'axis',
    'text-anchor': 'end'}, fmtTime(t1)));
  if (yLabel) svg.appendChild(s('text', {x: pad.l, y: 12, class: 'axis'}, yLabel));
  series.forEach((ser, i) => {
    if (!ser.points.length) return;
    let d = '';
    ser.points.forEach(([t, v], k) => {
      if (k === 0) d += `M${x(t)},${y(v)}`;
      else if (ser.step) d += `H${x(t)}V${y(v)}`;
      else d += `L${x(t)},${y(v)}`;
    });
    if (ser.step) d += `H${x(t1)}`;
    svg.appendChild(s('path', {d, class: `series s${i} ${ser.cls || ''}`}));
    // A legend entry with the name: colour is never the only key (dash patterns differ too).
    const lx = width - pad.r - 150;
    const ly = pad.t + 4 + i * 14;
    svg.appendChild(s('line', {x1: lx, x2: lx + 18, y1: ly - 4, y2: ly - 4,
      class: `series s${i}`}));
    svg.appendChild(s('text', {x: lx + 22, y: ly, class: 'axis'}, ser.name));
  });
  return svg;
}

// rows: [{label, values: [v, ...]}], names: the value names (one bar each per row)
export function barChart(rows, names, {width = 640, title = '', unit = ''} = {}) {
  const barH = 15;
  const gap = 8;
  const labelW = 160;
  const rowH = names.length * barH + gap;
  const height = 24 + rows.length * rowH + names.length * 14;
  const vmax = Math.max(1e-9, ...rows.flatMap((r) => r.values));
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img',
    'aria-label': title});
  svg.appendChild(s('title', {}, title));
  rows.forEach((r, i) => {
    const y0 = 8 + i * rowH;
    svg.appendChild(s('text', {x: labelW - 6, y: y0 + barH, class: 'axis',
      'text-anchor': 'end'}, r.label));
    r.values.forEach((v, k) => {
      const w = Math.max(0, v / vmax * (width - labelW - 80));
      svg.appendChild(s('rect', {x: labelW, y: y0 + k * barH, width: w, height: barH - 2,
        class: `bar b${k}`}));
      svg.appendChild(s('text', {x: labelW + w + 4, y: y0 + k * barH + barH - 3,
        class: 'axis'}, `${v.toFixed(2)}${unit}`));
    });
  });
  names.forEach((n, k) => {
    const y0 = 16 + rows.length * rowH + k * 14;
    svg.appendChild(s('rect', {x: labelW, y: y0 - 9, width: 12, height: 10, class: `bar b${k}`}));
    svg.appendChild(s('text', {x: labelW + 16, y: y0, class: 'axis'}, n));
  });
  return svg;
}

// marks: [{t, label, cls}] on one time axis, labelled (a job's timeline, power events).
export function timeline(marks, {width = 640, height = 70, title = ''} = {}) {
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img',
    'aria-label': title});
  svg.appendChild(s('title', {}, title));
  const ts = marks.map((m) => m.t);
  if (!ts.length) return svg;
  const t0 = Math.min(...ts);
  const t1 = Math.max(t0 + 1, ...ts);
  const x = (t) => 60 + (t - t0) / (t1 - t0) * (width - 120);
  svg.appendChild(s('line', {x1: 60, x2: width - 60, y1: 30, y2: 30, class: 'grid'}));
  marks.forEach((m, i) => {
    svg.appendChild(s('circle', {cx: x(m.t), cy: 30, r: 5, class: `mark ${m.cls || ''}`}));
    svg.appendChild(s('text', {x: x(m.t), y: i % 2 ? 56 : 18, class: 'axis',
      'text-anchor': 'middle'}, m.label));
  });
  return svg;
}

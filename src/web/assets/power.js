// Autoscaling: the power-saving actions (resume, up, suspend, resume_timeout) on a timeline,
// with the number of nodes powered up over time (GET /v1/power, and the watch's power events).
import {h, clear, time, expandHostlist} from './util.js';
import {state, subscribe} from './store.js';
import {lineChart} from './svg.js';

// Nodes up (powered or powering up; not down, not powered down) before each event, walking back
// from the nodes' state now: a resume added its nodes, a suspend or a resume timeout (the node
// goes DOWN) took them away.
export function nodeCountSeries(events, nodes) {
  let up = nodes.filter((n) => {
    const s = n.state || '';
    return !s.includes('POWERED_DOWN') && !s.startsWith('DOWN');
  }).length;
  const now = Date.now() / 1000;
  const points = [[now, up]];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    const k = expandHostlist(e.nodes).length;
    points.push([e.time, up]);
    if (e.action === 'resume') up -= k;
    else if (e.action === 'suspend' || e.action === 'resume_timeout') up += k;
    up = Math.max(0, up);
    points.push([e.time, up]);
  }
  points.reverse();
  return points;
}

export function powerView(root) {
  const settings = h('dl', {class: 'facts', id: 'power-settings'});
  const chart = h('div', {id: 'power-chart'});
  const list = h('tbody', {id: 'power-events'});
  root.appendChild(h('section', {class: 'card'}, h('h1', {}, 'Autoscaling'), settings, chart,
      h('div', {class: 'table-wrap'}, h('table', {class: 'report'}, h('thead', {}, h('tr', {},
          h('th', {scope: 'col'}, 'Time'), h('th', {scope: 'col'}, 'Action'),
          h('th', {scope: 'col'}, 'Nodes'), h('th', {scope: 'col'}, 'Reason'))), list))));
  let seen = -1;
  function draw() {
    const p = state.power || {};
    const events = p.events || [];
    const key = `${events.length}/${state.nodes.map((n) => n.state).join()}/${p.enabled}`;
    if (key === seen) return;
    seen = key;
    clear(settings);
    settings.append(h('dt', {}, 'Power saving'), h('dd', {}, p.enabled ? 'on' : 'off'));
    for (const [k, v] of Object.entries(p.settings || {})) {
      settings.append(h('dt', {}, k), h('dd', {}, Array.isArray(v) ? v.join(',') : String(v)));
    }
    clear(chart);
    if (!events.length) {
      chart.appendChild(h('p', {class: 'muted'}, 'No power actions yet.'));
    } else {
      const by = (a) => events.filter((e) => e.action === a).map((e) => [e.time,
        expandHostlist(e.nodes).length]);
      chart.append(lineChart([{name: 'nodes up', points: nodeCountSeries(events, state.nodes),
        step: true}], {title: 'Nodes powered up', yLabel: 'nodes'}),
      lineChart([{name: 'resume', points: by('resume')}, {name: 'suspend', points: by('suspend')},
        {name: 'up', points: by('up')}, {name: 'resume_timeout', points: by('resume_timeout')}],
      {title: 'Power actions (nodes per action)', yLabel: 'nodes'}));
    }
    clear(list);
    for (const e of [...events].reverse()) {
      list.appendChild(h('tr', {class: 'pw-' + e.action}, h('td', {}, time(e.time)),
          h('td', {}, h('span', {class: 'badge pw-' + e.action}, e.action)), h('td', {}, e.nodes),
          h('td', {}, e.reason || '')));
    }
  }
  draw();
  const unsub = subscribe(draw);
  return {dispose: unsub};
}

// Actions on jobs and nodes: each asks for confirmation, then shows the API's answer (its error
// text when refused). The API checks who may do what; the pages only hide what cannot succeed.
import {api} from './api.js';
import {h, clear} from './util.js';

const dialog = document.getElementById('confirm');

// Resolves true when the user confirms.
export function confirmAction(text, {input} = {}) {
  return new Promise((resolve) => {
    const body = clear(dialog.querySelector('.body'));
    body.appendChild(h('p', {id: 'confirm-text'}, text));
    let field = null;
    if (input) {
      field = h('input', {id: 'confirm-input', type: 'text', value: input.value || '',
        'aria-label': input.label});
      body.appendChild(h('label', {for: 'confirm-input'}, input.label));
      body.appendChild(field);
    }
    const ok = dialog.querySelector('#confirm-ok');
    const cancel = dialog.querySelector('#confirm-cancel');
    const done = (v) => {
      ok.onclick = cancel.onclick = null;
      dialog.close();
      resolve(v ? (field ? field.value : true) : false);
    };
    ok.onclick = () => done(true);
    cancel.onclick = () => done(false);
    dialog.oncancel = () => done(false);
    dialog.showModal();
    (field || ok).focus();
  });
}

export function notify(text, kind = 'info') {
  const box = document.getElementById('notice');
  box.className = 'notice ' + kind;
  box.textContent = text;
  box.hidden = false;
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => {
    box.hidden = true;
  }, kind === 'error' ? 20000 : 6000);
}

const JOB_ACTIONS = {
  cancel: {label: 'Cancel', verb: 'cancel'},
  hold: {label: 'Hold', verb: 'hold'},
  release: {label: 'Release', verb: 'release'},
};

export async function jobAction(id, action) {
  const a = JOB_ACTIONS[action];
  if (!(await confirmAction(`${a.label} job ${id}?`))) return false;
  try {
    await api(`/v1/jobs/${encodeURIComponent(id)}/${a.verb}`, {method: 'POST'});
    notify(`Job ${id}: ${a.verb} done`);
    return true;
  } catch (e) {
    notify(`Job ${id}: ${a.verb} refused: ${e.message}`, 'error');
    return false;
  }
}

// The buttons that fit a job's state. Shown on everyone's jobs: the API decides (a user acting
// on another user's job sees its refusal), as it does for scancel.
export function jobButtons(job, session, after) {
  const out = [];
  const add = (action) => out.push(h('button', {class: 'small', 'data-action': action,
    onclick: async (e) => {
      e.stopPropagation();
      if (await jobAction(job.array_task_id >= 0 ? `${job.array_job_id}_${job.array_task_id}`
                                                  : job.id, action) && after) after();
    }}, JOB_ACTIONS[action].label));
  const ended = ['COMPLETED', 'CANCELLED', 'FAILED', 'TIMEOUT', 'NODE_FAIL', 'PREEMPTED',
    'BOOT_FAIL', 'DEADLINE', 'OUT_OF_MEMORY'].includes(job.state);
  if (ended) return out;
  add('cancel');
  if (job.state === 'PENDING') {
    if (job.reason === 'JobHeldUser' || job.reason === 'JobHeldAdmin') add('release');
    else add('hold');
  }
  return out;
}

export async function nodeAction(node, action) {
  let reason = '';
  if (action === 'drain') {
    reason = await confirmAction(`Drain node ${node}? Running jobs finish; no new ones start.`,
        {input: {label: 'Reason', value: ''}});
    if (reason === false) return false;
  } else {
    const verb = action === 'resume' ? 'Resume' : 'Set down';
    if (!(await confirmAction(`${verb} node ${node}?`))) return false;
  }
  try {
    await api(`/v1/nodes/${encodeURIComponent(node)}/${action}`, {method: 'POST',
      body: reason ? {reason} : {}});
    notify(`Node ${node}: ${action} done`);
    return true;
  } catch (e) {
    notify(`Node ${node}: ${action} refused: ${e.message}`, 'error');
    return false;
  }
}

"""Integration tests: the Kubernetes face through the REAL Python client (python3-kubernetes 22.6,
Debian's package) and a kubeconfig from `berth kubeconfig`: nodes, an Indexed batch/v1 Job watched
to completion through its Pods, pod logs (plain and followed), 409/404/422 answers, Foreground
deletion of a Job, and a bare Pod deleted while it runs (its berth job CANCELLED).

The client is installed for the system Python only, so each client step runs in
`/usr/bin/python3 HELPER STEP ARGS...` (the helper is written to a temporary folder) and prints
one JSON object; this module, run by any python3, checks it. The client's models validate
required fields when they deserialise an answer: a ValueError there is a server bug, and the
helper reports it as `{"value_error": ...}` which the tests fail on.

Skipped only where `/usr/bin/python3 -c 'import kubernetes'` fails.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_python (from this folder).
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from harness import Cluster

SYSTEM_PYTHON = '/usr/bin/python3'


def have_client():
    try:
        return subprocess.run([SYSTEM_PYTHON, '-c', 'import kubernetes'], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


HELPER = r'''
import json
import sys
import time
import traceback

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


def error(e):
    try:
        body = json.loads(e.body)
    except (TypeError, ValueError):
        body = {'raw': str(e.body)}
    return {'api_exception': {'status': e.status, 'reason': e.reason, 'body': body}}


def nodes(core):
    out = []
    for n in core.list_node().items:
        out.append({'name': n.metadata.name, 'capacity': n.status.capacity,
                    'allocatable': n.status.allocatable,
                    'conditions': [[c.type, c.status] for c in n.status.conditions or []],
                    'kubelet': n.status.node_info.kubelet_version})
    return {'nodes': out}


def create_job(batch, name):
    container = client.V1Container(
        name='main', image='busybox:1.36',
        command=['sh', '-c', 'echo hi-$JOB_COMPLETION_INDEX'],
        resources=client.V1ResourceRequirements(requests={'cpu': '1', 'memory': '64Mi'}))
    job = client.V1Job(
        api_version='batch/v1', kind='Job', metadata=client.V1ObjectMeta(name=name),
        spec=client.V1JobSpec(
            completions=2, parallelism=2, completion_mode='Indexed', backoff_limit=0,
            template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
                restart_policy='Never', containers=[container]))))
    j = batch.create_namespaced_job('default', job)
    return {'type': type(j).__name__, 'name': j.metadata.name, 'uid': j.metadata.uid,
            'completion_mode': j.spec.completion_mode, 'completions': j.spec.completions,
            'parallelism': j.spec.parallelism,
            'requests': j.spec.template.spec.containers[0].resources.requests}


def watch_job_pods(core, name, want):
    """Watches the job's pods until `want` of them are Succeeded (or one Failed, or the stream
    ends after its timeoutSeconds)."""
    events, phases = [], {}
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, 'default', label_selector='job-name=' + name,
                       timeout_seconds=30):
        pod = ev['object']
        phases[pod.metadata.name] = pod.status.phase
        events.append({'type': ev['type'], 'name': pod.metadata.name, 'phase': pod.status.phase,
                       'index': (pod.metadata.annotations or {}).get(
                           'batch.kubernetes.io/job-completion-index'),
                       'labels': pod.metadata.labels})
        done = [p for p in phases.values() if p == 'Succeeded']
        if len(done) >= want or 'Failed' in phases.values():
            w.stop()
    return {'events': events, 'phases': phases}


def read_job(batch, name):
    j = batch.read_namespaced_job(name, 'default')
    return {'name': j.metadata.name, 'succeeded': j.status.succeeded, 'failed': j.status.failed,
            'active': j.status.active,
            'completion_time': str(j.status.completion_time) if j.status.completion_time else None,
            'conditions': [{'type': c.type, 'status': c.status, 'reason': c.reason}
                           for c in j.status.conditions or []]}


def pod_log(core, pod):
    return {'log': core.read_namespaced_pod_log(pod, 'default', _request_timeout=30)}


def follow_log(core, pod):
    start = time.time()
    r = core.read_namespaced_pod_log(pod, 'default', follow=True, _preload_content=False,
                                     _request_timeout=30)
    chunks = []
    for chunk in r.stream(1024):
        chunks.append(chunk.decode())
    r.release_conn()
    return {'status': r.status, 'log': ''.join(chunks), 'seconds': time.time() - start}


def delete_job(batch, name):
    s = batch.delete_namespaced_job(name, 'default', propagation_policy='Foreground')
    return {'type': type(s).__name__, 'status': s.status, 'kind': s.kind}


def list_pods(core, selector):
    pods = core.list_namespaced_pod('default', label_selector=selector or None)
    return {'pods': [{'name': p.metadata.name, 'phase': p.status.phase,
                      'labels': p.metadata.labels} for p in pods.items]}


def create_pod(core, name):
    pod = client.V1Pod(
        api_version='v1', kind='Pod', metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(restart_policy='Never', containers=[client.V1Container(
            name='main', image='busybox:1.36', command=['sleep', '30'])]))
    p = core.create_namespaced_pod('default', pod)
    return {'type': type(p).__name__, 'name': p.metadata.name, 'labels': p.metadata.labels,
            'phase': p.status.phase if p.status else None}


def read_pod(core, name):
    p = core.read_namespaced_pod(name, 'default')
    return {'name': p.metadata.name, 'phase': p.status.phase, 'labels': p.metadata.labels,
            'container_states': [s.state.to_dict() for s in p.status.container_statuses or []]}


def delete_pod(core, name):
    p = core.delete_namespaced_pod(name, 'default')
    return {'type': type(p).__name__, 'name': getattr(getattr(p, 'metadata', None), 'name', None)}


def create_invalid_pods(core, name):
    out = {}
    typed = client.V1Pod(api_version='v1', kind='Pod', metadata=client.V1ObjectMeta(name=name),
                         spec=client.V1PodSpec(containers=[]))
    raw = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name}, 'spec': {}}
    for label, body in (('empty', typed), ('absent', raw)):
        try:
            p = core.create_namespaced_pod('default', body)
            out[label] = {'created': p.metadata.name}
        except ApiException as e:
            out[label] = error(e)
    return out


def main():
    kubeconfig, step, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    config.load_kube_config(config_file=kubeconfig)
    core, batch = client.CoreV1Api(), client.BatchV1Api()
    steps = {'nodes': lambda: nodes(core),
             'create_job': lambda: create_job(batch, *args),
             'create_job_and_watch': lambda: {'created': create_job(batch, args[0]),
                                              **watch_job_pods(core, args[0], int(args[1]))},
             'read_job': lambda: read_job(batch, *args),
             'pod_log': lambda: pod_log(core, *args),
             'follow_log': lambda: follow_log(core, *args),
             'delete_job': lambda: delete_job(batch, *args),
             'list_pods': lambda: list_pods(core, *args),
             'create_pod': lambda: create_pod(core, *args),
             'read_pod': lambda: read_pod(core, *args),
             'delete_pod': lambda: delete_pod(core, *args),
             'create_invalid_pods': lambda: create_invalid_pods(core, *args)}
    try:
        out = steps[step]()
    except ApiException as e:
        out = error(e)
    except ValueError as e:
        out = {'value_error': str(e), 'traceback': traceback.format_exc()}
    print(json.dumps(out, default=str))


main()
'''


@unittest.skipUnless(have_client(), f'{SYSTEM_PYTHON} cannot import kubernetes')
class PythonClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(controller_args=['--k8s-listen', '127.0.0.1:0']).start()
        cls.tmp = tempfile.mkdtemp(prefix='berth-k8s-py-')
        cls.kubeconfig = os.path.join(cls.tmp, 'kubeconfig')
        with open(cls.kubeconfig, 'w') as f:
            f.write(cls.c.cli('kubeconfig').stdout)
        cls.helper = os.path.join(cls.tmp, 'client_steps.py')
        with open(cls.helper, 'w') as f:
            f.write(HELPER)

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def step(self, name, *args, timeout=90, ok=True):
        """Runs one client step; with ok, an ApiException or a ValueError fails the test."""
        p = subprocess.run([SYSTEM_PYTHON, self.helper, self.kubeconfig, name, *args],
                           capture_output=True, text=True, timeout=timeout)
        self.assertEqual(p.returncode, 0, f'step {name} {args} failed:\n{p.stderr}')
        out = json.loads(p.stdout)
        if 'value_error' in out:
            self.fail(f'the client could not deserialise the answer to {name} {args} '
                      f'(a server bug):\n{out["traceback"]}')
        if ok and 'api_exception' in out:
            self.fail(f'step {name} {args}: {out["api_exception"]}')
        return out

    def api_error(self, out, status):
        self.assertIn('api_exception', out, out)
        e = out['api_exception']
        self.assertEqual(e['status'], status, e)
        self.assertEqual(e['body'].get('kind'), 'Status', e)
        self.assertEqual(e['body'].get('code'), status, e)
        return e

    def wait_step(self, what, cond, name, *args, timeout=30):
        """Repeats a client step until cond(its output) holds; returns the last output."""
        end = time.time() + timeout
        while True:
            out = self.step(name, *args, ok=False)
            if cond(out):
                return out
            if time.time() > end:
                self.fail(f'timed out waiting for {what}; last {out}')
            time.sleep(0.5)

    def cleanup_job(self, name):
        out = self.step('delete_job', name, ok=False)
        if 'api_exception' in out:
            self.assertEqual(out['api_exception']['status'], 404, out)

    def cleanup_pod(self, name):
        out = self.step('delete_pod', name, ok=False)
        if 'api_exception' in out:
            self.assertEqual(out['api_exception']['status'], 404, out)

    def test_list_node(self):
        out = self.step('nodes')
        names = [n['name'] for n in out['nodes']]
        self.assertIn('node1', names)
        node = out['nodes'][names.index('node1')]
        status, berth = self.c.api('GET', '/v1/nodes/node1')
        self.assertEqual(status, 200, berth)
        for field in ('capacity', 'allocatable'):
            q = node[field]
            for key in ('cpu', 'memory', 'nvidia.com/gpu'):
                self.assertIsInstance(q[key], str, (field, q))
            self.assertEqual(q['nvidia.com/gpu'], '4')
            self.assertEqual(q['cpu'], str(berth['cpus']))
            self.assertIn(q['memory'], (f"{berth['mem_mib']}Mi", f"{berth['mem_mib'] // 1024}Gi"))
        self.assertIn(['Ready', 'True'], node['conditions'])

    def test_indexed_job_runs_to_complete_and_is_deleted_foreground(self):
        name = 'pyjob'
        self.addCleanup(self.cleanup_job, name)
        # Created and watched in one client process, so that the watch (watch=True,
        # timeoutSeconds=30) starts while the pods are young; it ends once both are Succeeded.
        watched = self.step('create_job_and_watch', name, '2', timeout=60)
        created = watched['created']
        self.assertEqual(created['type'], 'V1Job')
        self.assertEqual((created['name'], created['completion_mode'], created['completions'],
                          created['parallelism']), (name, 'Indexed', 2, 2))
        self.assertEqual(created['requests'], {'cpu': '1', 'memory': '64Mi'})
        self.assertTrue(created['uid'])
        phases = watched['phases']
        self.assertEqual(sorted(phases.values()), ['Succeeded', 'Succeeded'], watched['events'])
        self.assertEqual(watched['events'][0]['type'], 'ADDED', watched['events'])
        self.assertEqual({e['index'] for e in watched['events']}, {'0', '1'}, watched['events'])
        for e in watched['events']:
            self.assertEqual(e['labels'].get('job-name'), name, e)

        # The job's status follows its pods (the controller may take a moment to record it).
        job = self.wait_step('the job to be Complete',
                             lambda j: any(c['type'] == 'Complete' and c['status'] == 'True'
                                           for c in j.get('conditions') or []),
                             'read_job', name)
        self.assertNotIn('api_exception', job)
        self.assertEqual(job['succeeded'], 2, job)
        self.assertFalse(job['failed'], job)
        self.assertFalse(job['active'], job)
        self.assertTrue(job['completion_time'], job)
        self.assertFalse([c for c in job['conditions'] if c['type'] == 'Failed'
                          and c['status'] == 'True'], job)

        # Logs: each pod printed its own completion index.
        logs = set()
        for pod in sorted(phases):
            log = self.step('pod_log', pod)['log']
            self.assertRegex(log, r'^hi-[01]\n$')
            logs.add(log.strip())
            followed = self.step('follow_log', pod, timeout=60)
            self.assertEqual(followed['status'], 200, followed)
            self.assertEqual(followed['log'], log)
            self.assertLess(followed['seconds'], 20, followed)
        self.assertEqual(logs, {'hi-0', 'hi-1'})

        # A second create: 409 AlreadyExists.
        e = self.api_error(self.step('create_job', name, ok=False), 409)
        self.assertEqual(e['body']['reason'], 'AlreadyExists', e)
        self.assertIn(name, e['body']['message'])

        # Foreground deletion answers a V1Status; then the job (and its pods) are gone.
        deleted = self.step('delete_job', name)
        self.assertEqual((deleted['type'], deleted['kind']), ('V1Status', 'Status'), deleted)
        self.assertEqual(deleted['status'], 'Success', deleted)
        gone = self.wait_step('the job to be gone', lambda o: 'api_exception' in o,
                              'read_job', name)
        self.api_error(gone, 404)
        self.wait_step('the job\'s pods to be gone', lambda o: o.get('pods') == [],
                       'list_pods', 'job-name=' + name)

    def test_missing_job_is_not_found(self):
        e = self.api_error(self.step('read_job', 'nosuch', ok=False), 404)
        self.assertEqual(e['body']['reason'], 'NotFound', e)
        self.assertIn('nosuch', e['body']['message'])

    def test_deleting_a_running_pod_cancels_its_berth_job(self):
        name = 'pysleep'
        self.addCleanup(self.cleanup_pod, name)
        created = self.step('create_pod', name)
        self.assertEqual((created['type'], created['name']), ('V1Pod', name), created)
        job_id = created['labels']['berth.io/job-id']
        self.assertTrue(job_id.isdigit(), created)
        self.wait_step('the pod to run', lambda o: o.get('phase') == 'Running',
                       'read_pod', name)
        self.assertEqual(self.c.job(job_id)['state'], 'RUNNING')
        deleted = self.step('delete_pod', name)
        self.assertEqual(deleted['type'], 'V1Pod', deleted)
        self.wait_step('the pod to be gone',
                       lambda o: name not in [p['name'] for p in o.get('pods', [])],
                       'list_pods', '')
        self.api_error(self.step('read_pod', name, ok=False), 404)
        self.assertEqual(self.c.wait_state(job_id, 'CANCELLED', timeout=30)['state'],
                         'CANCELLED')

    def test_a_pod_without_containers_is_invalid(self):
        name = 'pyinvalid'
        self.addCleanup(self.cleanup_pod, name)
        out = self.step('create_invalid_pods', name)
        for label in ('empty', 'absent'):
            e = self.api_error(out[label], 422)
            self.assertEqual(e['body']['reason'], 'Invalid', e)
            self.assertIn('spec.containers', e['body']['message'], e)
        self.api_error(self.step('read_pod', name, ok=False), 404)


if __name__ == '__main__':
    unittest.main()

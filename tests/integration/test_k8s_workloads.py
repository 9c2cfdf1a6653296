"""Integration tests: Pods and Jobs through the REAL kubectl against berth's Kubernetes face.

A GPU Job from a manifest (create, apply, get, describe, logs, wait, delete), a Pod's life
(get -w, logs -f, describe, delete of a running pod), backoffLimit, the error answers, Slurm jobs
seen as Pods and Pods seen by squeue, the manifests in ../shared/testdata/k8s, and the older
kubectl versions (1.27/1.28 validate against /openapi/v2 in protobuf).

Skipped only where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_workloads (from this folder).
"""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import time
import unittest

from harness import make_user, remove_user
from test_k8s_nodes import KUBECTL, Kubectl, kubectl_as, start_kubectl_bed

ROOT = os.geteuid() == 0

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'shared',
                        'testdata', 'k8s')

GPU_JOB = textwrap.dedent('''\
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: gpu-train
      labels: {team: ml}
    spec:
      completions: 2
      parallelism: 2
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: trainer
            image: pytorch/pytorch:2.3
            command: ["sh", "-c", "echo gpus=$CUDA_VISIBLE_DEVICES index=$JOB_COMPLETION_INDEX"]
            resources:
              requests: {cpu: 500m, memory: 64Mi}
              limits: {nvidia.com/gpu: 1, memory: 128Mi}
    ''')


def pod_yaml(name, command, restart='Never', extra=''):
    return textwrap.dedent(f'''\
        apiVersion: v1
        kind: Pod
        metadata:
          name: {name}
          labels: {{app: {name}}}
        spec:
          restartPolicy: {restart}
          containers:
          - name: main
            image: busybox
            command: ["sh", "-c", {json.dumps(command)}]
        ''') + extra


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
class KubectlWorkloadsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_kubectl_bed(cls, 'berth-k8s-')

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def pods(self, *args):
        return json.loads(self.k('get', 'pods', '-o', 'json', *args).stdout)['items']

    def wait_for(self, cond, what, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if cond():
                return
            time.sleep(0.2)
        self.fail(f'timed out waiting for {what}')

    def test_gpu_job_from_a_manifest(self):
        path = self.write('gpu-job.yaml', GPU_JOB)
        self.assertIn('job.batch/gpu-train created', self.k('create', '-f', path).stdout)
        again = self.k('create', '-f', path, check=False)
        self.assertEqual(again.returncode, 1)
        self.assertIn('(AlreadyExists)', again.stderr)
        self.assertIn('jobs.batch "gpu-train" already exists', again.stderr)
        table = self.k('get', 'jobs').stdout.splitlines()
        self.assertEqual(table[0].split()[:4], ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION'])
        self.assertTrue(any(line.startswith('gpu-train') for line in table[1:]), table)
        self.assertIn('condition met',
                      self.k('wait', '--for=condition=complete', 'job/gpu-train',
                             '--timeout=60s').stdout)
        job = json.loads(self.k('get', 'job', 'gpu-train', '-o', 'json').stdout)
        self.assertEqual(job['status']['succeeded'], 2)
        types = {c['type']: c['status'] for c in job['status']['conditions']}
        self.assertEqual(types.get('Complete'), 'True')
        self.assertEqual(job['spec']['backoffLimit'], 6)
        selector = job['spec']['selector']['matchLabels']['batch.kubernetes.io/controller-uid']
        pods = self.pods('-l', f'batch.kubernetes.io/controller-uid={selector}')
        self.assertEqual(len(pods), 2)
        gpus = set()
        for p in pods:
            self.assertEqual(p['status']['phase'], 'Succeeded')
            self.assertEqual(p['spec']['nodeName'], 'node1')
            self.assertEqual(p['metadata']['ownerReferences'][0]['kind'], 'Job')
            self.assertEqual(p['status']['containerStatuses'][0]['state']['terminated']['exitCode'],
                             0)
            log = self.k('logs', p['metadata']['name']).stdout
            self.assertRegex(log, r'^gpus=\d+ index=\n')
            gpus.add(log.split()[0])
            # berth's own view: a job of the caller, with one GPU.
            jid = p['metadata']['labels']['berth.io/job-id']
            status, body = self.c.api('GET', f'/v1/jobs/{jid}')
            self.assertEqual(status, 200, body)
            self.assertEqual(body['state'], 'COMPLETED')
            self.assertEqual(len(body['allocation']['nodes'][0]['gpus']), 1)
        self.assertEqual(len(gpus), 2, 'the two pods ran at once on different GPUs')
        described = self.k('describe', 'job', 'gpu-train').stdout
        self.assertIn('Pods Statuses:', described)
        self.assertIn('2 Succeeded', described)
        self.assertIn('SuccessfulCreate', described)
        # apply: unchanged, then a changed label goes through a strategic-merge patch.
        self.k('apply', '-f', path)
        self.assertIn('unchanged', self.k('apply', '-f', path).stdout)
        changed = self.write('gpu-job2.yaml', GPU_JOB.replace('team: ml', 'team: ml2'))
        self.assertIn('configured', self.k('apply', '-f', changed).stdout)
        job = json.loads(self.k('get', 'job', 'gpu-train', '-o', 'json').stdout)
        self.assertEqual(job['metadata']['labels']['team'], 'ml2')
        # The template is immutable.
        bad = self.write('gpu-job3.yaml', GPU_JOB.replace('pytorch:2.3', 'pytorch:2.4'))
        p = self.k('apply', '-f', bad, check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('spec.template', p.stderr)
        self.assertIn('field is immutable', p.stderr)
        self.assertIn('job.batch "gpu-train" deleted', self.k('delete', 'job', 'gpu-train').stdout)
        self.assertEqual(self.pods('-l', f'batch.kubernetes.io/controller-uid={selector}'), [])
        p = self.k('get', 'job', 'gpu-train', check=False)
        self.assertIn('(NotFound): jobs.batch "gpu-train" not found', p.stderr)

    def test_pod_watch_logs_describe(self):
        path = self.write('p1.yaml', pod_yaml('p1', 'for i in 1 2 3; do echo line$i; sleep 1; done'))
        watch = subprocess.Popen(self.k.argv('get', 'pods', '-w', '-l', 'app=p1'),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertIn('pod/p1 created', self.k('apply', '-f', path).stdout)
            self.wait_for(lambda: self.pods('-l', 'app=p1') and
                          self.pods('-l', 'app=p1')[0]['status']['phase'] != 'Pending',
                          'the pod to start')
            follow = self.k('logs', '-f', 'p1').stdout
            self.assertEqual(follow, 'line1\nline2\nline3\n')
            self.wait_for(lambda: self.pods('-l', 'app=p1')[0]['status']['phase'] == 'Succeeded',
                          'the pod to succeed')
            time.sleep(1.5)
        finally:
            watch.terminate()
            out, _ = watch.communicate(timeout=10)
        statuses = [line.split()[2] for line in out.splitlines()[1:] if line.startswith('p1')]
        self.assertIn('Running', statuses, out)
        self.assertEqual(statuses[-1], 'Completed', out)
        wide = self.k('get', 'pods', '-A', '-o', 'wide').stdout.splitlines()
        self.assertEqual(wide[0].split()[:2], ['NAMESPACE', 'NAME'])
        row = [line.split() for line in wide if ' p1 ' in f' {line} ']
        self.assertEqual(row[0][0], 'default')
        self.assertIn('node1', row[0])
        described = self.k('describe', 'pod', 'p1').stdout
        self.assertIn('Node:', described)
        self.assertIn('node1', described)
        self.assertIn('Successfully assigned default/p1 to node1', described)
        self.assertIn('Completed', described)
        self.assertEqual(self.k('logs', 'p1', '--tail=1').stdout, 'line3\n')
        self.k('delete', 'pod', 'p1')
        p = self.k('get', 'pod', 'p1', check=False)
        self.assertIn('pods "p1" not found', p.stderr)

    def test_a_watch_resumed_from_a_list_delivers_what_changed_in_between(self):
        """kubectl lists, then watches from the list's resourceVersion: a pod that started in
        between must come as an event, and an unchanged one must not come again."""
        base = '/api/v1/namespaces/default/pods?labelSelector=app%3Dp7'

        def watch_from(rv):
            out = self.k('get', '--raw', f'{base}&watch=1&timeoutSeconds=1&resourceVersion={rv}')
            return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]

        listed = json.loads(self.k('get', '--raw', base).stdout)
        self.assertEqual(listed['items'], [])
        self.k('apply', '-f', self.write('p7.yaml', pod_yaml('p7', 'sleep 60')))
        self.wait_for(lambda: self.pods('-l', 'app=p7')[0]['status']['phase'] == 'Running',
                      'the pod to run')
        events = watch_from(listed['metadata']['resourceVersion'])
        self.assertEqual([(e['type'], e['object']['status']['phase']) for e in events],
                         [('MODIFIED', 'Running')], events)
        again = json.loads(self.k('get', '--raw', base).stdout)
        pod_rv = int(again['items'][0]['metadata']['resourceVersion'])
        self.assertLessEqual(pod_rv, int(again['metadata']['resourceVersion']))
        self.assertEqual(watch_from(again['metadata']['resourceVersion']), [])
        bad = self.k('get', '--raw', f'{base}&watch=1&resourceVersion=yesterday', check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn('invalid resourceVersion', bad.stderr)
        self.k('delete', 'pod', 'p7', '--timeout=60s')

    def test_delete_of_a_running_pod_cancels_its_job(self):
        path = self.write('p2.yaml', pod_yaml('p2', 'sleep 120'))
        self.k('apply', '-f', path)
        self.wait_for(lambda: self.pods('-l', 'app=p2')[0]['status']['phase'] == 'Running',
                      'the pod to run')
        jid = self.pods('-l', 'app=p2')[0]['metadata']['labels']['berth.io/job-id']
        self.assertIn('pod "p2" deleted', self.k('delete', 'pod', 'p2', '--timeout=60s').stdout)
        self.assertEqual(self.pods('-l', 'app=p2'), [])
        self.assertEqual(self.c.job(int(jid))['state'], 'CANCELLED')

    def test_backoff_limit_fails_the_job(self):
        path = self.write('failing.yaml', textwrap.dedent('''\
            apiVersion: batch/v1
            kind: Job
            metadata: {name: failing}
            spec:
              backoffLimit: 1
              template:
                spec:
                  restartPolicy: Never
                  containers:
                  - {name: main, image: busybox, command: ["sh", "-c", "exit 3"]}
            '''))
        self.k('create', '-f', path)
        self.k('wait', '--for=condition=failed', 'job/failing', '--timeout=60s')
        job = json.loads(self.k('get', 'job', 'failing', '-o', 'json').stdout)
        self.assertEqual(job['status']['failed'], 2)
        failed = [c for c in job['status']['conditions'] if c['type'] == 'Failed'][0]
        self.assertEqual(failed['reason'], 'BackoffLimitExceeded')
        pods = self.pods('-l', 'job-name=failing')
        self.assertEqual(len(pods), 2)
        for p in pods:
            term = p['status']['containerStatuses'][0]['state']['terminated']
            self.assertEqual(term['exitCode'], 3)
            self.assertEqual(term['reason'], 'Error')
        self.assertIn('BackoffLimitExceeded', self.k('describe', 'job', 'failing').stdout)
        self.k('delete', 'job', 'failing')

    def test_work_queue_job(self):
        """parallelism without completions: done once a pod succeeded and none runs."""
        path = self.write('queue.yaml', textwrap.dedent('''\
            apiVersion: batch/v1
            kind: Job
            metadata: {name: queue}
            spec:
              parallelism: 2
              template:
                spec:
                  restartPolicy: Never
                  containers:
                  - {name: main, image: busybox, command: ["sh", "-c", "sleep 1"]}
            '''))
        self.k('create', '-f', path)
        self.k('wait', '--for=condition=complete', 'job/queue', '--timeout=60s')
        job = json.loads(self.k('get', 'job', 'queue', '-o', 'json').stdout)
        self.assertIsNone(job['spec'].get('completions'))
        self.assertEqual(job['status']['succeeded'], 2)
        row = [line for line in self.k('get', 'jobs').stdout.splitlines()
               if line.startswith('queue')][0]
        self.assertIn('2/1 of 2', row)
        self.k('delete', 'job', 'queue')

    def test_pods_have_their_own_host_names(self):
        """$HOSTNAME as kubelet gives it: an Indexed Job's pod is $(job-name)-$(index), another
        pod is its name, spec.hostname wins."""
        path = self.write('indexed.yaml', textwrap.dedent('''\
            apiVersion: batch/v1
            kind: Job
            metadata: {name: shard}
            spec:
              completions: 2
              parallelism: 2
              completionMode: Indexed
              template:
                spec:
                  restartPolicy: Never
                  containers:
                  - {name: main, image: busybox, command: ["sh", "-c", "echo host=$HOSTNAME"]}
            '''))
        self.k('create', '-f', path)
        self.k('wait', '--for=condition=complete', 'job/shard', '--timeout=60s')
        logs = sorted(self.k('logs', p['metadata']['name']).stdout
                      for p in self.pods('-l', 'job-name=shard'))
        self.assertEqual(logs, ['host=shard-0\n', 'host=shard-1\n'])
        self.k('delete', 'job', 'shard')
        named = self.write('named.yaml', pod_yaml('hostpod', 'echo host=$HOSTNAME'))
        self.k('create', '-f', named)
        self.wait_for(lambda: self.pods('-l', 'app=hostpod')[0]['status']['phase'] == 'Succeeded',
                      'the pod to end')
        self.assertEqual(self.k('logs', 'hostpod').stdout, 'host=hostpod\n')
        self.k('delete', 'pod', 'hostpod')

    def test_gang_starts_all_or_nothing(self):
        node = json.loads(self.k('get', 'node', 'node1', '-o', 'json').stdout)
        cpus = int(node['status']['capacity']['cpu'])

        def gang(name, size):
            return textwrap.dedent(f'''\
                apiVersion: batch/v1
                kind: Job
                metadata:
                  name: {name}
                  annotations: {{berth.io/gang: "true"}}
                spec:
                  parallelism: {size}
                  completions: {size}
                  template:
                    spec:
                      restartPolicy: Never
                      containers:
                      - name: main
                        image: busybox
                        command: ["sh", "-c", "sleep 2"]
                        resources: {{requests: {{cpu: "1"}}}}
                ''')

        # One pod more than the node has CPUs: none may start (a plain Job would start `cpus`).
        self.k('create', '-f', self.write('big-gang.yaml', gang('big-gang', cpus + 1)))
        self.wait_for(lambda: len(self.pods('-l', 'job-name=big-gang')) == cpus + 1, 'the pods')
        time.sleep(3)
        pods = self.pods('-l', 'job-name=big-gang')
        self.assertEqual({p['status']['phase'] for p in pods}, {'Pending'})
        self.assertIn('WaitingForGang', json.dumps(pods[0]['status']['conditions']))
        self.k('delete', 'job', 'big-gang')
        # A gang that fits starts whole and completes.
        size = min(cpus, 4)
        self.k('create', '-f', self.write('gang.yaml', gang('gang', size)))
        self.k('wait', '--for=condition=complete', 'job/gang', '--timeout=60s')
        starts = set()
        for p in self.pods('-l', 'job-name=gang'):
            starts.add(p['status']['startTime'])
        self.assertLessEqual(len(starts), 2, starts)  # started in the same pass (same second)
        self.assertIn('GangAdmitted', self.k('describe', 'job', 'gang').stdout)
        self.k('delete', 'job', 'gang')

    def test_patch_replace_suspend_and_server_side_apply(self):
        slow = GPU_JOB.replace('gpu-train', 'slow').replace('echo gpus', 'sleep 60; echo gpus')
        path = self.write('slow.yaml', slow)
        self.assertIn('serverside-applied', self.k('apply', '--server-side', '-f', path).stdout)
        self.assertIn('serverside-applied', self.k('apply', '--server-side', '-f', path).stdout)
        self.wait_for(lambda: len(self.pods('-l', 'job-name=slow')) == 2, 'the pods')
        self.k('patch', 'job', 'slow', '--type=json',
               '-p', '[{"op":"replace","path":"/spec/parallelism","value":1}]')
        self.k('patch', 'job', 'slow', '--type=merge', '-p', '{"spec":{"suspend":true}}')
        self.wait_for(lambda: self.pods('-l', 'job-name=slow') == [], 'the pods to be stopped')
        job = json.loads(self.k('get', 'job', 'slow', '-o', 'json').stdout)
        self.assertEqual(job['spec']['parallelism'], 1)
        self.assertIn('Suspended', [c['type'] for c in job['status']['conditions']
                                    if c['status'] == 'True'])
        self.assertEqual(job['status'].get('failed', 0), 0)  # stopped, not failed
        job_path = self.write('slow.json', json.dumps(job))
        self.assertIn('replaced', self.k('replace', '-f', job_path).stdout)
        self.k('patch', 'job', 'slow', '-p', '{"spec":{"suspend":false}}')  # strategic merge
        self.wait_for(lambda: len(self.pods('-l', 'job-name=slow')) == 1,
                      'one pod again (parallelism 1)')
        self.k('delete', 'job', 'slow')
        # Pods: server-side apply creates; labels change; the spec does not.
        pod = self.write('ssa.yaml', pod_yaml('ssa', 'sleep 30'))
        self.assertIn('pod/ssa serverside-applied',
                      self.k('apply', '--server-side', '-f', pod).stdout)
        self.k('label', 'pod', 'ssa', 'tier=gold')
        self.assertEqual(self.pods('-l', 'tier=gold')[0]['metadata']['name'], 'ssa')
        p = self.k('patch', 'pod', 'ssa', '--type=merge',
                   '-p', '{"spec":{"activeDeadlineSeconds":5}}', check=False)
        self.assertIn('pod updates may not change fields', p.stderr)
        self.k('delete', 'pod', 'ssa', '--wait=false')
        # kubectl run makes a bare pod with args only.
        self.k('run', 'quick', '--image=busybox', '--restart=Never', '--', 'sh', '-c', 'echo ran')
        self.wait_for(lambda: self.pods('-l', 'run=quick')[0]['status']['phase'] == 'Succeeded',
                      'kubectl run\'s pod to succeed')
        self.assertEqual(self.k('logs', 'quick').stdout, 'ran\n')
        self.k('delete', 'pod', 'quick')
        # Namespaces take labels and annotations.
        self.k('label', 'ns', 'default', 'team=a')
        ns = json.loads(self.k('get', 'ns', 'default', '-o', 'json').stdout)
        self.assertEqual(ns['metadata']['labels']['team'], 'a')

    def test_deadline_and_ttl(self):
        path = self.write('deadline.yaml', textwrap.dedent('''\
            apiVersion: batch/v1
            kind: Job
            metadata: {name: deadline}
            spec:
              activeDeadlineSeconds: 2
              template:
                spec:
                  restartPolicy: Never
                  containers:
                  - {name: main, image: busybox, command: ["sleep", "60"]}
            '''))
        self.k('create', '-f', path)
        self.k('wait', '--for=condition=failed', 'job/deadline', '--timeout=30s')
        job = json.loads(self.k('get', 'job', 'deadline', '-o', 'json').stdout)
        failed = [c for c in job['status']['conditions'] if c['type'] == 'Failed'][0]
        self.assertEqual(failed['reason'], 'DeadlineExceeded')
        self.assertEqual(job['status']['active'], 0)
        self.k('delete', 'job', 'deadline')
        ttl = self.write('ttl.yaml', textwrap.dedent('''\
            apiVersion: batch/v1
            kind: Job
            metadata: {name: ttl}
            spec:
              ttlSecondsAfterFinished: 1
              template:
                spec:
                  restartPolicy: Never
                  containers:
                  - {name: main, image: busybox, command: ["true"]}
            '''))
        self.k('create', '-f', ttl)
        self.wait_for(lambda: self.k('get', 'job', 'ttl', check=False).returncode != 0,
                      'the finished Job to be deleted by its TTL', timeout=30)
        self.assertEqual(self.pods('-l', 'job-name=ttl'), [])

    def test_a_pod_no_node_can_hold_waits_unschedulable(self):
        path = self.write('huge.yaml', pod_yaml('huge', 'true').replace(
            '    command:', '    resources: {limits: {nvidia.com/gpu: 64}}\n    command:'))
        self.assertIn('pod/huge created', self.k('create', '-f', path).stdout)
        self.k('apply', '-f', self.write('small.yaml', pod_yaml('small', 'true')))
        self.wait_for(lambda: self.pods('-l', 'app=small')[0]['status']['phase'] == 'Succeeded',
                      'the small pod to run past the huge one')
        pod = self.pods('-l', 'app=huge')[0]
        self.assertEqual(pod['status']['phase'], 'Pending')
        scheduled = [c for c in pod['status']['conditions'] if c['type'] == 'PodScheduled'][0]
        self.assertEqual((scheduled['status'], scheduled['reason']), ('False', 'Unschedulable'))
        self.assertIn('FailedScheduling', self.k('describe', 'pod', 'huge').stdout)
        self.k('delete', 'pod', 'huge', 'small')

    def test_cpu_limit_is_a_quota(self):
        path = self.write('spin.yaml', pod_yaml(
            'spin', 'timeout 3 sh -c "while :; do :; done"; true').replace(
                '    command:', '    resources: {limits: {cpu: 500m}}\n    command:'))
        self.k('create', '-f', path)
        self.wait_for(lambda: self.pods('-l', 'app=spin')[0]['status']['phase'] == 'Succeeded',
                      'the spinning pod to end', timeout=30)
        jid = self.pods('-l', 'app=spin')[0]['metadata']['labels']['berth.io/job-id']
        job = self.c.job(int(jid))
        if 'no cpu controller' in job.get('message', ''):
            self.skipTest('no cgroup cpu controller here: ' + job['message'])
        # Half a CPU for 3 s: about 1.5 s of CPU time (3 s without the quota).
        self.assertLess(job['usage']['cpu_seconds'], 2.2, job)
        self.assertGreater(job['usage']['cpu_seconds'], 0.5, job)
        self.k('delete', 'pod', 'spin')

    def test_drain_evicts_pods_and_the_job_replaces_them(self):
        path = self.write('drainme.yaml', GPU_JOB.replace('gpu-train', 'drainme').replace(
            'echo gpus', 'sleep 60; echo gpus').replace('completions: 2', 'completions: 1')
            .replace('parallelism: 2', 'parallelism: 1'))
        self.k('create', '-f', path)
        self.wait_for(lambda: [p for p in self.pods('-l', 'job-name=drainme')
                               if p['status']['phase'] == 'Running'], 'the pod to run')
        first = self.pods('-l', 'job-name=drainme')[0]['metadata']['name']
        try:
            out = self.k('drain', 'node1', '--timeout=30s').stdout
            self.assertIn('node/node1 drained', out)
            self.assertIn(f'pod/{first} deleted', out)
            self.assertEqual(self.c.node_state('node1')[:5], 'DRAIN')
            self.wait_for(lambda: [p for p in self.pods('-l', 'job-name=drainme')
                                   if p['metadata']['name'] != first],
                          'the Job to make a new pod')
            new = [p for p in self.pods('-l', 'job-name=drainme')
                   if p['metadata']['name'] != first][0]
            self.assertEqual(new['status']['phase'], 'Pending')  # the only node is drained
        finally:
            self.k('uncordon', 'node1')
        self.wait_for(lambda: [p for p in self.pods('-l', 'job-name=drainme')
                               if p['status']['phase'] == 'Running'], 'the new pod to run')
        self.k('delete', 'job', 'drainme')

    def test_errors_name_the_problem(self):
        bad = self.write('bad.yaml', textwrap.dedent('''\
            apiVersion: v1
            kind: Pod
            metadata: {name: bad}
            spec:
              containers:
              - name: main
                command: ["true"]
            '''))
        p = self.k('create', '-f', bad, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Pod "bad" is invalid: spec.containers[0].image: Required value', p.stderr)
        greedy = self.write('greedy.yaml', pod_yaml('greedy', 'true').replace(
            '    command:', '    resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}\n'
            '    command:'))
        p = self.k('create', '-f', greedy, check=False)
        self.assertIn('spec.containers[0].resources.requests[cpu]', p.stderr)
        self.assertIn('must be less than or equal to cpu limit', p.stderr)
        p = self.k('get', 'pod', 'nosuch', check=False)
        self.assertIn('Error from server (NotFound): pods "nosuch" not found', p.stderr)
        p = self.k('logs', 'nosuch', check=False)
        self.assertIn('not found', p.stderr)
        p = self.k('create', '-f', self.write('ns.yaml', pod_yaml('x', 'true')), '-n', 'nosuch',
                   check=False)
        self.assertIn('namespaces "nosuch" not found', p.stderr)
        self.assertEqual(self.pods('-A', '-l', 'app=x'), [])

    def test_slurm_jobs_are_pods_and_pods_are_in_squeue(self):
        p = self.c.cli('submit', '--hold', '--job-name=slurmy', '--wrap', 'true')
        jid = int(p.stdout.split()[-1])
        pods = self.pods('-n', 'slurm')
        names = [x['metadata']['name'] for x in pods]
        self.assertIn(f'job-{jid}', names)
        pod = [x for x in pods if x['metadata']['name'] == f'job-{jid}'][0]
        self.assertEqual(pod['status']['phase'], 'Pending')
        self.assertIn('JobHeld', json.dumps(pod['status']['conditions']))
        self.k('apply', '-f', self.write('p3.yaml', pod_yaml('p3', 'sleep 30')))
        queue = self.c.cli('squeue', '--format=%i %j %u').stdout
        self.assertIn(' p3 ', queue)
        self.k('delete', 'pod', 'p3', '--wait=false')
        self.c.cli('scancel', str(jid))

    def test_restart_policy_on_failure_restarts_a_bare_pod(self):
        marker = os.path.join(self.tmp, 'tries')
        path = self.write('flaky.yaml', pod_yaml(
            'flaky', f'echo x >> {marker}; [ $(wc -l < {marker}) -ge 2 ]', restart='OnFailure'))
        self.k('apply', '-f', path)
        # The first run fails; berth requeues it after a 10 s back-off; the second succeeds.
        self.wait_for(lambda: self.pods('-l', 'app=flaky')[0]['status']['phase'] == 'Succeeded',
                      'the restarted pod to succeed', timeout=60)
        pod = self.pods('-l', 'app=flaky')[0]
        self.assertEqual(pod['status']['containerStatuses'][0]['restartCount'], 1)
        with open(marker) as f:
            self.assertEqual(f.read(), 'x\nx\n')
        row = [line for line in self.k('get', 'pods').stdout.splitlines()
               if line.startswith('flaky')][0]
        self.assertEqual(row.split()[3], '1', row)  # RESTARTS
        self.k('delete', 'pod', 'flaky')

    @unittest.skipUnless(ROOT, 'needs root to create users')
    def test_pods_run_as_the_token_user(self):
        alice, bob = f'bk{os.getpid() % 10000}a', f'bk{os.getpid() % 10000}b'
        make_user(alice)
        make_user(bob)
        try:
            ka, kb = kubectl_as(self, alice), kubectl_as(self, bob)
            path = self.write('who.yaml', pod_yaml('who', 'id -un; sleep 30'))
            ka('apply', '-f', path)
            self.wait_for(lambda: self.pods('-l', 'app=who')[0]['status']['phase'] == 'Running',
                          'the pod to run')
            self.wait_for(lambda: ka('logs', 'who', check=False).stdout == f'{alice}\n',
                          'the pod to say who runs it', timeout=20)
            jid = self.pods('-l', 'app=who')[0]['metadata']['labels']['berth.io/job-id']
            self.assertEqual(self.c.job(int(jid))['request']['user'], alice)
            p = kb('delete', 'pod', 'who', check=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn('(Forbidden)', p.stderr)
            p = kb('logs', 'who', check=False)
            self.assertIn('(Forbidden)', p.stderr)
            self.assertIn('pod "who" deleted', ka('delete', 'pod', 'who').stdout)
        finally:
            remove_user(alice)
            remove_user(bob)

    def test_deleting_a_namespace_deletes_its_jobs_and_pods(self):
        self.k('create', 'ns', 'scratch')
        path = self.write('ns-job.yaml', GPU_JOB.replace('gpu-train', 'ns-job').replace(
            'echo gpus', 'sleep 60; echo gpus'))
        self.k('create', '-f', path, '-n', 'scratch')
        self.wait_for(lambda: len(self.pods('-n', 'scratch')) == 2, 'the pods')
        ids = [p['metadata']['labels']['berth.io/job-id'] for p in self.pods('-n', 'scratch')]
        self.k('delete', 'ns', 'scratch')
        self.wait_for(lambda: all(self.c.job(int(i))['state'] == 'CANCELLED' for i in ids),
                      'the pods\' jobs to be cancelled')
        self.assertEqual(json.loads(self.k('get', 'jobs', '-A', '-o', 'json').stdout)['items'],
                         [])

    def test_testdata_manifests(self):
        """Every batch/v1 Job and CronJob and v1 Pod manifest in the shared testdata is taken;
        kinds berth does not serve are refused by kubectl itself."""
        files = sorted(glob.glob(os.path.join(TESTDATA, '*.yaml')))
        if not files:
            self.skipTest('no testdata')
        taken = 0
        for path in files:
            p = self.k('create', '-f', path, '--dry-run=server', '-o', 'json', check=False)
            with open(path) as f:
                text = f.read()
            ours = (('kind: Job' in text or 'kind: CronJob' in text) and
                    'apiVersion: batch/v1' in text) or \
                   (('"Job"' in text or '"CronJob"' in text) and '"batch/v1"' in text)
            if p.returncode == 0:
                taken += 1
                self.assertTrue(ours, path)
            elif ours and 'kind: JobSet' not in text:
                self.fail(f'{os.path.basename(path)} refused: {p.stderr}')
        self.assertGreater(taken, 0)

    def test_older_kubectl_creates_jobs(self):
        folder = os.path.dirname(os.path.realpath(KUBECTL))
        versions = [v for v in ('1.27', '1.28') if os.path.exists(f'{folder}/kubectl.{v}')]
        if not versions:
            self.skipTest('no kubectl 1.27/1.28 beside kubectl')
        for v in versions:
            k = Kubectl(self.config_path, os.path.join(self.tmp, f'cache-{v}'))
            k.argv = (lambda kk, vv: lambda *a: [f'{folder}/kubectl.{vv}', '--kubeconfig',
                                                 kk.kubeconfig, '--cache-dir', kk.cache_dir,
                                                 *a])(k, v)
            name = 'old-' + v.replace('.', '-')
            path = self.write(f'{name}.yaml', GPU_JOB.replace('gpu-train', name))
            self.assertIn(f'job.batch/{name} created', k('create', '-f', path).stdout)
            k('wait', '--for=condition=complete', f'job/{name}', '--timeout=60s')
            k('delete', 'job', name)


if __name__ == '__main__':
    unittest.main()

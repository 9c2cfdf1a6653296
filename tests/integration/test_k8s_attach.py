"""Integration tests: `kubectl attach` and `kubectl run -i/-it` with the REAL kubectl over the
WebSocket streaming protocol (v5.channel.k8s.io; docs/adr/0006-pod-streams.md), against a
controller and an agent on loopback. Written from the Kubernetes API reference and kubectl's
behaviour:

- a Pod's container fields stdin, stdinOnce and tty are kept (GET shows them) and checked (tty
  needs stdin);
- attach streams the pod's output from the moment of attaching (the past is kubectl logs'),
  to several clients at once, until the process ends; its exit code comes back as for exec;
- with stdin: true the process reads a pipe held open for it: attach -i writes into it, and a
  second attach can write more; with stdinOnce the first client's end of stdin is the process's;
- with tty: true the process runs on a terminal: attach -it gets it (the caller's size, Ctrl-C);
- `kubectl run -it --rm` and `kubectl run -i` with piped stdin work end to end;
- the terminal and the stdin are the supervisor's: they survive an agent restart;
- only the pod's owner (or an operator) may attach; a completed pod is kubectl's own error.

Process mode (no images are run). Skipped only where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_attach (from this folder).
"""
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import time
import unittest

from harness import make_user, remove_user
from test_k8s_exec import PtyKubectl, pod_yaml
from test_k8s_nodes import KUBECTL, kubectl_as, needs_kubectl, start_kubectl_bed


class Attached:
    """A kubectl attach (or run) in the background, its output read as it comes."""

    def __init__(self, argv, stdin=False):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.set_blocking(self.p.stdout.fileno(), False)
        self.out = b''

    def read_until(self, marker, timeout=30):
        deadline = time.time() + timeout
        while marker.encode() not in self.out:
            if time.time() > deadline:
                raise AssertionError(f'no {marker!r} from kubectl in {timeout} s: {self.out!r}')
            chunk = self.p.stdout.read()
            if chunk:
                self.out += chunk
            elif self.p.poll() is not None:
                raise AssertionError(f'kubectl ended before {marker!r}: {self.out!r} '
                                     f'{self.p.stderr.read()!r}')
            else:
                time.sleep(0.05)
        return self.out.decode()

    def write(self, text):
        self.p.stdin.write(text.encode())
        self.p.stdin.flush()

    def wait(self, timeout=30):
        rc = self.p.wait(timeout=timeout)
        rest = self.p.stdout.read()
        if rest:
            self.out += rest
        return rc, self.out.decode(), self.p.stderr.read().decode()

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            if f:
                f.close()


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
@needs_kubectl(30)
class KubectlAttachTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_kubectl_bed(cls, 'berth-k8s-attach-')

    @classmethod
    def tearDownClass(cls):
        subprocess.run(cls.k.argv('delete', 'pods', '--all', '--timeout=60s'), capture_output=True,
                       timeout=90)
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_pod(self, name, command, ready=None, **fields):
        path = os.path.join(self.tmp, f'{name}.yaml')
        with open(path, 'w') as f:
            f.write(pod_yaml(name, command, **fields))
        self.k('apply', '-f', path)
        self.addCleanup(lambda: subprocess.run(
            self.k.argv('delete', 'pod', name, '--wait=false', '--ignore-not-found'),
            capture_output=True, timeout=60))
        deadline = time.time() + 60
        while time.time() < deadline:
            pod = json.loads(self.k('get', 'pod', name, '-o', 'json').stdout)
            if pod['status']['phase'] == 'Running':
                if ready is None or ready in self.k('logs', name).stdout:
                    return pod
            time.sleep(0.2)
        raise AssertionError(f'pod {name} did not run')

    def attach(self, *args, stdin=False, k=None):
        a = Attached((k or self.k).argv('attach', *args), stdin=stdin)
        self.addCleanup(a.close)
        return a

    def test_fields_are_kept_and_tty_needs_stdin(self):
        pod = self.run_pod('fields', 'echo ready; sleep 600', ready='ready', stdin=True,
                           stdin_once=True, tty=True)
        c = pod['spec']['containers'][0]
        self.assertEqual((c.get('stdin'), c.get('stdinOnce'), c.get('tty')), (True, True, True))
        path = os.path.join(self.tmp, 'bad.yaml')
        with open(path, 'w') as f:
            f.write(pod_yaml('bad', 'true', tty=True))
        p = subprocess.run(self.k.argv('apply', '-f', path), capture_output=True, text=True,
                           timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('spec.containers[0].tty', p.stderr)
        self.assertIn('requires -i/--stdin', p.stderr)

    def test_a_jobs_pod_template_keeps_them(self):
        path = os.path.join(self.tmp, 'job.yaml')
        with open(path, 'w') as f:
            f.write(textwrap.dedent('''\
                apiVersion: batch/v1
                kind: Job
                metadata: {name: feeder}
                spec:
                  template:
                    spec:
                      restartPolicy: Never
                      containers:
                      - name: main
                        image: busybox
                        command: ["sh", "-c", "echo ready; read l; echo got:$l"]
                        stdin: true
                        stdinOnce: true
                '''))
        self.k('apply', '-f', path)
        self.addCleanup(lambda: subprocess.run(
            self.k.argv('delete', 'job', 'feeder', '--wait=false', '--ignore-not-found'),
            capture_output=True, timeout=60))
        deadline = time.time() + 60
        pod = None
        while time.time() < deadline:
            items = json.loads(self.k('get', 'pods', '-l', 'job-name=feeder', '-o',
                                      'json').stdout)['items']
            if items and items[0]['status']['phase'] == 'Running' and \
                    'ready' in self.k('logs', items[0]['metadata']['name']).stdout:
                pod = items[0]
                break
            time.sleep(0.2)
        self.assertIsNotNone(pod, 'the Job\'s pod did not run')
        self.assertTrue(pod['spec']['containers'][0].get('stdin'))
        p = subprocess.run(self.k.argv('attach', '-i', pod['metadata']['name']), input='fed\n',
                           capture_output=True, text=True, timeout=60)
        self.assertIn('got:fed', p.stdout, p.stderr)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_attach_streams_output_from_now_to_several_clients_until_the_end(self):
        go = os.path.join(self.tmp, 'go-output')
        self.run_pod('talker', f'echo early-line; while [ ! -e {go} ]; do sleep 0.1; done; '
                     'echo late-line; echo to-err >&2; exit 4', ready='early-line')
        first, second = self.attach('talker'), self.attach('talker', '-c', 'main')
        time.sleep(3)  # both attached (one long-poll round each)
        open(go, 'w').close()
        for a in (first, second):
            rc, out, err = a.wait()
            self.assertIn('late-line', out)
            self.assertIn('to-err', out)  # one file: stderr comes on stdout
            self.assertNotIn('early-line', out)  # the past is kubectl logs'
            self.assertEqual(rc, 4, err)
            self.assertIn('command terminated with exit code 4', err)

    def test_attach_i_writes_to_a_stdin_that_stays_open(self):
        self.run_pod('reader', 'echo ready; while read l; do echo "got:$l"; done; echo eof',
                     ready='ready', stdin=True)
        a = self.attach('-i', 'reader', stdin=True)
        time.sleep(2)
        a.write('one\n')
        a.read_until('got:one')
        a.p.stdin.close()  # this client's stdin ends; the process's does not (no stdinOnce)
        time.sleep(1)
        a.close()
        b = self.attach('-i', 'reader', stdin=True)
        time.sleep(2)
        b.write('two\n')
        out = b.read_until('got:two')
        self.assertNotIn('eof', out)
        self.assertIn('got:one\ngot:two\n', self.k('logs', 'reader').stdout)

    def test_a_terminal_and_its_stdin_survive_an_agent_restart(self):
        self.run_pod('lasting', 'echo ready; while read l; do echo "got:$l"; done',
                     ready='ready', stdin=True, tty=True)
        t = PtyKubectl(self.k.argv('attach', '-it', 'lasting'), rows=24, cols=80)
        try:
            time.sleep(2)
            t.write('before\r')
            t.read_until('got:before')
        finally:
            t.close()
        self.c.kill('agent')  # the supervisor holds the terminal; the new agent asks it again
        self.c.start_agent()
        t = PtyKubectl(self.k.argv('attach', '-it', 'lasting'), rows=24, cols=80)
        try:
            time.sleep(2)
            t.write('after\r')
            t.read_until('got:after')
        finally:
            t.close()
        logs = self.k('logs', 'lasting').stdout
        self.assertIn('got:before', logs)
        self.assertIn('got:after', logs)

    def test_stdin_once_ends_the_processes_stdin_with_the_first_client(self):
        self.run_pod('once', 'echo ready; cat; echo after-eof; exit 3', ready='ready', stdin=True,
                     stdin_once=True)
        p = subprocess.run(self.k.argv('attach', '-i', 'once'), input='hello\n',
                           capture_output=True, text=True, timeout=60)
        self.assertIn('hello\nafter-eof\n', p.stdout)
        self.assertEqual(p.returncode, 3, p.stderr)

    def test_attach_it_gets_the_terminal_and_its_size(self):
        self.run_pod('term', 'echo ready; while read l; do stty size; echo "line=$l"; done',
                     ready='ready', stdin=True, tty=True)
        t = PtyKubectl(self.k.argv('attach', '-it', 'term'), rows=33, cols=101)
        try:
            time.sleep(2)
            t.write('x\r')
            t.read_until('33 101')
            t.read_until('line=x')
            t.resize(40, 120)
            time.sleep(0.5)
            t.write('y\r')
            t.read_until('40 120')
        finally:
            t.close()
        logs = self.k('logs', 'term').stdout
        self.assertIn('line=x', logs)  # the terminal's output is the pod's log

    def test_kubectl_run_it_rm_drives_a_shell(self):
        t = PtyKubectl(self.k.argv('run', 'shell', '-it', '--rm', '--restart=Never',
                                   '--image=busybox', '--', 'sh'), rows=24, cols=80)
        try:
            time.sleep(1)
            t.write('\r')
            t.write('echo "v=$((6*7))"\r')
            t.read_until('v=42')
            t.write('stty size\r')
            t.read_until('24 80')
            t.write('sleep 100\r')
            time.sleep(0.5)
            t.write('\x03')  # Ctrl-C: the terminal's SIGINT to the foreground job
            t.write('echo after-interrupt\r')
            t.read_until('after-interrupt\r\n')
            t.write('exit\r')
            self.assertEqual(t.wait(60), 0, t.out)
        finally:
            t.close()
        self.assertIn('pod "shell" deleted', t.out.decode(errors='replace'))
        p = subprocess.run(self.k.argv('get', 'pod', 'shell'), capture_output=True, text=True,
                           timeout=60)
        self.assertIn('not found', p.stderr)

    def test_kubectl_run_i_with_piped_stdin(self):
        p = subprocess.run(self.k.argv('run', 'catter', '-i', '--rm', '--restart=Never',
                                       '--image=busybox', '--', 'cat'),
                           input='piped line\n', capture_output=True, text=True, timeout=90)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('piped line\n', p.stdout)

    def test_only_the_owner_may_attach(self):
        self.run_pod('mine', 'echo ready; sleep 600', ready='ready')
        bob = f'ba{os.getpid() % 10000}b'
        make_user(bob)
        try:
            kb = kubectl_as(self, bob)
            p = subprocess.run(kb.argv('attach', 'mine'), capture_output=True, text=True,
                               timeout=60)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn('forbidden', p.stderr)
            self.assertIn('cannot create resource "pods/attach"', p.stderr)
        finally:
            remove_user(bob)

    def test_a_completed_pod_is_refused(self):
        path = os.path.join(self.tmp, 'done.yaml')
        with open(path, 'w') as f:
            f.write(pod_yaml('done', 'true'))
        self.k('apply', '-f', path)
        deadline = time.time() + 60
        while time.time() < deadline:
            pod = json.loads(self.k('get', 'pod', 'done', '-o', 'json').stdout)
            if pod['status']['phase'] == 'Succeeded':
                break
            time.sleep(0.2)
        p = subprocess.run(self.k.argv('attach', 'done'), capture_output=True, text=True,
                           timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('cannot attach a container in a completed pod; current phase is Succeeded',
                      p.stderr)


if __name__ == '__main__':
    unittest.main()

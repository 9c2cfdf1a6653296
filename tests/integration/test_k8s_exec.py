"""Integration tests: `kubectl exec` with the REAL kubectl over the WebSocket streaming protocol
(v5.channel.k8s.io; docs/adr/0006-pod-streams.md), against a controller and an agent on
loopback. Written from the Kubernetes API reference and kubectl's behaviour:

- the command runs in the pod's process context: its user, working directory, environment and
  cgroups (so the pod's end ends it);
- without -t: stdout and stderr apart, stdin forwarded with -i and closed at its end, and the
  exit code back as "command terminated with exit code N" and kubectl's own exit status;
- with -it (kubectl given a terminal by Python's pty module): a pseudo-terminal of the caller's
  window size, following its changes;
- only the pod's owner (or an operator) may exec; a kubectl that speaks only SPDY is told which
  version to use; a completed pod and an unknown command are clear errors.

Process mode (no images are run). Skipped only where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_exec (from this folder).
"""
import fcntl
import json
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import termios
import textwrap
import time
import unittest

from harness import make_user, remove_user
from test_k8s_nodes import KUBECTL, kubectl_as, needs_kubectl, start_kubectl_bed


def pod_yaml(name, command, extra_env=None, stdin=False, stdin_once=False, tty=False):
    """A one-container Pod running `sh -c command` (kubectl exec, attach and port-forward's)."""
    env = ''.join(f'\n      - {{name: {k}, value: "{v}"}}' for k, v in (extra_env or {}).items())
    return textwrap.dedent(f'''\
        apiVersion: v1
        kind: Pod
        metadata:
          name: {name}
          labels: {{app: {name}}}
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
            command: ["sh", "-c", {json.dumps(command)}]
            stdin: {json.dumps(stdin)}
            stdinOnce: {json.dumps(stdin_once)}
            tty: {json.dumps(tty)}
            env:''') + (env or ' []') + '\n'


class PtyKubectl:
    """kubectl on a pseudo-terminal of a given size, read and written as a user types."""

    def __init__(self, argv, rows, cols):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: kubectl, with the pty as its terminal
            try:
                os.execv(argv[0], argv)
            finally:
                os._exit(127)
        self.resize(rows, cols, signal_child=False)
        self.out = b''

    def resize(self, rows, cols, signal_child=True):
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
        if signal_child:
            os.kill(self.pid, signal.SIGWINCH)

    def read_until(self, marker, timeout=30):
        deadline = time.time() + timeout
        while marker.encode() not in self.out:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError(f'no {marker!r} from kubectl in {timeout} s: {self.out!r}')
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:  # EIO: kubectl closed its terminal
                    data = b''
                if not data:
                    raise AssertionError(f'kubectl ended before {marker!r}: {self.out!r}')
                self.out += data
        return self.out.decode(errors='replace')

    def write(self, text):
        os.write(self.fd, text.encode())

    def wait(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.pid = None
                self.drain()  # what kubectl wrote last may still wait in the terminal
                return os.waitstatus_to_exitcode(status)
            try:  # keep the terminal drained
                r, _, _ = select.select([self.fd], [], [], 0.1)
                if r:
                    self.out += os.read(self.fd, 4096)
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f'kubectl did not end: {self.out!r}')

    def drain(self):
        """Reads what is left in the terminal of a kubectl that has ended (EIO once it is all
        read: no process holds the terminal any more)."""
        while True:
            try:
                r, _, _ = select.select([self.fd], [], [], 1)
                data = os.read(self.fd, 4096) if r else b''
            except OSError:
                return
            if not data:
                return
            self.out += data

    def close(self):
        if self.pid:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = None
        os.close(self.fd)


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
@needs_kubectl(30)
class KubectlExecTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_kubectl_bed(cls, 'berth-k8s-exec-')
        cls.workdir = os.path.join(cls.tmp, 'work')
        os.makedirs(cls.workdir)
        # One long-running pod serves most tests; it writes its own cgroups to its log.
        cls.run_pod('box', 'cat /proc/self/cgroup; echo ready; sleep 600', {'MARK': 'from-the-pod'})

    @classmethod
    def tearDownClass(cls):
        # The pods' processes outlive a stopped agent (as jobs do): end them first.
        subprocess.run(cls.k.argv('delete', 'pods', '--all', '--timeout=60s'), capture_output=True,
                       timeout=90)
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def run_pod(cls, name, command, env=None, wait=True):
        path = os.path.join(cls.tmp, f'{name}.yaml')
        with open(path, 'w') as f:
            f.write(pod_yaml(name, command, env))
        cls.k('apply', '-f', path)
        if not wait:
            return None
        deadline = time.time() + 60
        while time.time() < deadline:
            pods = json.loads(cls.k('get', 'pods', '-l', f'app={name}', '-o', 'json').stdout)
            if pods['items'] and pods['items'][0]['status']['phase'] == 'Running':
                if 'ready' not in command or 'ready' in cls.k('logs', name).stdout:
                    return pods['items'][0]
            time.sleep(0.2)
        raise AssertionError(f'pod {name} did not run')

    def exec(self, *args, input=None, env=None, k=None):
        k = k or self.k
        return subprocess.run(k.argv('exec', *args), capture_output=True, text=True, input=input,
                              timeout=60, env={**os.environ, **(env or {})})

    def test_output_streams_and_the_exit_code(self):
        p = self.exec('box', '--', 'sh', '-c', 'echo to-out; echo to-err >&2; exit 3')
        self.assertEqual(p.stdout, 'to-out\n')
        self.assertIn('to-err\n', p.stderr)
        self.assertIn('command terminated with exit code 3', p.stderr)
        self.assertEqual(p.returncode, 3)
        p = self.exec('box', '-c', 'main', '--', 'echo', 'a b', 'c')
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, 'a b c\n', ''))
        # Killed by a signal: 128 + its number, as a shell says it.
        p = self.exec('box', '--', 'sh', '-c', 'kill -9 $$')
        self.assertEqual(p.returncode, 137, p.stderr)

    def test_the_pods_process_context(self):
        p = self.exec('box', '--', 'sh', '-c', 'id -u; echo "$MARK"; cat /proc/self/cgroup')
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], str(os.getuid()))  # the pod's user (this kubeconfig's)
        self.assertEqual(lines[1], 'from-the-pod')
        pod_cgroups = [l for l in self.k('logs', 'box').stdout.splitlines() if ':' in l]
        # Every group of the pod's (berth's own), the exec'd command is in too.
        berth_groups = [l for l in pod_cgroups if 'berth' in l]
        self.assertTrue(berth_groups, pod_cgroups)
        for g in berth_groups:
            self.assertIn(g, lines[2:], p.stdout)

    def test_stdin_is_forwarded_and_closed(self):
        p = self.exec('-i', 'box', '--', 'sh', '-c', 'wc -c; echo done', input='hello there\n')
        self.assertEqual(p.stdout.split(), ['12', 'done'], p.stderr)
        big = 'x' * 300000
        p = self.exec('-i', 'box', '--', 'sh', '-c', 'wc -c', input=big)
        self.assertEqual(p.stdout.strip(), '300000', p.stderr)
        # Without -i the command's stdin is empty.
        p = self.exec('box', '--', 'sh', '-c', 'wc -c', input='ignored')
        self.assertEqual(p.stdout.strip(), '0')

    def test_a_terminal_of_the_callers_size_that_follows_its_changes(self):
        t = PtyKubectl(self.k.argv('exec', '-it', 'box', '--', 'sh', '-c',
                                   'stty size; tty; read a; stty size; read b; echo "b=$b"; exit 5'),
                       rows=33, cols=101)
        try:
            t.read_until('33 101')
            out = t.read_until('/dev/pts/')
            self.assertIn('/dev/pts/', out)
            t.resize(40, 120)
            time.sleep(0.5)  # kubectl sends the new size on SIGWINCH
            t.write('x\r')
            t.read_until('40 120')
            t.write('typed\r')
            t.read_until('b=typed')
            self.assertEqual(t.wait(), 5)
            self.assertIn('command terminated with exit code 5', t.out.decode(errors='replace'))
        finally:
            t.close()

    def test_a_shell_in_a_terminal_answers_ctrl_c_and_exit(self):
        t = PtyKubectl(self.k.argv('exec', '-it', 'box', '--', 'sh'), rows=24, cols=80)
        try:
            t.write('echo "$MARK-$((6*7))"\r')
            t.read_until('from-the-pod-42')
            t.write('sleep 100\r')
            time.sleep(0.5)
            t.write('\x03')  # Ctrl-C reaches the remote terminal's foreground job, not kubectl
            t.write('echo after-interrupt\r')
            t.read_until('after-interrupt\r\n')
            t.write('exit\r')
            self.assertEqual(t.wait(), 0)
        finally:
            t.close()

    def test_only_the_owner_may_exec(self):
        bob = f'bx{os.getpid() % 10000}b'
        make_user(bob)
        try:
            kb = kubectl_as(self, bob)
            p = self.exec('box', '--', 'id', k=kb)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn('forbidden', p.stderr)
            self.assertIn('cannot create resource "pods/exec"', p.stderr)
            self.assertEqual(p.stdout, '')
        finally:
            remove_user(bob)

    def test_errors_name_the_problem(self):
        p = self.exec('box', '--', 'no-such-command-here')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('executable file not found in $PATH', p.stderr)
        p = self.exec('nosuchpod', '--', 'true')
        self.assertEqual(p.returncode, 1)
        self.assertIn('pods "nosuchpod" not found', p.stderr)
        p = self.exec('box', '-c', 'other', '--', 'true')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('container other is not valid for pod box', p.stderr)
        # A kubectl that speaks only SPDY is told what to use.
        p = self.exec('box', '--', 'true', env={'KUBECTL_REMOTE_COMMAND_WEBSOCKETS': 'false'})
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('over WebSocket only', p.stderr)
        self.assertIn('kubectl 1.30 or newer', p.stderr)

    def test_a_completed_pod_refuses_and_a_pods_end_ends_what_exec_started(self):
        self.run_pod('short', 'echo ready; sleep 600')
        p = self.exec('short', '--', 'sh', '-c', 'sleep 300 >/dev/null 2>&1 & echo $!')
        self.assertEqual(p.returncode, 0, p.stderr)
        pid = int(p.stdout.strip())
        self.assertTrue(os.path.exists(f'/proc/{pid}'))
        self.k('delete', 'pod', 'short', '--wait=false')
        deadline = time.time() + 30
        while os.path.exists(f'/proc/{pid}') and time.time() < deadline:
            time.sleep(0.2)
        self.assertFalse(os.path.exists(f'/proc/{pid}'), 'the exec\'d process outlived its pod')
        self.run_pod('done', 'true', wait=False)
        deadline = time.time() + 30
        while time.time() < deadline:
            pod = json.loads(self.k('get', 'pod', 'done', '-o', 'json').stdout)
            if pod['status']['phase'] == 'Succeeded':
                break
            time.sleep(0.2)
        p = self.exec('done', '--', 'true')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('cannot exec into a container in a completed pod', p.stderr)


if __name__ == '__main__':
    unittest.main()

"""Integration tests: `kubectl port-forward` with the REAL kubectl (1.31+: SPDY/3.1 tunnelled in a
WebSocket, subprotocol SPDY/3.1+portforward.k8s.io; docs/adr/0006-pod-streams.md), against a
controller and an agent on loopback. Written from kubectl's behaviour and the kubelet's
port-forward protocol:

- bytes go both ways through the forwarded local port, byte-exact, for several connections in
  turn and at once, and for transfers of megabytes both ways at the same time;
- a connection to a port nothing of the pod's listens on gets an error kubectl prints (kubectl
  1.31+ then ends the whole forward itself); a port another process on the node listens on is
  not the pod's and is refused;
- only the pod's owner (or an operator) may forward; a kubectl that speaks only plain SPDY is told
  which version to use;
- kubectl ends when the pod ends;
- the v4.channel.k8s.io port-forward protocol (no SPDY; other clients), spoken here by a small
  WebSocket client of the test's own: each port's channels start with the port, bytes go both
  ways on its data channel, errors come on its error channel.

Process mode (no images are run). Skipped only where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_portforward (from this folder).
"""
import base64
import json
import os
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import textwrap
import threading
import time
import unittest

from harness import make_user, remove_user
from test_k8s_exec import pod_yaml
from test_k8s_nodes import KUBECTL, kubectl_as, needs_kubectl, start_kubectl_bed

# The pod's server: echoes each connection's bytes until the client ends its side, then closes.
ECHO_SERVER = textwrap.dedent('''\
    import socket, sys, threading
    def serve(c):
        with c:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                c.sendall(b)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', int(sys.argv[1])))
    s.listen(64)
    print('ready', flush=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
''')


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def echo(port, data, timeout=60):
    """Sends data through 127.0.0.1:port while reading the echo; returns what came back."""
    with socket.create_connection(('127.0.0.1', port), timeout=timeout) as s:
        def send():
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        t = threading.Thread(target=send)
        t.start()
        got = bytearray()
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            got += b
        t.join()
        return bytes(got)


class V4Client:
    """A WebSocket client of pods/portforward with v4.channel.k8s.io, from a kubeconfig."""

    def __init__(self, kubeconfig, path, protocol='v4.channel.k8s.io'):
        with open(kubeconfig) as f:
            cfg = json.load(f)
        cluster = cfg['clusters'][0]['cluster']
        token = cfg['users'][0]['user']['token']
        host, port = cluster['server'].split('//')[1].split(':')
        ctx = ssl.create_default_context(
            cadata=base64.b64decode(cluster['certificate-authority-data']).decode())
        ctx.check_hostname = False
        raw = socket.create_connection((host, int(port)), timeout=30)
        self.s = ctx.wrap_socket(raw, server_hostname=host)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f'GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n'
                        f'Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n'
                        f'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {protocol}\r\n'
                        f'Authorization: Bearer {token}\r\n\r\n').encode())
        self.buf = b''
        while b'\r\n\r\n' not in self.buf:
            b = self.s.recv(4096)
            if not b:
                break
            self.buf += b
        head, _, self.buf = self.buf.partition(b'\r\n\r\n')
        self.status = int(head.split()[1])
        self.head = head.decode(errors='replace')
        if self.status != 101:  # the body follows: read what is there
            self.s.settimeout(2)
            try:
                while True:
                    b = self.s.recv(4096)
                    if not b:
                        break
                    self.buf += b
            except OSError:
                pass

    def send(self, channel, data):
        payload = bytes([channel]) + data
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x82]) + (bytes([0x80 | n]) if n < 126 else
                                bytes([0x80 | 126]) + struct.pack('>H', n) if n < 65536 else
                                bytes([0x80 | 127]) + struct.pack('>Q', n))
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _need(self, n):
        while len(self.buf) < n:
            b = self.s.recv(65536)
            if not b:
                raise EOFError('the connection ended')
            self.buf += b

    def recv(self):
        """(channel, data) of the next data message; None once the server closed."""
        while True:
            self._need(2)
            op, n = self.buf[0] & 0x0f, self.buf[1] & 0x7f
            at = 2
            if n == 126:
                self._need(4)
                n, at = struct.unpack('>H', self.buf[2:4])[0], 4
            elif n == 127:
                self._need(10)
                n, at = struct.unpack('>Q', self.buf[2:10])[0], 10
            self._need(at + n)
            payload, self.buf = self.buf[at:at + n], self.buf[at + n:]
            if op == 8:
                return None
            if op == 2:
                return payload[0], payload[1:]

    def close(self):
        self.s.close()


class PortForward:
    """`kubectl port-forward` in the background; its output read as it comes."""

    def __init__(self, k, *args, env=None):
        self.p = subprocess.Popen(k.argv('port-forward', *args), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  env={**os.environ, **(env or {})})
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.append(line)

    def output(self):
        return ''.join(self.lines)

    def wait_for(self, text, timeout=30):
        deadline = time.time() + timeout
        while text not in self.output():
            if time.time() > deadline:
                raise AssertionError(f'no {text!r} from kubectl port-forward: {self.output()!r}')
            time.sleep(0.05)

    def local_ports(self):
        """The local ports kubectl listens on, in the order of the forwards asked."""
        self.wait_for('Forwarding from 127.0.0.1:')
        ports = []
        for line in self.output().splitlines():
            if line.startswith('Forwarding from 127.0.0.1:'):
                ports.append(int(line.split(':')[1].split()[0]))
        return ports

    def wait(self, timeout):
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()
        self.reader.join(timeout=5)
        self.p.stdout.close()


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
@needs_kubectl(31)
class KubectlPortForwardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_kubectl_bed(cls, 'berth-k8s-pf-')
        cls.server = os.path.join(cls.tmp, 'echo_server.py')
        with open(cls.server, 'w') as f:
            f.write(ECHO_SERVER)
        cls.port = free_port()
        cls.run_pod('echo', cls.port)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(cls.k.argv('delete', 'pods', '--all', '--timeout=60s'), capture_output=True,
                       timeout=90)
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def run_pod(cls, name, port):
        path = os.path.join(cls.tmp, f'{name}.yaml')
        with open(path, 'w') as f:
            f.write(pod_yaml(name, f'exec python3 -u {cls.server} {port}'))
        cls.k('apply', '-f', path)
        deadline = time.time() + 60
        while time.time() < deadline:
            pods = json.loads(cls.k('get', 'pods', '-l', f'app={name}', '-o', 'json').stdout)
            if pods['items'] and pods['items'][0]['status']['phase'] == 'Running':
                if 'ready' in cls.k('logs', name).stdout:
                    return
            time.sleep(0.2)
        raise AssertionError(f'pod {name} did not run')

    def setUp(self):
        self.forwards = []

    def tearDown(self):
        for f in self.forwards:
            f.stop()

    def forward(self, *args, k=None, env=None):
        f = PortForward(k or self.k, *args, env=env)
        self.forwards.append(f)
        return f

    def test_bytes_go_both_ways_for_each_connection(self):
        f = self.forward('pod/echo', f':{self.port}')
        [local] = f.local_ports()
        for i in range(5):
            msg = f'request {i}\n'.encode() * (i + 1)
            self.assertEqual(echo(local, msg), msg, f.output())
        self.assertIn('Handling connection for', f.output())
        # Two connections open at once, each answered on its own.
        a = socket.create_connection(('127.0.0.1', local), timeout=30)
        b = socket.create_connection(('127.0.0.1', local), timeout=30)
        try:
            a.sendall(b'first-')
            b.sendall(b'second-')
            self.assertEqual(b.recv(100), b'second-')
            self.assertEqual(a.recv(100), b'first-')
            a.sendall(b'again')
            self.assertEqual(a.recv(100), b'again')
        finally:
            a.close()
            b.close()
        self.assertIsNone(f.p.poll(), f.output())

    def test_megabytes_both_ways_at_once(self):
        f = self.forward('pod/echo', f':{self.port}')
        [local] = f.local_ports()
        big = os.urandom(6 << 20)
        results = {}

        def run(key, data):
            results[key] = echo(local, data, timeout=120)

        threads = [threading.Thread(target=run, args=(n, big[n:] + big[:n])) for n in (0, 7)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=180)
        self.assertEqual(len(results.get(0, b'')), len(big), f.output())
        self.assertTrue(results[0] == big, 'the 6 MiB echo differs')
        self.assertTrue(results[7] == big[7:] + big[:7], 'the second 6 MiB echo differs')

    def test_a_port_nothing_listens_on_is_an_error_for_that_connection(self):
        dead = free_port()
        f = self.forward('pod/echo', f':{dead}')
        [local] = f.local_ports()
        with socket.create_connection(('127.0.0.1', local), timeout=30) as s:
            s.settimeout(30)
            self.assertEqual(s.recv(100), b'')  # closed without a byte
        f.wait_for(f'error forwarding port {dead} to pod echo')
        self.assertIn('nothing listens on port', f.output())
        # kubectl 1.31+ itself closes the whole session on a connection's error (client-go's
        # handleConnection) and says so; the agent would go on serving it.
        self.assertIsNotNone(f.wait(30), f.output())
        self.assertIn('lost connection to pod', f.output())

    def test_a_port_of_another_process_is_not_the_pods(self):
        with socket.socket() as other:
            other.bind(('127.0.0.1', 0))
            other.listen(1)
            port = other.getsockname()[1]
            f = self.forward('pod/echo', f':{port}')
            [local] = f.local_ports()
            with socket.create_connection(('127.0.0.1', local), timeout=30) as s:
                s.settimeout(30)
                self.assertEqual(s.recv(100), b'')
            f.wait_for(f'port {port} is not the pod\'s')

    def test_only_the_owner_may_forward(self):
        bob = f'bp{os.getpid() % 10000}b'
        make_user(bob)
        try:
            kb = kubectl_as(self, bob)
            f = self.forward('pod/echo', f':{self.port}', k=kb)
            self.assertIsNotNone(f.wait(60), f.output())
            self.assertNotEqual(f.p.returncode, 0)
            self.assertIn('cannot create resource "pods/portforward"', f.output())
            self.assertNotIn('Forwarding from', f.output())
        finally:
            remove_user(bob)

    def test_plain_spdy_is_told_what_to_use(self):
        f = self.forward('pod/echo', f':{self.port}', env={'KUBECTL_PORT_FORWARD_WEBSOCKETS': 'false'})
        self.assertIsNotNone(f.wait(60), f.output())
        self.assertNotEqual(f.p.returncode, 0)
        self.assertIn('error upgrading connection', f.output())
        self.assertIn('use kubectl 1.31 or newer', f.output())

    def test_kubectl_ends_when_the_pod_ends(self):
        port = free_port()
        self.run_pod('short', port)
        f = self.forward('pod/short', f':{port}')
        [local] = f.local_ports()
        self.assertEqual(echo(local, b'before'), b'before')
        self.k('delete', 'pod', 'short', '--wait=false')
        self.assertIsNotNone(f.wait(60), f'kubectl still runs: {f.output()}')
        self.assertIn('lost connection to pod', f.output())

    def test_the_v4_channel_protocol_without_spdy(self):
        dead = free_port()
        path = f'/api/v1/namespaces/default/pods/echo/portforward?ports={self.port},{dead}'
        c = V4Client(self.config_path, path)
        try:
            self.assertEqual(c.status, 101, c.head + repr(c.buf))
            self.assertIn('Sec-WebSocket-Protocol: v4.channel.k8s.io', c.head)
            first = [c.recv() for _ in range(4)]
            self.assertEqual(first, [(0, struct.pack('<H', self.port)),
                                     (1, struct.pack('<H', self.port)),
                                     (2, struct.pack('<H', dead)),
                                     (3, struct.pack('<H', dead))])
            channel, error = c.recv()
            self.assertEqual(channel, 3)
            self.assertIn(f'error forwarding port {dead} to pod echo: nothing listens',
                          error.decode())
            c.send(0, b'over v4')
            got = b''
            while got != b'over v4':
                channel, data = c.recv()
                self.assertEqual(channel, 0)
                got += data
        finally:
            c.close()
        # No ports, or a protocol berth does not speak: 400 naming the problem.
        c = V4Client(self.config_path, '/api/v1/namespaces/default/pods/echo/portforward')
        c.close()
        self.assertEqual(c.status, 400)
        self.assertIn(b'query parameter \\"ports\\" is required', c.buf)
        c = V4Client(self.config_path, path, protocol='v5.channel.k8s.io')
        c.close()
        self.assertEqual(c.status, 400)
        self.assertIn(b'is spoken here: SPDY/3.1+portforward.k8s.io', c.buf)


if __name__ == '__main__':
    unittest.main()

"""Integration tests of the controller's state in etcd (issue 22, docs/adr/0007-etcd-store.md):
`berth controller --store etcd://...` on a 1-member and a 3-member etcd on loopback ports that
each test starts and stops itself. Skipped with the reason where there is no etcd binary
(scripts/setup installs etcd-server)."""
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from harness import BERTH, Cluster

ETCD = shutil.which('etcd')


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Etcd:
    """An etcd cluster of `members` processes on loopback, in a temporary folder."""

    def __init__(self, members=1):
        self.dir = tempfile.mkdtemp(prefix='berth-etcd-it-')
        self.names = [f'm{i}' for i in range(members)]
        self.client = {n: free_port() for n in self.names}
        self.peer = {n: free_port() for n in self.names}
        self.procs = {}
        initial = ','.join(f'{n}=http://127.0.0.1:{self.peer[n]}' for n in self.names)
        for n in self.names:
            self.start_member(n, initial)
        deadline = time.time() + 30
        while not all(self.healthy(n) for n in self.names):
            if time.time() > deadline:
                self.stop()
                raise AssertionError(f'etcd did not start; logs in {self.dir}')
            time.sleep(0.1)

    def start_member(self, n, initial):
        client = f'http://127.0.0.1:{self.client[n]}'
        peer = f'http://127.0.0.1:{self.peer[n]}'
        log = open(os.path.join(self.dir, n + '.log'), 'ab')
        self.procs[n] = subprocess.Popen(
            [ETCD, '--name', n, '--data-dir', os.path.join(self.dir, n),
             '--listen-client-urls', client, '--advertise-client-urls', client,
             '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
             '--initial-cluster', initial, '--initial-cluster-state', 'new'],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def healthy(self, n):
        try:
            with urllib.request.urlopen(f'http://127.0.0.1:{self.client[n]}/health',
                                        timeout=1) as r:
                return b'true' in r.read()
        except OSError:
            return False

    def url(self, prefix='/berth/it', options='timeout-ms=1000&retry-ms=3000'):
        hosts = ','.join(f'127.0.0.1:{self.client[n]}' for n in self.names)
        return f'etcd://{hosts}{prefix}?{options}'

    def kill(self, n):
        p = self.procs.pop(n, None)
        if p is not None and p.poll() is None:
            p.kill()
            p.wait(timeout=30)

    def stop(self):
        for n in list(self.procs):
            self.kill(n)
        shutil.rmtree(self.dir, ignore_errors=True)


def script(body):
    return '#!/bin/sh\n' + body + '\n'


@unittest.skipIf(ETCD is None, 'no etcd binary (scripts/setup installs etcd-server)')
class EtcdStoreTest(unittest.TestCase):
    def start(self, members=1, *extra):
        self.etcd = Etcd(members)
        self.addCleanup(self.etcd.stop)
        self.c = Cluster(controller_args=['--store', self.etcd.url(), *extra])
        self.addCleanup(self.c.stop)
        self.c.start()
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work, exist_ok=True)
        os.chmod(self.work, 0o777)

    def spec(self, body, **extra):
        s = {'name': 'it', 'script': script(body), 'work_dir': self.work,
             'stdout': '%x-%j.out', 'time_limit': 120}
        s.update(extra)
        return s

    def run_cmd(self, *args):
        return subprocess.run([os.path.abspath(BERTH), *args], env=self.c.env,
                              capture_output=True, text=True, timeout=60, cwd=self.work)

    def test_kill9_and_restart_on_the_same_etcd_keeps_every_acknowledged_job(self):
        self.start()
        done = []
        for _ in range(3):
            p = self.run_cmd('sbatch', '--parsable', '-o', '/dev/null', '--wrap', 'true')
            self.assertEqual(p.returncode, 0, p.stderr)
            done.append(int(p.stdout.strip()))
        for j in done:
            self.c.wait_state(j, 'COMPLETED', 60)
        # kill -9 in the middle of a burst of submissions
        acked = self.c.acked_until_kill9(self.spec('true', hold=True))
        self.assertGreater(len(acked), 20)
        # The state is in etcd, not in the state folder.
        self.assertFalse(os.path.exists(os.path.join(self.c.dir, 'state.db')))
        self.c.start_controller()
        status, body = self.c.api('GET', '/v1/jobs?state=PENDING')
        known = {j['id'] for j in body['jobs']}
        self.assertEqual([j for j in acked if j not in known], [],
                         'acknowledged jobs lost by kill -9')
        self.assertGreater(self.c.submit(self.spec('true', hold=True)), max(acked))
        p = self.run_cmd('sacct', '-X', '-n', '-P', '-o', 'JobID,State',
                         '-j', ','.join(map(str, done)))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), [f'{j}|COMPLETED' for j in done])

    def test_three_members_with_one_killed_keep_working(self):
        # When the member killed leads etcd's raft, etcd elects another (1-2 s with its default
        # election timeout) and renews no lease meanwhile: a TTL whose two thirds outlast that
        # rides it out (docs/ha.md); with the default 2 s the leader may step down and lead
        # again, and this test's submit could meet the gap.
        self.start(3, '--lease-ttl', '5')
        first = self.c.submit(self.spec('true'))
        self.c.wait_state(first, 'COMPLETED', 60)
        self.etcd.kill('m0')  # the endpoint the controller tries first
        jid = self.c.submit(self.spec('echo after > after.txt'))
        self.c.wait_state(jid, 'COMPLETED', 60)
        # A restart with that member still down loads everything from the other two.
        self.c.kill('controller', signal.SIGTERM)
        self.c.start_controller()
        self.assertEqual(self.c.job(first)['state'], 'COMPLETED')
        self.assertEqual(self.c.job(jid)['state'], 'COMPLETED')

    def test_without_etcd_changes_are_refused_reads_go_on_and_service_resumes_by_itself(self):
        self.start()
        kept = self.c.submit(self.spec('true', hold=True))
        self.etcd.kill('m0')
        status, body = self.c.api('POST', '/v1/jobs', self.spec('true', hold=True))
        self.assertEqual(status, 503, body)
        self.assertIn('the store failed', body['error']['message'])
        self.assertIn('etcd', body['error']['message'])
        # The controller stays up: reads from its last state, every change refused, its agent
        # sent on (it must not count a controller that cannot lead as its leader).
        time.sleep(3)  # past the lease's renewal deadline
        self.assertIsNone(self.c.controller.poll())
        status, body = self.c.api('GET', '/v1/jobs?all=1')
        self.assertEqual(status, 200, body)
        self.assertEqual([j['id'] for j in body['jobs']], [kept])
        status, body = self.c.api('POST', '/v1/jobs', self.spec('true', hold=True))
        self.assertEqual(status, 503, body)
        status, body = self.c.api('GET', '/v1/agents/node1/commands?wait_ms=0')
        self.assertEqual(status, 503, body)
        status, _ = self.c.api('GET', '/readyz')
        self.assertEqual(status, 503)
        # etcd back: the controller leads again by itself (a new term, the state loaded afresh).
        self.etcd.start_member('m0', f'm0=http://127.0.0.1:{self.etcd.peer["m0"]}')
        self.c.wait(self.c.ready, 'the controller to lead again', timeout=60)
        self.assertIsNone(self.c.controller.poll())
        status, body = self.c.api('GET', '/v1/jobs?all=1')
        self.assertEqual([j['id'] for j in body['jobs']], [kept])
        later = self.c.submit(self.spec('true'))
        self.c.wait_state(later, 'COMPLETED', 60)
        with open(os.path.join(self.c.dir, 'controller.log'), 'rb') as f:
            log = f.read()
        self.assertIn(b'no longer leading', log)
        self.assertIn(b'leads the group', log)

    def test_the_leader_compacts_etcds_history(self):
        self.start(1, '--etcd-compaction-interval', '1')
        for _ in range(3):
            self.c.submit(self.spec('true', hold=True))

        def compacted():
            req = urllib.request.Request(
                f'http://127.0.0.1:{self.etcd.client["m0"]}/v3/kv/range',
                data=json.dumps({'key': base64.b64encode(b'/').decode(),
                                 'revision': '2'}).encode(), method='POST')
            try:
                urllib.request.urlopen(req, timeout=5).read()
                return False
            except urllib.error.HTTPError as e:
                return b'compacted' in e.read()
        self.c.wait(compacted, "etcd's history to be compacted", 30)
        # Still the leader, serving.
        self.assertTrue(self.c.ready())
        self.assertEqual(len(self.c.api('GET', '/v1/jobs')[1]['jobs']), 3)

    def test_etcd_over_tls_with_client_certificates(self):
        d = tempfile.mkdtemp(prefix='berth-etcd-tls-')
        self.addCleanup(shutil.rmtree, d, True)

        def openssl(*args):
            subprocess.run(['openssl', *args], check=True, capture_output=True, cwd=d)
        openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out',
                'ca.crt', '-days', '2', '-subj', '/CN=test etcd CA')
        for name, ext in (('server', 'subjectAltName=IP:127.0.0.1'),
                          ('client', 'extendedKeyUsage=clientAuth')):
            openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f'{name}.key', '-out',
                    f'{name}.csr', '-subj', f'/CN={name}')
            with open(os.path.join(d, f'{name}.ext'), 'w') as f:
                f.write(ext + '\n')
            openssl('x509', '-req', '-in', f'{name}.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key',
                    '-CAcreateserial', '-out', f'{name}.crt', '-days', '2', '-extfile',
                    f'{name}.ext')
        client, peer = free_port(), free_port()
        log = open(os.path.join(d, 'etcd.log'), 'ab')
        etcd = subprocess.Popen(
            [ETCD, '--name', 't', '--data-dir', os.path.join(d, 'data'),
             '--listen-client-urls', f'https://127.0.0.1:{client}',
             '--advertise-client-urls', f'https://127.0.0.1:{client}',
             '--listen-peer-urls', f'http://127.0.0.1:{peer}',
             '--initial-advertise-peer-urls', f'http://127.0.0.1:{peer}',
             '--initial-cluster', f't=http://127.0.0.1:{peer}',
             '--cert-file', os.path.join(d, 'server.crt'),
             '--key-file', os.path.join(d, 'server.key'),
             '--client-cert-auth', '--trusted-ca-file', os.path.join(d, 'ca.crt')],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()

        def stop_etcd():
            etcd.kill()
            etcd.wait()
        self.addCleanup(stop_etcd)
        base = f'etcds://127.0.0.1:{client}/berth/tls?timeout-ms=1000&retry-ms=3000'
        with_cert = (f'{base}&cacert={d}/ca.crt&cert={d}/client.crt&key={d}/client.key')
        # A controller without a client certificate is refused by etcd, and says so.
        home = tempfile.mkdtemp(prefix='berth-it-')
        self.addCleanup(shutil.rmtree, home, True)
        deadline = time.time() + 30
        while True:
            p = subprocess.run([BERTH, 'controller', '--home', home,
                                '--store', f'{base}&cacert={d}/ca.crt'],
                               capture_output=True, text=True, timeout=60)
            if 'Connection refused' not in p.stderr or time.time() > deadline:
                break
            time.sleep(0.2)  # etcd still starting
        self.assertEqual(p.returncode, 75, p.stderr)
        self.assertIn('cannot join the group', p.stderr)
        self.assertIn(f'127.0.0.1:{client}', p.stderr)
        self.assertIn('client certificate', p.stderr)
        # With its certificate, the controller leads and runs jobs on the TLS etcd.
        self.c = Cluster(controller_args=['--store', with_cert])
        self.addCleanup(self.c.stop)
        self.c.start()
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work, exist_ok=True)
        os.chmod(self.work, 0o777)
        jid = self.c.submit(self.spec('true'))
        self.c.wait_state(jid, 'COMPLETED', 60)
        status, body = self.c.api('GET', '/v1/ha')
        self.assertEqual(body['role'], 'leader')
        self.assertEqual([e['ok'] for e in body['etcd']], [True])

    def test_a_malformed_store_url_fails_the_start_clearly(self):
        home = tempfile.mkdtemp(prefix='berth-it-')
        self.addCleanup(shutil.rmtree, home, True)
        p = subprocess.run([BERTH, 'controller', '--home', home, '--store', 'etcd://nohost'],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("--store 'etcd://nohost'", p.stderr)


if __name__ == '__main__':
    unittest.main()

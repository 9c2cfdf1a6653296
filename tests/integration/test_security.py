"""Authentication across hosts, on loopback (docs/security.md): berth's API over HTTPS with bearer
tokens, `berth token`, agents that join with the join token and then hold a node credential, the
401s and 403s, and fencing: an agent that loses the controller kills its jobs before the
controller would requeue them."""
import http.client
import json
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import unittest

from harness import BERTH, Cluster, make_user, remove_user

USER = 'berthsec'


class SecurityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        make_user(USER)

    @classmethod
    def tearDownClass(cls):
        remove_user(USER)

    def setUp(self):
        self.c = Cluster(controller_args=['--k8s-listen', '127.0.0.1:0']).start()
        self.addCleanup(lambda: self.c.stop(keep=bool(os.environ.get('BERTH_IT_KEEP'))))
        with open(os.path.join(self.c.dir, 'kubernetes-api.url')) as f:
            self.url = f.read().strip()
        self.port = int(self.url.rsplit(':', 1)[1])
        self.ca = os.path.join(self.c.dir, 'pki', 'ca.crt')
        self.extra = []

    def tearDown(self):
        for p in self.extra:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=30)

    def https(self, method, path, token=None, body=None, ca=None):
        ctx = ssl.create_default_context(cafile=ca or self.ca)
        conn = http.client.HTTPSConnection('127.0.0.1', self.port, context=ctx, timeout=30)
        headers = {'Content-Type': 'application/json'}
        if token:
            headers['Authorization'] = 'Bearer ' + token
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers=headers)
        r = conn.getresponse()
        text = r.read().decode()
        conn.close()
        return r.status, (json.loads(text) if text.strip() else {})

    def token(self, *args, user=None):
        return self.c.cli('token', *args, user=user).stdout.strip()

    def remote_env(self, token):
        env = {k: v for k, v in self.c.env.items() if k not in ('BERTH_SOCKET', 'BERTH_HOME')}
        env.update(BERTH_SERVER=self.url, BERTH_TOKEN=token, BERTH_CA_FILE=self.ca,
                   BERTH_HOME='/nonexistent')
        return env

    def start_remote_agent(self, name, *args):
        home = os.path.join(self.c.dir, 'host-' + name)
        os.makedirs(home, exist_ok=True)
        p = subprocess.Popen(
            [BERTH, 'agent', '--home', home, '--controller', self.url, '--ca-file', self.ca,
             '--node-name', name, '--cpus', '2', '--mem', '2G', *args],
            stdout=self.c.log('agent-' + name), stderr=subprocess.STDOUT)
        self.extra.append(p)
        return p, home

    def test_tokens_and_the_api_over_https(self):
        mine = self.token()
        self.assertTrue(mine.startswith('berth.0.'), mine)
        # The CLI from "another host": BERTH_SERVER + BERTH_TOKEN, no Unix socket.
        env = self.remote_env(mine)
        sub = subprocess.run([BERTH, 'sbatch', '--wrap', 'sleep 30', '-J', 'remote'], env=env,
                             capture_output=True, text=True, timeout=60, cwd=self.c.dir)
        self.assertEqual(sub.returncode, 0, sub.stderr)
        job_id = int(sub.stdout.split()[-1])
        q = subprocess.run([BERTH, 'squeue', '-h', '-o', '%i %j %u'], env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(q.returncode, 0, q.stderr)
        self.assertIn(f'{job_id} remote root', q.stdout)
        # Another user's token acts as that user: it may not cancel root's job.
        theirs = self.token('--user', USER)
        self.assertTrue(theirs.startswith('berth.'), theirs)
        status, body = self.https('POST', f'/v1/jobs/{job_id}/cancel', theirs, {})
        self.assertEqual(status, 403, body)
        # ... and their own submission is theirs.
        status, body = self.https('POST', '/v1/jobs', theirs,
                                  {'script': '#!/bin/sh\ntrue\n', 'work_dir': '/tmp'})
        self.assertEqual(status, 201, body)
        self.assertEqual(self.c.job(body['job_id'])['request']['user'], USER)
        # A user may get their own token, not someone else's or the join token.
        self.assertTrue(self.token(user=USER).startswith('berth.'))
        for args in (['--user', 'root'], ['--join'], ['--node', 'n9']):
            p = self.c.cli('token', *args, user=USER, check=False)
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertIn('only an operator', p.stderr)
        scancel = subprocess.run([BERTH, 'scancel', str(job_id)], env=env, capture_output=True,
                                 text=True, timeout=60)
        self.assertEqual(scancel.returncode, 0, scancel.stderr)
        self.c.wait_state(job_id, 'CANCELLED')

    def test_unauthenticated_is_401_and_forbidden_is_403_and_neither_changes_anything(self):
        before = self.c.api('GET', '/v1/jobs')[1]['jobs']
        spec = {'script': '#!/bin/sh\ntrue\n', 'work_dir': '/tmp'}
        for token in (None, 'berth.0.' + '0' * 64, 'Basic abc', 'berth-node.node1.' + '0' * 64):
            for method, path, body in (('GET', '/v1/jobs', None), ('POST', '/v1/jobs', spec),
                                       ('GET', '/metrics', None),
                                       ('POST', '/v1/agents/join', {'node': 'x'})):
                status, reply = self.https(method, path, token, body)
                self.assertEqual(status, 401, (token, method, path, reply))
        node = self.token('--node', 'nodeX')
        join = self.token('--join')
        user = self.token('--user', USER)
        forbidden = [
            (node, 'GET', '/v1/jobs', None),
            (node, 'POST', '/v1/jobs', spec),
            (node, 'GET', '/v1/agents/node1/commands?wait_ms=0', None),  # another node's
            (node, 'POST', '/v1/agents/join', {'node': 'nodeY'}),
            (node, 'POST', '/v1/agents/register',
             {'node': {'name': 'node1', 'cpus': 1, 'mem_mib': 100}, 'jobs': []}),
            (join, 'GET', '/v1/jobs', None),
            (join, 'POST', '/v1/jobs', spec),
            (join, 'POST', '/v1/agents/register',
             {'node': {'name': 'nodeZ', 'cpus': 1, 'mem_mib': 100}, 'jobs': []}),
            (user, 'POST', '/v1/agents/register',
             {'node': {'name': 'nodeZ', 'cpus': 1, 'mem_mib': 100}, 'jobs': []}),
            (user, 'POST', '/v1/nodes/node1/drain', {'reason': 'x'}),
        ]
        for token, method, path, body in forbidden:
            status, reply = self.https(method, path, token, body)
            self.assertEqual(status, 403, (token[:12], method, path, reply))
        # Nothing changed: no job, no node, node1 still idle.
        self.assertEqual(self.c.api('GET', '/v1/jobs')[1]['jobs'], before)
        nodes = [n['name'] for n in self.c.api('GET', '/v1/nodes')[1]['nodes']]
        self.assertEqual(nodes, ['node1'])
        self.assertEqual(self.c.node_state('node1'), 'IDLE')
        # A client that does not trust the controller's CA never sends its token.
        other_ca = os.path.join(self.c.dir, 'other-ca.crt')
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                        'ec_paramgen_curve:P-256', '-nodes', '-keyout', other_ca + '.key',
                        '-out', other_ca, '-subj', '/CN=other', '-days', '1'],
                       check=True, capture_output=True)
        env = self.remote_env(self.token())
        env['BERTH_CA_FILE'] = other_ca
        q = subprocess.run([BERTH, 'squeue'], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(q.returncode, 1)
        self.assertIn('not trusted', q.stderr)

    def test_an_agent_joins_over_https_and_runs_jobs(self):
        join = self.token('--join')
        p, home = self.start_remote_agent('remote1', '--join-token', join)
        self.c.wait(lambda: self.c.node_state('remote1') == 'IDLE', 'remote1 to join')
        cred = os.path.join(home, 'agent', 'credential')
        self.assertEqual(os.stat(cred).st_mode & 0o777, 0o600)
        with open(cred) as f:
            self.assertTrue(f.read().startswith('berth-node.remote1.'))
        out = os.path.join(self.c.dir, 'remote.out')
        job = self.c.submit({'script': '#!/bin/sh\necho ran on $SLURMD_NODENAME\n',
                             'work_dir': self.c.dir, 'nodelist': 'remote1', 'stdout': out})
        self.c.wait_state(job, 'COMPLETED')
        with open(out) as f:
            self.assertEqual(f.read(), 'ran on remote1\n')
        # A restart uses the kept credential: no join token needed any more.
        p.terminate()
        p.wait(timeout=30)
        p2, _ = self.start_remote_agent('remote1')
        self.c.wait(lambda: self.c.node_state('remote1') == 'IDLE', 'remote1 to register again')
        self.assertIsNone(p2.poll())

    def test_a_wrong_join_token_or_ca_is_refused(self):
        p, _ = self.start_remote_agent('bad1', '--join-token', 'berth-join.' + '0' * 64)
        self.assertEqual(p.wait(timeout=30), 1)
        with open(os.path.join(self.c.dir, 'agent-bad1.log')) as f:
            self.assertIn('refused the join token', f.read())
        p, _ = self.start_remote_agent('bad2')  # no token, no credential
        self.assertEqual(p.wait(timeout=30), 1)
        # A controller whose certificate the agent's CA did not sign: it never joins.
        ca = self.ca
        self.ca = os.path.join(self.c.dir, 'other-ca.crt')
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                        'ec_paramgen_curve:P-256', '-nodes', '-keyout', self.ca + '.key',
                        '-out', self.ca, '-subj', '/CN=other', '-days', '1'],
                       check=True, capture_output=True)
        p, _ = self.start_remote_agent('bad3', '--join-token', self.token('--join'))
        self.ca = ca
        time.sleep(3)
        self.assertIsNone(p.poll())  # it keeps trying (the CA may be fixed) ...
        self.assertIsNone(self.c.node_state('bad3'))  # ... and is never let in
        with open(os.path.join(self.c.dir, 'agent-bad3.log')) as f:
            self.assertIn('not trusted', f.read())
        self.assertEqual([n['name'] for n in self.c.api('GET', '/v1/nodes')[1]['nodes']],
                         ['node1'])

    def test_plain_tcp_reads_need_authentication(self):
        c = Cluster(controller_args=['--k8s-listen', 'off', '--listen-tcp', '127.0.0.1:0'])
        c.start_controller()
        try:
            # The port is printed nowhere for port 0: ask the kernel which socket it holds.
            out = subprocess.run(['ss', '-Hltnp'], capture_output=True, text=True).stdout
            ports = [line.split()[3].rsplit(':', 1)[1] for line in out.splitlines()
                     if f'pid={c.controller.pid},' in line]
            self.assertTrue(ports, out)
            conn = http.client.HTTPConnection('127.0.0.1', int(ports[0]), timeout=30)
            for path in ('/v1/jobs', '/v1/nodes'):
                conn.request('GET', path)
                r = conn.getresponse()
                r.read()
                self.assertEqual(r.status, 401, path)
            conn.request('GET', '/metrics')  # Prometheus scrapes here without credentials
            r = conn.getresponse()
            r.read()
            self.assertEqual(r.status, 200)
            conn.close()
        finally:
            c.stop()

    def test_an_agent_that_loses_the_controller_fences_its_jobs(self):
        # The controller is frozen (SIGSTOP): to the agent, silence, as a cut link is. With a
        # fence time of 2 s the job dies long before the node timeout (60 s) would requeue it.
        p, home = self.start_remote_agent('fence1', '--join-token', self.token('--join'),
                                          '--fence-time', '2')
        self.c.wait(lambda: self.c.node_state('fence1') == 'IDLE', 'fence1 to join')
        mark = os.path.join(self.c.dir, 'fenced.pid')
        job = self.c.submit({'script': f'#!/bin/sh\necho $$ > {mark}\nexec sleep 300\n',
                             'work_dir': self.c.dir, 'nodelist': 'fence1', 'requeue': False})
        self.c.wait_state(job, 'RUNNING')
        self.c.wait(lambda: os.path.exists(mark) and os.path.getsize(mark) > 0, 'the job to run')
        with open(mark) as f:
            pid = int(f.read())
        self.c.controller.send_signal(signal.SIGSTOP)
        try:
            end = time.time() + 20
            while time.time() < end and os.path.exists(f'/proc/{pid}'):
                time.sleep(0.1)
            self.assertFalse(os.path.exists(f'/proc/{pid}'), 'the fenced job still runs')
        finally:
            self.c.controller.send_signal(signal.SIGCONT)
        with open(os.path.join(self.c.dir, 'agent-fence1.log')) as f:
            self.assertIn('fenced', f.read())
        j = self.c.wait_state(job, 'NODE_FAIL')
        self.assertIn('fenced', j.get('message', '') or json.dumps(j))
        # The node carries on.
        self.c.wait(lambda: self.c.node_state('fence1') == 'IDLE', 'fence1 to be idle again')


class LocalFilesTest(unittest.TestCase):
    """Never the wrong cluster, never a leak (issue 19): a CLI given a home talks to that cluster
    only; the state a controller keeps is its owner's alone."""

    def setUp(self):
        make_user(USER)
        self.addCleanup(remove_user, USER)
        self.c = Cluster().start()
        self.addCleanup(self.c.stop)

    def test_a_home_without_a_controller_never_falls_back_to_another_cluster(self):
        empty = tempfile.mkdtemp(prefix='berth-empty-home-')
        fake_home = tempfile.mkdtemp(prefix='berth-user-home-')
        self.addCleanup(shutil.rmtree, empty, True)
        self.addCleanup(shutil.rmtree, fake_home, True)
        # The user's default socket leads to the running cluster...
        default = os.path.join(fake_home, '.local', 'share', 'berth')
        os.makedirs(default)
        os.symlink(self.c.sock, os.path.join(default, 'controller.sock'))
        env = {k: v for k, v in os.environ.items() if k != 'BERTH_SOCKET'}
        env['HOME'] = fake_home
        ok = subprocess.run([BERTH, 'squeue'], env=env, capture_output=True, text=True,
                            timeout=60)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        # ... but a command given another home must not reach it.
        env['BERTH_HOME'] = empty
        for cmd in (['squeue'], ['scancel', '-u', 'root']):
            r = subprocess.run([BERTH, *cmd], env=env, capture_output=True, text=True, timeout=60)
            self.assertNotEqual(r.returncode, 0, (cmd, r.stdout))
            self.assertIn(os.path.join(empty, 'controller.sock'), r.stderr)
            self.assertIn('BERTH_HOME', r.stderr)

    def test_another_local_user_reads_none_of_the_controllers_state(self):
        j = self.c.submit({'script': '#!/bin/sh\necho secret-script\n', 'work_dir': self.c.dir,
                           'environment': {'API_KEY': 'secret-value'}})
        self.c.wait_state(j, 'COMPLETED')
        files = [os.path.join(self.c.dir, n) for n in ('state.db', 'state.db-wal', 'state.db-shm')]
        for f in files:
            self.assertTrue(os.path.exists(f), f)
            self.assertEqual(os.stat(f).st_mode & 0o777, 0o600, f)
            r = subprocess.run(['runuser', '-u', USER, '--', 'cat', f], capture_output=True)
            self.assertNotEqual(r.returncode, 0, f)
            self.assertNotIn(b'secret-value', r.stdout)


class MungeTest(unittest.TestCase):
    """MUNGE credentials against a real munged of the test's own (its own key and socket)."""

    def setUp(self):
        if shutil.which('munged') is None or shutil.which('munge') is None:
            self.skipTest('munge is not installed (Debian: apt-get install munge)')
        make_user(USER)
        self.addCleanup(remove_user, USER)
        self.mdir = tempfile.mkdtemp(prefix='berth-munge-')
        os.chmod(self.mdir, 0o755)
        self.addCleanup(shutil.rmtree, self.mdir, True)
        key = os.path.join(self.mdir, 'munge.key')
        with open(key, 'wb') as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.sock = os.path.join(self.mdir, 'munge.sock')
        pid = os.path.join(self.mdir, 'munged.pid')
        subprocess.run(['munged', '--force', f'--socket={self.sock}', f'--key-file={key}',
                        f'--pid-file={pid}', f'--log-file={self.mdir}/munged.log',
                        f'--seed-file={self.mdir}/seed'], check=True, timeout=30)
        self.addCleanup(lambda: subprocess.run(['munged', '--stop', f'--socket={self.sock}'],
                                               capture_output=True, timeout=30))
        self.c = Cluster(controller_args=['--k8s-listen', '127.0.0.1:0', '--listen-tcp',
                                          '127.0.0.1:0', '--munge-socket', self.sock]).start()
        self.addCleanup(self.c.stop)
        with open(os.path.join(self.c.dir, 'kubernetes-api.url')) as f:
            self.url = f.read().strip()

    def test_munge_credentials_name_their_user(self):
        env = {k: v for k, v in self.c.env.items() if k not in ('BERTH_SOCKET', 'BERTH_HOME')}
        env.update(BERTH_SERVER=self.url, BERTH_AUTH='munge', BERTH_MUNGE_SOCKET=self.sock,
                   BERTH_CA_FILE=os.path.join(self.c.dir, 'pki', 'ca.crt'),
                   BERTH_HOME='/nonexistent')
        work = os.path.join(self.c.dir, 'w')
        os.makedirs(work)
        os.chmod(work, 0o777)
        cmd = ['runuser', '-u', USER, '--', 'env', *[f'{k}={v}' for k, v in env.items()]]
        sub = subprocess.run([*cmd, BERTH, 'sbatch', '--wrap', 'sleep 60'], cwd=work,
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(sub.returncode, 0, sub.stderr)
        job = int(sub.stdout.split()[-1])
        self.assertEqual(self.c.job(job)['request']['user'], USER)
        q = subprocess.run([*cmd, BERTH, 'squeue', '-h', '-o', '%i %u'], cwd=work,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(q.returncode, 0, q.stderr)
        self.assertIn(f'{job} {USER}', q.stdout)
        # Plain TCP takes MUNGE credentials too (never bearer tokens).
        out = subprocess.run(['ss', '-Hltnp'], capture_output=True, text=True).stdout
        tls_port = self.url.rsplit(':', 1)[1]
        tcp = [line.split()[3].rsplit(':', 1)[1] for line in out.splitlines()
               if f'pid={self.c.controller.pid},' in line]
        tcp = [p for p in tcp if p != tls_port]
        self.assertEqual(len(tcp), 1, out)
        plain = [c.replace(f'BERTH_SERVER={self.url}', f'BERTH_SERVER=http://127.0.0.1:{tcp[0]}')
                 for c in cmd]
        q = subprocess.run([*plain, BERTH, 'scancel', str(job)], cwd=work,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(q.returncode, 0, q.stderr)
        self.c.wait_state(job, 'CANCELLED')
        # Not a credential, or one munged refuses: 401, nothing done.
        port = int(self.url.rsplit(':', 1)[1])
        ctx = ssl.create_default_context(cafile=env['BERTH_CA_FILE'])
        for bad in ('Munge garbage', 'Munge MUNGE:AwQFAAAabc:'):
            conn = http.client.HTTPSConnection('127.0.0.1', port, context=ctx, timeout=30)
            conn.request('POST', '/v1/jobs', body='{}', headers={'Authorization': bad})
            r = conn.getresponse()
            r.read()
            conn.close()
            self.assertEqual(r.status, 401, bad)


if __name__ == '__main__':
    unittest.main()

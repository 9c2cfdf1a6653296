"""Integration tests of controllers in an HA group (issue 22, docs/ha.md): two `berth controller`
processes on one loopback etcd, each with its own state folder and socket, an agent and the CLI
given both sockets. Skipped with the reason where there is no etcd binary (scripts/setup
installs etcd-server)."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from harness import (BERTH, Cluster, UnixHTTPConnection, descendants_of, job_cgroups_of,
                     kill_processes_naming, processes_naming, remove_cgroups)
from test_etcd_store import ETCD, Etcd, free_port, script
from test_k8s_nodes import KUBECTL, KUBECTL_VERSION, Kubectl

TTL = 3  # seconds: the leader's lease (above the default, for loaded test machines)


def api(sock, method, path, body=None):
    c = UnixHTTPConnection(sock, timeout=30)
    c.request(method, path, body=None if body is None else json.dumps(body),
              headers={'Content-Type': 'application/json'})
    r = c.getresponse()
    text = r.read().decode()
    headers = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    try:
        return r.status, (json.loads(text) if text.strip() else {}), headers
    except ValueError:
        return r.status, {'raw': text}, headers


def ready(sock):
    try:
        return api(sock, 'GET', '/readyz')[0] == 200
    except OSError:
        return False


@unittest.skipIf(ETCD is None, 'no etcd binary (scripts/setup installs etcd-server)')
class HaGroupTest(unittest.TestCase):
    def setUp(self):
        self.etcd = Etcd(1)
        self.addCleanup(self.etcd.stop)
        url = self.etcd.url()
        self.c = Cluster(controller_args=['--store', url, '--name', 'a', '--lease-ttl', str(TTL)])
        self.addCleanup(self.c.stop)
        # The second controller: its own folder inside the first's (so that the harness's
        # clean-up finds what it started), its own socket.
        self.b_dir = os.path.join(self.c.dir, 'b')
        os.makedirs(self.b_dir)
        self.b_sock = os.path.join(self.b_dir, 'controller.sock')
        self.b_args = [BERTH, 'controller', '--home', self.b_dir, '--socket', self.b_sock,
                       '--node-timeout', '60', '--container-pods', 'no', '--store', url,
                       '--name', 'b', '--lease-ttl', str(TTL)]
        self.b = None
        self.addCleanup(self.stop_b)
        self.both = f'{self.c.sock},{self.b_sock}'
        self.c.agent_args = ['--controller', f'unix:{self.c.sock},unix:{self.b_sock}']
        self.c.start_controller()  # a: the first, so the leader
        self.start_b()
        self.c.start_agent()
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work, exist_ok=True)
        os.chmod(self.work, 0o777)

    def start_b(self):
        log = open(os.path.join(self.b_dir, 'controller.log'), 'ab')
        self.b = subprocess.Popen(self.b_args, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.c.wait(lambda: self.healthy(self.b_sock), 'the standby to answer')

    def stop_b(self):
        if self.b is not None and self.b.poll() is None:
            self.b.send_signal(signal.SIGTERM)
            self.b.wait(timeout=30)

    @staticmethod
    def healthy(sock):
        try:
            return api(sock, 'GET', '/healthz')[0] == 200
        except OSError:
            return False

    def cli(self, *args):
        env = dict(self.c.env, BERTH_SOCKET=self.both)
        return subprocess.run([BERTH, *args], env=env, capture_output=True, text=True,
                              timeout=90, cwd=self.work)

    def spec(self, body, **extra):
        s = {'name': 'ha', 'script': script(body), 'work_dir': self.work,
             'stdout': '%x-%j.out', 'time_limit': 120}
        s.update(extra)
        return s

    def group(self, sock):
        status, body, _ = api(sock, 'GET', '/v1/ha')
        self.assertEqual(status, 200, body)
        return body

    def test_the_standby_names_the_leader_and_the_cli_goes_there(self):
        status, body, headers = api(self.b_sock, 'POST', '/v1/jobs', self.spec('true'))
        self.assertEqual(status, 503, body)
        self.assertIn('standby', body['error']['message'])
        self.assertIn('the leader is a', body['error']['message'])
        self.assertEqual(headers.get('x-berth-leader'), 'unix:' + self.c.sock)
        self.assertFalse(ready(self.b_sock))
        # Both answer GET /v1/ha with the same group: a leads, b waits.
        for sock, role in ((self.c.sock, 'leader'), (self.b_sock, 'standby')):
            g = self.group(sock)
            self.assertEqual(g['mode'], 'ha')
            self.assertEqual(g['role'], role)
            self.assertEqual(g['leader']['name'], 'a')
            self.assertGreater(g['epoch'], 0)
            self.assertEqual(sorted((m['name'], m['leader']) for m in g['members']),
                             [('a', True), ('b', False)])
            self.assertEqual([e['ok'] for e in g['etcd']], [True])
        # The CLI given b's socket first moves on to the leader.
        env_first_b = f'{self.b_sock},{self.c.sock}'
        p = subprocess.run([BERTH, 'sbatch', '--parsable', '-o', '/dev/null', '--wrap', 'true'],
                           env=dict(self.c.env, BERTH_SOCKET=env_first_b), capture_output=True,
                           text=True, timeout=60, cwd=self.work)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.c.wait_state(int(p.stdout.strip()), 'COMPLETED', 60)
        p = self.cli('status')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('Leader:   a at unix:', p.stdout)
        self.assertRegex(p.stdout, r'\nb +unix:\S+ +\d+  standby')

    def test_kill9_of_the_leader_under_load_loses_no_job_and_the_standby_adopts_running_ones(self):
        epoch_a = self.group(self.c.sock)['epoch']
        marker = os.path.join(self.work, 'runs')
        running = self.c.submit(self.spec(f'echo "$SLURM_JOB_ID" >> {marker}; sleep 6'))
        self.c.wait_state(running, 'RUNNING', 60)
        acked = self.c.acked_until_kill9(self.spec('true', hold=True))
        self.assertGreater(len(acked), 10)
        killed = time.time()
        self.c.wait(lambda: ready(self.b_sock), 'the standby to lead', timeout=30)
        took = time.time() - killed
        # Within the lease's TTL and a few seconds to load (generous: CI machines are slow).
        self.assertLess(took, TTL + 10)
        g = self.group(self.b_sock)
        self.assertEqual(g['role'], 'leader')
        self.assertEqual(g['leader']['name'], 'b')
        self.assertGreater(g['epoch'], epoch_a)
        status, body, _ = api(self.b_sock, 'GET', '/v1/jobs?state=PENDING')
        known = {j['id'] for j in body['jobs']}
        self.assertEqual([j for j in acked if j not in known], [],
                         'acknowledged jobs lost in the failover')
        # The running job was adopted (the agent moved to b) and ran once.
        status, body, _ = api(self.b_sock, 'GET', f'/v1/jobs/{running}')
        self.assertIn(body['state'], ('RUNNING', 'COMPLETED'), body)
        deadline = time.time() + 60
        while time.time() < deadline:
            status, body, _ = api(self.b_sock, 'GET', f'/v1/jobs/{running}')
            if body['state'] == 'COMPLETED':
                break
            time.sleep(0.2)
        self.assertEqual(body['state'], 'COMPLETED', body)
        with open(marker) as f:
            self.assertEqual(f.read().split(), [str(running)])
        # The CLI with both sockets reaches b (a's socket refuses); ids go on above the acked.
        p = self.cli('sbatch', '--parsable', '-o', '/dev/null', '--wrap', 'true')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreater(int(p.stdout.strip()), max(acked))
        # a, started again, joins as a standby of b.
        self.c.controller = subprocess.Popen(
            [BERTH, 'controller', '--home', self.c.dir, '--socket', self.c.sock,
             '--node-timeout', '60', *self.c.controller_args],
            stdout=self.c.log('controller'), stderr=subprocess.STDOUT)
        self.c.wait(lambda: self.healthy(self.c.sock), 'a to answer again')
        self.assertEqual(self.group(self.c.sock)['role'], 'standby')
        self.assertEqual(self.group(self.c.sock)['leader']['name'], 'b')

    def test_a_leader_stopped_hands_over_at_once(self):
        self.c.kill('controller', signal.SIGTERM)  # resigns: no lease to wait for
        stopped = time.time()
        self.c.wait(lambda: ready(self.b_sock), 'the standby to lead', timeout=30)
        self.assertLess(time.time() - stopped, TTL + 10)
        p = self.cli('status', '--json')
        self.assertEqual(p.returncode, 0, p.stderr)
        g = json.loads(p.stdout)
        self.assertEqual(g['leader']['name'], 'b')
        self.assertEqual([m['name'] for m in g['members']], ['b'])


@unittest.skipIf(ETCD is None, 'no etcd binary (scripts/setup installs etcd-server)')
@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
class ForwardingTest(unittest.TestCase):
    """The real kubectl, with only the standby's address in its kubeconfig: the standby passes
    every request on to the leader (docs/ha.md, "Forwarding"), plain ones, watches (kubectl wait),
    followed logs; berth's own CLI over HTTPS too."""

    def setUp(self):
        self.etcd = Etcd(1)
        self.addCleanup(self.etcd.stop)
        url = self.etcd.url()
        self.port_a, self.port_b = free_port(), free_port()
        self.c = Cluster(controller_args=[
            '--store', url, '--name', 'a', '--lease-ttl', str(TTL),
            '--k8s-listen', f'127.0.0.1:{self.port_a}',
            '--advertise', f'https://127.0.0.1:{self.port_a}'])
        self.addCleanup(self.c.stop)
        self.b_dir = os.path.join(self.c.dir, 'b')
        os.makedirs(self.b_dir)
        self.b_sock = os.path.join(self.b_dir, 'controller.sock')
        self.c.agent_args = ['--controller', f'unix:{self.c.sock},unix:{self.b_sock}']
        self.c.start_controller()  # a leads
        log = open(os.path.join(self.b_dir, 'controller.log'), 'ab')
        self.b = subprocess.Popen(
            [BERTH, 'controller', '--home', self.b_dir, '--socket', self.b_sock,
             '--container-pods', 'no', '--store', url, '--name', 'b', '--lease-ttl', str(TTL),
             '--k8s-listen', f'127.0.0.1:{self.port_b}',
             '--advertise', f'https://127.0.0.1:{self.port_b}'],
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.addCleanup(self.stop_b)
        self.c.wait(lambda: HaGroupTest.healthy(self.b_sock), 'the standby to answer')
        self.c.start_agent()
        self.tmp = os.path.join(self.c.dir, 'kube')
        os.makedirs(self.tmp)
        config = json.loads(self.c.cli('kubeconfig').stdout)
        # Only the standby's address.
        config['clusters'][0]['cluster']['server'] = f'https://127.0.0.1:{self.port_b}'
        self.config_path = os.path.join(self.tmp, 'kubeconfig')
        with open(self.config_path, 'w') as f:
            json.dump(config, f)
        self.token = config['users'][0]['user']['token']
        self.k = Kubectl(self.config_path, os.path.join(self.tmp, 'cache'))

    def stop_b(self):
        if self.b.poll() is None:
            self.b.send_signal(signal.SIGTERM)
            self.b.wait(timeout=30)

    def test_kubectl_against_the_standby_reaches_the_leader(self):
        status, body, _ = api(self.b_sock, 'GET', '/v1/ha')
        self.assertEqual((body['role'], body['leader']['name']), ('standby', 'a'))
        self.assertIn('node1', self.k('get', 'nodes').stdout)
        self.k('create', 'job', 'hello', '--image=busybox', '--', 'sh', '-c',
               'echo one; sleep 1; echo two')
        # kubectl wait watches the Job: a stream passed on chunk by chunk.
        self.k('wait', '--for=condition=complete', 'job/hello', '--timeout=90s')
        self.assertEqual(self.k('logs', '-f', 'job/hello').stdout, 'one\ntwo\n')
        self.assertEqual(json.loads(self.k('get', 'job', 'hello', '-o', 'json').stdout)
                         ['status']['succeeded'], 1)
        # berth's own CLI over HTTPS to the standby alone is answered by the leader too.
        env = dict(os.environ, BERTH_SERVER=f'https://127.0.0.1:{self.port_b}',
                   BERTH_TOKEN=self.token,
                   BERTH_CA_FILE=os.path.join(self.c.dir, 'pki', 'ca.crt'))
        env.pop('BERTH_SOCKET', None)
        env.pop('BERTH_HOME', None)
        p = subprocess.run([BERTH, 'squeue', '-h', '-t', 'all', '-o', '%j'], env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('hello', p.stdout)
        # The standby's readiness is its own: not ready.
        self.assertFalse(ready(self.b_sock))
        if KUBECTL_VERSION < (1, 30):
            return  # exec needs a kubectl that speaks WebSocket (docs/adr/0006-pod-streams.md)
        # kubectl exec: an upgraded connection, relayed byte for byte.
        self.k('run', 'box', '--image=busybox', '--restart=Never', '--', 'sh', '-c',
               'echo ready; sleep 60')
        self.c.wait(lambda: 'ready' in self.k('logs', 'box', check=False).stdout,
                    'the pod to run', 60)
        p = subprocess.run(self.k.argv('exec', 'box', '--', 'sh', '-c', 'echo via-standby; exit 3'),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual((p.returncode, p.stdout), (3, 'via-standby\n'), p.stderr)
        self.k('delete', 'pod', 'box', '--wait=false')

    def test_the_members_share_one_token_secret_and_ca(self):
        """Nothing copied by hand: b took a's token secret and CA through etcd, so the kubeconfig
        a issued (its token, its CA pinned) works with b once b leads."""
        for name in ('token.secret', os.path.join('pki', 'ca.crt'), os.path.join('pki', 'ca.key')):
            with open(os.path.join(self.c.dir, name), 'rb') as fa, \
                    open(os.path.join(self.b_dir, name), 'rb') as fb:
                self.assertEqual(fa.read(), fb.read(), name)
        self.assertIn('node1', self.k('get', 'nodes').stdout)  # forwarded to a
        self.c.kill('controller', signal.SIGTERM)  # a hands over to b
        self.c.wait(lambda: ready(self.b_sock), 'b to lead', 30)
        self.assertIn('node1', self.k('get', 'nodes').stdout)  # b itself now


@unittest.skipIf(ETCD is None, 'no etcd binary (scripts/setup installs etcd-server)')
class UpHaTest(unittest.TestCase):
    """`berth up --ha`: a local 3-member etcd, 3 controllers and this machine's agent."""

    def setUp(self):
        self.home = tempfile.mkdtemp(prefix='berth-it-')
        os.chmod(self.home, 0o755)
        self.addCleanup(self.clean)
        self.log_path = os.path.join(self.home, 'up.log')
        with open(self.log_path, 'ab') as log:
            self.up = subprocess.Popen(
                [BERTH, 'up', '--ha', '--home', self.home, '--lease-ttl', str(TTL),
                 '--container-pods', 'no', '--k8s-listen', 'off'],
                stdout=log, stderr=subprocess.STDOUT)
        self.sockets = None
        deadline = time.time() + 120
        while self.sockets is None and time.time() < deadline:
            self.assertIsNone(self.up.poll(), self.output())
            m = re.search(r'export BERTH_SOCKET=(\S+)', self.output())
            if m:
                self.sockets = m.group(1)
            time.sleep(0.1)
        self.assertIsNotNone(self.sockets, self.output())
        self.env = dict(os.environ, BERTH_SOCKET=self.sockets)
        self.env.pop('BERTH_HOME', None)

    def output(self):
        with open(self.log_path, errors='replace') as f:
            return f.read()

    def clean(self):
        if self.up.poll() is None:
            self.up.send_signal(signal.SIGINT)
            try:
                self.up.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.up.kill()
                self.up.wait()
        named = processes_naming(self.home)
        groups = job_cgroups_of(named + descendants_of(named))
        subprocess.run(['pkill', '-9', '-f', f'supervise {self.home}'], check=False)
        kill_processes_naming(self.home)
        remove_cgroups(groups)
        shutil.rmtree(self.home, ignore_errors=True)

    def cli(self, *args, check=True):
        p = subprocess.run([BERTH, *args], env=self.env, capture_output=True, text=True,
                           timeout=90, cwd=self.home)
        if check:
            self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def status(self):
        return json.loads(self.cli('status', '--json').stdout)

    def run_job(self, text):
        out = os.path.join(self.home, f'{text}.out')
        jid = self.cli('sbatch', '--parsable', '-o', out, '--wrap', f'echo {text}').stdout.strip()
        deadline = time.time() + 60
        while time.time() < deadline:
            p = self.cli('sacct', '-X', '-n', '-P', '-o', 'State', '-j', jid, check=False)
            if p.stdout.strip() == 'COMPLETED':
                with open(out) as f:
                    self.assertEqual(f.read().strip(), text)
                return
            time.sleep(0.2)
        self.fail(f'job {jid} did not complete; {self.output()}')

    def leader_stats(self):
        """GET /v1/stats of the member that leads (standbys answer 503)."""
        for sock in self.sockets.split(','):
            c = UnixHTTPConnection(sock, timeout=10)
            c.request('GET', '/v1/stats')
            r = c.getresponse()
            body = r.read()
            c.close()
            if r.status == 200:
                return json.loads(body)
        raise AssertionError('no member leads')

    def wait(self, cond, what, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if cond():
                    return
            except (AssertionError, ValueError, KeyError):
                pass
            time.sleep(0.2)
        self.fail(f'timed out waiting for {what}; {self.output()}')

    def test_a_local_group_runs_jobs_and_survives_a_killed_leader(self):
        g = self.status()
        self.assertEqual(g['mode'], 'ha')
        self.assertEqual(len(g['members']), 3)
        self.assertEqual([m['leader'] for m in g['members']].count(True), 1)
        self.assertEqual([e['ok'] for e in g['etcd']], [True, True, True])
        # One token secret and CA for the whole group (tokens work with whichever leads), agreed
        # through etcd; each member's own serving certificate under that CA.
        for name in ('token.secret', 'pki/ca.crt', 'pki/ca.key'):
            contents = set()
            for n in (1, 2, 3):
                with open(os.path.join(self.home, 'ha', f'ctl-{n}', name), 'rb') as f:
                    contents.add(f.read())
            self.assertEqual(len(contents), 1, name)
        for n in (1, 2, 3):
            pki = os.path.join(self.home, 'ha', f'ctl-{n}', 'pki')
            p = subprocess.run(['openssl', 'verify', '-CAfile', os.path.join(pki, 'ca.crt'),
                                os.path.join(pki, 'server.crt')], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.wait(lambda: 'idle' in self.cli('sinfo', '-h', '-o', '%T', check=False).stdout,
                  "this machine's agent to register")
        self.run_job('before')
        # The group's PostgreSQL (the accounting archive), made in the state folder, answers the
        # leader with the password berth up gave it.
        self.assertTrue(os.path.exists(os.path.join(self.home, 'ha', 'pg', 'data', 'PG_VERSION')))
        self.assertEqual(os.stat(os.path.join(self.home, 'ha', 'pg.pass')).st_mode & 0o077, 0)
        self.wait(lambda: (self.leader_stats()['archive']['rounds'] >= 1
                           and self.leader_stats()['archive']['error'] == ''),
                  'the leader to reach PostgreSQL', 30)
        leader, epoch = g['leader'], g['epoch']
        os.kill(leader['pid'], signal.SIGKILL)
        self.wait(lambda: self.status()['epoch'] > epoch and self.status()['leader'] is not None,
                  'another leader')
        # Another process leads (the killed one, started again at once, may win the election).
        self.assertNotEqual(self.status()['leader']['pid'], leader['pid'])
        self.run_job('after')
        # berth up starts the killed controller again: it is back (a new process; it may even
        # have won the election), and one member leads.
        self.wait(lambda: len(self.status()['members']) == 3, 'the killed controller to return')
        members = self.status()['members']
        back = [m for m in members if m['name'] == leader['name']]
        self.assertEqual(len(back), 1)
        self.assertNotEqual(back[0]['pid'], leader['pid'])
        self.assertEqual([m['leader'] for m in members].count(True), 1)
        # Ctrl-C stops the whole group.
        self.up.send_signal(signal.SIGINT)
        self.assertEqual(self.up.wait(timeout=60), 0, self.output())
        self.wait(lambda: not processes_naming(self.home), 'every process of the group to end', 20)


if __name__ == '__main__':
    unittest.main()

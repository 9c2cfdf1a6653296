"""An HA group across hosts (issue 22, docs/ha.md) on the network-namespace test bed (netbed.py):
hosts e1, e2, e3 each run an etcd member and a controller; host h1 runs an agent that knows all
three controllers (HTTPS, one CA and token secret copied to every controller). The leader's
host is cut from the rest: it must stop leading and serve reads only, the other side must elect a
leader that adopts the running job, the job must run once, and the old leader must rejoin as a
standby when its link returns.

Skipped, with the reason, where network namespaces cannot be made or there is no etcd."""
import os
import shutil
import subprocess
import sys
import unittest

from harness import BERTH, Cluster
from netbed import NetBed
from test_etcd_store import ETCD
from test_ha import api

WHY_NOT = NetBed.available() or (None if ETCD else 'no etcd binary (scripts/setup installs it)')
if WHY_NOT:
    print(f'test_ha_multihost: SKIPPED: {WHY_NOT}', file=sys.stderr)

ETCD_HOSTS = ('e1', 'e2', 'e3')
NODE_TIMEOUT = 30  # the agent's fence is half of it


@unittest.skipIf(WHY_NOT, f'no test bed: {WHY_NOT}')
class HaAcrossHostsTest(unittest.TestCase):
    def setUp(self):
        self.bed = NetBed(hosts=(*ETCD_HOSTS, 'h1'), node_timeout=NODE_TIMEOUT)
        self.addCleanup(lambda: self.bed.stop(keep=bool(os.environ.get('BERTH_IT_KEEP'))))
        self.bed.build()
        self.c = self.bed.cluster = Cluster(node_timeout=NODE_TIMEOUT)
        self.addr = self.bed.addr
        self.procs = {}
        self.addCleanup(self.stop_all)
        initial = ','.join(f'{h}=http://{self.addr[h]}:2380' for h in ETCD_HOSTS)
        for h in ETCD_HOSTS:
            client, peer = f'http://{self.addr[h]}:2379', f'http://{self.addr[h]}:2380'
            self.procs['etcd-' + h] = self.bed.run_in(
                h, [ETCD, '--name', h, '--data-dir', os.path.join(self.c.dir, 'etcd-' + h),
                    '--listen-client-urls', client, '--advertise-client-urls', client,
                    '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
                    '--initial-cluster', initial, '--initial-cluster-state', 'new',
                    '--pre-vote=true'],  # as docs/ha.md's layout runs it
                stdout=self.c.log('etcd-' + h), stderr=subprocess.STDOUT)
        for h in ETCD_HOSTS:
            self.c.wait(lambda h=h: self.etcd_healthy(h), f'etcd on {h}')
        self.store = ('etcd://' + ','.join(f'{self.addr[h]}:2379' for h in ETCD_HOSTS) +
                      '/berth/it?timeout-ms=1000&retry-ms=3000')
        self.home = {h: os.path.join(self.c.dir, 'ctl-' + h) for h in ETCD_HOSTS}
        self.sock = {h: os.path.join(self.home[h], 'controller.sock') for h in ETCD_HOSTS}
        self.start_controller('e1')
        self.c.wait(lambda: self.answers(self.sock['e1'], '/readyz'), 'e1 to lead')
        self.c.wait(lambda: os.path.exists(os.path.join(self.home['e1'], 'pki', 'ca.crt')),
                    'the PKI')
        # One CA and token secret for the whole group (docs/ha.md: copied to every member).
        for h in ETCD_HOSTS[1:]:
            os.makedirs(self.home[h], exist_ok=True)
            shutil.copytree(os.path.join(self.home['e1'], 'pki'),
                            os.path.join(self.home[h], 'pki'))
            shutil.copy2(os.path.join(self.home['e1'], 'token.secret'), self.home[h])
            self.start_controller(h)
            self.c.wait(lambda h=h: self.answers(self.sock[h], '/healthz'), f'{h} to answer')
        join = subprocess.run([BERTH, 'token', '--join'], capture_output=True, text=True,
                              env=dict(os.environ, BERTH_SOCKET=self.sock['e1']), timeout=30)
        self.assertEqual(join.returncode, 0, join.stderr)
        urls = ','.join(f'https://{self.addr[h]}:6443' for h in ETCD_HOSTS)
        home = os.path.join(self.c.dir, 'host-h1')
        os.makedirs(home)
        self.bed.agents['h1'] = self.bed.run_in(
            'h1', [BERTH, 'agent', '--home', home, '--controller', urls,
                   '--ca-file', os.path.join(self.home['e1'], 'pki', 'ca.crt'),
                   '--node-name', 'h1', '--cpus', '2', '--mem', '2G',
                   '--join-token', join.stdout.strip()],
            stdout=self.c.log('agent-h1'), stderr=subprocess.STDOUT)
        self.c.wait(lambda: self.node_state('e1', 'h1') == 'IDLE', 'h1 to join')

    @staticmethod
    def answers(sock, path, status=200):
        try:
            return api(sock, 'GET', path)[0] == status
        except OSError:
            return False

    def etcd_healthy(self, h):
        probe = ('import urllib.request,sys\n'
                 f'sys.exit(0 if b"true" in urllib.request.urlopen('
                 f'"http://{self.addr[h]}:2379/health", timeout=1).read() else 1)')
        p = self.bed.run_in(h, [sys.executable, '-c', probe], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
        return p.wait(timeout=10) == 0

    def start_controller(self, h):
        os.makedirs(self.home[h], exist_ok=True)
        a = self.addr[h]
        self.procs['ctl-' + h] = self.bed.run_in(
            h, [BERTH, 'controller', '--home', self.home[h], '--socket', self.sock[h],
                '--node-timeout', str(NODE_TIMEOUT), '--container-pods', 'no',
                '--k8s-listen', f'{a}:6443', '--advertise', f'https://{a}:6443',
                *[x for e in ETCD_HOSTS for x in ('--tls-san', self.addr[e])],
                '--store', self.store, '--name', h, '--lease-ttl', '3'],
            stdout=self.c.log('controller-' + h), stderr=subprocess.STDOUT)

    def stop_all(self):
        self.bed.stop_agent('h1')
        for name, p in self.procs.items():
            if p.poll() is None:
                p.terminate()
        for p in self.procs.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def node_state(self, h, node):
        try:
            status, body, _ = api(self.sock[h], 'GET', f'/v1/nodes/{node}')
        except OSError:
            return None
        return body.get('state') if status == 200 else None

    def group(self, h):
        status, body, _ = api(self.sock[h], 'GET', '/v1/ha')
        self.assertEqual(status, 200, body)
        return body

    def test_the_leader_cut_from_the_quorum_steps_down_and_the_job_runs_once(self):
        marker = os.path.join(self.c.dir, 'runs.log')
        spec = {'script': f'#!/bin/bash\necho "$SLURM_JOB_ID $(date +%s.%N)" >> {marker}\n'
                          'sleep 15\n',
                'work_dir': self.c.dir, 'stdout': '/dev/null', 'time_limit': 300}
        status, body, _ = api(self.sock['e1'], 'POST', '/v1/jobs', spec)
        self.assertEqual(status, 201, body)
        job = body['job_id']
        self.c.wait(lambda: api(self.sock['e1'], 'GET', f'/v1/jobs/{job}')[1].get('state') ==
                    'RUNNING', 'the job to run')
        before = self.group('e1')
        self.assertEqual(before['leader']['name'], 'e1')

        self.bed.cut('e1')
        # The other side elects a leader within the lease's TTL and a few seconds.
        def elected():
            for h in ETCD_HOSTS[1:]:
                try:  # a standby's server closes as it becomes the leader
                    g = self.group(h)
                except OSError:
                    continue
                if g['role'] == 'leader' and g['epoch'] > before['epoch']:
                    return True
            return False
        self.c.wait(elected, 'a leader on the other side', 30)
        # The old leader, cut off, refuses changes and still answers reads from its socket.
        status, body, headers = api(self.sock['e1'], 'POST', '/v1/jobs', spec)
        self.assertEqual(status, 503, body)
        status, body, _ = api(self.sock['e1'], 'GET', f'/v1/jobs/{job}')
        self.assertEqual(status, 200, body)
        self.assertNotEqual(api(self.sock['e1'], 'GET', '/readyz')[0], 200)

        # The agent moved to the new leader (or the next, should the group fail over again on a
        # loaded machine): the job runs on there, and ends once.
        def state_under_leader():
            for h in ETCD_HOSTS[1:]:
                if self.answers(self.sock[h], '/readyz'):
                    return api(self.sock[h], 'GET', f'/v1/jobs/{job}')[1].get('state')
            return None
        self.c.wait(lambda: state_under_leader() == 'COMPLETED',
                    'the job to complete under the new leader', 90)
        with open(marker) as f:
            runs = f.read().split('\n')
        self.assertEqual([r.split()[0] for r in runs if r], [str(job)], runs)
        with open(os.path.join(self.c.dir, 'agent-h1.log')) as f:
            self.assertNotIn('fenced', f.read())

        # The link returns: the old leader rejoins as a standby of the new one.
        self.bed.restore('e1')

        def rejoined():
            try:
                g = self.group('e1')
            except OSError:
                return False
            return (g['role'] == 'standby' and (g['leader'] or {}).get('name') in ETCD_HOSTS[1:]
                    and 'e1' in [m['name'] for m in g['members']])
        self.c.wait(rejoined, 'e1 to rejoin as a standby', 60)
        g = self.group('e1')
        self.assertEqual(sorted(m['name'] for m in g['members']), list(ETCD_HOSTS))
        self.assertEqual(len([m['name'] for m in g['members'] if m['leader']]), 1)
        with open(os.path.join(self.c.dir, 'controller-e1.log'), 'rb') as f:
            self.assertIn(b'no longer leading', f.read())


if __name__ == '__main__':
    unittest.main()

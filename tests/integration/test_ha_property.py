"""A property of an HA group (issue 22, docs/ha.md), over random histories: whatever clients do and
whenever the leader is killed with -9, no acknowledged change is lost and no job attempt is
launched twice.

Three controllers on a loopback etcd, an agent that knows them all, and client threads that
submit jobs (short ones that record their launch, and held ones), cancel and release jobs, at
random, through the list of controllers as berth's own clients do. Every few seconds the leader
is killed with -9 (and started again, as its supervisor would). At the end the last leader must
know every acknowledged submission, show every acknowledged cancel and release, and every launch
record must be of a distinct job attempt. The seed is printed; BERTH_HA_SEED=N replays one.
Skipped where there is no etcd; the default build runs it (it mostly waits)."""
import os
import random
import signal
import subprocess
import sys
import threading
import time
import unittest

from harness import BERTH, Cluster, slow_in_one_build
from test_etcd_store import ETCD, Etcd
from test_ha import api

ROUNDS = 4
CONTROLLERS = ('a', 'b', 'c')


class GroupClient:
    """Requests to the first controller of the list that takes them: a refused connection or a
    standby's 503 (X-Berth-Leader: nothing was done) moves on; an answer lost in flight is an
    unknown outcome (None)."""

    def __init__(self, socks):
        self.socks = socks

    def call(self, method, path, body=None, deadline_s=30):
        end = time.time() + deadline_s
        while time.time() < end:
            for sock in self.socks:
                try:
                    status, reply, headers = api(sock, method, path, body)
                except (ConnectionRefusedError, FileNotFoundError):
                    continue
                except OSError:
                    return None, None  # sent, and the answer lost: unknown
                if status == 503 and 'x-berth-leader' in headers:
                    continue
                return status, reply
            time.sleep(0.05)
        return None, None


@slow_in_one_build
@unittest.skipIf(ETCD is None, 'no etcd binary (scripts/setup installs etcd-server)')
class HaPropertyTest(unittest.TestCase):
    def setUp(self):
        self.seed = int(os.environ.get('BERTH_HA_SEED', random.randrange(1 << 30)))
        print(f'test_ha_property: seed {self.seed} (BERTH_HA_SEED={self.seed} replays it)',
              file=sys.stderr)
        self.rng = random.Random(self.seed)
        self.etcd = Etcd(1)
        self.addCleanup(self.etcd.stop)
        self.c = Cluster()
        self.addCleanup(self.c.stop)
        self.addCleanup(self.stop_controllers)
        self.url = self.etcd.url()
        self.home = {n: os.path.join(self.c.dir, 'ctl-' + n) for n in CONTROLLERS}
        self.sock = {n: os.path.join(self.home[n], 'controller.sock') for n in CONTROLLERS}
        self.procs = {}
        for n in CONTROLLERS:
            os.makedirs(self.home[n])
            self.start(n)
        self.client = GroupClient([self.sock[n] for n in CONTROLLERS])
        self.c.sock = self.sock['a']  # for the harness's own calls (start_agent's wait)
        self.c.agent_args = ['--controller', ','.join('unix:' + self.sock[n] for n in CONTROLLERS)]
        self.c.wait(lambda: self.leader() is not None, 'a leader')
        self.c.sock = self.sock[self.leader()]
        self.c.start_agent()
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work)
        os.chmod(self.work, 0o777)
        self.launches = os.path.join(self.work, 'launches')

    def start(self, n):
        self.procs[n] = subprocess.Popen(
            [BERTH, 'controller', '--home', self.home[n], '--socket', self.sock[n],
             '--container-pods', 'no', '--k8s-listen', 'off', '--store', self.url,
             '--name', n, '--lease-ttl', '3'],
            stdout=self.c.log('controller-' + n), stderr=subprocess.STDOUT)

    def stop_controllers(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def leader(self):
        for n in CONTROLLERS:
            try:
                status, body, _ = api(self.sock[n], 'GET', '/readyz')
            except OSError:
                continue
            if status == 200:
                return n
        return None

    def spec(self, held):
        body = f'echo "$SLURM_JOB_ID.$SLURM_RESTART_COUNT" >> {self.launches}; sleep 0.3'
        return {'script': '#!/bin/sh\n' + body + '\n', 'work_dir': self.work,
                'stdout': '/dev/null', 'time_limit': 120, 'hold': held}

    def history(self, stop, acked, lock, rng):
        """One client: random submissions (some held), cancels and releases until `stop`. A held
        job is claimed by one client at a time; an outcome lost in flight is 'unknown'."""
        while not stop.is_set():
            op = rng.random()
            job = None
            if op >= 0.5:
                with lock:
                    if acked['held']:
                        job = rng.choice(sorted(acked['held']))
                        acked['held'].discard(job)
            if job is None:
                held = rng.random() < 0.5
                status, body = self.client.call('POST', '/v1/jobs', self.spec(held))
                if status == 201:
                    with lock:
                        acked['submitted'].add(body['job_id'])
                        if held:
                            acked['held'].add(body['job_id'])
            else:
                kind = 'cancelled' if op < 0.75 else 'released'
                action = 'cancel' if kind == 'cancelled' else 'release'
                status, _ = self.client.call('POST', f'/v1/jobs/{job}/{action}', {})
                with lock:
                    if status == 200:
                        acked[kind].add(job)
                    elif status is None:
                        acked['unknown'].add(job)
                    else:
                        acked['held'].add(job)  # refused: still held
            time.sleep(rng.random() * 0.05)

    def test_random_histories_with_leader_kills_lose_nothing_acknowledged_and_launch_once(self):
        acked = {'submitted': set(), 'held': set(), 'cancelled': set(), 'released': set(),
                 'unknown': set()}
        lock = threading.Lock()
        for _ in range(ROUNDS):
            stop = threading.Event()
            clients = [threading.Thread(target=self.history,
                                        args=(stop, acked, lock, random.Random(self.rng.random())))
                       for _ in range(3)]
            for t in clients:
                t.start()
            time.sleep(self.rng.uniform(0.5, 2.5))
            victim = self.leader()
            if victim is not None:
                self.procs[victim].send_signal(signal.SIGKILL)
                self.procs[victim].wait()
            time.sleep(self.rng.uniform(0.5, 3))
            stop.set()
            for t in clients:
                t.join()
            if victim is not None:
                self.start(victim)  # as its supervisor would
            self.c.wait(lambda: self.leader() is not None, 'a leader', 30)
        self.assertGreater(len(acked['submitted']), 20)
        # The last leader knows every acknowledged change.
        lead = self.sock[self.leader()]
        status, body, _ = api(lead, 'GET', '/v1/jobs?all=1')
        self.assertEqual(status, 200, body)
        state = {j['id']: j['state'] for j in body['jobs']}
        self.assertEqual(sorted(acked['submitted'] - set(state)), [],
                         f'acknowledged submissions lost (seed {self.seed})')
        for job in acked['cancelled']:
            self.assertEqual(state[job], 'CANCELLED', f'job {job} (seed {self.seed})')
        never_cancelled = acked['submitted'] - acked['held'] - acked['cancelled'] - acked['unknown']
        for job in never_cancelled:
            self.assertNotEqual(state[job], 'CANCELLED', f'job {job} (seed {self.seed})')
        for job in acked['held']:
            self.assertEqual(state[job], 'PENDING', f'job {job} (seed {self.seed})')
        # Every job that may run ends, each attempt launched once.
        runnable = sorted(never_cancelled)

        def all_ended():
            status, body, _ = api(lead, 'GET', '/v1/jobs?all=1')
            now = {j['id']: j['state'] for j in body['jobs']}
            return all(now.get(j) in ('COMPLETED', 'FAILED', 'NODE_FAIL', 'CANCELLED')
                       for j in runnable)
        self.c.wait(all_ended, 'every runnable job to end', 120)
        with open(self.launches) as f:
            records = f.read().split()
        self.assertEqual(len(records), len(set(records)),
                         f'an attempt launched twice (seed {self.seed}): '
                         f'{sorted(r for r in set(records) if records.count(r) > 1)}')
        launched = {int(r.split('.')[0]) for r in records}
        self.assertEqual(sorted(set(runnable) - launched), [],
                         f'acknowledged runnable jobs never launched (seed {self.seed})')
        self.assertEqual(sorted(launched - set(acked['submitted']) - set(state)), [])


if __name__ == '__main__':
    unittest.main()

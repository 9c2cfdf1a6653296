"""Integration tests of the accounting archive (issue 22, docs/adr/0009-accounting-archive.md):
a controller on etcd with `--accounting-store` moves finished jobs' records to PostgreSQL once
they left the live view (MinJobAge), and sacct, seff, scontrol and the usage report read them
there; while PostgreSQL is down, jobs still end and their records wait in etcd, then move when it
is back. Real etcd, real PostgreSQL, real daemons, each started and removed by the test. Skipped
with the reason where etcd or PostgreSQL is not installed (scripts/setup installs both)."""
import base64
import json
import os
import subprocess
import time
import unittest
import urllib.request

import postgres
from harness import BERTH, Cluster
from test_etcd_store import ETCD, Etcd

PREFIX = '/berth/acct'


def b64(s):
    return base64.b64encode(s.encode()).decode()


def prefix_end(p):
    return p[:-1] + chr(ord(p[-1]) + 1)


@unittest.skipIf(ETCD is None, 'no etcd binary (scripts/setup installs etcd-server)')
@unittest.skipIf(postgres.bin_dir() is None, 'no PostgreSQL (scripts/setup installs postgresql-15)')
class AccountingArchiveTest(unittest.TestCase):
    def setUp(self):
        self.etcd = Etcd(1)
        self.addCleanup(self.etcd.stop)
        self.pg = postgres.Postgres()
        self.addCleanup(self.pg.remove)
        self.c = Cluster(controller_args=['--store', self.etcd.url(PREFIX),
                                          '--accounting-store', self.pg.conninfo()])
        self.addCleanup(self.c.stop)
        conf = os.path.join(self.c.dir, 'cluster.conf')
        with open(conf, 'w') as f:
            f.write('ClusterName=itacct\nMinJobAge=2\n')
        self.c.controller_args += ['--config', conf]
        self.c.start()
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work, exist_ok=True)
        os.chmod(self.work, 0o777)

    def run_cmd(self, *args):
        return subprocess.run([os.path.abspath(BERTH), *args], env=self.c.env,
                              capture_output=True, text=True, timeout=60, cwd=self.work)

    def sbatch(self, n):
        ids = []
        for _ in range(n):
            p = self.run_cmd('sbatch', '--parsable', '-o', '/dev/null', '--wrap', 'true')
            self.assertEqual(p.returncode, 0, p.stderr)
            ids.append(int(p.stdout.strip()))
        for j in ids:
            self.c.wait_state(j, 'COMPLETED', 60)
        return ids

    def etcd_keys(self, sub):
        """The keys under PREFIX/sub/ in etcd, read through its JSON gateway."""
        port = self.etcd.client[self.etcd.names[0]]
        key = f'{PREFIX}/{sub}/'
        req = urllib.request.Request(
            f'http://127.0.0.1:{port}/v3/kv/range',
            data=json.dumps({'key': b64(key), 'range_end': b64(prefix_end(key)),
                             'keys_only': True}).encode(),
            headers={'Content-Type': 'application/json'})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = json.load(r)
        return [base64.b64decode(kv['key']).decode() for kv in body.get('kvs', [])]

    def archived(self):
        # The table is made by the archiver's first connection: none yet is none archived.
        p = self.pg.sql("SELECT id, state, user_name FROM berth_jobs WHERE cluster = 'itacct' "
                        'ORDER BY id', check=False)
        return [line.split('\t') for line in p.stdout.split('\n') if line]

    def test_finished_jobs_move_to_postgresql_and_every_reader_finds_them(self):
        ids = self.sbatch(3)
        self.c.wait(lambda: [int(r[0]) for r in self.archived()] == ids,
                    'the jobs to reach PostgreSQL', 60)
        self.assertTrue(all(r[1] == 'COMPLETED' for r in self.archived()), self.archived())
        # Gone from etcd: no job entry, no end-time index entry left behind.
        self.c.wait(lambda: self.etcd_keys('jobs') == [] and self.etcd_keys('ended') == [],
                    'etcd to hold no finished job', 30)
        # Out of etcd and of the live view: what answers now is the archive.
        p = self.run_cmd('sacct', '-X', '-n', '-P', '-o', 'JobID,State',
                         '-j', ','.join(map(str, ids)))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), [f'{j}|COMPLETED' for j in ids])
        p = self.run_cmd('seff', str(ids[0]))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('State: COMPLETED', p.stdout)
        p = self.run_cmd('scontrol', 'show', 'job', str(ids[1]))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('JobState=COMPLETED', p.stdout)
        status, report = self.c.api('GET', '/v1/reports/usage?all=1')
        self.assertEqual(status, 200, report)
        self.assertEqual(report['total']['jobs'], 3)
        status, stats = self.c.api('GET', '/v1/stats')
        self.assertEqual(stats['archive']['moved'], 3)
        self.assertEqual(stats['archive']['error'], '')
        # A restart loads only what etcd holds, and the archive still answers.
        self.c.kill('controller')
        self.c.start_controller()
        p = self.run_cmd('sacct', '-X', '-n', '-P', '-o', 'JobID,State',
                         '-j', ','.join(map(str, ids)))
        self.assertEqual(p.stdout.split(), [f'{j}|COMPLETED' for j in ids], p.stderr)

    def test_postgresql_down_jobs_still_end_and_their_records_wait_in_etcd(self):
        self.pg.stop()
        ids = self.sbatch(2)
        # Past MinJobAge and a few rounds: nothing could move, nothing was dropped.
        self.c.wait(lambda: self.c.api('GET', '/v1/stats')[1]['archive']['failures'] >= 2,
                    'the archiver to try', 30)
        stats = self.c.api('GET', '/v1/stats')[1]['archive']
        self.assertIn('postgresql 127.0.0.1', stats['error'])
        self.assertEqual(len(self.etcd_keys('jobs')), 2)
        # sacct says what is wrong rather than answering half.
        p = self.run_cmd('sacct', '-X', '-n', '-P', '-o', 'JobID,State')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('postgresql', p.stderr)
        # Once PostgreSQL is back, they move.
        self.pg.start()
        self.c.wait(lambda: [int(r[0]) for r in self.archived()] == ids,
                    'the waiting records to move', 60)
        self.c.wait(lambda: self.etcd_keys('jobs') == [], 'etcd to let them go', 30)
        p = self.run_cmd('sacct', '-X', '-n', '-P', '-o', 'JobID,State',
                         '-j', ','.join(map(str, ids)))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), [f'{j}|COMPLETED' for j in ids])


if __name__ == '__main__':
    unittest.main()

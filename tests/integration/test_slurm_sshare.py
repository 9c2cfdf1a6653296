"""Integration test of sshare against real daemons (docs/slurm.md "sshare"): a cluster file with
two accounts (physics 3 shares, chem 1) and two users; jobs run so that usage accrues, and
sshare's rows must show the configured shares and the fair-share order (more usage, lower
FairShare), computed by the scheduler's own fair-share code (GET /v1/fairshare).

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_sshare (from this folder).
Needs root (a second user runs a job); skipped otherwise.
"""
import os
import subprocess
import unittest

from harness import BERTH, Cluster, make_user, remove_user

ROOT = os.geteuid() == 0

CONF = ('PriorityDecayHalfLife=0\n'
        'NodeName=node1 CPUs=2 RealMemory=2000\n'
        'PartitionName=main Nodes=node1 Default=YES\n'
        'Account=physics Fairshare=3\n'
        'Account=chem Fairshare=1\n'
        'User=root Account=physics,chem DefaultAccount=physics\n'
        'User={other} Account=physics\n')


@unittest.skipUnless(ROOT, 'needs root to run a job as a second user')
class SshareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.other = f'ssh{os.getpid() % 10000}'
        make_user(cls.other)
        cls.c = Cluster(gpus=0)
        try:
            path = os.path.join(cls.c.dir, 'cluster.conf')
            with open(path, 'w') as f:
                f.write(CONF.format(other=cls.other))
            cls.c.controller_args += ['--config', path]
            cls.c.start()
            cls.work = os.path.join(cls.c.dir, 'work')
            os.makedirs(cls.work)
            os.chmod(cls.work, 0o777)
            # root uses 2 CPUs for 3 s in physics; the other user 1 CPU for a moment.
            big = cls.c.submit({'name': 'big', 'account': 'physics', 'work_dir': cls.work,
                                'time_limit': 600, 'cpus_per_task': 2,
                                'script': '#!/bin/sh\nsleep 3\n'})
            p = cls.c.cli('submit', '--account=physics', '--time=10', f'--chdir={cls.work}',
                          '--wrap', 'true', user=cls.other)
            small = int(p.stdout.split()[-1])
            for jid in (big, small):
                cls.c.wait_state(jid, 'COMPLETED', 60)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        remove_user(cls.other)

    def sshare(self, *args, user=None):
        return self.c.cli('sshare', *args, user=user).stdout

    def rows(self, *args):
        """-P lines as dicts by header name (the Account column keeps its indentation)."""
        lines = self.sshare('-P', *args).splitlines()
        head = lines[0].split('|')
        return [dict(zip(head, line.split('|'))) for line in lines[1:]]

    def test_tree_shares_and_fairshare_order(self):
        rows = self.rows('-a', '-l')
        tree = [(r['Account'], r['User']) for r in rows]
        self.assertEqual(tree, [('root', ''), (' chem', ''), ('  chem', 'root'),
                                (' physics', ''), ('  physics', 'root'),
                                ('  physics', self.other)])  # users by name
        by = {(r['Account'].strip(), r['User']): r for r in rows}
        # NormShares follow the configured shares: 3 and 1 at the top, 1 and 1 in physics.
        self.assertEqual(by[('physics', '')]['RawShares'], '3')
        self.assertEqual(by[('physics', '')]['NormShares'], '0.750000')
        self.assertEqual(by[('chem', '')]['NormShares'], '0.250000')
        self.assertEqual(by[('physics', 'root')]['NormShares'], '0.500000')
        self.assertEqual(by[('root', '')]['RawShares'], '')
        # Usage: root about 2 CPUs x 3 s; the user with more usage has the lower FairShare.
        mine, theirs = by[('physics', 'root')], by[('physics', self.other)]
        self.assertGreaterEqual(int(mine['RawUsage']), 5)
        self.assertGreater(int(mine['RawUsage']), int(theirs['RawUsage']))
        self.assertLess(float(mine['FairShare']), float(theirs['FairShare']))
        # Fair Tree: chem (no usage) ranks first, so root's chem association has FairShare 1.
        self.assertEqual(by[('chem', 'root')]['FairShare'], '1.000000')
        self.assertEqual(by[('chem', 'root')]['LevelFS'], 'inf')
        self.assertEqual(by[('physics', '')]['FairShare'], '')  # accounts: none under Fair Tree
        total = int(by[('root', '')]['RawUsage'])
        self.assertGreaterEqual(total, int(mine['RawUsage']) + int(theirs['RawUsage']) - 1)

    def test_endpoint_matches_sshare(self):
        status, body = self.c.api('GET', '/v1/fairshare')
        self.assertEqual(status, 200, body)
        self.assertEqual(body['algorithm'], 'fair_tree')
        users = {(r['account'], r.get('user')): r for r in body['rows'] if r.get('user')}
        rows = self.rows('-a', '-U', '-o', 'Account,User,FairShare')
        for r in rows:
            self.assertAlmostEqual(float(r['FairShare']),
                                   users[(r['Account'], r['User'])]['fairshare'], places=6)

    def test_default_shows_the_callers_rows_and_every_account(self):
        lines = self.sshare('-n', '-P', '-o', 'Account,User', user=self.other).splitlines()
        self.assertEqual(lines, ['root|', ' chem|', ' physics|', f'  physics|{self.other}'])
        # -U: users only, without the tree's indentation (no parent printed).
        self.assertEqual(self.sshare('-n', '-P', '-U', '-o', 'Account,User').splitlines(),
                         ['chem|root', 'physics|root'])

    def test_table_layout_and_slurm_name(self):
        link = os.path.join(self.c.dir, 'sshare')
        if not os.path.exists(link):
            os.symlink(os.path.abspath(BERTH), link)
        p = subprocess.run([link, '-A', 'chem'], env=self.c.env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], 'Account                    User  RawShares  NormShares    '
                                   'RawUsage  EffectvUsage  FairShare ')
        self.assertEqual(lines[2], 'chem                                     1    0.250000    '
                                   '       0      0.000000            ')
        self.assertEqual(lines[3], ' chem                      root          1    1.000000    '
                                   '       0      0.000000   1.000000 ')

    def test_bad_field_is_an_error(self):
        p = self.c.cli('sshare', '-o', 'Account,Nope', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'sshare: error: Invalid field requested: "Nope"\n')


if __name__ == '__main__':
    unittest.main()

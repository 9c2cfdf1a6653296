"""Integration tests of `berth scontrol` against real daemons: show job|node|partition|config,
hostnames/hostlist, hold/uhold/release/requeue, update of jobs and nodes, and scontrol's errors
and exit codes.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_scontrol (from this folder).
"""
import os
import time
import unittest

from harness import Cluster


def script(body):
    return '#!/bin/sh\n' + body + '\n'


def fields(one_line):
    """Key=Value pairs of one `scontrol -o` record (values without blanks here)."""
    out = {}
    for tok in one_line.split():
        if '=' in tok:
            k, v = tok.split('=', 1)
            out[k] = v
    return out


class ScontrolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster().start()
        cls.work = os.path.join(cls.c.dir, 'work')
        os.makedirs(cls.work, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def spec(self, body='true', **extra):
        s = {'name': 'sc', 'script': script(body), 'work_dir': self.work, 'time_limit': 600}
        s.update(extra)
        return s

    def scontrol(self, *args, check=True):
        return self.c.cli('scontrol', *args, check=check)

    def show(self, job_id):
        p = self.scontrol('-o', 'show', 'job', str(job_id))
        self.assertEqual(p.stdout.count('\n'), 1, p.stdout)
        return fields(p.stdout)

    def test_show_held_job_multi_line_and_one_line(self):
        job = self.c.submit(self.spec(hold=True, ntasks=2, mem_per_cpu=100,
                                      stdout='o-%j.txt', comment='note'))
        p = self.scontrol('show', 'job', str(job))
        lines = p.stdout.split('\n')
        self.assertEqual(lines[0], f'JobId={job} JobName=sc')
        self.assertIn('   JobState=PENDING Reason=JobHeldUser Dependency=(null)', lines)
        self.assertIn('   NumNodes=1 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*', lines)
        self.assertIn('   TRES=cpu=2,mem=200M,node=1,billing=2', lines)
        self.assertIn(f'   StdOut={self.work}/o-{job}.txt', lines)
        self.assertIn('   Comment=note ', lines)
        self.assertTrue(p.stdout.endswith('\n   \n\n'), repr(p.stdout[-20:]))
        f = self.show(job)
        self.assertEqual(f['JobId'], str(job))
        self.assertEqual(f['Priority'], '0')
        self.assertEqual(f['MinMemoryCPU'], '100M')
        self.assertEqual(f['TimeLimit'], '00:10:00')
        self.assertEqual(f['WorkDir'], self.work)
        self.assertEqual(f['StdErr'], f'{self.work}/o-{job}.txt')

    def test_unknown_and_bad_job_ids(self):
        p = self.scontrol('show', 'job', '999999', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'slurm_load_jobs error: Invalid job id specified\n')
        p = self.scontrol('show', 'job', 'abc', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'scontrol_print_job error: Invalid job id specified\n')
        p = self.scontrol('hold', '999999', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'Invalid job id specified for job 999999\n')
        p = self.scontrol('bogus', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'invalid keyword: bogus\n')
        p = self.scontrol('show', 'widgets', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('invalid entity:widgets for keyword:show', p.stderr)

    def test_hold_release_uhold_and_update(self):
        job = self.c.submit(self.spec(hold=True))
        self.scontrol('release', str(job))
        self.c.wait_state(job, ['RUNNING', 'COMPLETED'])
        job = self.c.submit(self.spec(hold=True, begin=int(time.time()) + 3600))
        self.scontrol('release', str(job))
        self.assertNotEqual(self.show(job)['Reason'], 'JobHeldUser')
        self.scontrol('hold', str(job))
        self.assertEqual(self.show(job)['Reason'], 'JobHeldAdmin')  # root's hold
        self.scontrol('release', str(job))
        self.scontrol('uhold', f'JobId={job}')
        self.assertEqual(self.show(job)['Reason'], 'JobHeldUser')
        self.scontrol('update', f'JobId={job}', 'TimeLimit=+5', 'Nice=7', 'Name=later')
        f = self.show(job)
        self.assertEqual(f['TimeLimit'], '00:15:00')
        self.assertEqual(f['Nice'], '7')
        self.assertEqual(f['JobName'], 'later')
        self.scontrol('update', f'jobid={job}', 'timelimit=2:00')
        self.assertEqual(self.show(job)['TimeLimit'], '00:02:00')
        p = self.scontrol('update', f'JobId={job}', 'Shared=yes', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'Update of this parameter is not supported: Shared=yes\n')
        p = self.scontrol('update', 'TimeLimit=5', check=False)
        self.assertEqual((p.returncode, p.stderr), (1, 'No job identification provided\n'))

    def test_array_tasks(self):
        job = self.c.submit(self.spec(hold=True, array='1-5%2'))
        f = self.show(job)
        self.assertEqual(f['ArrayJobId'], str(job))
        self.assertEqual(f['ArrayTaskId'], '1-5%2')
        self.assertEqual(f['ArrayTaskThrottle'], '2')
        f = self.show(f'{job}_3')
        self.assertEqual(f['ArrayTaskId'], '3')
        p = self.scontrol('show', 'job', f'{job}_9', check=False)
        self.assertEqual(p.returncode, 1)

    def test_requeue_running_job(self):
        job = self.c.submit(self.spec(body='sleep 30'))
        self.c.wait_state(job, 'RUNNING')
        f = self.show(job)
        self.assertEqual(f['NodeList'], 'node1')
        self.assertEqual(f['BatchHost'], 'node1')
        self.assertEqual(f['JobState'], 'RUNNING')
        self.scontrol('requeue', str(job))
        self.c.wait(lambda: self.c.job(job)['restart_count'] == 1, 'the requeue')
        self.c.api('DELETE', f'/v1/jobs/{job}')

    def test_nodes_and_partitions(self):
        p = self.scontrol('show', 'node', 'node1')
        self.assertTrue(p.stdout.startswith('NodeName=node1 CoresPerSocket='), p.stdout)
        self.assertIn('   Gres=gpu:test:4\n', p.stdout)
        p = self.scontrol('show', 'node', 'nope', check=False)
        self.assertEqual((p.returncode, p.stdout), (1, 'Node nope not found\n'))
        self.scontrol('update', 'NodeName=node1', 'State=DRAIN', 'Reason=maintenance')
        f = fields(self.scontrol('-o', 'show', 'node', 'node1').stdout)
        self.assertIn('DRAIN', f['State'])
        self.assertIn('Reason=maintenance', self.scontrol('show', 'node').stdout)
        p = self.scontrol('update', 'NodeName=node1', 'State=DOWN', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'You must specify a reason when DOWNING or DRAINING a node. '
                                   'Request denied\n')
        self.scontrol('update', 'NodeName=node1', 'State=RESUME')
        f = fields(self.scontrol('-o', 'show', 'node', 'node1').stdout)
        self.assertNotIn('DRAIN', f['State'])
        p = self.scontrol('show', 'partition')
        self.assertTrue(p.stdout.startswith('PartitionName='), p.stdout)
        self.assertIn(' Default=YES ', p.stdout)
        p = self.scontrol('show', 'partition', 'nope', check=False)
        self.assertEqual((p.returncode, p.stdout), (1, 'Partition nope not found\n'))

    def test_config_and_hostlists(self):
        p = self.scontrol('show', 'config')
        self.assertTrue(p.stdout.startswith('Configuration data as of '), p.stdout)
        self.assertRegex(p.stdout, r'\nClusterName +=')
        p = self.scontrol('show', 'hostnames', 'gpu[01-03],cpu7')
        self.assertEqual(p.stdout, 'gpu01\ngpu02\ngpu03\ncpu7\n')
        p = self.scontrol('show', 'hostlist', 'n1,n2,n3,n7')
        self.assertEqual(p.stdout, 'n[1-3,7]\n')


if __name__ == '__main__':
    unittest.main()


class DefaultAccountTest(unittest.TestCase):
    """A job that names no account runs in its user's default account (the association's
    DefaultAccount, as sacctmgr keeps it in Slurm), and squeue and scontrol show that account."""

    CONF = ('NodeName=node1 CPUs=2 RealMemory=2000\n'
            'PartitionName=main Nodes=node1 Default=YES\n'
            'Account=physics\n'
            'Account=chem\n'
            'User=root Account=chem,physics DefaultAccount=physics\n')

    def setUp(self):
        self.c = Cluster(gpus=0)
        path = os.path.join(self.c.dir, 'cluster.conf')
        with open(path, 'w') as f:
            f.write(self.CONF)
        self.c.controller_args += ['--config', path]
        self.c.start()
        self.addCleanup(lambda: self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1'))

    def test_the_users_default_account_is_shown(self):
        work = os.path.join(self.c.dir, 'work')
        os.makedirs(work)
        base = {'name': 'acct', 'script': script('true'), 'work_dir': work, 'time_limit': 60,
                'hold': True}
        plain = self.c.submit(dict(base))
        named = self.c.submit(dict(base, account='chem'))
        p = self.c.cli('scontrol', '-o', 'show', 'job', str(plain))
        self.assertEqual(fields(p.stdout)['Account'], 'physics', p.stdout)
        p = self.c.cli('scontrol', '-o', 'show', 'job', str(named))
        self.assertEqual(fields(p.stdout)['Account'], 'chem', p.stdout)
        p = self.c.cli('squeue', '-h', '-o', '%i %a', '-j', f'{plain},{named}')
        self.assertEqual(sorted(p.stdout.splitlines()),
                         sorted([f'{plain} physics', f'{named} chem']))

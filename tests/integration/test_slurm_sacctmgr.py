"""Integration test of sacctmgr against real daemons (docs/slurm.md "sacctmgr"): accounts, users
and QoS added, shown, changed and deleted live; changes refused to a user who is not an operator;
limits set by sacctmgr shown as squeue's pending reasons and lifted when modified; changes kept
across a controller kill -9; the configuration file seeding the database on the first start and
a later difference reported, not applied.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_sacctmgr (from this folder).
Needs root (a second user is refused changes); skipped otherwise.
"""
import os
import subprocess
import unittest

from harness import BERTH, Cluster, make_user, remove_user

ROOT = os.geteuid() == 0

CONF = ('NodeName=node1 CPUs=4 RealMemory=4000\n'
        'PartitionName=main Nodes=node1 Default=YES\n'
        'QOS=high Priority=10\n'
        'Account=physics Fairshare=2\n'
        'User=root Account=physics\n'
        'User={other} Account=physics\n')


def start_cluster(conf):
    c = Cluster(gpus=0)
    try:
        path = os.path.join(c.dir, 'cluster.conf')
        with open(path, 'w') as f:
            f.write(conf)
        c.controller_args += ['--config', path]
        c.start()
        c.work = os.path.join(c.dir, 'work')
        os.makedirs(c.work)
        os.chmod(c.work, 0o777)
    except BaseException:
        c.stop()
        raise
    return c


class SacctmgrBase(unittest.TestCase):
    def sacctmgr(self, *args, user=None, check=True, stdin=None):
        if stdin is None:
            return self.c.cli('sacctmgr', *args, user=user, check=check)
        return subprocess.run([BERTH, 'sacctmgr', *args], env=self.c.env, input=stdin,
                              capture_output=True, text=True, timeout=60)

    def parsable(self, *args):
        return self.sacctmgr('-n', '-P', *args).stdout.splitlines()

    def sbatch(self, *args):
        p = self.c.cli('sbatch', f'--chdir={self.c.work}', '-o', '/dev/null', *args,
                       '--wrap', 'sleep 300')
        return int(p.stdout.split()[-1])

    def reason(self, jid):
        return self.c.cli('squeue', '-h', '-j', str(jid), '-o', '%T %r').stdout.strip()


@unittest.skipUnless(ROOT, 'needs root to run commands as a second user')
class SacctmgrTest(SacctmgrBase):
    @classmethod
    def setUpClass(cls):
        cls.other = f'sam{os.getpid() % 10000}'
        make_user(cls.other)
        try:
            cls.c = start_cluster(CONF.format(other=cls.other))
        except BaseException:
            remove_user(cls.other)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        remove_user(cls.other)

    def tearDown(self):
        self.c.end_jobs()

    def test_add_account_user_and_qos_then_show_them(self):
        p = self.sacctmgr('-i', 'add', 'account', 'Chem', 'parent=physics', 'GrpJobs=4',
                          'Description=chemistry')
        self.assertEqual(p.stdout,
                         ' Adding Account(s)\n  chem\n Settings\n'
                         '  Description     = chemistry\n'
                         '  Organization    = Parent/Account Name\n'
                         ' Associations\n  A = chem       C = berth     \n'
                         ' Settings\n  GrpJobs       = 4\n  Parent        = physics\n')
        p = self.sacctmgr('-i', 'add', 'qos', 'gold', 'Priority=5', 'MaxJobsPU=2',
                          'MaxWall=1:00:00')
        self.assertTrue(p.stdout.startswith(' Adding QOS(s)\n  gold\n Settings\n'), p.stdout)
        p = self.sacctmgr('-i', 'add', 'user', 'carol', 'account=chem', 'MaxJobs=3')
        self.assertEqual(p.stdout, ' Adding User(s)\n  carol\n Associations =\n'
                                   '  U = carol     A = chem       C = berth     \n'
                                   ' Non Default Settings\n  MaxJobs       = 3\n')
        self.assertIn('chem|chem|physics|physics|4',
                      self.parsable('show', 'account', 'chem',
                                    'format=Account,Descr,Org,ParentName,GrpJobs'))
        self.assertEqual(self.parsable('show', 'qos', 'gold', 'format=name,prio,maxjobspu,maxwall'),
                         ['gold|5|2|01:00:00'])
        self.assertEqual(self.parsable('show', 'user', 'carol'), ['carol|chem|None'])
        assoc = self.parsable('show', 'assoc', 'account=chem', 'format=account,user,maxjobs')
        self.assertEqual(assoc, ['chem||', 'chem|carol|3'])
        # The scheduler's own tables follow: sshare shows the new account and its user.
        rows = self.c.cli('sshare', '-n', '-P', '-a', '-o', 'Account,User,RawShares').stdout
        self.assertIn('  chem||1', rows.splitlines())
        self.assertIn('   chem|carol|1', rows.splitlines())
        # The table form: Slurm's headers, widths and trailing blank.
        lines = self.sacctmgr('show', 'qos', 'gold', 'format=Name,Priority').stdout.splitlines()
        self.assertEqual(lines, ['      Name   Priority ', '---------- ---------- ',
                                 '      gold          5 '])
        # Settings apply in their order, a key given twice included.
        self.sacctmgr('-i', 'modify', 'qos', 'gold', 'set', 'Preempt=normal', 'Preempt+=high',
                      'Preempt-=normal')
        self.assertEqual(self.parsable('show', 'qos', 'gold', 'format=name,preempt'),
                         ['gold|high'])
        # Adding what exists adds nothing, and says so.
        p = self.sacctmgr('-i', 'add', 'account', 'chem', check=False)
        self.assertEqual((p.returncode, p.stdout), (1, ' Nothing new added.\n'))

    def test_a_user_sees_but_is_refused_changes(self):
        p = self.sacctmgr('-n', '-P', 'show', 'account', 'physics', user=self.other)
        self.assertEqual(p.stdout.splitlines(), ['physics|physics|physics'])
        p = self.sacctmgr('-i', 'add', 'account', 'mine', user=self.other, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Access/permission denied', p.stderr)
        status, _ = self.c.api('GET', '/v1/associations')
        self.assertEqual(status, 200)
        self.assertEqual(self.parsable('show', 'account', 'mine'), [])

    def test_limits_become_pending_reasons_and_lift_when_modified(self):
        self.sacctmgr('-i', 'add', 'qos', 'lim', 'MaxJobsPerUser=1')
        first = self.sbatch('--qos=lim')
        second = self.sbatch('--qos=lim')
        self.c.wait_state(first, 'RUNNING', 30)
        self.c.wait(lambda: self.reason(second) == 'PENDING QOSMaxJobsPerUserLimit',
                    'the QoS limit as the reason', 30)
        self.sacctmgr('-i', 'modify', 'qos', 'where', 'name=lim', 'set', 'MaxJobsPerUser=2')
        self.c.wait_state(second, 'RUNNING', 30)
        # An account's GrpJobs, then an association's MaxJobs.
        self.sacctmgr('-i', 'modify', 'account', 'physics', 'set', 'GrpJobs=2')
        third = self.sbatch()
        self.c.wait(lambda: self.reason(third) == 'PENDING AssocGrpJobsLimit',
                    'the account limit as the reason', 30)
        self.sacctmgr('-i', 'modify', 'user', 'root', 'set', 'MaxJobs=2')
        self.sacctmgr('-i', 'modify', 'account', 'physics', 'set', 'GrpJobs=-1')
        self.c.wait(lambda: self.reason(third) == 'PENDING AssocMaxJobsLimit',
                    'the association limit as the reason', 30)
        self.sacctmgr('-i', 'modify', 'user', 'root', 'set', 'MaxJobs=-1')
        self.c.wait_state(third, 'RUNNING', 30)
        # A QoS MaxWall.
        self.sacctmgr('-i', 'add', 'qos', 'short', 'MaxWall=10')
        long_job = self.sbatch('--qos=short', '--time=20')
        self.c.wait(lambda: self.reason(long_job) == 'PENDING QOSMaxWallDurationPerJobLimit',
                    'the wall limit as the reason', 30)
        # A QoS that jobs use is not deleted.
        p = self.sacctmgr('-i', 'delete', 'qos', 'short', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Job(s) active, cancel job(s) before remove', p.stderr)

    def test_bad_requests_are_refused_whole(self):
        status, body = self.c.api('POST', '/v1/associations', {'action': 'frob', 'entity': 'qos'})
        self.assertEqual(status, 400, body)
        self.assertIn('"action": expected add, modify or delete', body['error']['message'])
        status, body = self.c.api('POST', '/v1/associations',
                                  {'action': 'modify', 'entity': 'qos', 'where': {'Name': 'high'},
                                   'set': {'Priority': '5', 'MaxWall': 'soon'}})
        self.assertEqual(status, 400, body)
        self.assertEqual(self.parsable('show', 'qos', 'high', 'format=name,priority'),
                         ['high|10'])
        # One account of the two does not exist: no association is made.
        p = self.sacctmgr('-i', 'add', 'user', 'gus', 'account=physics,nope', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, " Error with request: This account 'nope' doesn't exist.\n")
        self.assertEqual(self.parsable('show', 'user', 'gus'), [])
        p = self.sacctmgr('-i', 'modify', 'qos', 'nosuch', 'set', 'Priority=1', check=False)
        self.assertEqual((p.returncode, p.stdout), (1, ' Nothing modified\n'))

    def test_delete_account_with_users_is_refused(self):
        self.sacctmgr('-i', 'add', 'account', 'bio')
        self.sacctmgr('-i', 'add', 'user', 'dave', 'account=bio')
        p = self.sacctmgr('-i', 'delete', 'account', 'bio', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("Account 'bio' has users ('dave')", p.stderr)
        p = self.sacctmgr('-i', 'delete', 'user', 'dave')
        self.assertEqual(p.stdout, ' Deleting users...\n  dave\n')
        p = self.sacctmgr('-i', 'delete', 'account', 'bio')
        self.assertEqual(p.stdout, ' Deleting accounts...\n  bio\n')
        self.assertEqual(self.parsable('show', 'account', 'bio'), [])

    def test_without_immediate_it_asks_and_reads_the_answer(self):
        p = self.sacctmgr('add', 'account', 'geo', stdin='n\n')
        self.assertIn('Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ',
                      p.stdout)
        self.assertTrue(p.stdout.endswith(' Changes Discarded\n'), p.stdout)
        self.assertEqual(self.parsable('show', 'account', 'geo'), [])
        p = self.sacctmgr('add', 'account', 'geo', stdin='y\n')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith(' Adding Account(s)\n  geo\n'), p.stdout)
        self.assertEqual(len(self.parsable('show', 'account', 'geo')), 1)

    def test_new_qos_usable_by_sbatch_at_once_and_symlink_name(self):
        link = os.path.join(self.c.dir, 'sacctmgr')
        if not os.path.exists(link):
            os.symlink(os.path.abspath(BERTH), link)
        p = subprocess.run([link, '-i', 'add', 'qos', 'fresh'], env=self.c.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        jid = self.sbatch('--qos=fresh')
        qos = self.c.cli('squeue', '-h', '-j', str(jid), '-o', '%q').stdout.strip()
        self.assertEqual(qos, 'fresh')


@unittest.skipUnless(ROOT, 'needs root to run jobs')
class SacctmgrDurabilityTest(SacctmgrBase):
    def setUp(self):
        self.c = start_cluster(CONF.format(other='frank'))
        self.conf = os.path.join(self.c.dir, 'cluster.conf')

    def tearDown(self):
        self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def test_changes_survive_kill9_and_the_file_only_seeds(self):
        # Seeded from the file on the first start.
        self.assertEqual(self.parsable('show', 'qos', 'format=name,priority'),
                         ['normal|0', 'high|10'])
        self.sacctmgr('-i', 'add', 'account', 'chem', 'GrpTRES=cpu=2')
        self.sacctmgr('-i', 'modify', 'qos', 'high', 'set', 'Priority=20')
        self.sacctmgr('-i', 'add', 'user', 'erin', 'account=chem', 'adminlevel=operator')
        self.c.kill('controller')  # kill -9
        # The file changes meanwhile: the database wins, the difference is reported.
        with open(self.conf, 'a') as f:
            f.write('Account=astro\n')
        self.c.start_controller()
        self.assertEqual(self.parsable('show', 'account', 'chem', 'format=account,grptres'),
                         ['chem|cpu=2'])
        self.assertEqual(self.parsable('show', 'qos', 'high', 'format=name,priority'),
                         ['high|20'])
        self.assertEqual(self.parsable('show', 'user', 'erin'), ['erin|chem|Operator'])
        self.assertEqual(self.parsable('show', 'account', 'astro'), [])
        status, body = self.c.api('GET', '/v1/associations')
        self.assertEqual(status, 200)
        diffs = body['config_differences']
        self.assertIn("account 'astro' only in the configuration", diffs)
        self.assertIn("account 'chem' only in the database", diffs)
        self.assertIn("QoS 'high' differs between the configuration and the database", diffs)
        with open(os.path.join(self.c.dir, 'controller.log')) as f:
            log = f.read()
        self.assertIn("account 'astro' only in the configuration (the database's is used", log)
        # The limit from the database is in force after the restart.
        self.c.start_agent() if self.c.node_state('node1') in (None, 'DOWN') else None
        a = self.sbatch('--account=chem', '-c', '2')
        b = self.sbatch('--account=chem', '-c', '1')
        self.c.wait_state(a, 'RUNNING', 30)
        self.c.wait(lambda: self.reason(b) == 'PENDING AssocGrpCpuLimit',
                    'the account GrpTRES as the reason', 30)
        self.c.end_jobs()

    def test_a_file_the_database_cannot_follow_is_in_force_and_said_so(self):
        self.c.kill('controller')
        # A partition of the file now allows an account only the file has.
        with open(self.conf, 'a') as f:
            f.write('Account=astro\nPartitionName=p2 Nodes=node1 AllowAccounts=astro\n')
        self.c.start_controller()
        _, body = self.c.api('GET', '/v1/associations')
        self.assertTrue(any('were not applied, the file\'s are in force' in d
                            for d in body['config_differences']), body['config_differences'])
        self.assertEqual(len(self.parsable('show', 'account', 'astro')), 1)
        # A change is stored against what the store holds: the file's tables then become the
        # database's, and the next start has nothing it cannot apply.
        self.sacctmgr('-i', 'modify', 'account', 'astro', 'set', 'GrpJobs=3')
        self.c.kill('controller')
        self.c.start_controller()
        _, body = self.c.api('GET', '/v1/associations')
        self.assertEqual(body['config_differences'],
                         ["account 'astro' differs between the configuration and the database"])
        self.assertEqual(self.parsable('show', 'account', 'astro', 'format=account,grpjobs'),
                         ['astro|3'])


if __name__ == '__main__':
    unittest.main()

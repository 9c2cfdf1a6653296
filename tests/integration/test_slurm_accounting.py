"""Integration tests of issue 5's scancel, sacct, seff and srun against real daemons.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_accounting
The expected texts are Slurm 22.05's (checked against a real 22.05.8 where it could run here).
"""
import json
import os
import re
import signal
import subprocess
import time
import unittest

from harness import BERTH, Cluster, make_user, remove_user

ROOT = os.geteuid() == 0


def read_text(path):
    with open(path) as f:
        return f.read()


def script(body):
    return '#!/bin/sh\n' + body + '\n'


class SlurmCase(unittest.TestCase):
    """One cluster per class (node1: 2 CPUs as the host has them, 4 test GPUs)."""

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster().start()
        cls.work = os.path.join(cls.c.dir, 'work')
        os.makedirs(cls.work, exist_ok=True)
        os.chmod(cls.work, 0o777)
        # Slurm's names on PATH, as `cmake --install -DBERTH_SLURM_NAMES=ON` gives them.
        cls.bin = os.path.join(cls.c.dir, 'bin')
        os.makedirs(cls.bin, exist_ok=True)
        os.chmod(cls.bin, 0o755)
        for name in ('srun', 'scancel', 'sacct', 'seff', 'scontrol', 'squeue'):
            os.symlink(os.path.abspath(BERTH), os.path.join(cls.bin, name))

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def run_cmd(self, *args, input=None, user=None, timeout=60, env=None):
        cmd = [os.path.abspath(BERTH), *args]
        # srun's step counters go with the cluster.
        env = dict(self.c.env, TMPDIR=self.c.dir, **(env or {}))
        if user:
            cmd = ['runuser', '-u', user, '--', 'env', f'BERTH_SOCKET={self.c.sock}', *cmd]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=self.work, input=input)

    def spec(self, body, **extra):
        s = {'name': 'it', 'script': script(body), 'work_dir': self.work,
             'stdout': '%x-%j.out', 'time_limit': 120}
        s.update(extra)
        return s

    def end(self, *jids):
        """Cancels what is left of the jobs, so that the next test has the node."""
        self.c.api('POST', '/v1/jobs/cancel', {'ids': [str(j) for j in jids]})
        for j in jids:
            self.c.wait(lambda j=j: self.c.job(j)['state'] not in ('RUNNING', 'COMPLETING'),
                        f'job {j} to end', 30)

    def states_of_array(self, array_id):
        """task -> state of every task of an array (pending tasks still inside the master too)."""
        status, body = self.c.api('GET', f'/v1/jobs?all=1&array={array_id}')
        self.assertEqual(status, 200)
        out = {}
        for j in body['jobs']:
            task = j.get('array_task_id', -1)
            if task >= 0:
                out[task] = j['state']
                continue
            for part in j['request'].get('array', '').split('%')[0].split(','):
                if not part:
                    continue
                lo, _, hi = part.partition('-')
                for t in range(int(lo), int(hi or lo) + 1):
                    out[t] = j['state']
        return out


class ScancelTest(SlurmCase):
    def test_ids_unknown_ids_and_bad_ids(self):
        jid = self.c.submit(self.spec('sleep 300'))
        self.c.wait_state(jid, 'RUNNING', 30)
        p = self.run_cmd('scancel', str(jid))
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, '', ''))
        self.c.wait_state(jid, 'CANCELLED', 30)
        # As Slurm 22.05: a plain cancel of an unknown or ended job is silent and succeeds ...
        p = self.run_cmd('scancel', '999999', str(jid))
        self.assertEqual((p.returncode, p.stderr), (0, ''))
        # ... -v says why; a signal, a filter or -i make it an error (exit code 1).
        p = self.run_cmd('scancel', '-v', '999999')
        self.assertEqual(p.returncode, 0)
        self.assertEqual(p.stderr, 'scancel: Terminating job 999999\nscancel: error: Kill job '
                                   'error on job id 999999: Invalid job id specified\n')
        p = self.run_cmd('scancel', '-s', 'USR1', '999999')
        self.assertEqual((p.returncode, p.stderr), (1, 'scancel: error: Kill job error on job id '
                                                       '999999: Invalid job id specified\n'))
        p = self.run_cmd('scancel', 'abc')
        self.assertEqual((p.returncode, p.stderr), (1, 'scancel: error: Invalid job id abc\n'))
        p = self.run_cmd('scancel')
        self.assertEqual((p.returncode, p.stderr),
                         (1, 'scancel: error: No job identification provided\n'))
        p = self.run_cmd('scancel', '--bogus', '1')
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, "scancel: unrecognized option '--bogus'\n"
                                   'Try "scancel --help" for more information\n')

    def test_array_tasks_ranges_and_whole_arrays(self):
        a = self.c.submit(self.spec('true', array='1-5', hold=True))
        p = self.run_cmd('scancel', f'{a}_2')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.states_of_array(a), {1: 'PENDING', 2: 'CANCELLED', 3: 'PENDING',
                                                   4: 'PENDING', 5: 'PENDING'})
        p = self.run_cmd('scancel', f'{a}_[3-4]')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.states_of_array(a), {1: 'PENDING', 2: 'CANCELLED', 3: 'CANCELLED',
                                                   4: 'CANCELLED', 5: 'PENDING'})
        p = self.run_cmd('scancel', str(a))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(set(self.states_of_array(a).values()), {'CANCELLED'})

    def test_filters_combine_and_restrict_ids(self):
        fa1 = self.c.submit(self.spec('true', name='fa', hold=True))
        fa2 = self.c.submit(self.spec('true', name='fa', hold=True))
        fb = self.c.submit(self.spec('true', name='fb', hold=True))
        p = self.run_cmd('scancel', '-n', 'fb', '-t', 'RUNNING')  # fb is pending: nothing
        self.assertEqual((p.returncode, p.stderr), (0, ''))
        p = self.run_cmd('scancel', '-n', 'fb', str(fa1))  # ids and filters: both must match
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([self.c.job(j)['state'] for j in (fa1, fa2, fb)], ['PENDING'] * 3)
        p = self.run_cmd('scancel', '-v', '--name=fa', '--state=PD', '--user=root')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, f'scancel: Terminating job {fa1}\n'
                                   f'scancel: Terminating job {fa2}\n')
        self.assertEqual([self.c.job(j)['state'] for j in (fa1, fa2, fb)],
                         ['CANCELLED', 'CANCELLED', 'PENDING'])
        p = self.run_cmd('scancel', '-v', '-n', 'nothing-has-this-name')
        self.assertEqual(p.stderr, 'scancel: error: No active jobs match ALL job filters, '
                                   'including: job_name=nothing-has-this-name \n')
        self.end(fb)

    def test_signal_to_the_batch_script(self):
        jid = self.c.submit(self.spec(
            "trap 'echo got USR1; exit 0' USR1; echo ready; while true; do sleep 0.1; done"))
        out = os.path.join(self.work, f'it-{jid}.out')
        self.c.wait(lambda: os.path.exists(out) and 'ready' in read_text(out), 'the trap')
        p = self.run_cmd('scancel', '--batch', '--signal=USR1', str(jid))
        self.assertEqual((p.returncode, p.stderr), (0, ''))
        self.c.wait_state(jid, 'COMPLETED', 30)
        self.assertIn('got USR1', read_text(out))

    # Signals as Slurm 22.05's scancel and sbatch deliver them (their man pages): to the job's
    # steps by default, the batch shell with -b, every process with -f. The batch shells below
    # have no USR1 trap unless said: a USR1 that reached them would end the job FAILED.
    def step_job(self, batch_trap='', **extra):
        env = {'PATH': f'{self.bin}:/usr/local/bin:/usr/bin:/bin', 'TMPDIR': self.c.dir}
        body = (batch_trap +
                "srun sh -c 'trap \"echo step got USR1; exit 0\" USR1; echo ready; "
                "while true; do sleep 0.1; done'\n"
                "echo step over rc=$?\n")
        jid = self.c.submit(self.spec(body, environment=env, **extra))
        out = os.path.join(self.work, f'it-{jid}.out')
        self.c.wait(lambda: os.path.exists(out) and 'ready' in read_text(out), 'the step')
        return jid, out

    def test_a_signal_reaches_the_jobs_steps_not_its_batch_shell(self):
        jid, out = self.step_job()
        p = self.run_cmd('scancel', '--signal=USR1', str(jid))
        self.assertEqual((p.returncode, p.stderr), (0, ''))
        self.assertEqual(self.c.wait_state(jid, ['COMPLETED', 'FAILED'], 30)['state'],
                         'COMPLETED', read_text(out))
        self.assertIn('step got USR1\nstep over rc=0\n', read_text(out))

    def test_full_reaches_the_batch_shell_and_the_steps(self):
        jid, out = self.step_job("trap 'echo batch got USR1' USR1\n")
        p = self.run_cmd('scancel', '--full', '--signal=USR1', str(jid))
        self.assertEqual((p.returncode, p.stderr), (0, ''))
        self.assertEqual(self.c.wait_state(jid, ['COMPLETED', 'FAILED'], 30)['state'],
                         'COMPLETED', read_text(out))
        self.assertIn('step got USR1', read_text(out))
        self.assertIn('batch got USR1', read_text(out))

    def test_a_signal_to_a_job_without_steps_reaches_no_process(self):
        jid = self.c.submit(self.spec('echo ready; sleep 2; echo survived'))
        out = os.path.join(self.work, f'it-{jid}.out')
        self.c.wait(lambda: os.path.exists(out) and 'ready' in read_text(out), 'the job')
        p = self.run_cmd('scancel', '--signal=USR1', str(jid))
        self.assertEqual((p.returncode, p.stderr), (0, ''))
        self.assertEqual(self.c.wait_state(jid, ['COMPLETED', 'FAILED'], 30)['state'],
                         'COMPLETED')
        self.assertIn('survived', read_text(out))

    def test_sbatch_signal_warns_the_steps_before_the_time_limit(self):
        # --signal=USR1@55 with a 60 s limit, as PyTorch Lightning asks for it: the step's
        # handler runs about 5 s in and the job goes on to complete.
        jid, out = self.step_job(time_limit=60, signal='USR1@55')
        self.assertEqual(self.c.wait_state(jid, ['COMPLETED', 'FAILED', 'TIMEOUT'], 40)['state'],
                         'COMPLETED', read_text(out))
        self.assertIn('step got USR1\nstep over rc=0\n', read_text(out))

    def test_signal_to_a_pending_job_is_refused_as_slurm_does(self):
        jid = self.c.submit(self.spec('true', hold=True))
        p = self.run_cmd('scancel', '-s', 'USR1', str(jid))
        self.assertEqual(p.returncode, 228)  # ESLURM_TRANSITION_STATE_NO_UPDATE & 0xff
        self.assertEqual(p.stderr, f'scancel: error: Kill job error on job id {jid}: '
                                   'Job can not be altered now, try again later\n')
        self.end(jid)

    def test_a_filtered_cancel_is_one_request(self):
        # POST /v1/jobs/cancel with scancel's command line: the controller selects the jobs as
        # POST /v1/views/scancel does and cancels them; the answer has the selection's lines, its
        # targets with -v, and only the failures.
        a1, a2 = (self.c.submit(self.spec('true', name='sel-a', hold=True)) for _ in range(2))
        b = self.c.submit(self.spec('true', name='sel-b', hold=True))
        status, body = self.c.api('POST', '/v1/jobs/cancel',
                                  {'scancel': {'args': ['-v', '-n', 'sel-a'], 'env': {}}})
        self.assertEqual(status, 200, body)
        self.assertEqual(body, {'errors': [], 'exit_code': 0, 'targets': [str(a1), str(a2)],
                                'results': []})
        self.assertEqual([self.c.job(j)['state'] for j in (a1, a2, b)],
                         ['CANCELLED', 'CANCELLED', 'PENDING'])
        # An unknown id is the selection's error; a signal to a pending job fails in the results.
        status, body = self.c.api('POST', '/v1/jobs/cancel', {'scancel': {
            'args': ['-s', 'USR1', '-n', 'sel-b', str(b), '999999'], 'env': {}}})
        self.assertEqual(status, 200, body)
        self.assertEqual((body['exit_code'], body['errors']),
                         (1, ['scancel: error: Kill job error on job id 999999: '
                              'Invalid job id specified']))
        self.assertNotIn('targets', body)
        self.assertEqual([(r['id'], r['code']) for r in body['results']], [(str(b), 409)])
        # Ids alone and -i select nothing here (scancel sends the ids, or asks first).
        for args in (['12'], ['-i', '-n', 'sel-b'], [7]):
            status, body = self.c.api('POST', '/v1/jobs/cancel', {'scancel': {'args': args}})
            self.assertEqual(status, 400, (args, body))
        self.assertEqual(self.c.job(b)['state'], 'PENDING')
        # -u as the caller resolved it, and the SCANCEL_* variables.
        status, body = self.c.api('POST', '/v1/jobs/cancel', {'scancel': {
            'args': ['-u', 'root'], 'uid': os.getuid(), 'env': {'SCANCEL_NAME': 'sel-b'}}})
        self.assertEqual((status, body['results'], body['exit_code']), (200, [], 0))
        self.assertEqual(self.c.job(b)['state'], 'CANCELLED')

    def test_interactive_asks_for_each_job(self):
        jid = self.c.submit(self.spec('true', name='ask', hold=True))
        p = self.run_cmd('scancel', '-i', str(jid), input='n\n')
        self.assertEqual(p.returncode, 0)
        self.assertEqual(p.stdout, f'Cancel job_id={jid} name=ask partition=main [y/n]? ')
        self.assertEqual(self.c.job(jid)['state'], 'PENDING')
        p = self.run_cmd('scancel', '-i', str(jid), input='maybe\ny\n')
        self.assertEqual(p.stdout.count('[y/n]?'), 2)
        self.assertEqual(self.c.job(jid)['state'], 'CANCELLED')

    @unittest.skipUnless(ROOT, 'needs root to create users')
    def test_only_ones_own_jobs(self):
        alice, bob = f'sca{os.getpid() % 10000}a', f'sca{os.getpid() % 10000}b'
        make_user(alice)
        make_user(bob)
        try:
            p = self.c.cli('submit', '--hold', '--wrap', 'true', user=alice)
            jid = int(p.stdout.split()[-1])
            p = self.run_cmd('scancel', str(jid), user=bob)
            self.assertEqual(p.returncode, 210)  # ESLURM_ACCESS_DENIED (2002) & 0xff
            self.assertEqual(p.stderr, f'scancel: error: Kill job error on job id {jid}: '
                                       'Access/permission denied\n')
            self.assertEqual(self.c.job(jid)['state'], 'PENDING')
            # Selected by a filter, her job is refused him the same way.
            p = self.run_cmd('scancel', '-u', alice, user=bob)
            self.assertEqual(p.returncode, 210)
            self.assertEqual(p.stderr, f'scancel: error: Kill job error on job id {jid}: '
                                       'Access/permission denied\n')
            self.assertEqual(self.c.job(jid)['state'], 'PENDING')
            p = self.run_cmd('scancel', '--me', '-v', user=alice)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(self.c.job(jid)['state'], 'CANCELLED')
            # sacct says whose cancel it was, as slurmdbd records it; the batch row does not.
            uid = subprocess.run(['id', '-u', alice], capture_output=True, text=True,
                                 check=True).stdout.strip()
            p = self.run_cmd('sacct', '-j', str(jid), '-X', '-n', '-P', '-o', 'State', user=bob)
            self.assertEqual(p.stdout, 'CANCELLED by %s\n' % uid)
            # A running job too, cancelled by an operator (root here).
            p = self.run_cmd('sbatch', '--parsable', '-o', '/dev/null', '--wrap', 'sleep 60',
                             user=alice)
            self.assertEqual(p.returncode, 0, p.stderr)
            running = int(p.stdout.strip())
            self.c.wait_state(running, 'RUNNING', 30)
            self.assertEqual(self.run_cmd('scancel', str(running)).returncode, 0)
            self.c.wait_state(running, 'CANCELLED', 30)
            p = self.run_cmd('sacct', '-j', str(running), '-X', '-n', '-P', '-o', 'State')
            self.assertEqual(p.stdout, 'CANCELLED by %d\n' % os.getuid())
        finally:
            remove_user(alice)
            remove_user(bob)


class SacctSeffTest(SlurmCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        c = cls.c
        work = cls.work
        cls.ok = c.submit({'name': 'okjob', 'script': script('echo hi'), 'work_dir': work,
                           'time_limit': 3600, 'mem_per_node': 4096})
        c.wait_state(cls.ok, 'COMPLETED', 30)
        cls.bad = c.submit({'name': 'badjob', 'script': script('exit 3'), 'work_dir': work,
                            'time_limit': 60})
        c.wait_state(cls.bad, 'FAILED', 30)
        # A job that asked for 4G and used a few tens of MB.
        cls.small = c.submit({
            'name': 'small', 'work_dir': work, 'time_limit': 3600, 'mem_per_node': 4096,
            'script': script("python3 -c 'x = bytearray(30 << 20); import time; "
                             "time.sleep(1.5)'")})
        c.wait_state(cls.small, 'COMPLETED', 60)

    def test_parsable_fields_and_batch_steps(self):
        p = self.run_cmd('sacct', '-j', f'{self.ok},{self.bad}', '-P',
                         '-o', 'JobID,JobName,State,ExitCode,NNodes,NodeList,ReqMem')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout,
                         'JobID|JobName|State|ExitCode|NNodes|NodeList|ReqMem\n'
                         f'{self.ok}|okjob|COMPLETED|0:0|1|node1|4G\n'
                         f'{self.ok}.batch|batch|COMPLETED|0:0|1|node1|4G\n'
                         f'{self.bad}|badjob|FAILED|3:0|1|node1|{self.req_mem(self.bad)}\n'
                         f'{self.bad}.batch|batch|FAILED|3:0|1|node1|'
                         f'{self.req_mem(self.bad)}\n')

    def req_mem(self, jid):
        p = self.run_cmd('sacct', '-j', str(jid), '-X', '-n', '-P', '-o', 'ReqMem')
        return p.stdout.strip()

    def test_default_layout_allocations_only(self):
        p = self.run_cmd('sacct', '-X', '-j', str(self.bad))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(
            p.stdout,
            'JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n'
            '------------ ---------- ---------- ---------- ---------- ---------- -------- \n'
            f'{self.bad:<12}     badjob       main                     1     FAILED      3:0 \n')

    def test_format_widths_noheader_and_default_window(self):
        p = self.run_cmd('sacct', '--format=JobID%-8,JobName%4,Elapsed,State', '-j', str(self.ok))
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], 'JobID    JobN    Elapsed      State ')
        self.assertEqual(lines[1], '-------- ---- ---------- ---------- ')
        self.assertRegex(lines[2], rf'^{self.ok} +okj\+   00:00:0\d  COMPLETED $')
        # Without -j: the jobs since midnight, all users for root.
        p = self.run_cmd('sacct', '-n', '-X', '-P', '-o', 'JobID')
        self.assertEqual(p.returncode, 0, p.stderr)
        for jid in (self.ok, self.bad, self.small):
            self.assertIn(str(jid), p.stdout.split())
        p = self.run_cmd('sacct', '-o', 'bogus')
        self.assertEqual((p.returncode, p.stderr),
                         (1, 'sacct: error: Invalid field requested: "bogus"\n'))

    def test_states_filter_and_json(self):
        p = self.run_cmd('sacct', '-X', '-n', '-P', '-o', 'JobID', '-s', 'F',
                         '-S', 'now-1hour')
        self.assertEqual(p.stdout.split(), [str(self.bad)])
        p = self.run_cmd('sacct', '-j', str(self.bad), '--json')
        job = json.loads(p.stdout)['jobs'][0]
        self.assertEqual(job['job_id'], self.bad)
        self.assertEqual(job['state']['current'], 'FAILED')
        self.assertEqual(job['exit_code']['return_code'], 3)
        self.assertEqual(job['steps'][0]['step']['id'], f'{self.bad}.batch')

    def test_the_report_made_by_the_controller_is_the_one_made_here(self):
        # sacct asks the controller for its report (POST /v1/views/sacct); a caller in another
        # time zone makes it itself from GET /v1/accounting/jobs. TZ=:/etc/localtime is the
        # system's zone under another name: the second path, with the same local times.
        if 'TZ' in os.environ:
            self.skipTest('TZ is set: no other name for the same zone is known')
        ok, bad, small = str(self.ok), str(self.bad), str(self.small)
        cases = [[], ['-X'], ['-j', ok], ['-j', f'{ok},{bad}', '-P'], ['-j', f'{bad}.batch'],
                 ['-j', small, '-l'], ['-s', 'F', '-S', 'now-1hour', '-X', '-n', '-P'],
                 ['-a', '-X', '-o', 'JobID,User,State,Submit,Start,End,Elapsed'],
                 ['-u', 'nobody'], ['-u', 'root', '-S', 'today', '-X'],
                 ['-p', '-o', 'jobid,jobname%30,state,reqmem,maxrss,totalcpu,nodelist'],
                 ['-j', bad, '--json'], ['-N', 'node1', '-X', '-n'], ['--name', 'okjob,small'],
                 ['-E', 'now', '-S', '2020-01-01', '-X', '-n', '-P', '-o', 'JobID'],
                 ['-r', 'main', '-A', 'nobody'], ['-j', '999999']]
        for args in cases:
            for extra in ({}, {'SACCT_FORMAT': 'JobID%-10,State,ExitCode'}):
                with self.subTest(args=args, env=extra):
                    here = self.run_cmd('sacct', *args, env=dict(extra, TZ=':/etc/localtime'))
                    there = self.run_cmd('sacct', *args, env=extra)
                    self.assertEqual(there.returncode, 0, there.stderr)
                    self.assertEqual((there.stdout, there.stderr), (here.stdout, here.stderr))
        # The controller made it: its answer is sacct's output.
        args = ['-j', f'{ok},{bad}', '-X', '-P', '-o', 'JobID,JobName,State,ExitCode']
        status, body = self.c.api('POST', '/v1/views/sacct',
                                  {'args': args, 'uid': 0, 'user': 'root', 'tz': ''})
        self.assertEqual(status, 200)
        self.assertEqual(body['raw'], f'JobID|JobName|State|ExitCode\n{ok}|okjob|COMPLETED|0:0\n'
                                      f'{bad}|badjob|FAILED|3:0\n')
        self.assertEqual(body['raw'], self.run_cmd('sacct', *args).stdout)
        # Another zone is refused (the caller then makes its report), and so is a bad request.
        status, _ = self.c.api('POST', '/v1/views/sacct',
                               {'args': [], 'uid': 0, 'tz': 'Asia/Tokyo'})
        self.assertEqual(status, 409)
        status, body = self.c.api('POST', '/v1/views/sacct', {'args': [], 'tz': ''})
        self.assertEqual(status, 400)
        self.assertIn('uid', json.dumps(body))
        status, body = self.c.api('POST', '/v1/views/sacct', {'args': ['--help'], 'uid': 0,
                                                             'tz': ''})
        self.assertEqual(status, 400)

    def test_seff_suggests_less_memory(self):
        p = self.run_cmd('seff', str(self.small))
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[:5], [f'Job ID: {self.small}', 'Cluster: berth',
                                     'User/Group: root/root', 'State: COMPLETED (exit code 0)',
                                     'Cores: 1'])
        self.assertRegex(lines[5], r'^CPU Utilized: 00:00:0\d$')
        self.assertRegex(lines[7], r'^Job Wall-clock time: 00:00:0\d$')
        self.assertRegex(lines[8], r'^Memory Utilized: \d+\.\d\d MB$')
        self.assertRegex(lines[9], r'^Memory Efficiency: \d+\.\d\d% of 4\.00 GB$')
        self.assertRegex(p.stdout, r'Suggestion: memory: asked 4G, peaked at \d+M: '
                                   r'--mem=128M would do\n')
        self.assertRegex(p.stdout, r'Suggestion: time: asked 01:00:00, ran 00:00:0\d: '
                                   r'--time=00:05:00 would do\n')
        self.assertEqual(self.run_cmd('eff', str(self.small)).stdout, p.stdout)

    def test_seff_errors(self):
        p = self.run_cmd('seff', '999999')
        self.assertEqual((p.returncode, p.stderr), (2, 'Job not found.\n'))
        p = self.run_cmd('seff')
        self.assertEqual(p.returncode, 1)
        self.assertTrue(p.stdout.startswith('Usage: seff [Options] <Jobid>\n'))


class SrunTest(SlurmCase):
    def job_named(self, name):
        status, body = self.c.api('GET', '/v1/jobs?all=1')
        ids = [j['id'] for j in body['jobs'] if j['request'].get('name') == name]
        return ids[-1] if ids else None

    def test_outside_an_allocation_output_and_exit_code(self):
        p = self.run_cmd('srun', 'echo', 'hello')
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, 'hello\n', ''))
        p = self.run_cmd('srun', '-J', 'fails', 'sh', '-c', 'echo out; echo err >&2; exit 3')
        self.assertEqual(p.returncode, 3)
        self.assertEqual(p.stdout, 'out\n')
        self.assertEqual(p.stderr, 'err\nsrun: error: node1: task 0: Exited with exit code 3\n')
        self.assertEqual(self.c.job(self.job_named('fails'))['state'], 'FAILED')
        p = self.run_cmd('srun', '/no/such/program')
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, 'slurmstepd: error: execve(): /no/such/program: No such file '
                                   'or directory\nsrun: error: node1: task 0: Exited with exit '
                                   'code 2\n')

    def test_outside_an_allocation_tasks_and_labels(self):
        p = self.run_cmd('srun', '-n', '2', '-l', 'sh', '-c', 'echo $SLURM_PROCID of '
                         '$SLURM_STEP_NUM_TASKS step $SLURM_STEP_ID')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(p.stdout.splitlines()), ['0: 0 of 2 step 0', '1: 1 of 2 step 0'])

    def test_queued_until_resources_free(self):
        blocker = self.c.submit(self.spec('sleep 2', cpus_per_task=2))
        self.c.wait_state(blocker, 'RUNNING', 30)
        p = self.run_cmd('srun', '-J', 'waiter', 'true')
        self.assertEqual(p.returncode, 0, p.stderr)
        jid = self.job_named('waiter')
        self.assertEqual(p.stderr, f'srun: job {jid} queued and waiting for resources\n'
                                   f'srun: job {jid} has been allocated resources\n')

    def test_ctrl_c_cancels_the_job(self):
        proc = subprocess.Popen([os.path.abspath(BERTH), 'srun', '-J', 'interrupted', 'sleep',
                                 '300'], env=dict(self.c.env, TMPDIR=self.c.dir), cwd=self.work, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            self.c.wait(lambda: self.job_named('interrupted') is not None, 'the job')
            jid = self.job_named('interrupted')
            self.c.wait_state(jid, 'RUNNING', 30)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=40)
        finally:
            if proc.poll() is None:
                proc.kill()
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn('srun: Job step aborted: Waiting up to 32 seconds for job step to finish.',
                      err)
        self.assertEqual(self.c.job(jid)['state'], 'CANCELLED')

    def batch(self, body, **extra):
        env = {'PATH': f'{self.bin}:/usr/local/bin:/usr/bin:/bin', 'TMPDIR': self.c.dir}
        jid = self.c.submit(self.spec(body, environment=env, **extra))
        j = self.c.wait_state(jid, ['COMPLETED', 'FAILED'], 60)
        return j, read_text(os.path.join(self.work, f'it-{jid}.out'))

    def test_inside_a_batch_script_steps_of_this_node(self):
        j, out = self.batch(
            "srun -n 2 sh -c 'echo rank=$SLURM_PROCID local=$SLURM_LOCALID "
            "node=$SLURM_NODEID step=$SLURM_STEP_ID n=$SLURM_STEP_NUM_TASKS "
            "nodes=$SLURM_STEP_NODELIST'\n"
            "srun -n 1 sh -c 'echo second step=$SLURM_STEP_ID'\n"
            "srun -l -n 2 --gpus-per-task=1 sh -c 'echo gpu=$CUDA_VISIBLE_DEVICES'",
            cpus_per_task=2, gpus_per_node=2)
        self.assertEqual(j['state'], 'COMPLETED', out)
        lines = out.splitlines()
        self.assertEqual(sorted(lines[:2]),
                         ['rank=0 local=0 node=0 step=0 n=2 nodes=node1',
                          'rank=1 local=1 node=0 step=0 n=2 nodes=node1'])
        self.assertEqual(lines[2], 'second step=1')
        self.assertEqual(sorted(lines[3:]), ['0: gpu=0', '1: gpu=1'])

    def test_a_lightning_style_trainer_checkpoints_requeues_and_resumes(self):
        # PyTorch Lightning's SLURM plugin: --signal=USR1@N warns the training step before the
        # time limit; its handler saves a checkpoint and calls `scontrol requeue`; the job runs
        # again with SLURM_RESTART_COUNT=1 and resumes from the checkpoint.
        trainer = (
            "import os, signal, subprocess, sys, time\n"
            "restart = os.environ.get('SLURM_RESTART_COUNT', '0')\n"
            "print('attempt', restart, flush=True)\n"
            "if restart != '0':\n"
            "    print('resumed from', open('ckpt').read(), flush=True)\n"
            "    sys.exit(0)\n"
            "def on_usr1(sig, frame):\n"
            "    open('ckpt', 'w').write('step-42')\n"
            "    subprocess.run(['scontrol', 'requeue', os.environ['SLURM_JOB_ID']], check=True)\n"
            "    time.sleep(60)\n"
            "signal.signal(signal.SIGUSR1, on_usr1)\n"
            "time.sleep(120)\n")
        with open(os.path.join(self.work, 'train.py'), 'w') as f:
            f.write(trainer)
        env = {'PATH': f'{self.bin}:/usr/local/bin:/usr/bin:/bin', 'TMPDIR': self.c.dir}
        jid = self.c.submit(self.spec('srun python3 train.py', environment=env, time_limit=60,
                                      signal='USR1@56', open_mode='append'))
        self.c.wait(lambda: self.c.job(jid)['restart_count'] == 1 and
                    self.c.job(jid)['state'] == 'COMPLETED', 'the job to run again and end', 90)
        out = read_text(os.path.join(self.work, f'it-{jid}.out')).splitlines()
        self.assertEqual([line for line in out if not line.startswith('srun:')],
                         ['attempt 0', 'attempt 1', 'resumed from step-42'], out)

    def test_steps_are_accounted_as_sacct_rows(self):
        # Each srun is a step with its own row (Slurm's JOB.0, JOB.1, ...): state, exit code,
        # tasks, node and what its tasks used; -X leaves them out, -j JOB.N shows one alone.
        j, out = self.batch(
            "srun -n 2 python3 -c 'x = bytearray(40 << 20); import time; time.sleep(0.3)'\n"
            "srun -n 1 sh -c 'exit 3'\n"
            "echo done", ntasks=2)
        self.assertEqual(j['state'], 'COMPLETED', out)
        jid = j['id']
        p = self.run_cmd('sacct', '-j', str(jid), '-P', '-n',
                         '-o', 'JobID,JobName,State,ExitCode,NTasks,NodeList')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout,
                         f'{jid}|it|COMPLETED|0:0||node1\n'
                         f'{jid}.batch|batch|COMPLETED|0:0|1|node1\n'
                         f'{jid}.0|python3|COMPLETED|0:0|2|node1\n'
                         f'{jid}.1|sh|FAILED|3:0|1|node1\n')
        p = self.run_cmd('sacct', '-j', f'{jid}.0', '-P', '-n',
                         '-o', 'JobID,MaxRSS,MaxRSSTask,MaxRSSNode,Start,End,TotalCPU')
        fields = p.stdout.strip().split('|')
        self.assertEqual(fields[0], f'{jid}.0', p.stdout)
        self.assertTrue(fields[1].endswith('K') and int(fields[1][:-1]) >= 40 << 10, fields)
        self.assertIn(fields[2], ('0', '1'))
        self.assertEqual(fields[3], 'node1')
        self.assertLessEqual(fields[4], fields[5])  # ISO times sort as text
        self.assertRegex(fields[6], r'^\d\d:\d\d\.\d\d\d$')
        p = self.run_cmd('sacct', '-j', str(jid), '-X', '-P', '-n', '-o', 'JobID')
        self.assertEqual(p.stdout, f'{jid}\n')

    def test_a_step_killed_with_its_job_is_cancelled(self):
        env = {'PATH': f'{self.bin}:/usr/local/bin:/usr/bin:/bin', 'TMPDIR': self.c.dir}
        jid = self.c.submit(self.spec('srun true\nsrun sleep 300', environment=env))
        self.c.wait(lambda: len(self.c.job(jid).get('steps', [])) == 2 and
                    self.c.job(jid)['steps'][1]['state'] == 'RUNNING', 'the second step', 30)
        # squeue -s: the batch step and the step that runs (the ended one is gone).
        p = self.run_cmd('squeue', '-s', '-h', '-j', str(jid), '-o', '%i %j %A %N')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, f'{jid}.batch batch 1 node1\n{jid}.1 sleep 1 node1\n')
        p = self.run_cmd('squeue', f'--steps={jid}.1', '-h', '-o', '%i')
        self.assertEqual(p.stdout, f'{jid}.1\n')
        p = self.run_cmd('scancel', str(jid))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.c.wait_state(jid, 'CANCELLED', 60)
        p = self.run_cmd('sacct', '-j', str(jid), '-P', '-n', '-o', 'JobID,JobName,State')
        self.assertEqual(p.stdout.splitlines(),
                         [f'{jid}|it|CANCELLED by 0', f'{jid}.batch|batch|CANCELLED',
                          f'{jid}.0|true|COMPLETED', f'{jid}.1|sleep|CANCELLED'])

    def test_scancel_of_one_step_signals_or_ends_that_step_and_the_job_goes_on(self):
        # scancel's man page: JOB.STEP names one step; a --signal goes to its tasks, and without
        # one the step is killed (its state CANCELLED) while the batch script carries on.
        env = {'PATH': f'{self.bin}:/usr/local/bin:/usr/bin:/bin', 'TMPDIR': self.c.dir}
        jid = self.c.submit(self.spec(
            "srun sh -c 'trap \"echo step got USR1\" USR1; echo ready; "
            "while true; do sleep 0.1; done'\n"
            "echo step0 over\n"
            "srun echo step1 ran\n", environment=env))
        out = os.path.join(self.work, f'it-{jid}.out')
        self.c.wait(lambda: os.path.exists(out) and 'ready' in read_text(out), 'the step')
        p = self.run_cmd('scancel', '--signal=USR1', f'{jid}.0')
        self.assertEqual((p.returncode, p.stderr), (0, ''))
        self.c.wait(lambda: 'step got USR1' in read_text(out), 'the step to get USR1')
        self.assertEqual(self.c.job(jid)['state'], 'RUNNING')
        # A step srun never reported: said, as Slurm's ESLURM_INVALID_JOB_ID.
        p = self.run_cmd('scancel', f'{jid}.7')
        self.assertEqual(p.stderr,
                         f'scancel: error: Kill job error on job step id {jid}.7: '
                         'Invalid job id specified\n')
        self.assertNotEqual(p.returncode, 0)
        p = self.run_cmd('scancel', '-v', f'{jid}.0')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f'scancel: Terminating step {jid}.0', p.stderr)
        self.assertEqual(self.c.wait_state(jid, ['COMPLETED', 'FAILED'], 60)['state'],
                         'COMPLETED', read_text(out))
        self.assertIn('step0 over\nstep1 ran\n', read_text(out))
        p = self.run_cmd('sacct', '-j', str(jid), '-P', '-n', '-o', 'JobID,State')
        self.assertEqual(p.stdout.splitlines(),
                         [f'{jid}|COMPLETED', f'{jid}.batch|COMPLETED',
                          f'{jid}.0|CANCELLED by 0', f'{jid}.1|COMPLETED'])
        # The job has ended: scancel checks a step's job first (_verify_job_ids), as Slurm's.
        p = self.run_cmd('scancel', f'{jid}.0')
        self.assertEqual((p.returncode, p.stderr),
                         (1, f'scancel: error: Kill job error on job step id {jid}.0: '
                             'Invalid job id specified\n'))

    def test_inside_a_batch_script_refusals_and_exit_codes(self):
        j, out = self.batch(
            "srun -N 2 true; echo rc=$?\n"
            "srun -n 4 true; echo rc=$?\n"
            "srun -n 2 sh -c 'exit $((SLURM_PROCID + 5))' 2>&1; echo rc=$?",
            ntasks=2)
        self.assertEqual(j['state'], 'COMPLETED', out)
        self.assertEqual(out.splitlines(), [
            f'srun: error: Unable to create step for job {j["id"]}: Requested node '
            'configuration is not available',
            'rc=1',
            f'srun: error: Unable to create step for job {j["id"]}: More processors requested '
            'than permitted',
            'rc=1',
            'srun: error: node1: task 0: Exited with exit code 5',
            'srun: error: node1: task 1: Exited with exit code 6',
            'rc=6'])


class SrunTwoNodesTest(SlurmCase):
    """A second agent (node2) on this host: a step over both nodes runs a task on each, the
    other node's through the controller (over the Unix socket, known by peer credentials)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        home = os.path.join(cls.c.dir, 'node2')
        os.makedirs(home)
        cls.agent2 = subprocess.Popen(
            [BERTH, 'agent', '--home', home, '--controller', 'unix:' + cls.c.sock,
             '--node-name', 'node2', '--cpus', '1'],
            stdout=cls.c.log('agent2'), stderr=subprocess.STDOUT)
        cls.c.wait(lambda: cls.c.node_state('node2') not in (None, 'DOWN'), 'node2 to register')

    @classmethod
    def tearDownClass(cls):
        cls.agent2.terminate()
        cls.agent2.wait(timeout=30)
        super().tearDownClass()

    def test_a_step_over_two_nodes_runs_on_both(self):
        env = {'PATH': f'{self.bin}:/usr/local/bin:/usr/bin:/bin', 'TMPDIR': self.c.dir,
               'BERTH_SOCKET': self.c.sock}
        jid = self.c.submit(self.spec(
            "srun -l sh -c 'echo $SLURM_PROCID $SLURM_NODEID $SLURMD_NODENAME'; echo rc=$?; "
            "srun -N 1 sh -c 'echo one node: $SLURM_STEP_NODELIST'; "
            "srun sh -c 'exit $((SLURM_NODEID + 4))'; echo rc=$?",
            nodes=2, environment=env))
        j = self.c.wait_state(jid, ['COMPLETED', 'FAILED'], 60)
        out = read_text(os.path.join(self.work, f'it-{jid}.out'))
        self.assertEqual(j['state'], 'COMPLETED', out)
        batch, other = [n['node'] for n in j['allocation']['nodes']]
        lines = out.splitlines()
        self.assertEqual(sorted(lines[:2]), [f'0: 0 0 {batch}', f'1: 1 1 {other}'], out)
        self.assertEqual(lines[2], 'rc=0')
        self.assertEqual(lines[3], f'one node: {batch}')
        # Each node's failure is reported under its name; srun exits with the worst code.
        self.assertEqual(sorted(lines[4:6]), sorted([
            f'srun: error: {batch}: task 0: Exited with exit code 4',
            f'srun: error: {other}: task 1: Exited with exit code 5']), out)
        self.assertEqual(lines[6], 'rc=5')

    def test_the_other_nodes_tasks_count_in_the_steps_usage(self):
        # The task on the other node holds 60 MiB and burns CPU; the batch node's does neither:
        # sacct's MaxRSS, MaxRSSNode and TotalCPU of the step are the other node's.
        env = {'PATH': f'{self.bin}:/usr/local/bin:/usr/bin:/bin', 'TMPDIR': self.c.dir,
               'BERTH_SOCKET': self.c.sock}
        work = ("import os, time\n"
                "if os.environ['SLURM_NODEID'] == '1':\n"
                "    x = bytearray(60 << 20)\n"
                "    t = time.process_time()\n"
                "    while time.process_time() - t < 0.5: pass\n")
        jid = self.c.submit(self.spec(f"srun python3 -c \"{work}\"", nodes=2, environment=env))
        j = self.c.wait_state(jid, ['COMPLETED', 'FAILED'], 60)
        self.assertEqual(j['state'], 'COMPLETED',
                         read_text(os.path.join(self.work, f'it-{jid}.out')))
        other = j['allocation']['nodes'][1]['node']
        p = self.run_cmd('sacct', '-j', f'{jid}.0', '-P', '-n',
                         '-o', 'JobID,MaxRSS,MaxRSSNode,MaxRSSTask,TotalCPU')
        fields = p.stdout.strip().split('|')
        self.assertEqual(fields[0], f'{jid}.0', p.stdout)
        self.assertTrue(fields[1].endswith('K') and int(fields[1][:-1]) >= 60 << 10, fields)
        self.assertEqual(fields[2:4], [other, '1'], fields)
        minutes, seconds = fields[4].split(':')
        self.assertGreaterEqual(int(minutes) * 60 + float(seconds), 0.5, fields)

    def test_the_step_endpoints_check_what_they_are_given(self):
        jid = self.c.submit(self.spec('sleep 60', nodes=2))
        j = self.c.wait_state(jid, 'RUNNING', 60)
        self.addCleanup(lambda: self.c.api('POST', f'/v1/jobs/{jid}/cancel', {}))
        other = j['allocation']['nodes'][1]['node']
        base = f'/v1/jobs/{jid}/steps'
        layout = {'step_id': 7, 'nodes': [other], 'node_index': [1], 'tasks_per_node': [1],
                  'ntasks': 1, 'cpus_per_task': 1}  # what srun on the batch node would send
        good = {'step_id': 7, 'nodes': [other], 'argv': ['--', 'true'],
                'environment': [['BERTH_STEP', json.dumps(layout)]]}
        for bad in ({}, [], dict(good, step_id=-1), dict(good, step_id=2**32), dict(good, nodes=[]),
                    dict(good, argv="true"),
                    dict(good, environment={'A': 1}), dict(good, stdout=5)):
            status, body = self.c.api('POST', base, bad)
            self.assertEqual(status, 400, (bad, body))
        status, body = self.c.api('POST', base, dict(good, nodes=['nowhere']))
        self.assertEqual(status, 400, body)
        self.assertIn('not in job', body['error']['message'] if 'error' in body else str(body))
        self.assertEqual(self.c.api('POST', '/v1/jobs/99999/steps', good)[0], 404)
        self.assertEqual(self.c.api('GET', f'{base}/3')[0], 404)  # never started
        self.assertEqual(self.c.api('POST', f'{base}/3/signal', {'signal': 15})[0], 404)
        self.assertEqual(self.c.api('POST', f'{base}/x')[0], 404)
        status, body = self.c.api('POST', base, good)
        self.assertEqual(status, 200, body)
        self.assertEqual(body['nodes'], [other])
        self.assertEqual(self.c.api('POST', base, good)[0], 409)  # the id is taken
        self.assertEqual(self.c.api('POST', f'{base}/7/signal', {'signal': 0})[0], 400)

        def ended():
            status, body = self.c.api('GET', f'{base}/7')
            return status == 200 and body['nodes'][other]['ended']
        self.c.wait(ended, 'the step to end on ' + other, 30)
        status, body = self.c.api('GET', f'{base}/7')
        self.assertEqual(body['nodes'][other]['state'], 'COMPLETED', body)
        self.assertEqual(body['nodes'][other]['exit_code'], 0)

        # The accounting record srun sends: checked whole before it reaches the job's record.
        record = {'id': 9, 'attempt': 0, 'name': 'x', 'state': 'RUNNING', 'exit_code': 0,
                  'term_signal': 0, 'start': int(time.time()), 'ntasks': 1, 'ncpus': 1,
                  'nodes': other, 'max_rss_kib': 0, 'max_rss_task': 0, 'max_rss_node': '',
                  'ave_rss_kib': 0, 'user_cpu_seconds': 0, 'system_cpu_seconds': 0,
                  'min_cpu_seconds': 0, 'min_cpu_task': 0}
        for bad, word in ((dict(record, state='DONE'), '"state"'),
                          (dict(record, state='COMPLETED'), '"end"'),
                          (dict(record, id=8), 'not the step of the path'),
                          (dict(record, ntasks=0), '"ntasks"'), ([], 'a JSON object')):
            status, body = self.c.api('POST', f'{base}/9/record', bad)
            self.assertEqual(status, 400, (bad, body))
            self.assertIn(word, body['error']['message'])
        status, body = self.c.api('POST', f'{base}/9/record', dict(record, attempt=1))
        self.assertEqual(status, 409, body)  # no such run of the job
        self.assertEqual(self.c.api('POST', f'/v1/jobs/99999/steps/9/record', record)[0], 404)
        self.assertEqual(self.c.job(jid).get('steps', []), [])
        status, body = self.c.api('POST', f'{base}/9/record', record)
        self.assertEqual(status, 200, body)
        self.assertEqual([s['id'] for s in self.c.job(jid)['steps']], [9])


if __name__ == '__main__':
    unittest.main()

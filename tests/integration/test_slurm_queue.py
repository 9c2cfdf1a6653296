"""Integration tests of squeue, sinfo and sprio against real daemons: what they print must be what
the cluster holds (a running job, pending jobs with the scheduler's reasons, a held array, a
drained node), through their filters and formats.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_queue (from this folder).
"""
import json
import os
import time
import unittest

from harness import Cluster

SQUEUE_HEADER = ('             JOBID PARTITION     NAME     USER ST       TIME  NODES '
                 'NODELIST(REASON)')


def script(body):
    return '#!/bin/sh\n' + body + '\n'


class SlurmQueueTest(unittest.TestCase):
    """One node with 4 GPUs: `gpu3` runs on 3 of them, `gpu2` waits for GPUs, `held` and the
    array `sweep` are held."""

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(gpus=4).start()
        cls.work = os.path.join(cls.c.dir, 'work')
        os.makedirs(cls.work, exist_ok=True)
        cls.run_id = cls.c.submit(cls.spec('gpu3', gpus_per_node=3))
        cls.c.wait_state(cls.run_id, 'RUNNING')
        cls.wait_id = cls.c.submit(cls.spec('gpu2', gpus_per_node=2))
        cls.held_id = cls.c.submit(cls.spec('held', hold=True))
        cls.array_id = cls.c.submit(cls.spec('sweep', array='0-3%2', hold=True))
        # The scheduler gives the waiting job its reason on its next pass.
        cls.c.wait(lambda: cls.c.job(cls.wait_id).get('reason') == 'Resources',
                   'the waiting job to have a reason')

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    @classmethod
    def spec(cls, name, **extra):
        s = {'name': name, 'script': script('sleep 300'), 'work_dir': cls.work,
             'time_limit': 600}
        s.update(extra)
        return s

    def run_cmd(self, *args, code=0, env=None):
        p = self.c.cli(*args, check=False) if env is None else self.cli_env(args, env)
        self.assertEqual(p.returncode, code, f'{args}: {p.stderr}')
        return p

    def cli_env(self, args, env):
        import subprocess
        from harness import BERTH
        return subprocess.run([BERTH, *args], env=dict(self.c.env, **env), capture_output=True,
                              text=True, timeout=60)

    def lines(self, *args):
        return self.run_cmd(*args).stdout.splitlines()

    # ---- squeue

    def test_squeue_default_shows_states_reasons_and_nodes(self):
        out = self.lines('squeue')
        self.assertEqual(out[0], SQUEUE_HEADER)
        rows = {line.split()[0]: line.split() for line in out[1:]}
        self.assertEqual(rows[str(self.run_id)][4], 'R')
        self.assertEqual(rows[str(self.run_id)][7], 'node1')
        self.assertEqual(rows[str(self.wait_id)][4], 'PD')
        self.assertEqual(rows[str(self.wait_id)][7], '(Resources)')
        self.assertEqual(rows[str(self.held_id)][7], '(JobHeldUser)')
        self.assertEqual(rows[f'{self.array_id}_[0-3%2]'][2], 'sweep')
        # Columns are where Slurm puts them: the job id right-aligned in 18 characters.
        line = next(l for l in out if l.split()[0] == str(self.run_id))
        self.assertEqual(line[:18].strip(), str(self.run_id))
        self.assertEqual(line[18], ' ')
        # Pending jobs before running ones (P,t,-p).
        states = [l.split()[4] for l in out[1:]]
        self.assertEqual(states, sorted(states, key=lambda s: s != 'PD'))

    def test_berth_jobs_shows_the_array_remainder_as_squeue_does(self):
        # Slurm shows an array's pending remainder as 12_[0-3%2]; so does `berth jobs`.
        ids = [line.split()[0] for line in self.lines('jobs')[1:]]
        self.assertIn(f'{self.array_id}_[0-3%2]', ids)
        self.assertNotIn(f'{self.array_id}_-1', ids)

    def test_squeue_one_line_per_array_task_and_task_ids(self):
        out = self.lines('squeue', '-r', '-h', '-o', '%i %K %j', '-n', 'sweep')
        self.assertEqual(out, [f'{self.array_id}_{t} {t} sweep' for t in range(4)])
        out = self.lines('squeue', '-h', '-o', '%i', f'--jobs={self.array_id}_2')
        self.assertEqual(out, [f'{self.array_id}_2'])

    def test_squeue_filters(self):
        def ids(*args):
            return sorted(self.lines('squeue', '-h', '-o', '%A', *args))
        everything = ids()
        self.assertEqual(ids('-t', 'R'), [str(self.run_id)])
        self.assertEqual(ids('-t', 'pd'), sorted(set(everything) - {str(self.run_id)}))
        self.assertEqual(ids('-u', 'root'), everything)
        self.assertEqual(ids('--me'), everything)
        self.assertEqual(ids('-p', 'main'), everything)
        self.assertEqual(ids('-p', 'nosuch'), [])
        self.assertEqual(ids('-w', 'node1'), [str(self.run_id)])
        self.assertEqual(ids('-n', 'gpu2,held'), sorted([str(self.wait_id), str(self.held_id)]))
        self.assertEqual(ids('-j', f'{self.held_id},{self.wait_id}'),
                         sorted([str(self.held_id), str(self.wait_id)]))

    def test_squeue_formats(self):
        out = self.lines('squeue', '-j', str(self.run_id), '-O', 'JobID:8,Name:6,State:.10,tres-per-node')
        self.assertEqual(out[0], 'JOBID   NAME       STATETRES_PER_NODE       ')
        self.assertEqual(out[1], f'{self.run_id:<8}gpu3     RUNNINGgres:gpu:3          ')
        out = self.lines('squeue', '-j', str(self.run_id), '-o', '%.5D|%C|%b|%N|%l|%T')
        self.assertEqual(out[1], '    1|1|gres:gpu:3|node1|10:00|RUNNING')
        out = self.lines('squeue', '-l', '-j', str(self.held_id))
        self.assertRegex(out[0], r'^\w{3} \w{3} \d\d \d\d:\d\d:\d\d \d{4}$')
        self.assertEqual(out[1].split(), ['JOBID', 'PARTITION', 'NAME', 'USER', 'STATE', 'TIME',
                                          'TIME_LIMI', 'NODES', 'NODELIST(REASON)'])
        self.assertEqual(out[2].split()[4:7], ['PENDING', '0:00', '10:00'])

    def test_squeue_lines_made_by_the_controller_are_those_made_here(self):
        # squeue asks the controller for its lines (POST /v1/views/squeue); a caller in another
        # time zone makes them itself from GET /v1/jobs. TZ=:/etc/localtime is the system's zone
        # under another name: the second path, with the same local times.
        if 'TZ' in os.environ:
            self.skipTest('TZ is set: no other name for the same zone is known')
        cases = [[], ['-l'], ['--start'], ['-r'], ['-P'], ['-h', '-t', 'all'], ['-u', 'root'],
                 ['-S', 'i'], ['-S', '-M,j'], ['-o', '%all'], ['-o', '%i %V %S %e %Z %o %k'],
                 ['-O', 'JobID,Name:30,ReqNodes,TimeLeft,SubmitTime,StartTime,Reason'],
                 ['-n', 'sweep', '-r'], ['-j', f'{self.array_id}_1'], ['-t', 'PD', '-p', 'main'],
                 ['--me'], ['-A', 'nobody'], ['-q', 'normal,bogus']]
        for args in cases:
            for extra in ({}, {'SLURM_TIME_FORMAT': '%H:%M %d/%m'}, {'SQUEUE_SORT': '-i'}):
                with self.subTest(args=args, env=extra):
                    # The running job's TIME may tick between the two: asked again then (a real
                    # difference stays).
                    for _ in range(3):
                        here = self.run_cmd('squeue', *args,
                                            env=dict(extra, TZ=':/etc/localtime'))
                        there = self.run_cmd('squeue', *args, env=extra)
                        if (there.stdout, there.stderr) == (here.stdout, here.stderr):
                            break
                    self.assertEqual(there.stdout, here.stdout)
                    self.assertEqual(there.stderr, here.stderr)
        # The controller made them: its answer is squeue's output.
        status, body = self.c.api('POST', '/v1/views/squeue',
                                  {'args': ['-o', '%i %j %T'], 'env': {}, 'tz': ''})
        self.assertEqual(status, 200)
        self.assertEqual(body['raw'], self.run_cmd('squeue', '-o', '%i %j %T').stdout)
        self.assertIn(f'{self.held_id} held PENDING', body['raw'])
        # Another zone is refused (the caller then makes its lines), and so is a bad request.
        status, _ = self.c.api('POST', '/v1/views/squeue', {'args': [], 'tz': 'Asia/Tokyo'})
        self.assertEqual(status, 409)
        status, body = self.c.api('POST', '/v1/views/squeue', {'args': [1]})
        self.assertEqual(status, 400)
        self.assertIn('strings', json.dumps(body))

    def test_squeue_views_asked_at_once_agree(self):
        # Many squeues at once, with different options: each gets its own lines, made on its own
        # connection thread (the parser's process-wide getopt state is covered by the unit test
        # SqueueOptions.ParsesOnManyThreadsAtOnce).
        import subprocess
        from harness import BERTH
        forms = [['-o', '%i %j %T %P'], ['-h', '-O', 'JobID,UserName,Partition'], ['-r', '-o', '%i %K %r'],
                 ['-S', '-i', '-o', '%.7i %.5j']]
        alone = [self.run_cmd('squeue', *f).stdout for f in forms]
        procs = [(i, subprocess.Popen([BERTH, 'squeue', *forms[i]], env=self.c.env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
                 for i in list(range(len(forms))) * 6]
        for i, p in procs:
            out, err = p.communicate(timeout=60)
            self.assertEqual((p.returncode, err), (0, ''))
            self.assertEqual(out, alone[i], forms[i])

    def test_scancel_selection_made_by_the_controller(self):
        # A filtered scancel asks the controller which jobs its filters select (POST
        # /v1/views/scancel); nothing is cancelled by the question.
        status, body = self.c.api('POST', '/v1/views/scancel',
                                  {'args': ['-n', 'sweep', '-t', 'PENDING'], 'env': {}})
        self.assertEqual(status, 200, body)
        self.assertEqual(body['exit_code'], 0)
        self.assertEqual([t['display_id'] for t in body['targets']],
                         [f'{self.array_id}_[0-3%2]'])
        # An array's pending tasks are sent one by one, so that a filter reaches only them.
        self.assertEqual(body['targets'][0]['ids'], [f'{self.array_id}_{i}' for i in range(4)])
        status, body = self.c.api('POST', '/v1/views/scancel',
                                  {'args': ['-s', 'USR1', '999999'], 'env': {}})
        self.assertEqual((status, body['targets'], body['exit_code']), (200, [], 1))
        self.assertIn('Kill job error on job id 999999', body['errors'][0])
        # -u as the caller resolved it, and SCANCEL_* variables.
        status, body = self.c.api('POST', '/v1/views/scancel',
                                  {'args': ['-u', 'nobody'], 'uid': 65534, 'env': {}})
        self.assertEqual((status, body['targets']), (200, []))
        status, body = self.c.api('POST', '/v1/views/scancel',
                                  {'args': ['-u', 'root'], 'uid': 0,
                                   'env': {'SCANCEL_NAME': 'held'}})
        self.assertEqual([t['display_id'] for t in body['targets']], [str(self.held_id)])
        # -i selects as the others do (scancel then asks about each target itself).
        status, body = self.c.api('POST', '/v1/views/scancel', {'args': ['-i', '-n', 'held']})
        self.assertEqual([t['display_id'] for t in body['targets']], [str(self.held_id)])
        # Ids alone need no selection.
        status, _ = self.c.api('POST', '/v1/views/scancel', {'args': ['12']})
        self.assertEqual(status, 400)
        self.assertEqual(self.c.job(self.held_id)['state'], 'PENDING')

    def test_squeue_start_lists_pending_jobs(self):
        out = self.lines('squeue', '--start')
        self.assertEqual(out[0].split(), ['JOBID', 'PARTITION', 'NAME', 'USER', 'ST',
                                          'START_TIME', 'NODES', 'SCHEDNODES',
                                          'NODELIST(REASON)'])
        self.assertTrue(all(l.split()[4] == 'PD' for l in out[1:]))
        self.assertNotIn(str(self.run_id), [l.split()[0] for l in out[1:]])
        # The scheduler's expected start for the job that waits for GPUs.
        start = self.c.job(self.wait_id)['expected_start']
        row = next(l.split() for l in out[1:] if l.split()[0] == str(self.wait_id))
        self.assertEqual(row[5], time.strftime('%Y-%m-%dT%H:%M:%S', time.localtime(start)))
        held = next(l.split() for l in out[1:] if l.split()[0] == str(self.held_id))
        self.assertEqual(held[5], 'N/A')

    def test_squeue_json(self):
        body = json.loads(self.run_cmd('squeue', '--json').stdout)
        jobs = {j['job_id']: j for j in body['jobs']}
        self.assertEqual(jobs[self.run_id]['job_state'], 'RUNNING')
        self.assertEqual(jobs[self.run_id]['nodes'], 'node1')
        self.assertEqual(jobs[self.wait_id]['state_reason'], 'Resources')
        self.assertEqual(jobs[self.array_id]['array_task_string'], '0-3%2')
        self.assertEqual(jobs[self.held_id]['time_limit'], 10)

    def test_squeue_errors(self):
        p = self.run_cmd('squeue', '-t', 'foo', code=1)
        self.assertIn('squeue: error: Invalid job state specified: foo', p.stderr)
        p = self.run_cmd('squeue', '-o', '%i', '-l', code=1)
        self.assertIn('mutually exclusive', p.stderr)
        p = self.run_cmd('squeue', '--bogus', code=1)
        self.assertIn("unrecognized option '--bogus'", p.stderr)
        p = self.run_cmd('squeue', '-S', 'Z', code=1)
        self.assertIn('Invalid sort specification: Z', p.stderr)

    def test_squeue_iterates_a_bounded_number_of_times(self):
        p = self.run_cmd('squeue', '-i', '1', '-t', 'R', env={'BERTH_ITERATIONS': '2'})
        self.assertEqual(p.stdout.count(SQUEUE_HEADER), 2)

    # ---- sprio

    def test_sprio_shows_pending_jobs_and_weights(self):
        out = self.lines('sprio')
        self.assertEqual(out[0].split()[:4], ['JOBID', 'PARTITION', 'PRIORITY', 'SITE'])
        ids = [l.split()[0] for l in out[1:]]
        self.assertIn(str(self.wait_id), ids)
        self.assertNotIn(str(self.run_id), ids)
        weights = self.lines('sprio', '-w')
        self.assertEqual(weights[1].split()[0], 'Weights')
        self.assertEqual(len(weights[1].split()), len(out[0].split()) - 2)  # no PRIORITY value
        p = self.run_cmd('sprio', '-j', '999999')
        self.assertEqual(p.stdout, 'Unable to find jobs matching user/id(s) specified\n')
        prios = self.lines('sprio', '-h', '-o', '%i %Y', '-j', str(self.wait_id))
        api = self.c.api('GET', '/v1/priorities')[1]
        want = next(j['priority'] for j in api['jobs'] if j['id'] == self.wait_id)
        self.assertEqual(prios, [f'{self.wait_id} {want}'])


class SlurmNodesTest(unittest.TestCase):
    """sinfo before and after a node is drained with a job on it."""

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(gpus=4).start()
        work = os.path.join(cls.c.dir, 'work')
        os.makedirs(work, exist_ok=True)
        cls.job = cls.c.submit({'name': 'g', 'script': script('sleep 300'), 'work_dir': work,
                                'gpus_per_node': 2})
        cls.c.wait_state(cls.job, 'RUNNING')
        # The node list is rebuilt after the start is recorded.
        cls.c.wait(lambda: cls.c.node_state('node1') in ('MIXED', 'ALLOCATED'),
                   'the node to show its job')

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def sinfo(self, *args):
        p = self.c.cli('sinfo', *args, check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.splitlines()

    def test_sinfo_follows_the_node(self):
        out = self.sinfo()
        self.assertEqual(out[0], 'PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST')
        self.assertIn(out[1].split()[4], ('mix', 'alloc'))
        self.assertEqual(out[1].split()[:4], ['main*', 'up', 'infinite', '1'])
        gres = self.sinfo('-N', '-h', '-O', 'NodeList:8,Gres:14,GresUsed:22')
        self.assertEqual(gres, ['node1   gpu:test:4    gpu:test:2(IDX:0-1)   '])
        self.assertEqual(self.sinfo('-R'), ['REASON               USER      TIMESTAMP           '
                                            'NODELIST'])

        status, body = self.c.api('POST', '/v1/nodes/node1/drain', {'reason': 'bad fan'})
        self.assertEqual(status, 200, body)
        self.c.wait(lambda: self.c.node_state('node1') == 'DRAINING', 'the node to drain')
        self.assertEqual(self.sinfo('-h')[0].split()[4], 'drng')
        self.assertEqual(self.sinfo('-h', '-t', 'drain', '-o', '%N %t %E'), ['node1 drng bad fan'])
        self.assertEqual(self.sinfo('-h', '-t', 'idle'), [])
        reasons = self.sinfo('-R')
        self.assertEqual(reasons[1][:21], 'bad fan              ')
        self.assertTrue(reasons[1].endswith(' node1'))
        summary = self.sinfo('-s')
        self.assertEqual(summary[1].split()[3], '1/0/0/1')
        nodes = json.loads(self.c.cli('sinfo', '--json').stdout)['nodes']
        self.assertEqual(nodes[0]['state_flags'], ['DRAIN'])
        self.assertEqual(nodes[0]['gres_used'], 'gpu:test:2(IDX:0-1)')


if __name__ == '__main__':
    unittest.main()

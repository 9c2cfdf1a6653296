"""Integration tests: preemption with a grace time (docs/scheduling.md "Preemption"), as Slurm's
preemption guide describes it: a job picked for preemption whose partition (or QoS) has a
GraceTime gets SIGCONT and SIGTERM at once, and is ended only once the grace time is over; a
trainer that checkpoints in its SIGTERM handler and exits is requeued by PreemptMode=REQUEUE.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_preemption (from this folder).
"""
import os
import time
import unittest

from harness import Cluster

CONF = ('PreemptType=preempt/partition_prio PreemptMode=REQUEUE KillWait=1\n'
        'NodeName=node1 CPUs=2 RealMemory=2000\n'
        'PartitionName=spot Nodes=node1 PriorityTier=1 GraceTime={grace} Default=YES\n'
        'PartitionName=urgent Nodes=node1 PriorityTier=10\n')


class GraceTimeTest(unittest.TestCase):
    def start(self, grace):
        self.c = Cluster(gpus=0)
        path = os.path.join(self.c.dir, 'cluster.conf')
        with open(path, 'w') as f:
            f.write(CONF.format(grace=grace))
        self.c.controller_args += ['--config', path]
        self.c.start()
        self.addCleanup(lambda: self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1'))
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work)
        os.chmod(self.work, 0o777)

    def job(self, body, partition, **extra):
        spec = {'name': partition, 'script': '#!/bin/sh\n' + body + '\n',
                'work_dir': self.work, 'stdout': '/dev/null', 'time_limit': 600,
                'cpus_per_task': 2, 'partition': partition}
        spec.update(extra)
        return self.c.submit(spec)

    def output(self, name):
        """The run-N lines of an output file (the shell also reports the children it lost)."""
        path = os.path.join(self.work, name)
        if not os.path.exists(path):
            return []
        return [w for w in open(path).read().split() if w.startswith('run-')]

    def marker(self):
        path = os.path.join(self.work, 'marker')
        return open(path).read().split() if os.path.exists(path) else []

    def test_a_trainer_checkpoints_within_its_grace_time_and_is_requeued(self):
        self.start(grace=20)
        # The handler "checkpoints" (notes the signal and the attempt) and exits.
        # Its output file is opened for appending (--open-mode=append): each run adds to it.
        low = self.job('trap \'echo term-${SLURM_RESTART_COUNT:-0} >> marker; exit 0\' TERM\n'
                       'echo start-${SLURM_RESTART_COUNT:-0} >> marker\n'
                       'echo run-${SLURM_RESTART_COUNT:-0}\n'
                       'sleep 300 & wait', 'spot', stdout='out-%j.txt', open_mode='append')
        self.c.wait(lambda: self.marker() == ['start-0'], 'the spot job to start', 30)
        t0 = time.time()
        high = self.job('sleep 2', 'urgent')
        self.c.wait_state(high, 'RUNNING', 30)
        self.assertLess(time.time() - t0, 15)  # it did not wait out the 20 s grace time
        self.assertEqual(self.marker()[:2], ['start-0', 'term-0'])
        j = self.c.job(low)
        self.assertEqual(j['restart_count'], 1, j)
        # Requeued: it runs again (SLURM_RESTART_COUNT=1) once the urgent job is done.
        self.c.wait(lambda: 'start-1' in self.marker(), 'the spot job to run again', 60)
        self.c.wait(lambda: self.output(f'out-{low}.txt') == ['run-0', 'run-1'],
                    'both runs in the appended output', 10)

    def test_a_job_that_ignores_sigterm_is_ended_after_its_grace_time(self):
        self.start(grace=4)
        # Notes each SIGTERM and goes on: the first comes at preemption, the next when the grace
        # time is over (then SIGKILL after KillWait=1).
        low = self.job('trap \'echo term >> marker\' TERM\n'
                       'echo start >> marker\n'
                       'while true; do sleep 0.2; done', 'spot')
        self.c.wait(lambda: self.marker() == ['start'], 'the spot job to start', 30)
        t0 = time.time()
        high = self.job('sleep 1', 'urgent')
        self.c.wait(lambda: self.marker()[:2] == ['start', 'term'], 'the first SIGTERM', 10)
        first = time.time() - t0
        self.assertLess(first, 3.5)  # at once, not after the grace time
        j = self.c.job(low)
        self.assertEqual(j['state'], 'RUNNING')
        # Its EndTime moved to the end of the grace time, as Slurm's preemption guide says (not
        # its start + the 600 s limit).
        self.assertLessEqual(abs(j['preempt_end_time'] - (t0 + 4)), 3, j)
        out = self.c.cli('squeue', '-h', '-j', str(low), '-o', '%e').stdout
        end = time.mktime(time.strptime(out.strip(), '%Y-%m-%dT%H:%M:%S'))
        self.assertLessEqual(abs(end - j['preempt_end_time']), 1, out)
        self.c.wait_state(high, 'RUNNING', 30)
        waited = time.time() - t0
        self.assertGreaterEqual(waited, 4)  # the grace time was given
        self.assertEqual(self.marker()[:3], ['start', 'term', 'term'])
        self.assertEqual(self.c.job(low)['restart_count'], 1)

    def test_without_a_grace_time_the_job_ends_at_once(self):
        self.start(grace=0)
        # Its output file is truncated at each start (the default open mode): the second run's
        # output replaces the first's.
        low = self.job('trap \'echo term >> marker\' TERM\n'
                       'echo start >> marker\n'
                       'echo run-${SLURM_RESTART_COUNT:-0}\n'
                       'while true; do sleep 0.2; done', 'spot', stdout='out-%j.txt')
        self.c.wait(lambda: self.marker() == ['start'], 'the spot job to start', 30)
        t0 = time.time()
        high = self.job('sleep 1', 'urgent')
        self.c.wait_state(high, 'RUNNING', 30)
        self.assertLess(time.time() - t0, 4)  # SIGTERM, KillWait=1, SIGKILL
        self.assertEqual(self.marker()[:2], ['start', 'term'])
        self.assertEqual(self.c.job(low)['restart_count'], 1)
        self.assertEqual(self.output(f'out-{low}.txt'), ['run-0'])
        self.c.wait(lambda: self.output(f'out-{low}.txt') == ['run-1'],
                    'the second run to truncate the output', 30)


if __name__ == '__main__':
    unittest.main()

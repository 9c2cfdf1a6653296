"""Integration tests: the least-attained-service policy (SchedulerPolicy=las, issue 20) in the
real controller and agent, on one node of 4 declared GPUs. A 4-GPU job that has received more
than LasQueueLimits GPU-seconds is preempted by requeue, as Slurm's PreemptMode=REQUEUE does, for
a short job that arrives behind it, and runs again once the short job is done; a job submitted
with --no-requeue is never preempted.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_las (from this folder).
"""
import os
import subprocess
import tempfile
import time
import unittest

from harness import BERTH, Cluster

# Two queues split at 8 GPU-seconds: the 4-GPU job sinks after 2 s, and may be preempted once
# it has run LasMinRunTime=3 s.
CONF = ('SchedulerPolicy=las\nLasQueueLimits=8\nLasMinRunTime=3\nKillWait=1\n'
        'NodeName=node1 CPUs=4 RealMemory=4000 Gres=gpu:test:4\n')


class LasTest(unittest.TestCase):
    def setUp(self):
        self.c = Cluster(gpus=4)
        path = os.path.join(self.c.dir, 'cluster.conf')
        with open(path, 'w') as f:
            f.write(CONF)
        self.c.controller_args += ['--config', path]
        # Registered first, so that a start that fails half-way still ends what it started.
        self.addCleanup(lambda: self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1'))
        self.c.start()
        self.work = tempfile.mkdtemp(dir=self.c.dir, prefix='submit-')
        os.chmod(self.work, 0o755)

    def sbatch(self, *args):
        env = {k: v for k, v in self.c.env.items()
               if not k.startswith('SBATCH_') and not k.startswith('SLURM_')}
        p = subprocess.run([BERTH, 'sbatch', '--parsable', '-o', '/dev/null', *args],
                           cwd=self.work, env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout.strip().split(';')[0])

    def scancel(self, *ids):
        subprocess.run([BERTH, 'scancel', *map(str, ids)], env=self.c.env, capture_output=True,
                       timeout=60)

    def test_a_long_job_is_requeued_for_a_short_one_and_runs_again(self):
        long = self.sbatch('--gres=gpu:4', '--time=10', '--wrap', 'sleep 300')
        self.c.wait_state(long, 'RUNNING', 30)
        time.sleep(1)
        short = self.sbatch('--gres=gpu:1', '--time=5', '--wrap', 'sleep 3')
        self.c.wait_state(short, 'RUNNING', 30)
        j = self.c.job(long)
        self.assertEqual(j['restart_count'], 1, j)
        self.assertEqual(j['state'], 'PENDING', j)
        # Requeued, it starts again once the short job has left its GPUs.
        self.c.wait_state(short, 'COMPLETED', 30)
        self.c.wait_state(long, 'RUNNING', 30)
        self.assertEqual(self.c.job(long)['restart_count'], 1)
        self.scancel(long)
        self.c.wait_state(long, 'CANCELLED', 30)

    def test_a_no_requeue_job_is_never_preempted(self):
        long = self.sbatch('--no-requeue', '--gres=gpu:4', '--time=10', '--wrap', 'sleep 300')
        self.c.wait_state(long, 'RUNNING', 30)
        short = self.sbatch('--gres=gpu:1', '--time=5', '--wrap', 'sleep 1')
        time.sleep(6)  # past LasMinRunTime and the threshold: it would have been preempted
        self.assertEqual(self.c.job(short)['state'], 'PENDING')
        j = self.c.job(long)
        self.assertEqual((j['state'], j['restart_count']), ('RUNNING', 0), j)
        self.scancel(long, short)
        self.c.wait_state(long, 'CANCELLED', 30)


if __name__ == '__main__':
    unittest.main()

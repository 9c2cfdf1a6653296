"""Integration tests of salloc (issue 18) against real daemons, written from salloc(1) of Slurm
22.05: "salloc is used to allocate a Slurm job allocation ... When the job allocation is finally
granted, salloc runs the user-specified command. When the command completes, salloc relinquishes
the job allocation"; "--no-shell: immediately exit after allocating resources, without running a
command. However, the Slurm job will still be created and will remain active". Driven as a user
drives it: through a pseudo-terminal (Python's pty module), with srun --pty inside.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_salloc (from this folder).
"""
import os
import re
import subprocess
import time
import unittest

from harness import BERTH, Cluster
from test_slurm_srun_io import Terminal, is_raw


class SallocTest(unittest.TestCase):
    """One cluster for the class (node1: the host's CPUs)."""

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster(gpus=0).start()
        cls.work = os.path.join(cls.c.dir, 'work')
        os.makedirs(cls.work, exist_ok=True)
        cls.bin = os.path.join(cls.c.dir, 'bin')
        os.makedirs(cls.bin, exist_ok=True)
        for name in ('salloc', 'srun'):
            os.symlink(os.path.abspath(BERTH), os.path.join(cls.bin, name))
        cls.env = dict(cls.c.env, SHELL='/bin/sh', TMPDIR=cls.c.dir, PS1='salloc$ ',
                       PATH=f'{cls.bin}:/usr/local/bin:/usr/bin:/bin')

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def salloc(self, *args, timeout=90, input=None):
        return subprocess.run(['salloc', *args], env=self.env, capture_output=True, text=True,
                              timeout=timeout, cwd=self.work, input=input)

    def job(self, jid):
        return self.c.api('GET', f'/v1/jobs/{jid}')[1]

    def granted(self, text):
        m = re.search(r'salloc: Granted job allocation (\d+)', text)
        self.assertIsNotNone(m, text)
        return int(m.group(1))

    def test_the_command_runs_with_the_allocation_and_srun_steps_in_it(self):
        p = self.salloc('-n', '2', '-J', 'inter', 'sh', '-c',
                        'echo "job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST n=$SLURM_NTASKS '
                        'name=$SLURM_JOB_NAME here=${SLURMD_NODENAME:-none}"; '
                        'srun -l sh -c \'echo "task $SLURM_PROCID on $SLURMD_NODENAME"\' | sort; '
                        'echo piped | srun -n1 cat; exit 3')
        self.assertEqual(p.returncode, 3, p.stderr)
        jid = self.granted(p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], f'job={jid} nodes=node1 n=2 name=inter here=none', p.stdout)
        self.assertEqual(lines[1:], ['0: task 0 on node1', '1: task 1 on node1', 'piped'])
        self.assertIn(f'salloc: Relinquishing job allocation {jid}', p.stderr)
        # The job ends as the command did, as Slurm's salloc completes it.
        j = self.c.wait_state(jid, 'FAILED', 30)
        self.assertEqual(j['exit_code'], 3)
        self.assertEqual(j['request']['name'], 'inter')
        p = self.salloc('true')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.c.wait_state(self.granted(p.stderr), 'COMPLETED', 30)

    def test_a_shell_through_a_terminal_and_srun_pty_in_it(self):
        t = Terminal(['sh', '-c', 'salloc -n1; echo salloc-rc=$?'], self.env, self.work,
                     rows=30, cols=100)
        self.addCleanup(t.close)
        t.read_until('Granted job allocation')
        jid = self.granted(t.out.decode())
        # salloc's shell has the terminal: ^C reaches it (and not salloc).
        t.send('sleep 100\r')
        time.sleep(1)
        t.send(b'\x03')
        t.send('echo alive-$((1 + 1))\r')
        t.read_until('alive-2', timeout=20)
        t.send('srun --pty sh\r')
        t.send('echo "in-step $SLURM_JOB_ID $SLURM_STEP_ID $(stty size)"\r')
        t.read_until(f'in-step {jid} 0 30 100')
        t.send('exit 4\r')
        t.read_until('task 0: Exited with exit code 4')
        t.read_until('salloc$ ', start=t.out.rindex(b'Exited with'))  # salloc's shell again
        t.send('echo srun-rc=$?\r')
        t.read_until('srun-rc=4')
        t.send('exit 2\r')
        t.read_until('salloc-rc=2')
        self.assertIn(f'salloc: Relinquishing job allocation {jid}'.encode(), t.out)
        self.assertEqual(t.wait(), 0)
        self.assertFalse(is_raw(t.fd))
        self.assertEqual(self.c.wait_state(jid, 'FAILED', 30)['exit_code'], 2)

    def test_no_shell_keeps_the_allocation_until_scancel(self):
        p = self.salloc('--no-shell', '-n1')
        self.assertEqual(p.returncode, 0, p.stderr)
        jid = self.granted(p.stderr)
        self.assertNotIn('Relinquishing', p.stderr)
        time.sleep(1)
        self.assertEqual(self.job(jid)['state'], 'RUNNING')
        self.c.api('POST', '/v1/jobs/cancel', {'ids': [str(jid)]})
        self.c.wait_state(jid, 'CANCELLED', 30)

    def test_ctrl_c_while_pending_gives_the_allocation_up(self):
        blocker = self.c.submit({'name': 'blocker', 'script': '#!/bin/sh\nsleep 120\n',
                                 'work_dir': self.work, 'time_limit': 180,
                                 'cpus_per_task': len(os.sched_getaffinity(0))})
        self.addCleanup(self.c.api, 'POST', '/v1/jobs/cancel', {'ids': [str(blocker)]})
        self.c.wait_state(blocker, 'RUNNING', 30)
        t = Terminal(['salloc', '-n1', '-J', 'waits', 'true'], self.env, self.work)
        self.addCleanup(t.close)
        t.read_until('queued and waiting for resources')
        m = re.search(rb'Pending job allocation (\d+)', t.out)
        self.assertIsNotNone(m, t.out)
        t.send(b'\x03')
        self.assertEqual(t.wait(), 1)
        self.assertIn(f'Job allocation {int(m.group(1))} has been revoked'.encode(), t.out)
        self.c.wait_state(int(m.group(1)), 'CANCELLED', 30)

    def test_an_allocation_cancelled_under_the_command_ends_it(self):
        proc = subprocess.Popen(['salloc', '-n1', 'sleep', '300'], env=self.env, cwd=self.work,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        jid = None
        deadline = time.time() + 60
        while jid is None and time.time() < deadline:
            jobs = self.c.api('GET', '/v1/jobs')[1]['jobs']
            mine = [j for j in jobs if j['request'].get('name') == 'sleep' and
                    j['state'] == 'RUNNING']
            jid = mine[0]['id'] if mine else None
            time.sleep(0.2)
        self.assertIsNotNone(jid)
        time.sleep(1)
        self.c.api('POST', '/v1/jobs/cancel', {'ids': [str(jid)]})
        _, err = proc.communicate(timeout=60)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(f'salloc: Job allocation {jid} has been revoked.', err)

    def test_help_and_bad_options(self):
        p = self.salloc('--help')
        self.assertEqual(p.returncode, 0)
        self.assertIn('--no-shell', p.stdout)
        p = self.salloc('--frobnicate', 'true')
        self.assertEqual(p.returncode, 1)
        self.assertIn("salloc: unrecognized option '--frobnicate'", p.stderr)
        self.assertIn('Usage: salloc', p.stderr)
        p = self.salloc('--array=1-3', 'true')
        self.assertEqual(p.returncode, 1)


if __name__ == '__main__':
    unittest.main()

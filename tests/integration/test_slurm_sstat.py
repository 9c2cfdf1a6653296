"""Integration test of sstat against real daemons (docs/slurm.md "sstat"): a running job's CPU
time and memory as the node agent measures its cgroup, shown as the JOB.batch row.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_sstat (from this folder).
"""
import os
import unittest

from harness import Cluster

# Holds ~40 MiB and spins one CPU for a while.
BUSY = '''#!/bin/sh
python3 - <<'EOF'
import time
x = bytearray(40 << 20)
for i in range(0, len(x), 4096):
    x[i] = 1
t = time.time()
while time.time() - t < 40:
    pass
EOF
'''


def memory_mib(text):
    units = {'K': 1 / 1024, 'M': 1, 'G': 1024, 'T': 1024 * 1024}
    return float(text[:-1]) * units[text[-1]] if text and text[-1] in units else float(text or 0)


class SstatTest(unittest.TestCase):
    def setUp(self):
        self.c = Cluster(gpus=0)
        self.c.start()
        self.addCleanup(lambda: self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1'))
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work)
        os.chmod(self.work, 0o777)

    def sstat(self, *args, check=True):
        return self.c.cli('sstat', *args, check=check)

    def test_running_job_is_measured(self):
        jid = self.c.submit({'name': 'busy', 'script': BUSY, 'work_dir': self.work,
                             'time_limit': 600, 'stdout': '/dev/null'})
        self.c.wait_state(jid, 'RUNNING', 30)
        fields = 'JobID,AveCPU,AveRSS,MaxRSS,MaxRSSNode,MaxRSSTask,NTasks,Nodelist'
        row = {}

        def measured():
            out = self.sstat('-j', str(jid), '-P', '-o', fields).stdout.splitlines()
            row.clear()
            row.update(zip(out[0].split('|'), out[1].split('|')))
            return row['MaxRSS'] != '' and memory_mib(row['MaxRSS']) >= 30
        self.c.wait(measured, 'the agent to report the job', 40)
        node = self.c.job(jid)['allocation']['nodes'][0]['node']
        self.assertEqual(row['JobID'], f'{jid}.batch')
        self.assertEqual(row['NTasks'], '1')
        self.assertEqual(row['Nodelist'], node)
        self.assertEqual(row['MaxRSSNode'], node)
        self.assertEqual(row['MaxRSSTask'], '0')
        self.assertGreaterEqual(memory_mib(row['AveRSS']), 1)
        self.assertRegex(row['AveCPU'], r'^\d\d:\d\d(\.\d{3}|:\d\d)$')
        self.assertNotEqual(row['AveCPU'], '00:00.000')
        # The default layout: Slurm's header, one row.
        out = self.sstat('-j', str(jid)).stdout.splitlines()
        self.assertTrue(out[0].startswith('JobID         MaxVMSize  MaxVMSizeNode'), out[0])
        self.assertTrue(out[2].startswith(f'{jid}.batch'), out[2])
        self.c.api('POST', f'/v1/jobs/{jid}/cancel')

    def test_errors(self):
        p = self.sstat(check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, "sstat: error: You didn't give me any jobs to stat.\n")
        p = self.sstat('-j', '99999', '-n', check=False)
        self.assertEqual(p.returncode, 0)
        self.assertEqual(p.stderr, "sstat: error: couldn't get steps for job 99999\n")
        # A pending job has no steps running; one that ended is no longer asked about.
        held = self.c.submit({'script': '#!/bin/sh\ntrue\n', 'work_dir': self.work,
                              'hold': True})
        p = self.sstat('-j', str(held), '-n', check=False)
        self.assertEqual(p.stderr, f'sstat: error: no steps running for job {held}\n')
        self.c.api('POST', f'/v1/jobs/{held}/cancel')
        self.c.wait_state(held, 'CANCELLED', 30)
        p = self.sstat('-j', f'{held},99999', '-n', check=False)
        self.assertEqual(p.stderr, f"sstat: error: couldn't get steps for job {held}\n"
                                   "sstat: error: couldn't get steps for job 99999\n")


if __name__ == '__main__':
    unittest.main()

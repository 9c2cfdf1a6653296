"""Integration tests of `berth report usage|advice` (and seff's advice) against real daemons.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_report
A few short jobs run for real; the report's figures are checked against the same formulas
(docs/report.md) applied to the jobs' own records.
"""
import json
import os
import subprocess
import unittest

from harness import BERTH, Cluster, make_user, remove_user

ROOT = os.geteuid() == 0

SPIN_ONE_CPU = '''python3 - <<'EOF'
import time
t = time.time()
while time.time() - t < 3:
    pass
EOF'''


def script(body):
    return '#!/bin/sh\n' + body + '\n'


class ReportTest(unittest.TestCase):
    """root runs two jobs in account physics (one asks 1G and uses a few MB, one asks 2 CPUs and
    spins one); another user (when the tests run as root) runs one in account chem."""

    @classmethod
    def setUpClass(cls):
        cls.c = c = Cluster().start()
        cls.work = os.path.join(c.dir, 'work')
        os.makedirs(cls.work, exist_ok=True)
        os.chmod(cls.work, 0o777)
        cls.user = f'rep{os.getpid() % 10000}' if ROOT else None
        cls.mem = c.submit({
            'name': 'memjob', 'account': 'physics', 'work_dir': cls.work, 'time_limit': 3600,
            'mem_per_node': 1024,
            'script': script("python3 -c 'x = bytearray(20 << 20); import time; "
                             "time.sleep(1.5)'")})
        cls.spin = c.submit({
            'name': 'spin', 'account': 'physics', 'work_dir': cls.work, 'time_limit': 600,
            'cpus_per_task': 2, 'mem_per_node': 512, 'script': script(SPIN_ONE_CPU)})
        cls.theirs = None
        if cls.user:
            make_user(cls.user)
            p = c.cli('submit', '--account=chem', '--mem=256M', '--time=10', f'--chdir={cls.work}',
                      '--wrap', 'true', user=cls.user)
            cls.theirs = int(p.stdout.split()[-1])
        for jid in (cls.mem, cls.spin, cls.theirs):
            if jid is not None:
                c.wait_state(jid, 'COMPLETED', 60)

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        if cls.user:
            remove_user(cls.user)

    def report(self, *args, user=None):
        cmd = [os.path.abspath(BERTH), 'report', *args]
        if user:
            cmd = ['runuser', '-u', user, '--', 'env', f'BERTH_SOCKET={self.c.sock}', *cmd]
        return subprocess.run(cmd, env=self.c.env, capture_output=True, text=True, timeout=60,
                              cwd=self.work)

    def figures(self, jid):
        """A job's figures by docs/report.md, from its record (the whole run is in the period)."""
        r = self.c.job(jid)
        hours = (r['end_time'] - r['start_time']) / 3600
        nodes = r['allocation']['nodes']
        cpus = sum(n['cpus'] for n in nodes)
        mem_gib = sum(n['mem_mib'] for n in nodes) / 1024
        u = r['usage']
        return {'jobs': 1, 'cpu_hours': cpus * hours, 'cpu_hours_used': u['cpu_seconds'] / 3600,
                'mem_gib_hours': mem_gib * hours,
                'mem_peak_gib_hours': u['max_rss_mib'] / 1024 * hours}

    def assert_row(self, row, *jids):
        want = {}
        for jid in jids:
            for k, v in self.figures(jid).items():
                want[k] = want.get(k, 0) + v
        for k, v in want.items():
            self.assertAlmostEqual(row[k], v, places=3, msg=f'{k} of {row}')
        self.assertEqual(row['gpu_hours'], 0)
        self.assertIsNone(row['gpu_utilization'])

    def usage_json(self, *args, user=None):
        p = self.report('usage', '-S', 'now-1hour', '--format=json', *args, user=user)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_usage_rows_match_the_jobs(self):
        r = self.usage_json('-a')
        rows = {(row['account'], row['user']): row for row in r['rows']}
        self.assert_row(rows[('physics', '')], self.mem, self.spin)
        self.assert_row(rows[('physics', 'root')], self.mem, self.spin)
        self.assertEqual(rows[('physics', 'root')]['jobs'], 2)
        if self.user:
            self.assert_row(rows[('chem', self.user)], self.theirs)
        # The spinner kept at most one of its two CPUs busy (less when the host is loaded); the
        # other job used little of its 1G.
        top = {j['job_id']: j for j in r['top_jobs']}
        spin = top[str(self.spin)]
        self.assertGreater(spin['cpu_efficiency'], 10)
        self.assertLess(spin['cpu_efficiency'], 55)
        self.assertLess(top[str(self.mem)]['mem_efficiency'], 20)
        self.assertAlmostEqual(spin['idle_cpu_hours'], spin['cpu_hours'] - spin['cpu_hours_used'],
                               delta=0.0002)  # each rounded to 4 decimals

    def test_usage_text_formats(self):
        p = self.report('usage', '-S', 'now-1hour', '-A', 'physics', '--top', '1')
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertTrue(lines[0].startswith('Usage from '), lines[0])
        self.assertEqual(lines[1].split()[:4], ['Account', 'User', 'Jobs', 'CPUHours'])
        self.assertEqual(lines[3].split()[:2], ['physics', '2'])
        self.assertEqual(lines[4].split()[:3], ['physics', 'root', '2'])
        self.assertTrue(lines[6].startswith('Most over-provisioned jobs'), lines[6])
        self.assertEqual(len(lines), 10)  # title, header, dashes, one job
        p = self.report('usage', '-S', 'now-1hour', '-A', 'physics', '--top', '0', '-P', '-n')
        self.assertEqual([line.split('|')[:3] for line in p.stdout.splitlines()],
                         [['physics', '', '2'], ['physics', 'root', '2']])
        p = self.report('usage', '-S', 'now-1hour', '-A', 'physics', '--top=0', '--format=csv')
        self.assertEqual(p.stdout.splitlines()[0],
                         'Account,User,Jobs,CPUHours,CPUHoursUsed,CPUEff,MemGiBHours,'
                         'MemPeakGiBHours,MemEff,GPUHours,GPUHoursUsed,GPUUtil,'
                         'GPUHoursUnmeasured')
        self.assertEqual(len(p.stdout.splitlines()), 3)

    @unittest.skipUnless(ROOT, 'needs root to make a user')
    def test_a_user_sees_their_own_jobs(self):
        r = self.usage_json(user=self.user)
        self.assertEqual([(row['account'], row['user']) for row in r['rows']],
                         [('chem', ''), ('chem', self.user)])
        r = self.usage_json()  # root: everyone's
        self.assertEqual(r['total']['jobs'], 3)
        # Advice for oneself by default.
        p = self.report('advice', '-S', 'now-1hour', '--format=json', user=self.user)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)['user'], self.user)
        self.assertEqual(json.loads(p.stdout)['jobs'], 1)

    def test_advice_names_the_over_asked_resources(self):
        p = self.report('advice', 'root', '-S', 'now-1hour', '--format=json')
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r['jobs'], 2)
        res = {x['resource']: x for x in r['resources']}
        # 1G and 512M asked, a few tens of MB used: ask less memory; minutes asked, seconds run.
        self.assertEqual(res['memory']['advice'], 'less', res['memory'])
        self.assertRegex(res['memory']['option'], r'^--mem=\d+M$')
        self.assertEqual(res['memory']['median_asked'], 768)
        self.assertEqual(res['time']['advice'], 'less')
        self.assertEqual(res['time']['option'], '--time=00:05:00')
        # Jobs under a minute say nothing of their CPUs; no GPUs were asked.
        self.assertEqual((res['CPUs']['advice'], res['CPUs']['jobs']), ('none', 0))
        self.assertEqual((res['GPUs']['advice'], res['GPUs']['jobs']), ('none', 0))
        p = self.report('advice', 'root', '-S', 'now-1hour')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith('Advice for root from 2 jobs that ended between '))
        self.assertRegex(p.stdout, r'\nAdvice: memory: 2 jobs used at most \d+% of the memory '
                                   r'they asked for \(peak \d+M in job \d+, median peak \d+M; '
                                   r'median request 768M\): --mem=\d+M would have served all '
                                   r'of them')
        self.assertIn('\nAdvice: time: 2 jobs ran at most ', p.stdout)
        p = self.report('advice', 'root', '-S', 'now-1hour', '--last', '1', '-P', '-n')
        self.assertEqual([line.split('|')[:2] for line in p.stdout.splitlines()],
                         [['memory', '1'], ['time', '1'], ['CPUs', '0'], ['GPUs', '0']])

    def test_seff_gives_the_same_advice(self):
        p = subprocess.run([os.path.abspath(BERTH), 'seff', str(self.mem)], env=self.c.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r'Suggestion: memory: asked 1G, peaked at \d+M: '
                                   r'--mem=\d+M would do\n')
        self.assertIn('Suggestion: time: asked 01:00:00, ran 00:00:0', p.stdout)

    def test_bad_input(self):
        p = self.report('usage', '-S', 'someday')
        self.assertEqual((p.returncode, p.stderr),
                         (1, "berth report: error: invalid time for -S: 'someday' (try "
                             "now-7days, 2024-03-01 or 2024-03-01T10:00)\n"))
        p = self.report('advice', '--format', 'xml')
        self.assertEqual((p.returncode, p.stderr),
                         (1, "berth report: error: unknown format 'xml' (table, csv or json)\n"))
        p = self.report('sideways')
        self.assertEqual(p.returncode, 2)
        p = self.report('usage', '--help')
        self.assertEqual(p.returncode, 0)
        self.assertTrue(p.stdout.startswith('Usage: berth report usage [options]\n'))


if __name__ == '__main__':
    unittest.main()

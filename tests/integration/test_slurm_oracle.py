"""berth against the real Slurm 22.05 on the shared sbatch oracle.

For each script of shared/testdata/sbatch that has an oracle result
(shared/bench/slurm/sbatch-oracle/<script>.json: what Slurm 22.05.8 made of it when submitted
with `sbatch --hold` on the oracle cluster), this test submits the script the same way to a
controller started with `--slurm-conf shared/bench/slurm/oracle/slurm.conf` (no agents: every job
stays held) and compares `scontrol show job -o` field by field. Scripts Slurm rejects must be
rejected.

It prints a table of agreement and fails on any difference not in ALLOWED_DIFFERENCES. With
BERTH_ORACLE_REPORT=path it also writes the results as JSON.

Runs only where the shared folder is ($BERTH_SHARED, else ../shared beside the repository).
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_oracle (from this folder).
"""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from harness import BERTH, Cluster

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get('BERTH_SHARED') or os.path.normpath(os.path.join(HERE, '../../../shared'))
ORACLE_DIR = os.path.join(SHARED, 'bench/slurm/sbatch-oracle')
SLURM_CONF = os.path.join(SHARED, 'bench/slurm/oracle/slurm.conf')
SCRIPTS = os.path.join(SHARED, 'testdata/sbatch')

# The fields the issue names (TRES= is Slurm's ReqTRES of a pending job).
FIELDS = ['NumNodes', 'NumCPUs', 'NumTasks', 'CPUs/Task', 'TRES', 'TresPerNode', 'TresPerJob',
          'TresPerTask', 'MinMemoryNode', 'MinMemoryCPU', 'TimeLimit', 'TimeMin', 'ArrayTaskId',
          'JobName', 'StdOut', 'StdErr', 'Dependency', 'Requeue', 'Features', 'OverSubscribe',
          'Partition', 'Licenses', 'Nice', 'Account', 'QOS']

# Differences accepted, each with its reason: {(script, field): reason}. A field absent on one
# side is compared as None. Keep this empty unless berth cannot do what Slurm does.
ALLOWED_DIFFERENCES = {
}


def sbatch_ready():
    """Whether `berth sbatch` is built (not the placeholder)."""
    p = subprocess.run([BERTH, 'sbatch', '--version'], capture_output=True, text=True)
    return 'not built yet' not in p.stderr


def parse_one_line(text):
    """`scontrol show job -o` -> ordered {key: value}. A value runs until the next ' Key=' (values
    such as Comment may hold blanks); trailing blanks are dropped, as the oracle records them."""
    tokens = text.rstrip('\n').split(' ')
    fields = {}
    key = None
    for tok in tokens:
        head = tok.split('=', 1)[0]
        if '=' in tok and head and (head[0].isalpha()) and all(
                c.isalnum() or c in '/:_' for c in head):
            key, value = head, tok.split('=', 1)[1]
            fields[key] = value
        elif key is not None:
            fields[key] += ' ' + tok
    return {k: v.rstrip(' ') for k, v in fields.items()}


def clean_env(cluster):
    env = {k: v for k, v in cluster.env.items()
           if not k.startswith('SBATCH_') and not k.startswith('SLURM_')}
    return env


class OracleCluster(Cluster):
    def start_controller(self):
        self.controller = subprocess.Popen(
            [BERTH, 'controller', '--home', self.dir, '--socket', self.sock,
             '--slurm-conf', SLURM_CONF],
            stdout=self.log('controller'), stderr=subprocess.STDOUT)
        self.wait(lambda: self.ready(), 'the controller to answer')


@unittest.skipUnless(os.path.isdir(ORACLE_DIR) and os.path.isfile(SLURM_CONF),
                     f'{ORACLE_DIR} is not here')
class SlurmOracleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = OracleCluster()
        cls.c.start_controller()
        cls.use_sbatch = sbatch_ready()

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def submit(self, script_path, workdir):
        shutil.copy(script_path, os.path.join(workdir, 'job.sh'))
        if self.use_sbatch:
            cmd = [BERTH, 'sbatch', '--hold', 'job.sh']
        else:  # until sbatch exists: berth's own submit, which reads no #SBATCH lines
            cmd = [BERTH, 'submit', '--hold', 'job.sh']
        p = subprocess.run(cmd, cwd=workdir, env=clean_env(self.c), capture_output=True,
                           text=True, timeout=60)
        job_id = None
        if p.returncode == 0:
            words = p.stdout.split()
            job_id = words[-1] if words else None
        return p, job_id

    def show(self, job_id):
        p = subprocess.run([BERTH, 'scontrol', 'show', 'job', '-o', job_id], env=self.c.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return parse_one_line(p.stdout)

    def run_one(self, oracle):
        """Returns {field: (want, got)} of the differences, or {'(accepted)': ...}."""
        script = os.path.join(SCRIPTS, oracle['script'])
        workdir = tempfile.mkdtemp(prefix='oracle-', dir=self.c.dir)
        p, job_id = self.submit(script, workdir)
        if not oracle['accepted']:
            if p.returncode == 0:
                return {'(rejected)': ('rejected: ' + oracle['stderr'].strip(),
                                       'accepted as job ' + str(job_id))}
            return {}
        if p.returncode != 0 or job_id is None:
            return {'(accepted)': ('accepted', 'rejected: ' + p.stderr.strip())}
        got = self.show(job_id)
        diffs = {}
        for field in FIELDS:
            want = oracle['fields'].get(field)
            if want is not None:
                want = want.replace('<workdir>', workdir).replace('<jobid>', job_id)
            if got.get(field) != want:
                diffs[field] = (want, got.get(field))
        return diffs

    def test_scripts_agree_with_slurm(self):
        oracles = []
        for path in sorted(glob.glob(os.path.join(ORACLE_DIR, '*.json'))):
            with open(path) as f:
                oracles.append(json.load(f))
        self.assertGreater(len(oracles), 0)
        results = {}
        for oracle in oracles:
            with self.subTest(script=oracle['script']):
                results[oracle['script']] = self.run_one(oracle)
        agree = [s for s, d in results.items() if not d]
        unexpected = {s: {f: d for f, d in diffs.items() if (s, f) not in ALLOWED_DIFFERENCES}
                      for s, diffs in results.items()}
        unexpected = {s: d for s, d in unexpected.items() if d}
        per_field = {}
        for diffs in results.values():
            for field in diffs:
                per_field[field] = per_field.get(field, 0) + 1
        print(f'\nsbatch oracle: {len(agree)} of {len(oracles)} scripts agree on every field'
              f' (submitted with {"berth sbatch" if self.use_sbatch else "berth submit"})')
        for field, n in sorted(per_field.items(), key=lambda x: -x[1]):
            print(f'  {field:<16} differs in {n}')
        for script, diffs in results.items():
            for field, (want, got) in diffs.items():
                mark = 'allowed' if (script, field) in ALLOWED_DIFFERENCES else 'DIFF'
                print(f'  {mark:<7} {script}: {field}: slurm {want!r} berth {got!r}')
        report = os.environ.get('BERTH_ORACLE_REPORT')
        if report:
            with open(report, 'w') as f:
                json.dump({'total': len(oracles), 'agree': len(agree),
                           'submitted_with': 'sbatch' if self.use_sbatch else 'submit',
                           'differences': {s: {k: {'slurm': w, 'berth': g}
                                               for k, (w, g) in d.items()}
                                           for s, d in results.items() if d},
                           'allowed': {f'{s}:{f}': r for (s, f), r in
                                       ALLOWED_DIFFERENCES.items()}}, f, indent=1)
        self.assertEqual(unexpected, {}, 'differences from Slurm (see the table above)')


@unittest.skipUnless(os.path.isfile(SLURM_CONF), f'{SLURM_CONF} is not here')
class TaskLargerThanAnyNodeTest(unittest.TestCase):
    """One task needs more CPUs than any node of the oracle's partition has (256 each).

    Slurm 22.05 refuses it at submission ("Requested node configuration is not available"), but
    not when it is held: select_nodes answers ESLURM_JOB_HELD before it looks at the nodes, so
    `sbatch --hold -c 300` is accepted and shows NumNodes/NumCPUs as requested; once released,
    the scheduler finds no node could ever hold it and the job waits as BadConstraints with
    Priority=0.
    """

    @classmethod
    def setUpClass(cls):
        cls.c = OracleCluster()
        cls.c.start_controller()
        if not sbatch_ready():
            cls.c.stop()
            raise unittest.SkipTest('berth sbatch is not built')

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def sbatch(self, *args):
        workdir = tempfile.mkdtemp(prefix='big-', dir=self.c.dir)
        with open(os.path.join(workdir, 'job.sh'), 'w') as f:
            f.write('#!/bin/sh\nhostname\n')
        return subprocess.run([BERTH, 'sbatch', *args, 'job.sh'], cwd=workdir,
                              env=clean_env(self.c), capture_output=True, text=True, timeout=60)

    def show(self, job_id):
        p = subprocess.run([BERTH, 'scontrol', 'show', 'job', '-o', job_id], env=self.c.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return parse_one_line(p.stdout)

    def test_refused_when_not_held(self):
        p = self.sbatch('-c', '300')
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'sbatch: error: Batch job submission failed: '
                                   'Requested node configuration is not available\n')
        # Features are checked before the hold is (Slurm's job_create): refused held or not.
        p = self.sbatch('--hold', '-C', 'nosuchfeature')
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'sbatch: error: Batch job submission failed: '
                                   'Invalid feature specification\n')

    def test_held_is_accepted_and_released_waits_as_bad_constraints(self):
        p = self.sbatch('--hold', '-c', '300')
        self.assertEqual(p.returncode, 0, p.stderr)
        job_id = p.stdout.split()[-1]
        got = self.show(job_id)
        self.assertEqual({k: got.get(k) for k in ('JobState', 'Reason', 'NumNodes', 'NumCPUs',
                                                  'NumTasks', 'CPUs/Task', 'Priority')},
                         {'JobState': 'PENDING', 'Reason': 'JobHeldUser', 'NumNodes': '1',
                          'NumCPUs': '300', 'NumTasks': '1', 'CPUs/Task': '300',
                          'Priority': '0'})
        p = self.sbatch('--hold', '-n3', '-c300')
        self.assertEqual(p.returncode, 0, p.stderr)
        got = self.show(p.stdout.split()[-1])
        self.assertEqual((got.get('NumNodes'), got.get('NumCPUs')), ('3', '900'))
        self.c.cli('scontrol', 'release', job_id)
        self.c.wait(lambda: self.show(job_id).get('Reason') == 'BadConstraints',
                    'the released job to wait as BadConstraints', 30)
        got = self.show(job_id)
        self.assertEqual((got.get('JobState'), got.get('Priority')), ('PENDING', '0'))
        p = subprocess.run([BERTH, 'squeue', '-h', '-j', job_id, '-o', '%r'], env=self.c.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.stdout, 'BadConstraints\n')

if __name__ == '__main__':
    unittest.main()

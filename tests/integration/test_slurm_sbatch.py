"""Integration tests of `berth sbatch` against real daemons: directives, SBATCH_* variables and
the command line reach the job (its SLURM_* environment, written to its output file), --parsable,
--test-only, --hold, --wait's exit codes, sbatch's refusals with Slurm 22.05's messages and
exit codes (nothing reaches the queue), and pyxis's --container-* options in the job's request.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_sbatch (from this folder).
"""
import os
import re
import subprocess
import tempfile
import unittest

from harness import BERTH, Cluster

TRY_HELP = 'Try "sbatch --help" for more information\n'


class SbatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster().start()

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def setUp(self):
        self.work = tempfile.mkdtemp(dir=self.c.dir, prefix='submit-')
        os.chmod(self.work, 0o755)

    def write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def sbatch(self, *args, env=None, stdin=None):
        full = {k: v for k, v in self.c.env.items()
                if not k.startswith('SBATCH_') and not k.startswith('SLURM_')}
        full.update(env or {})
        return subprocess.run([BERTH, 'sbatch', *args], cwd=self.work, env=full, input=stdin,
                              capture_output=True, text=True, timeout=120)

    def queue(self):
        return self.c.api('GET', '/v1/jobs?all=1')[1]['jobs']

    def job_env(self, job_id):
        """The SLURM_* variables the job printed (`env` into its default output file)."""
        with open(os.path.join(self.work, f'slurm-{job_id}.out')) as f:
            return dict(line.split('=', 1) for line in f.read().splitlines() if '=' in line)

    def test_directives_environment_and_command_line_reach_the_job(self):
        self.write('job.sh', '#!/bin/sh\n'
                             '#SBATCH -J fromscript --time=10\n'
                             '#SBATCH --ntasks=1 -c 1   # one task\n'
                             '#SBATCH --mem=100M\n'
                             '#SBATCH --gres=gpu:2\n'
                             '#SBATCH --comment "in the script"\n'
                             'env | grep -E "^(SLURM|CUDA|MYVAR)" | sort\n')
        p = self.sbatch('--parsable', '--wait', '--export=ALL,MYVAR=fromcli', 'job.sh',
                        env={'SBATCH_JOB_NAME': 'fromenv', 'SBATCH_TIMELIMIT': '20'})
        self.assertEqual(p.returncode, 0, p.stderr)
        job_id = p.stdout.strip()
        self.assertRegex(job_id, r'^\d+$')
        env = self.job_env(job_id)
        self.assertEqual(env['SLURM_JOB_ID'], job_id)
        self.assertEqual(env['SLURM_JOB_NAME'], 'fromenv')  # the environment beats the script
        self.assertEqual(env['MYVAR'], 'fromcli')
        self.assertEqual(env['SLURM_NTASKS'], '1')
        self.assertEqual(env['SLURM_NPROCS'], '1')
        self.assertEqual(env['SLURM_CPUS_PER_TASK'], '1')
        self.assertEqual(env['SLURM_MEM_PER_NODE'], '100')
        self.assertEqual(env['SLURM_GPUS_ON_NODE'], '2')
        self.assertEqual(len(env['CUDA_VISIBLE_DEVICES'].split(',')), 2)
        self.assertEqual(env['SLURM_SUBMIT_DIR'], self.work)
        self.assertEqual(env['SLURM_JOB_NODELIST'], 'node1')
        self.assertEqual(env['SLURM_JOB_NUM_NODES'], '1')
        self.assertEqual(env['SLURM_EXPORT_ENV'], 'ALL,MYVAR=fromcli')
        self.assertNotIn('SLURM_RESTART_COUNT', env)
        job = self.c.job(int(job_id))
        self.assertEqual(job['request']['time_limit'], 20 * 60)
        self.assertEqual(job['request']['comment'], 'in the script')
        # The command line beats both.
        p = self.sbatch('--hold', '-J', 'fromcli', '-t', '30', 'job.sh',
                        env={'SBATCH_JOB_NAME': 'fromenv', 'SBATCH_TIMELIMIT': '20'})
        self.assertEqual(p.returncode, 0, p.stderr)
        held = self.c.job(int(p.stdout.split()[-1]))
        self.assertEqual(held['request']['name'], 'fromcli')
        self.assertEqual(held['request']['time_limit'], 30 * 60)

    def test_script_arguments_reach_the_script(self):
        self.write('args.sh', '#!/bin/sh\necho "COUNT=$#"\necho "FIRST=$1"\necho "SECOND=$2"\n')
        p = self.sbatch('--parsable', '-W', 'args.sh', 'one', 'two words')
        self.assertEqual(p.returncode, 0, p.stderr)
        out = self.job_env(p.stdout.strip())
        self.assertEqual(out['COUNT'], '2')
        self.assertEqual(out['FIRST'], 'one')
        self.assertEqual(out['SECOND'], 'two words')

    def test_defaults_not_asked_for_stay_unset(self):
        self.write('job.sh', '#!/bin/sh\nenv | grep ^SLURM | sort\n')
        p = self.sbatch('--parsable', '-W', 'job.sh', env={'SLURM_NTASKS': '99'})
        self.assertEqual(p.returncode, 0, p.stderr)
        env = self.job_env(p.stdout.strip())
        for name in ('SLURM_NTASKS', 'SLURM_NPROCS', 'SLURM_CPUS_PER_TASK', 'SLURM_MEM_PER_NODE',
                     'SLURM_GPUS_ON_NODE'):
            self.assertNotIn(name, env)
        self.assertEqual(env['SLURM_JOB_NAME'], 'job.sh')
        self.assertEqual(env['SLURM_TASKS_PER_NODE'], '1')
        self.assertEqual(env['SLURM_JOB_CPUS_PER_NODE'], '1')

    def test_submitted_batch_job_hold_and_defaults(self):
        self.write('job.sh', '#!/bin/sh\n#SBATCH --array=1-3%2\ntrue\n')
        p = self.sbatch('-H', 'job.sh')
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.fullmatch(r'Submitted batch job (\d+)\n', p.stdout)
        self.assertIsNotNone(m, p.stdout)
        job = self.c.job(int(m.group(1)))
        self.assertEqual(job['state'], 'PENDING')
        self.assertEqual(job['reason'], 'JobHeldUser')
        req = job['request']
        self.assertEqual(req['name'], 'job.sh')
        self.assertEqual(req['work_dir'], self.work)
        self.assertEqual(req['stdout'], self.work + '/slurm-%A_%a.out')
        self.assertEqual(req['array'], '1-3%2')
        p = self.sbatch('--hold', '--parsable', '--wrap', 'echo hi')
        self.assertEqual(p.returncode, 0, p.stderr)
        req = self.c.job(int(p.stdout))['request']
        self.assertEqual(req['name'], 'wrap')
        self.assertIn('echo hi', req['script'])
        self.assertEqual(req['stdout'], self.work + '/slurm-%j.out')

    def test_test_only_stores_nothing(self):
        self.write('job.sh', '#!/bin/sh\ntrue\n')
        before = self.queue()
        p = self.sbatch('--test-only', '-n', '1', 'job.sh')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, '')
        self.assertRegex(p.stderr, r'^sbatch: Job \d+ to start at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d '
                                   r'using 1 processors on nodes node1 in partition \S+\n$')
        self.assertEqual(self.queue(), before)
        p = self.sbatch('--test-only', '-N', '5', 'job.sh')
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, r'^allocation failure: ')
        self.assertEqual(self.queue(), before)

    def test_a_script_that_is_not_utf8_is_refused_clearly(self):
        # A Latin-1 comment: JSON carries UTF-8 only, so sbatch says so (it used to abort on an
        # uncaught exception) and nothing is submitted.
        with open(os.path.join(self.work, 'latin1.sh'), 'wb') as f:
            f.write(b'#!/bin/sh\n# Gr\xfc\xdfe\necho hi\n')
        before = self.queue()
        p = self.sbatch('latin1.sh')
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn('not UTF-8', p.stderr)
        self.assertEqual(self.queue(), before)

    def test_wait_gives_the_jobs_exit_code(self):
        cases = [('exit 0', 0), ('exit 3', 3), ('kill -9 $$', 1)]
        for body, code in cases:
            self.write('w.sh', '#!/bin/sh\n' + body + '\n')
            p = self.sbatch('--wait', 'w.sh')
            self.assertEqual(p.returncode, code, (body, p.stdout, p.stderr))
            self.assertRegex(p.stdout, r'^Submitted batch job \d+\n$')
        # An array: the highest exit code of its tasks.
        self.write('a.sh', '#!/bin/sh\nexit $SLURM_ARRAY_TASK_ID\n')
        p = self.sbatch('-W', '--array=1-2', 'a.sh')
        self.assertEqual(p.returncode, 2, p.stderr)

    def test_refusals_submit_nothing(self):
        self.write('job.sh', '#!/bin/sh\ntrue\n')
        self.write('bad.sh', '#!/bin/sh\n#SBATCH --image=nersc/pytorch\ntrue\n')
        self.write('noshebang.sh', 'echo hi\n')
        cases = [
            (['--bogus', 'job.sh'], "sbatch: unrecognized option '--bogus'\n" + TRY_HELP, 255),
            (['bad.sh'], "sbatch: unrecognized option '--image=nersc/pytorch'\n" + TRY_HELP, 255),
            (['--mem', ], "sbatch: option '--mem' requires an argument\n" + TRY_HELP, 255),
            (['-t', '1:xx', 'job.sh'], 'sbatch: error: Invalid --time specification\n', 255),
            (['--array=5-1', 'job.sh'],
             'sbatch: error: Batch job submission failed: Invalid job array specification\n', 1),
            (['--dependency=afterok:x', 'job.sh'],
             'sbatch: error: Batch job submission failed: Job dependency problem\n', 1),
            (['-N', 'x', 'job.sh'], 'sbatch: error: "x" is not a valid node count\n', 255),
            (['-p', 'nosuch', 'job.sh'],
             'sbatch: error: invalid partition specified: nosuch\n'
             'sbatch: error: Batch job submission failed: Invalid partition name specified\n', 1),
            (['noshebang.sh'],
             'sbatch: error: This does not look like a batch script.  The first\n'
             'sbatch: error: line must start with #! followed by the path to an interpreter.\n'
             'sbatch: error: For instance: #!/bin/sh\n', 1),
            (['missing.sh'], 'sbatch: error: Unable to open file missing.sh\n', 1),
        ]
        before = self.queue()
        for args, stderr, code in cases:
            p = self.sbatch(*args)
            self.assertEqual((p.returncode, p.stderr, p.stdout), (code, stderr, ''), args)
        self.assertEqual(self.queue(), before)
        # SLURM_EXIT_ERROR changes the status of errors that exit 1, as in Slurm.
        p = self.sbatch('missing.sh', env={'SLURM_EXIT_ERROR': '7'})
        self.assertEqual(p.returncode, 7)

    def test_pyxis_options_make_the_jobs_container(self):
        # Held: only the request is looked at (the container runs are tests of their own).
        self.write('c.sh', '#!/bin/sh\n#SBATCH --container-workdir=/b\ntrue\n')
        p = self.sbatch('--hold', '--parsable', '--container-image=x',
                        '--container-mounts=/a:/b:ro,./in', '--container-env=MYVAR',
                        '--no-container-mount-home', 'c.sh', env={'MYVAR': 'v1'})
        self.assertEqual(p.returncode, 0, p.stderr)
        job_id = int(p.stdout)
        try:
            self.assertEqual(self.c.job(job_id)['request']['container'], {
                'image': 'x',
                'mounts': [{'source': '/a', 'destination': '/b', 'read_only': True},
                           {'source': self.work + '/in', 'destination': '/in'}],
                'work_dir': '/b',
                'env': [['MYVAR', 'v1']],
                'mount_home': False})
        finally:
            self.c.api('POST', '/v1/jobs/cancel', {'ids': [str(job_id)]})
        p = self.sbatch('--help')
        self.assertIn('\nOptions provided by plugins:\n', p.stdout)
        self.assertIn('--container-mounts=SRC:DST[:FLAGS][,SRC:DST...]', p.stdout)

    def test_bad_pyxis_options_submit_nothing(self):
        self.write('job.sh', '#!/bin/sh\ntrue\n')
        cases = [
            (['--container-image=x', '--container-mounts=/tmp:', 'job.sh'],
             'sbatch: error: pyxis: --container-mounts: invalid format: /tmp:\n', 255),
            (['--container-image=x', '--container-mounts=/a:/b:ro+exec', 'job.sh'],
             "sbatch: error: pyxis: --container-mounts: unknown mount flag 'exec' in /a:/b:ro+exec "
             '(berth takes ro, rw, and ignores the propagation and bind flags)\n', 255),
            (['--container-mounts=/a:/b', 'job.sh'],
             'sbatch: error: pyxis: --container-mounts needs --container-image or '
             '--container-name (neither is set)\n', 1),
            (['--container-image=x', '--container-save=/s.sqsh', 'job.sh'],
             "sbatch: error: pyxis: --container-save is not supported by berth (a container's "
             'root is not saved to a file)\n', 255),
        ]
        before = self.queue()
        for args, stderr, code in cases:
            p = self.sbatch(*args)
            self.assertEqual((p.returncode, p.stderr, p.stdout), (code, stderr, ''), args)
        self.assertEqual(self.queue(), before)

    def test_script_on_stdin_and_help(self):
        p = self.sbatch('--hold', '--parsable', stdin='#!/bin/sh\n#SBATCH -J piped\ntrue\n')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.c.job(int(p.stdout))['request']['name'], 'piped')
        p = self.sbatch('--help')
        self.assertEqual(p.returncode, 0)
        self.assertTrue(p.stdout.startswith('Usage: sbatch'))


if __name__ == '__main__':
    unittest.main()

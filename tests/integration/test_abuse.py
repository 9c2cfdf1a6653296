"""Job-side abuse (issue 8), against real daemons, with jobs that a non-root user submits through
`berth sbatch`:

  * output, error and input files are opened as the user: a path the user may not write (a
    root-only folder, /etc, a root-owned file, a symlink the user planted to a root-owned file)
    is neither created nor truncated, and the job ends FAILED with the reason in its message;
  * `uid`, `gid` or `user` in the job JSON do not make the job run as anyone else;
  * a working directory the user may not enter is not used: the job runs in /tmp with Slurm's
    warning (docs/execution.md, "The job's process"), as the user;
  * variables the submitter exports (LD_PRELOAD, BASH_ENV, LD_LIBRARY_PATH, their own) reach the
    job but no process that runs as root (agent, `berth supervise`); BASH_ENV runs as the user;
  * a fork bomb stops at the job's pids limit (pids.max: the agent's BERTH_PIDS_MAX, 512 here), the
    node goes on starting jobs, and nothing of the bomb is left afterwards;
  * a memory hog beyond --mem is OOM-killed alone: OUT_OF_MEMORY, while a job beside it completes
    and the agent and supervisors live on.

Needs root (jobs run as a user the test creates). Checks that need a cgroup controller skip, with
the reason, where the node does not have it.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_abuse (from this folder).
"""
import glob
import json
import os
import pwd
import subprocess
import time
import unittest

from harness import BERTH, Cluster, make_user, remove_user

ROOT = os.geteuid() == 0
PRECIOUS = 'precious root data\n'
SECRET = 'root secret 7f3a\n'
ENDED = ['COMPLETED', 'FAILED', 'NODE_FAIL', 'CANCELLED', 'TIMEOUT', 'OUT_OF_MEMORY']
# The agent's pids limit per job (BERTH_PIDS_MAX in its environment; 4,096 by default).
PIDS_MAX = 512


def read_text(path):
    with open(path, errors='replace') as f:
        return f.read()


def write_text(path, text, mode=0o644):
    with open(path, 'w') as f:
        f.write(text)
    os.chmod(path, mode)


def proc_ids(path):
    """The real, effective, saved and filesystem uids of /proc/PID (status's Uid line)."""
    for line in read_text(path + '/status').splitlines():
        if line.startswith('Uid:'):
            return [int(x) for x in line.split()[1:]]
    return []


def processes():
    """(pid, uids, environ bytes) of every process that can still be read."""
    out = []
    for path in glob.glob('/proc/[0-9]*'):
        try:
            uids = proc_ids(path)
            with open(path + '/environ', 'rb') as f:
                env = f.read()
        except OSError:  # gone meanwhile, or a kernel thread
            continue
        out.append((int(os.path.basename(path)), uids, env))
    return out


@unittest.skipUnless(ROOT, 'needs root: jobs run as a user the test creates')
class AbuseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.user = f'abu{os.getpid() % 100000}'
        make_user(cls.user)
        pw = pwd.getpwnam(cls.user)
        cls.uid, cls.gid = pw.pw_uid, pw.pw_gid
        # A small pids limit, so that the fork bomb reaches it in seconds however slowly this
        # machine forks (4,096 forks took over 90 s on a loaded 2-core machine).
        cls.c = Cluster(agent_env={'BERTH_PIDS_MAX': str(PIDS_MAX)}).start()
        # The user's own folder; jobs are submitted from there.
        cls.work = os.path.join(cls.c.dir, 'work')
        os.makedirs(cls.work)
        os.chown(cls.work, cls.uid, cls.gid)
        os.chmod(cls.work, 0o755)
        # root's: the user may neither enter nor list it.
        cls.rootonly = os.path.join(cls.c.dir, 'rootonly')
        os.makedirs(cls.rootonly)
        os.chmod(cls.rootonly, 0o700)
        cls.victim_in_rootonly = os.path.join(cls.rootonly, 'victim.txt')
        write_text(cls.victim_in_rootonly, PRECIOUS)
        cls.secret = os.path.join(cls.rootonly, 'secret.txt')
        write_text(cls.secret, SECRET, 0o600)
        # A root-owned file the user can see (and whose folder they own) but not write.
        cls.victim_in_work = os.path.join(cls.work, 'root-owned.txt')
        write_text(cls.victim_in_work, PRECIOUS)
        cls.etc_path = f'/etc/berth-abuse-{os.getpid()}.out'

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        remove_user(cls.user)
        if os.path.exists(cls.etc_path):
            os.unlink(cls.etc_path)

    def sbatch(self, *args, env=()):
        """`berth sbatch --parsable ARGS` as the user, from their folder; `env` (NAME=VALUE
        strings) is set in the submitter's environment only (after runuser, which runs as root).
        Returns the job id."""
        cmd = ['runuser', '-u', self.user, '--', 'env', f'BERTH_SOCKET={self.c.sock}', *env,
               BERTH, 'sbatch', '--parsable', *args]
        p = subprocess.run(cmd, cwd=self.work, env=self.c.env, capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout.strip().split(';')[0])

    def job_dir(self, jid):
        found = glob.glob(os.path.join(self.c.dir, '**', f'{jid}.0'), recursive=True)
        self.assertEqual(len(found), 1, found)
        return found[0]

    def wait_no_user_processes(self, timeout=30):
        def none_left():
            return subprocess.run(['pgrep', '-u', str(self.uid)],
                                  capture_output=True).returncode == 1
        self.c.wait(none_left, f'no process of {self.user} left', timeout)

    def assert_unchanged(self, path):
        self.assertEqual(read_text(path), PRECIOUS, path)
        st = os.stat(path)
        self.assertEqual(st.st_uid, 0, path)

    def assert_rootonly_untouched(self):
        self.assertEqual(sorted(os.listdir(self.rootonly)), ['secret.txt', 'victim.txt'])
        self.assert_unchanged(self.victim_in_rootonly)
        self.assertEqual(read_text(self.secret), SECRET)

    # --- output, error and input files ---

    def test_output_paths_the_user_may_not_write_fail_the_job_and_touch_nothing(self):
        cases = [
            ('--output', self.victim_in_rootonly, 'stdout'),           # in a folder of root's
            ('--output', os.path.join(self.rootonly, 'new.out'), 'stdout'),
            ('--output', self.victim_in_work, 'stdout'),               # root's file, user's folder
            ('--error', self.victim_in_work, 'stderr'),
            ('--error', os.path.join(self.rootonly, 'new.err'), 'stderr'),
            ('--output', self.etc_path, 'stdout'),                     # a new file in /etc
        ]
        for option, path, which in cases:
            with self.subTest(option=option, path=path):
                out = [] if option == '--output' else [f'--output={self.work}/ok-%j.out']
                jid = self.sbatch(f'{option}={path}', *out, '--wrap', 'echo written')
                j = self.c.wait_state(jid, ENDED, 60)
                self.assertEqual(j['state'], 'FAILED', j.get('message'))
                self.assertIn(f'could not open {which} file {path}: Permission denied',
                              j['message'])
                self.assertNotEqual(j['exit_code'], 0)
                self.assert_rootonly_untouched()
                self.assert_unchanged(self.victim_in_work)
                self.assertFalse(os.path.exists(self.etc_path))

    def test_planted_symlinks_are_not_followed_as_root(self):
        links = {
            'to-root-file': self.victim_in_rootonly,          # an existing root file
            'to-root-new': os.path.join(self.rootonly, 'planted.out'),  # dangling, root's folder
            'to-secret': self.secret,                          # read as stdin
            'to-own-root-file': self.victim_in_work,
        }
        for name, target in links.items():
            path = os.path.join(self.work, name)
            os.symlink(target, path)
            os.lchown(path, self.uid, self.gid)  # as if the user had planted it
        cases = [
            ('--output', 'to-root-file', 'stdout'),
            ('--output', 'to-root-new', 'stdout'),
            ('--error', 'to-own-root-file', 'stderr'),
            ('--input', 'to-secret', 'stdin'),
        ]
        for option, name, which in cases:
            with self.subTest(option=option, link=name):
                path = os.path.join(self.work, name)
                out = [] if option == '--output' else [f'--output={self.work}/sym-%j.out']
                jid = self.sbatch(f'{option}={path}', *out, '--wrap', 'cat; echo written')
                j = self.c.wait_state(jid, ENDED, 60)
                self.assertEqual(j['state'], 'FAILED', j.get('message'))
                self.assertIn(f'could not open {which} file {path}: Permission denied',
                              j['message'])
                self.assert_rootonly_untouched()
                self.assert_unchanged(self.victim_in_work)
                out_file = os.path.join(self.work, f'sym-{jid}.out')
                if os.path.exists(out_file):
                    self.assertNotIn(SECRET.strip(), read_text(out_file))

    # --- the working directory ---

    def test_work_dir_the_user_may_not_enter_runs_the_job_in_tmp_as_the_user(self):
        out = os.path.join(self.work, 'chdir-%j.out')
        # It tries to read the root-only folder's files through its working directory.
        jid = self.sbatch(f'--chdir={self.rootonly}', f'--output={out}', '--wrap',
                          'pwd; id -u; cat secret.txt 2>/dev/null; ls 2>/dev/null | head -3')
        j = self.c.wait_state(jid, ENDED, 60)
        self.assertEqual(j['state'], 'COMPLETED', j.get('message'))
        self.assertIn(f"couldn't chdir to `{self.rootonly}': Permission denied: went to /tmp "
                      'instead', j['message'])
        text = read_text(out.replace('%j', str(jid)))
        lines = text.splitlines()
        self.assertIn(f"berth: error: couldn't chdir to `{self.rootonly}': Permission denied: "
                      'going to /tmp instead', lines[0])
        self.assertEqual(lines[1:3], ['/tmp', str(self.uid)])
        self.assertNotIn(SECRET.strip(), text)
        self.assertNotIn('victim.txt', text)
        self.assert_rootonly_untouched()

    def test_relative_output_in_a_work_dir_the_user_may_not_enter_fails(self):
        # The default output, slurm-%j.out, is relative to the working directory.
        jid = self.sbatch(f'--chdir={self.rootonly}', '--wrap', 'echo written')
        j = self.c.wait_state(jid, ENDED, 60)
        self.assertEqual(j['state'], 'FAILED', j.get('message'))
        self.assertIn(f'could not open stdout file {self.rootonly}/slurm-{jid}.out: '
                      'Permission denied', j['message'])
        self.assert_rootonly_untouched()

    # --- who the job runs as ---

    def test_uid_and_gid_in_the_job_json_do_not_change_who_runs_it(self):
        # Straight to the API (the CLI would not send these), from the user's own process: the
        # controller knows the caller by SO_PEERCRED.
        client = (
            'import http.client, json, socket, sys\n'
            'class C(http.client.HTTPConnection):\n'
            '    def connect(self):\n'
            '        self.sock = socket.socket(socket.AF_UNIX)\n'
            '        self.sock.connect(sys.argv[1])\n'
            'c = C("x")\n'
            'c.request("POST", "/v1/jobs", body=sys.argv[2])\n'
            'r = c.getresponse()\n'
            'print(r.status, r.read().decode())\n')
        disk = 6  # Debian's disk group: raw access to the block devices
        for extra in ({'gid': disk}, {'uid': 0, 'gid': 0}, {'uid': 0}):
            with self.subTest(extra=extra):
                body = dict({'script': '#!/bin/sh\nid -u; id -g; id -G\n', 'work_dir': self.work,
                             'stdout': self.work + '/ids-%j.out', 'time_limit': 60}, **extra)
                p = subprocess.run(['runuser', '-u', self.user, '--', 'python3', '-c', client,
                                    self.c.sock, json.dumps(body)],
                                   capture_output=True, text=True, timeout=60)
                status, answer = p.stdout.split(' ', 1)
                self.assertEqual(status, '201', p.stdout + p.stderr)
                jid = json.loads(answer)['job_id']
                j = self.c.wait_state(jid, ENDED, 60)
                self.assertEqual(j['state'], 'COMPLETED', j.get('message'))
                self.assertEqual((j['request']['uid'], j['request']['gid']), (self.uid, self.gid))
                ids = read_text(os.path.join(self.work, f'ids-{jid}.out')).split()
                self.assertEqual(ids[:2], [str(self.uid), str(self.gid)])
                self.assertNotIn('0', ids)
                self.assertNotIn(str(disk), ids)
        p = subprocess.run(['runuser', '-u', self.user, '--', 'python3', '-c', client, self.c.sock,
                            json.dumps({'script': '#!/bin/sh\nid\n', 'user': 'root'})],
                           capture_output=True, text=True, timeout=60)
        self.assertTrue(p.stdout.startswith('403 '), p.stdout + p.stderr)

    # --- the environment ---

    def test_exported_variables_reach_the_job_but_no_root_process(self):
        mark = f'abusemark{os.getpid()}'
        bash_env = os.path.join(self.work, 'bash_env.sh')
        log = os.path.join(self.work, 'bash_env.log')
        write_text(bash_env, f'echo "uid=$(id -u)" >> {log}\n')
        os.chown(bash_env, self.uid, self.gid)
        ready = os.path.join(self.work, 'env-ready')
        script = os.path.join(self.work, 'env.sh')
        # bash reads BASH_ENV (non-interactive); the job prints what it got, then waits.
        write_text(script, f'#!/bin/bash\nenv > {self.work}/env-$SLURM_JOB_ID.txt\n'
                           f'touch {ready}\nsleep 60\n')
        os.chown(script, self.uid, self.gid)
        preload = f'/nonexistent/{mark}/evil.so'
        jid = self.sbatch(f'--export=LD_PRELOAD={preload},ALL', f'--output={self.work}/env.out',
                          script,
                          env=[f'BASH_ENV={bash_env}', f'LD_LIBRARY_PATH=/nonexistent/{mark}',
                               f'ABUSE_MARK={mark}'])
        try:
            self.c.wait_state(jid, 'RUNNING', 30)
            self.c.wait(lambda: os.path.exists(ready), 'the job to start its script', 30)
            job_env = read_text(os.path.join(self.work, f'env-{jid}.txt')).splitlines()
            # They did reach the job: otherwise the checks below would prove nothing.
            self.assertIn(f'LD_PRELOAD={preload}', job_env)
            self.assertIn(f'BASH_ENV={bash_env}', job_env)
            self.assertIn(f'LD_LIBRARY_PATH=/nonexistent/{mark}', job_env)
            self.assertIn(f'ABUSE_MARK={mark}', job_env)
            supervisor = int(read_text(os.path.join(self.job_dir(jid), 'supervisor.pid')))
            seen_supervisor = seen_job = False
            for pid, uids, env in processes():
                if pid == supervisor:
                    seen_supervisor = True
                    self.assertEqual(uids, [0, 0, 0, 0])
                    self.assertIn(b'PATH=', env)  # its environment was read
                if 0 in uids:
                    self.assertNotIn(mark.encode(), env, f'pid {pid} runs as root')
                elif mark.encode() in env:
                    self.assertEqual(uids, [self.uid] * 4, f'pid {pid}')
                    seen_job = True
            self.assertTrue(seen_supervisor, 'the supervisor was not found')
            self.assertTrue(seen_job, 'no process of the job carries the variables')
            self.assertEqual(proc_ids(f'/proc/{self.c.agent.pid}')[1], 0)
            # BASH_ENV ran, as the user only.
            self.assertEqual(set(read_text(log).splitlines()), {f'uid={self.uid}'})
        finally:
            self.c.cli('cancel', str(jid))
        self.c.wait_state(jid, 'CANCELLED', 60)

    # --- process and memory limits ---

    def test_fork_bomb_hits_the_pids_limit_and_is_cleaned_up(self):
        release = os.path.join(self.work, 'bomb-release')
        report = os.path.join(self.work, 'bomb-%j.out')
        # Bounded: at most 100,000 forks and 90 s (a slow machine forks ~100 a second: the
        # agent's limit of PIDS_MAX takes a few seconds); the children exec sleep. It then waits
        # (at most 60 s) for the test, so that the limit holds while the node is checked.
        bomb = f'''#!/bin/bash
python3 - <<'EOF'
import errno, os, time
n, why, deadline = 0, 'cap', time.time() + 90
while n < 100000:
    if time.time() > deadline:
        why = 'deadline'
        break
    try:
        pid = os.fork()
    except OSError as e:
        why = errno.errorcode.get(e.errno, str(e.errno))
        break
    if pid == 0:
        try:
            os.execv('/bin/sleep', ['sleep', '120'])
        finally:
            os._exit(1)
    n += 1
print('forked', n, why, flush=True)
end = time.time() + 60
while time.time() < end and not os.path.exists('{release}'):
    time.sleep(0.2)
EOF
echo bomb done
'''
        write_text(os.path.join(self.work, 'bomb.sh'), bomb)
        # Settings of the supervisor that the user exports reach only the job's environment.
        jid = self.sbatch(f'--output={report}', '--time=5', 'bomb.sh',
                          env=['BERTH_PIDS_MAX=1000000', 'BERTH_SUPERVISE_NO_CGROUPS=1'])
        out = report.replace('%j', str(jid))
        try:
            self.c.wait_state(jid, 'RUNNING', 30)
            self.c.wait(lambda: os.path.exists(out) and 'forked' in read_text(out),
                        'the bomb to stop forking', 120)
            words = read_text(out).split()
            forked, why = int(words[words.index('forked') + 1]), words[words.index('forked') + 2]
            job_pid = int(read_text(os.path.join(self.job_dir(jid), 'job.pid')))
            pids_group = None
            for line in read_text(f'/proc/{job_pid}/cgroup').splitlines():
                _, controllers, path = line.split(':', 2)
                if 'pids' in controllers.split(',') or (controllers == '' and os.path.exists(
                        f'/sys/fs/cgroup{path}/pids.max')):
                    pids_group = (f'/sys/fs/cgroup/pids{path}' if controllers else
                                  f'/sys/fs/cgroup{path}')
            if pids_group is None or not os.path.exists(pids_group + '/pids.max'):
                self.skipTest(f'no pids controller for jobs here: {self.c.job(jid)["message"]}')
            limit = PIDS_MAX
            self.assertEqual(read_text(pids_group + '/pids.max').strip(), str(limit))
            self.assertEqual(why, 'EAGAIN', f'forked {forked}')
            self.assertLessEqual(forked, limit)
            self.assertGreater(forked, limit - 50)  # nothing else stopped it first
            self.assertGreater(int(read_text(pids_group + '/pids.current')), limit - 50)
            # The node still works: the agent answers, another job starts and ends.
            self.assertIsNone(self.c.agent.poll())
            other = self.sbatch(f'--output={self.work}/beside-bomb-%j.out', '--wrap',
                                'echo alive')
            self.c.wait_state(other, 'COMPLETED', 60)
            self.assertEqual(read_text(os.path.join(self.work, f'beside-bomb-{other}.out')),
                             'alive\n')
            self.assertEqual(self.c.job(jid)['state'], 'RUNNING')
        finally:
            write_text(release, '')
            os.chown(release, self.uid, self.gid)
        j = self.c.wait_state(jid, ENDED, 120)
        # The script ended by itself: what it left behind (the sleeps) is killed.
        self.assertEqual(j['state'], 'COMPLETED', j.get('message'))
        self.assertIn('bomb done', read_text(out))
        self.wait_no_user_processes(60)
        self.c.wait(lambda: not os.path.exists(pids_group), 'the job cgroup to go', 30)
        self.assertIsNone(self.c.agent.poll())

    def test_memory_hog_is_killed_alone(self):
        beside = self.sbatch(f'--output={self.work}/beside-hog-%j.out', '--mem=64M', '--wrap',
                             'sleep 12; echo survived')
        self.c.wait_state(beside, 'RUNNING', 30)
        # Up to 1 GiB, touched, in 4 MiB pieces; the shell goes on after the kill.
        hog = self.sbatch(f'--output={self.work}/hog-%j.out', '--mem=64M', '--wrap',
                          "python3 -c 'b = []\nwhile len(b) < 256: b.append(b\"x\" * (4 << 20))'"
                          '; echo "python: $?"')
        j = self.c.wait_state(hog, ENDED, 60)
        if 'RLIMIT_DATA' in j['message'] or 'no cgroups' in j['message']:
            self.skipTest(f'no memory cgroup for jobs here: {j["message"]}')
        if 'swap is not limited' in j['message'] and j['state'] == 'COMPLETED':
            self.skipTest(f'the hog swapped instead: {j["message"]}')
        self.assertEqual(j['state'], 'OUT_OF_MEMORY', j['message'])
        self.assertIn('python: 137', read_text(os.path.join(self.work, f'hog-{hog}.out')))
        self.assertLessEqual(j['usage']['max_rss_mib'], 64)
        # The supervisor counted the kill, so it lived through it (one that died would have
        # left the agent "the job's supervisor died without a result", NODE_FAIL).
        self.assertIn('killed for exceeding the memory limit', j['message'])
        # The job beside it, and the agent, did not notice.
        self.assertEqual(self.c.job(beside)['state'], 'RUNNING')
        self.assertIsNone(self.c.agent.poll())
        self.c.wait_state(beside, 'COMPLETED', 60)
        self.assertEqual(read_text(os.path.join(self.work, f'beside-hog-{beside}.out')),
                         'survived\n')


if __name__ == '__main__':
    unittest.main()

"""Integration tests of srun's standard input and --pty (issue 19) against real daemons.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_srun_io
Written from srun(1) of Slurm 22.05: "-i, --input=<mode> ... By default, srun redirects stdin
from the terminal to all tasks"; "--pty Execute task zero in pseudo terminal mode ... Implicitly
sets --error and --output to /dev/null for all tasks except task zero". --pty is driven through a
real pseudo-terminal (Python's pty module): window size (stty size), its change (SIGWINCH), ^C,
and the caller's terminal settings put back however srun ends.
"""
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
import unittest

from harness import BERTH, Cluster
from netbed import NetBed

ROOT = os.geteuid() == 0
WHY_NO_BED = NetBed.available()


def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))


def is_raw(fd):
    """Whether the terminal (seen from its master: Linux shares the settings) is in raw mode."""
    lflag = termios.tcgetattr(fd)[3]
    return not lflag & (termios.ICANON | termios.ECHO | termios.ISIG)


class Terminal:
    """A command on a pseudo-terminal of its own (a session whose controlling terminal it is)."""

    def __init__(self, argv, env, cwd, rows=40, cols=120):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                set_size(0, rows, cols)
                os.chdir(cwd)
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        self.out = b''
        self.status = None

    def read_until(self, needle, timeout=60, start=0):
        needle = needle.encode() if isinstance(needle, str) else needle
        end = time.time() + timeout
        while needle not in self.out[start:]:
            left = end - time.time()
            if left <= 0:
                raise AssertionError(f'timed out waiting for {needle!r}; got {self.out!r}')
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:  # EIO: the session ended
                    data = b''
                if not data:
                    raise AssertionError(f'ended before {needle!r}; got {self.out!r}')
                self.out += data

    def retry(self, keys, needle, tries=10):
        """Sends `keys` (bytes, or a list sent 0.3 s apart) until `needle` comes back."""
        keys = keys if isinstance(keys, list) else [keys]
        for _ in range(tries):
            for i, k in enumerate(keys):
                if i:
                    time.sleep(0.3)
                self.send(k)
            try:
                self.read_until(needle, timeout=1.5)
                return True
            except AssertionError:
                continue
        return False

    def send(self, data):
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def wait(self, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            try:
                r, _, _ = select.select([self.fd], [], [], 0.1)
                if r:
                    data = os.read(self.fd, 65536)
                    self.out += data
            except OSError:
                pass
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.status = os.waitstatus_to_exitcode(status)
                self.drain()  # what it wrote between the last read and its end
                return self.status
        raise AssertionError(f'still running; got {self.out!r}')

    def drain(self):
        while True:
            try:
                r, _, _ = select.select([self.fd], [], [], 0.2)
                data = os.read(self.fd, 65536) if r else b''
            except OSError:  # EIO: nothing is left
                data = b''
            if not data:
                return
            self.out += data

    def close(self):
        if self.status is None:
            # SIGTERM first: srun then cancels its job and removes its folder; SIGKILL after.
            for sig, wait in ((signal.SIGTERM, 40), (signal.SIGKILL, 10)):
                try:
                    os.killpg(self.pid, sig)
                except OSError:
                    pass
                if self.reaped(wait):
                    break
        os.close(self.fd)

    def reaped(self, wait):
        end = time.time() + wait
        while time.time() < end:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == self.pid:
                self.status = os.waitstatus_to_exitcode(status)
                return True
            try:
                if select.select([self.fd], [], [], 0.1)[0]:
                    os.read(self.fd, 65536)
            except OSError:
                time.sleep(0.1)
        return False


class SrunIoTest(unittest.TestCase):
    """One cluster for the class (node1: the host's CPUs, 4 test GPUs)."""

    @classmethod
    def setUpClass(cls):
        cls.c = Cluster().start()
        cls.work = os.path.join(cls.c.dir, 'work')
        os.makedirs(cls.work, exist_ok=True)
        os.chmod(cls.work, 0o777)
        cls.bin = os.path.join(cls.c.dir, 'bin')
        os.makedirs(cls.bin, exist_ok=True)
        os.chmod(cls.bin, 0o755)
        os.symlink(os.path.abspath(BERTH), os.path.join(cls.bin, 'srun'))
        cls.env = dict(cls.c.env, TMPDIR=cls.c.dir,
                       PATH=f'{cls.bin}:/usr/local/bin:/usr/bin:/bin')

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def srun(self, *args, input=None, timeout=60):
        return subprocess.run(['srun', *args], env=self.env, capture_output=True, text=True,
                              timeout=timeout, cwd=self.work, input=input)

    def terminal(self, command, **size):
        t = Terminal(['sh', '-c', command], self.env, self.work, **size)
        self.addCleanup(t.close)
        return t

    def batch(self, body, **extra):
        spec = {'name': 'io', 'script': '#!/bin/sh\n' + body + '\n', 'work_dir': self.work,
                'stdout': '%x-%j.out', 'time_limit': 120,
                'environment': {'PATH': self.env['PATH'], 'TMPDIR': self.c.dir}}
        spec.update(extra)
        jid = self.c.submit(spec)
        j = self.c.wait_state(jid, ['COMPLETED', 'FAILED'], 60)
        with open(os.path.join(self.work, f'io-{jid}.out')) as f:
            return j, f.read()

    # ---- standard input, outside an allocation (srun creates the job)

    def test_stdin_goes_to_every_task_by_default(self):
        p = self.srun('cat', input='data\n')
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, 'data\n', ''))
        p = self.srun('-n', '2', '-l', 'cat', input='x\ny\n')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(p.stdout.splitlines()), ['0: x', '0: y', '1: x', '1: y'])

    def test_stdin_to_one_task_or_none(self):
        p = self.srun('-n', '2', '-l', '--input=1', 'sh', '-c', 'cat; echo end', input='one\n')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(p.stdout.splitlines()), ['0: end', '1: end', '1: one'])
        p = self.srun('--input=none', 'sh', '-c', 'cat; echo end', input='lost\n')
        self.assertEqual((p.returncode, p.stdout), (0, 'end\n'))

    def test_stdin_ends_when_srun_input_ends(self):
        # wc ends only at EOF: srun must close the task's input when its own ends.
        p = self.srun('wc', '-l', input='a\nb\nc\n', timeout=30)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, '3'))

    def test_input_file_and_bad_values(self):
        path = os.path.join(self.work, 'in.txt')
        with open(path, 'w') as f:
            f.write('from file\n')
        p = self.srun('-n', '2', '-l', '-i', 'in.txt', 'cat', input='not this\n')
        self.assertEqual(sorted(p.stdout.splitlines()), ['0: from file', '1: from file'])
        p = self.srun('-i', 'no-such-file', 'cat')
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr,
                         'srun: error: Could not open stdin file: No such file or directory\n')
        p = self.srun('--pty', '-i', 'none', 'bash')
        self.assertEqual((p.returncode, p.stderr),
                         (1, 'srun: error: --error/--input/--output are incompatible with --pty\n'))

    # ---- standard input inside a batch script (srun's own tasks, in the job's cgroup)

    def test_stdin_in_a_batch_script(self):
        j, out = self.batch(
            "printf 'a\\nb\\n' | srun -n 2 sh -c 'sed \"s/^/$SLURM_PROCID:/\"' | sort\n"
            "echo z | srun -n 2 --input=0 -l sh -c 'cat; echo done' | sort\n"
            "srun wc -c; echo rc=$?",  # the batch script's input is /dev/null
            ntasks=2)
        self.assertEqual(j['state'], 'COMPLETED', out)
        self.assertEqual(out.splitlines(), ['0:a', '0:b', '1:a', '1:b',
                                            '0: done', '0: z', '1: done', '0', 'rc=0'])

    # ---- --pty

    def test_pty_outside_an_allocation(self):
        in_cgroup = 'grep -q "job_$SLURM_JOB_ID" /proc/self/cgroup && echo in-cgroup; ' if ROOT \
            else ''
        t = self.terminal(
            'stty -g > before; '
            "srun --pty sh -c '"
            'tty -s && echo on-a-tty; ' + in_cgroup +
            'echo size $(stty size) job=$SLURM_JOB_ID; '
            'trap "echo resized \\$(stty size)" WINCH; trap "echo got-int; exit 9" INT; '
            'echo ready; while :; do sleep 0.2; done'
            "'; echo srun-rc=$?; stty -g > after", rows=40, cols=120)
        t.read_until('ready')
        self.assertTrue(is_raw(t.fd))
        self.assertIn(b'on-a-tty', t.out)
        self.assertIn(b'size 40 120 job=', t.out)
        if ROOT:
            self.assertIn(b'in-cgroup', t.out)
        set_size(t.fd, 50, 150)  # SIGWINCH to srun, which passes the size on
        t.read_until('resized 50 150')
        t.send(b'\x03')  # ^C on the caller's terminal: a byte for the task's terminal
        t.read_until('got-int')
        t.read_until('srun-rc=9')
        self.assertEqual(t.wait(), 0)
        with open(os.path.join(self.work, 'before')) as a, \
                open(os.path.join(self.work, 'after')) as b:
            self.assertEqual(a.read(), b.read())  # raw mode undone

    def test_pty_in_an_allocation_from_a_terminal(self):
        # As in salloc's shell: srun with the allocation's SLURM_* variables runs the step
        # itself, task 0 on a terminal fed by the caller's (raw) one.
        envfile = os.path.join(self.work, 'allocation.env')
        jid = self.c.submit({'name': 'alloc', 'script': f'#!/bin/sh\nenv > {envfile}.tmp; '
                             f'mv {envfile}.tmp {envfile}; sleep 120\n', 'work_dir': self.work,
                             'time_limit': 180, 'gpus_per_node': 1})
        self.addCleanup(self.c.api, 'POST', '/v1/jobs/cancel', {'ids': [str(jid)]})
        self.c.wait(lambda: os.path.exists(envfile), 'the allocation', 30)
        with open(envfile) as f:
            alloc = dict(line.split('=', 1) for line in f.read().splitlines()
                         if line.startswith(('SLURM_', 'CUDA_VISIBLE_DEVICES=')))
        t = Terminal(['sh', '-c',
                      'stty -g > before3; '
                      "srun --pty sh -c '"
                      'echo size $(stty size) job=$SLURM_JOB_ID step=$SLURM_STEP_ID '
                      'gpus=$CUDA_VISIBLE_DEVICES; '
                      'trap "echo resized \\$(stty size)" WINCH; trap "echo got-int; exit 6" INT; '
                      'echo ready; while :; do sleep 0.2; done'
                      "'; echo srun-rc=$?; stty -g > after3"],
                     dict(self.env, **alloc), self.work, rows=30, cols=90)
        self.addCleanup(t.close)
        t.read_until('ready')
        self.assertTrue(is_raw(t.fd))
        self.assertIn(f'size 30 90 job={jid} step=0 gpus={alloc["CUDA_VISIBLE_DEVICES"]}'.encode(),
                      t.out)
        set_size(t.fd, 33, 99)
        t.read_until('resized 33 99')
        t.send(b'\x03')
        t.read_until('got-int')
        t.read_until('srun-rc=6')
        self.assertEqual(t.wait(), 0)
        self.assertFalse(is_raw(t.fd))
        with open(os.path.join(self.work, 'before3')) as a, \
                open(os.path.join(self.work, 'after3')) as b:
            self.assertEqual(a.read(), b.read())

    def test_pty_shell_reads_what_is_typed_and_exits_with_its_code(self):
        t = self.terminal('srun --pty sh; echo srun-rc=$?')
        t.send('echo typed-$((6 * 7))\r')  # Enter in raw mode is CR, as from a keyboard
        t.read_until('typed-42')
        # ^Z stops the shell's foreground job, as the terminal's line discipline delivers it.
        # Keys sent before the job is in the foreground reach the shell, which ignores them:
        # sent again until they act.
        # A key that acts flushes the terminal's unread input, and the echo of a line says only
        # that the terminal has it: the shell's own output says that the shell has read it.
        t.send('echo go; sleep 300\r')
        t.read_until('go\r\r\n')
        self.assertTrue(t.retry(b'\x1a', 'Stopped'), t.out)
        # Back in the foreground, ^C ends it, and the shell (which ignores SIGINT) goes on.
        seen = len(t.out)
        t.send('fg\r')
        t.read_until('fg\r\r\n')
        t.read_until(b'sleep 300', start=seen + 4)  # the shell names the job it resumes
        self.assertTrue(t.retry([b'\x03', 'echo after-int\r'], '\nafter-int'), t.out)
        t.send('exit 5\r')
        t.read_until('srun-rc=5')
        self.assertEqual(t.wait(), 0)

    def test_pty_ctrl_c_while_the_job_waits_cancels_it(self):
        # The terminal goes raw only once the job's srun is there (as Slurm's srun, once
        # slurmstepd connects): until then ^C is srun's SIGINT, which gives the allocation up.
        blocker = self.c.submit({'name': 'blocker', 'script': '#!/bin/sh\nsleep 60\n',
                                 'work_dir': self.work, 'time_limit': 120,
                                 'cpus_per_task': len(os.sched_getaffinity(0))})
        self.addCleanup(self.c.api, 'POST', '/v1/jobs/cancel', {'ids': [str(blocker)]})
        self.c.wait_state(blocker, 'RUNNING', 30)
        t = Terminal(['srun', '--pty', '-J', 'waits', 'true'], self.env, self.work)
        self.addCleanup(t.close)
        t.read_until('queued and waiting for resources')
        self.assertFalse(is_raw(t.fd))
        t.send(b'\x03')
        self.assertNotEqual(t.wait(), 0)
        self.assertIn(b'has been revoked', t.out)
        status, body = self.c.api('GET', '/v1/jobs?all=1')
        waits = [j for j in body['jobs'] if j['request'].get('name') == 'waits']
        self.assertEqual([j['state'] for j in waits], ['CANCELLED'])

    def test_pty_terminal_is_restored_when_srun_is_killed(self):
        t = self.terminal('stty -g > before2; srun --pty sh -c "echo ready; sleep 300"; '
                          'echo srun-rc=$?; stty -g > after2')
        t.read_until('ready')
        pids = subprocess.run(['pgrep', '-f', '-P', str(t.pid), 'srun --pty'],
                              capture_output=True, text=True).stdout.split()
        self.assertEqual(len(pids), 1, pids)
        os.kill(int(pids[0]), signal.SIGTERM)
        t.read_until('srun-rc=')
        self.assertEqual(t.wait(), 0)
        self.assertNotIn(b'srun-rc=0', t.out)
        with open(os.path.join(self.work, 'before2')) as a, \
                open(os.path.join(self.work, 'after2')) as b:
            self.assertEqual(a.read(), b.read())

    def test_pty_without_a_terminal_is_disregarded(self):
        # As Slurm 22.05's srun (checked side by side: bench/compare-slurm-stdin): two error
        # lines, then the step runs as without --pty.
        j, out = self.batch(
            "srun -n 2 --pty sh -c 'if tty -s; then echo task$SLURM_PROCID-on-a-tty; "
            "else echo task$SLURM_PROCID-not; fi' 2>&1 | sort; echo rc=$?",
            ntasks=2)
        self.assertEqual(j['state'], 'COMPLETED', out)
        self.assertEqual(out.splitlines(), [
            'srun: error: Not using a pseudo-terminal, disregarding --pty option',
            'srun: error: ioctl(TIOCGWINSZ): Inappropriate ioctl for device',
            'task0-not', 'task1-not', 'rc=0'])


@unittest.skipIf(WHY_NO_BED, f'no network-namespace test bed: {WHY_NO_BED}')
class SrunIoAcrossHostsTest(unittest.TestCase):
    """Steps and jobs on other hosts (netbed.py: a controller host and agent hosts, each its own
    network namespace): srun's input, output and terminal travel through the controller to the
    tasks wherever they run, as Slurm's srun reaches its tasks through slurmstepd."""

    @classmethod
    def setUpClass(cls):
        cls.bed = NetBed(hosts=('h1', 'h2'))
        cls.addClassCleanup(lambda: cls.bed.stop(keep=bool(os.environ.get('BERTH_IT_KEEP'))))
        cls.bed.start()
        cls.c = cls.bed.cluster
        # This process stands for a login host: the controller's socket, none of the nodes,
        # and berth's srun first on PATH.
        cls.bin = os.path.join(cls.c.dir, 'bin')
        os.makedirs(cls.bin, exist_ok=True)
        os.symlink(os.path.abspath(BERTH), os.path.join(cls.bin, 'srun'))
        cls.env = dict(cls.c.env, PATH=f'{cls.bin}:/usr/local/bin:/usr/bin:/bin')

    def allocation(self, nodes=2):
        """A running job of `nodes` hosts, and the SLURM_* variables its steps see (less the
        node's own: srun here runs on none of its nodes, as in salloc's shell)."""
        envfile = os.path.join(self.c.dir, f'alloc-{time.time_ns()}.env')
        jid = self.c.submit({'script': f'#!/bin/sh\nenv > {envfile}.tmp; mv {envfile}.tmp '
                             f'{envfile}; sleep 300\n', 'work_dir': self.c.dir, 'nodes': nodes,
                             'time_limit': 600})
        self.addCleanup(self.c.api, 'POST', '/v1/jobs/cancel', {'ids': [str(jid)]})
        self.c.wait(lambda: os.path.exists(envfile), 'the allocation', 60)
        with open(envfile) as f:
            alloc = dict(line.split('=', 1) for line in f.read().splitlines()
                         if line.startswith('SLURM_'))
        for own in ('SLURM_NODEID', 'SLURMD_NODENAME', 'SLURM_LOCALID', 'SLURM_PROCID'):
            alloc.pop(own, None)
        return jid, alloc

    def test_input_of_a_step_across_hosts(self):
        out = os.path.join(self.c.dir, 'io.out')
        err = os.path.join(self.c.dir, 'io.err')
        infile = os.path.join(self.c.dir, 'in.txt')
        with open(infile, 'w') as f:
            f.write('from file\n')
        spec = {'script': '#!/bin/bash\n'
                          f'echo piped | {BERTH} srun -n 4 -l cat\n'
                          f'{BERTH} srun -n 4 -l cat\n'  # the script's input: /dev/null
                          f'{BERTH} srun -n 4 -l -i {infile} cat\n'
                          f'echo one | {BERTH} srun -n 4 -l -i 3 cat\n'
                          # Output into a pipe, not a file: it comes back through srun.
                          f'{BERTH} srun -n 4 -l sh -c \'echo "$SLURMD_NODENAME"; '
                          'echo "err $SLURM_PROCID" >&2\' 2>&1 | sort | sed "s/^/piped-/"\n',
                'work_dir': self.c.dir, 'nodes': 2, 'ntasks_per_node': 2, 'stdout': out,
                'stderr': err}
        job = self.c.submit(spec)
        self.addCleanup(self.c.api, 'POST', '/v1/jobs/cancel', {'ids': [str(job)]})
        j = self.c.wait_state(job, 'COMPLETED', 90)
        hosts = [n['node'] for n in j['allocation']['nodes']]
        with open(out) as f:
            lines = f.read().splitlines()
        with open(err) as f:
            errors = f.read()
        self.assertEqual(sorted(x for x in lines if not x.startswith('piped-')),
                         ['0: from file', '0: piped', '1: from file', '1: piped',
                          '2: from file', '2: piped', '3: from file', '3: one', '3: piped'],
                         errors)
        self.assertEqual([x for x in lines if x.startswith('piped-')],
                         sorted(['piped-0: err 0', 'piped-1: err 1', 'piped-2: err 2',
                                 'piped-3: err 3', f'piped-0: {hosts[0]}', f'piped-1: {hosts[0]}',
                                 f'piped-2: {hosts[1]}', f'piped-3: {hosts[1]}']), errors)
        self.assertNotIn('srun: warning', errors)

    def test_srun_outside_an_allocation_on_a_login_host(self):
        # The job runs on the agents' hosts, not here: its input and output come and go through
        # the controller; it spans both hosts, so the srun inside forwards to the other too.
        p = subprocess.run([BERTH, 'srun', '-N', '2', '-n', '4', '-l', 'sh', '-c',
                            'read line; echo "$line $SLURM_PROCID $SLURMD_NODENAME"; exit 3'],
                           env=self.env, input='hello\n', capture_output=True, text=True,
                           timeout=120, cwd=self.c.dir)
        self.assertEqual(p.returncode, 3, p.stderr)
        got = sorted(p.stdout.splitlines())
        self.assertEqual([g.split()[:3] for g in got],
                         [[f'{i}:', 'hello', str(i)] for i in range(4)], p.stderr)
        self.assertEqual(len({g.split()[3] for g in got}), 2, got)  # both hosts
        self.assertIn('tasks 2-3: Exited with exit code 3', p.stderr)

    def test_pty_on_another_host_from_a_login_host(self):
        # As after salloc: srun --pty bash on the login host, the shell on the first node.
        jid, alloc = self.allocation()
        first = alloc['SLURM_JOB_NODELIST']
        t = Terminal(['sh', '-c',
                      'stty -g > before; '
                      "srun -N1 -n1 --pty sh -c '"
                      'echo size $(stty size) on $SLURMD_NODENAME job=$SLURM_JOB_ID; '
                      'trap "echo resized \\$(stty size)" WINCH; trap "echo got-int; exit 6" INT; '
                      'echo ready; while :; do sleep 0.2; done'
                      "'; echo srun-rc=$?; stty -g > after"],
                     dict(self.env, **alloc), self.c.dir, rows=30, cols=90)
        self.addCleanup(t.close)
        t.read_until('ready')
        self.assertTrue(is_raw(t.fd))
        self.assertIn(f'size 30 90 on h'.encode(), t.out)
        self.assertIn(f'job={jid}'.encode(), t.out)
        set_size(t.fd, 33, 99)
        t.read_until('resized 33 99')
        t.send(b'\x03')  # a byte for the task's terminal, on the other host
        t.read_until('got-int')
        t.read_until('srun-rc=6')
        self.assertEqual(t.wait(), 0)
        with open(os.path.join(self.c.dir, 'before')) as a, \
                open(os.path.join(self.c.dir, 'after')) as b:
            self.assertEqual(a.read(), b.read())
        self.assertTrue(first)

    def test_pty_shell_on_another_host_reads_what_is_typed(self):
        _, alloc = self.allocation()
        t = Terminal(['sh', '-c', 'srun --pty sh; echo srun-rc=$?'], dict(self.env, **alloc),
                     self.c.dir)
        self.addCleanup(t.close)
        t.send('echo typed-$((6 * 7)) on $SLURMD_NODENAME\r')
        t.read_until('typed-42 on h')
        t.send('exit 5\r')
        t.read_until('srun-rc=5')
        self.assertEqual(t.wait(), 0)


if __name__ == '__main__':
    unittest.main()

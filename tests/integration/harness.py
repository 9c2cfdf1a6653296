"""A test bed of real berth daemons in a temporary folder, for the integration tests.

Cluster() starts `berth controller` and `berth agent` (real processes, a Unix socket in the
folder); api() talks to the controller over that socket; wait_state() polls a job. Everything
the daemons leave (processes, users, cgroups) is cleaned up by stop().
"""
import concurrent.futures
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

BERTH = os.environ.get('BERTH_BINARY', 'build/berth')

# The sanitizer build's run (tests/CMakeLists.txt sets BERTH_SANITIZED=1): tests that mostly wait
# on the clock run in the default build only, as CI's budget asks of slow integration tests.
SANITIZED = os.environ.get('BERTH_SANITIZED') == '1'
slow_in_one_build = unittest.skipIf(
    SANITIZED, 'waits on the clock (minute boundaries); the default build runs it')


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=60):
        super().__init__('localhost', timeout=timeout)
        self.path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(self.path)
        except OSError:
            s.close()
            raise
        self.sock = s


class Cluster:
    def __init__(self, node_timeout=60, gpus=4, controller_args=(), container_pods=False,
                 agent_args=(), agent_env=None):
        self.dir = tempfile.mkdtemp(prefix='berth-it-')
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, 'controller.sock')
        self.node_timeout = node_timeout
        self.gpus = gpus
        # Pods run their commands as processes unless a test is about images (containers need
        # a registry: tests/integration/registry.py).
        self.controller_args = ['--container-pods', 'yes' if container_pods else 'no',
                                *controller_args]
        self.agent_args = list(agent_args)
        self.agent_env = agent_env  # added to the agent's environment (None: this one's)
        self.controller = None
        self.agent = None
        self.env = dict(os.environ, BERTH_SOCKET=self.sock, BERTH_HOME=self.dir)
        self.logs = []

    def log(self, name):
        f = open(os.path.join(self.dir, name + '.log'), 'ab')
        self.logs.append(f)
        return f

    def start_controller(self):
        self.controller = subprocess.Popen(
            [BERTH, 'controller', '--home', self.dir, '--socket', self.sock,
             '--node-timeout', str(self.node_timeout), *self.controller_args],
            stdout=self.log('controller'), stderr=subprocess.STDOUT)
        self.wait(lambda: self.ready(), 'the controller to answer')

    def start_agent(self):
        self.agent = subprocess.Popen(
            [BERTH, 'agent', '--home', self.dir, '--controller', 'unix:' + self.sock,
             '--node-name', 'node1', '--gpus', str(self.gpus), '--gpu-type', 'test',
             *self.agent_args],
            env=dict(os.environ, **self.agent_env) if self.agent_env else None,
            stdout=self.log('agent'), stderr=subprocess.STDOUT)
        self.wait(lambda: self.node_state('node1') not in (None, 'DOWN'),
                  'the agent to register')

    def start(self):
        self.start_controller()
        self.start_agent()
        return self

    def ready(self):
        try:
            return self.api('GET', '/readyz')[0] == 200
        except OSError:
            return False

    def api(self, method, path, body=None):
        c = UnixHTTPConnection(self.sock)
        data = None if body is None else json.dumps(body)
        c.request(method, path, body=data, headers={'Content-Type': 'application/json'})
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        try:
            return r.status, json.loads(text) if text.strip() else {}
        except ValueError:
            return r.status, {'raw': text}

    def submit(self, spec):
        status, body = self.api('POST', '/v1/jobs', spec)
        assert status == 201, (status, body)
        return body['job_id']

    def job(self, job_id):
        status, body = self.api('GET', f'/v1/jobs/{job_id}')
        assert status == 200, (status, body)
        return body

    def node_state(self, name):
        try:
            status, body = self.api('GET', f'/v1/nodes/{name}')
        except OSError:
            return None
        return body.get('state') if status == 200 else None

    def wait(self, cond, what, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            if cond():
                return
            time.sleep(0.1)
        raise AssertionError(f'timed out waiting for {what}; logs in {self.dir}\n' +
                             self.log_tails())

    def log_tails(self, lines=20):
        """The last lines of each daemon's log in the folder: the folder goes with the test, and
        a failure in CI should say what the daemons saw."""
        out = []
        for name in sorted(os.listdir(self.dir)) if self.dir and os.path.isdir(self.dir) else []:
            if not name.endswith('.log'):
                continue
            try:
                with open(os.path.join(self.dir, name), errors='replace') as f:
                    tail = f.readlines()[-lines:]
            except OSError:
                continue
            out.append(f'--- {name} (last {len(tail)} lines)\n' + ''.join(tail))
        return '\n'.join(out)

    def wait_state(self, job_id, states, timeout=60):
        states = [states] if isinstance(states, str) else states
        last = {}

        def done():
            nonlocal last
            last = self.job(job_id)
            return last['state'] in states
        try:
            self.wait(done, f'job {job_id} to be {states}', timeout)
        except AssertionError as e:
            raise AssertionError(f'{e}; job is {json.dumps(last)}') from None
        return last

    def cli(self, *args, user=None, check=True):
        cmd = [BERTH, *args]
        if user:
            cmd = ['runuser', '-u', user, '--', 'env', f'BERTH_SOCKET={self.sock}', *cmd]
        p = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise AssertionError(f'{cmd} failed: {p.stderr}')
        return p

    def acked_until_kill9(self, spec, clients=4, seconds=1.5):
        """Submits `spec` from `clients` threads, kills the controller with SIGKILL after
        `seconds` in the middle of the burst, and returns the ids it acknowledged (201)."""
        acked, stop = [], threading.Event()

        def submitter():
            while not stop.is_set():
                try:
                    status, body = self.api('POST', '/v1/jobs', spec)
                except OSError:
                    return
                if status == 201:
                    acked.append(body['job_id'])
        with concurrent.futures.ThreadPoolExecutor(clients) as pool:
            futures = [pool.submit(submitter) for _ in range(clients)]
            time.sleep(seconds)
            self.kill('controller')
            stop.set()
            for f in futures:
                f.result()
        return acked

    def kill(self, which, sig=signal.SIGKILL):
        p = getattr(self, which)
        if p and p.poll() is None:
            p.send_signal(sig)
            p.wait(timeout=30)
        setattr(self, which, None)

    def end_jobs(self, timeout=10):
        """Cancels every job still active and waits (bounded) for them to end: a pod's processes
        need not name the test's folder, so their cgroup, which the agent ends, is what reaches
        them. A controller that is down already is left to the kills below."""
        active = ('PENDING', 'CONFIGURING', 'RUNNING', 'SUSPENDED', 'COMPLETING')
        try:
            status, body = self.api('GET', '/v1/jobs')
            ids = [str(j['id']) for j in body.get('jobs', []) if j.get('state') in active]
            if not ids:
                return
            self.api('POST', '/v1/jobs/cancel', {'ids': ids})
            deadline = time.time() + timeout
            while time.time() < deadline:
                status, body = self.api('GET', '/v1/jobs')
                if not any(j.get('state') in ('RUNNING', 'COMPLETING')
                           for j in body.get('jobs', [])):
                    return
                time.sleep(0.2)
        except (OSError, ValueError, AttributeError):
            pass

    def stop(self, keep=False):
        if self.controller is not None and self.controller.poll() is None:
            self.end_jobs()
        self.kill('agent', signal.SIGTERM)
        self.kill('controller', signal.SIGTERM)
        # Jobs still running (their supervisors outlive the agent): stop them, and then what the
        # jobs started (a supervisor killed with -9 no longer stops its job's processes).
        named = processes_naming(self.dir)
        groups = job_cgroups_of(named + descendants_of(named))
        subprocess.run(['pkill', '-9', '-f', f'supervise {self.dir}'], check=False)
        kill_processes_naming(self.dir)
        remove_containers(self.dir)
        # The jobs' cgroups too (a supervisor killed with -9 leaves its job's groups), and what is
        # still in them (a process that does not name the folder, such as a pod's).
        remove_cgroups(groups)
        for f in self.logs:
            f.close()
        # SIGKILL is not instant: give the kernel a moment before calling anything a leak.
        deadline = time.time() + 5
        while True:
            left = processes_naming(self.dir)
            groups_left = [g for g in groups if os.path.isdir(g)]
            if not (left or groups_left) or time.time() > deadline:
                break
            kill_processes_naming(self.dir)
            remove_cgroups(groups_left)
            time.sleep(0.1)
        if keep:
            print(f'kept {self.dir}')
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        if left or groups_left:
            # A test must end every process and cgroup it started: fail the one that did not.
            raise AssertionError(f'the test left processes {left} and cgroups {groups_left}')


def processes_naming(folder):
    """Every other live process whose command line or environment names `folder` (a test's
    jobs: their scripts run from it, and their environment holds its paths)."""
    needle = folder.encode()
    found = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f'/proc/{pid}/stat', 'rb') as f:
                if f.read().rsplit(b')', 1)[-1].split()[0] == b'Z':
                    continue  # a zombie: ended, only not reaped yet
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                seen = f.read()
            with open(f'/proc/{pid}/environ', 'rb') as f:
                seen += f.read()
        except (OSError, IndexError):
            continue
        if needle in seen:
            found.append(int(pid))
    return found


def descendants_of(pids):
    """Every live descendant of the processes (a pod's processes need not name the folder, but
    they are below its supervisor)."""
    children = {}
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open(f'/proc/{pid}/stat', 'rb') as f:
                ppid = int(f.read().rsplit(b')', 1)[-1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(pid))
    out, frontier = [], list(pids)
    while frontier:
        nxt = []
        for p in frontier:
            nxt += children.get(p, [])
        out += nxt
        frontier = nxt
    return out


def kill_processes_naming(folder):
    """SIGKILL every process processes_naming(folder) finds."""
    for pid in processes_naming(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def cgroup_mounts():
    """cgroup hierarchy -> (its root as mounted, mount point): '' for cgroup2, else the v1
    controllers (or name=)."""
    mounts = {}
    try:
        with open('/proc/self/mountinfo') as f:
            for line in f:
                left, _, right = line.partition(' - ')
                fields, more = left.split(), right.split()
                if len(fields) < 5 or len(more) < 3:
                    continue
                if more[0] == 'cgroup2':
                    mounts.setdefault('', (fields[3], fields[4]))
                elif more[0] == 'cgroup':
                    opts = [o for o in more[2].split(',')
                            if o not in ('rw', 'ro') and not o.startswith('relatime')]
                    mounts.setdefault(','.join(sorted(opts)), (fields[3], fields[4]))
    except OSError:
        pass
    return mounts


def job_cgroups_of(pids):
    """The berth job cgroups (a path component job_ID_ATTEMPT_TAG) the processes are in, as
    folders under the mounted hierarchies, deepest first."""
    mounts = cgroup_mounts()
    groups = set()
    for pid in pids:
        try:
            with open(f'/proc/{pid}/cgroup') as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            _, controllers, path = line.split(':', 2)
            parts = path.split('/')
            at = [i for i, part in enumerate(parts) if part.startswith('job_')]
            key = ','.join(sorted(controllers.split(','))) if controllers else ''
            if not at or key not in mounts:
                continue
            root, point = mounts[key]
            rel = '/'.join(parts[:at[0] + 1])
            if root != '/':
                if not rel.startswith(root + '/'):
                    continue  # outside what this mount shows
                rel = rel[len(root):]
            groups.add(point + rel)
    return sorted(groups, key=len, reverse=True)


def remove_cgroups(groups):
    """Kills what is left in each group (and its children) and removes the groups."""
    for group in groups:
        for _ in range(50):
            if not os.path.isdir(group):
                break
            inner = []
            for root, _, files in os.walk(group, topdown=False):
                inner.append(root)
                if 'cgroup.procs' in files:
                    try:
                        with open(os.path.join(root, 'cgroup.procs')) as f:
                            for pid in f.read().split():
                                try:
                                    os.kill(int(pid), signal.SIGKILL)
                                except OSError:
                                    pass
                    except OSError:
                        pass
            for d in inner:  # deepest first
                try:
                    os.rmdir(d)
                except OSError:
                    pass
            time.sleep(0.05)


def remove_containers(folder):
    """Deletes the runc containers of the agents under `folder` and unmounts what is mounted
    there (container roots), deepest first."""
    for root, dirs, _ in os.walk(folder):
        if os.path.basename(root) == 'runc':
            for cid in dirs:
                subprocess.run(['runc', '--root', root, 'delete', '--force', cid],
                               capture_output=True, check=False)
            dirs[:] = []
    mounts = []
    try:
        with open('/proc/self/mountinfo') as f:
            for line in f:
                point = line.split()[4].replace('\\040', ' ')
                if point == folder or point.startswith(folder + '/'):
                    mounts.append(point)
    except OSError:
        pass
    for point in sorted(mounts, key=len, reverse=True):
        subprocess.run(['umount', '-l', point], capture_output=True, check=False)


def make_user(name):
    subprocess.run(['userdel', '-r', name], capture_output=True)
    subprocess.run(['useradd', '-m', '-s', '/bin/sh', name], check=True, capture_output=True)


def remove_user(name):
    subprocess.run(['pkill', '-9', '-u', name], capture_output=True)
    subprocess.run(['userdel', '-r', name], capture_output=True)

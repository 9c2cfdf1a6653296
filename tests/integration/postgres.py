"""A throwaway PostgreSQL cluster for the accounting archive's tests (docs/ha.md): initdb in a
temporary folder, the server on a free loopback port with trust authentication for the user
"berth". PostgreSQL refuses to run as root: as root, the cluster belongs to the "postgres" user
(Debian's package makes it). `bin_dir()` is None where PostgreSQL is not installed
(scripts/setup installs postgresql-15)."""
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time


def bin_dir():
    env = os.environ.get('BERTH_PG_BIN')
    if env:
        return env
    found = [d for d in glob.glob('/usr/lib/postgresql/*/bin')
             if os.access(os.path.join(d, 'postgres'), os.X_OK)
             and os.access(os.path.join(d, 'initdb'), os.X_OK)]
    found.sort(key=lambda d: int(d.split('/')[-2]) if d.split('/')[-2].isdigit() else -1)
    return found[-1] if found else None


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Postgres:
    def __init__(self):
        self.bin = bin_dir()
        self.dir = tempfile.mkdtemp(prefix='berth-pg-it-')
        self.port = free_port()
        self.proc = None
        self.owner = None
        if os.geteuid() == 0:
            self.owner = pwd.getpwnam('postgres')
            os.chown(self.dir, self.owner.pw_uid, self.owner.pw_gid)
        subprocess.run([os.path.join(self.bin, 'initdb'), '-D', self.data, '-U', 'berth',
                        '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
                       check=True, capture_output=True, preexec_fn=self._as_owner)
        self.start()

    @property
    def data(self):
        return os.path.join(self.dir, 'data')

    def _as_owner(self):
        if self.owner is not None:
            os.setgid(self.owner.pw_gid)
            os.setuid(self.owner.pw_uid)

    def conninfo(self):
        return f'postgresql://berth@127.0.0.1:{self.port}/postgres'

    def start(self):
        log = open(os.path.join(self.dir, 'postgres.log'), 'ab')
        self.proc = subprocess.Popen(
            [os.path.join(self.bin, 'postgres'), '-D', self.data, '-p', str(self.port),
             '-k', self.dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
            stdout=log, stderr=subprocess.STDOUT, preexec_fn=self._as_owner)
        log.close()
        deadline = time.time() + 30
        while not self.ready():
            if time.time() > deadline:
                raise AssertionError(f'PostgreSQL did not start; log in {self.dir}')
            time.sleep(0.1)

    def ready(self):
        return self.sql('SELECT 1', check=False).returncode == 0

    def sql(self, query, check=True):
        """Runs a query with psql; its output as tab-separated lines without headers."""
        return subprocess.run([os.path.join(self.bin, 'psql'), '-X', '-A', '-t', '-F', '\t',
                               '-h', '127.0.0.1', '-p', str(self.port), '-U', 'berth',
                               '-d', 'postgres', '-c', query],
                              capture_output=True, text=True, timeout=30, check=check)

    def stop(self):
        """Immediate shutdown, as a crash of the server would look to its clients."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            self.proc.wait(timeout=30)
        self.proc = None

    def remove(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

"""A cluster of real hosts on one machine: network namespaces joined by a bridge.

NetBed() builds a switch namespace holding a bridge, and one namespace per host with a veth pair
to the switch (addresses 10.R.0.X/24 exist only inside those namespaces; R is random per bed, so
beds of parallel test runs never meet). The controller runs in host 'ctl' and listens for HTTPS on
its address; agents run in the other hosts and join over TLS with the join token, as on separate
machines. cut()/restore() take a host's link down and up at the switch: to both ends, silence.

Needs root, `ip netns` and nsenter; NetBed.available() says why not when it cannot.
"""
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time

from harness import BERTH, Cluster


def _ip(*args, check=True):
    return subprocess.run(['ip', *args], capture_output=True, text=True, check=check)


class NetBed:
    @staticmethod
    def available():
        """None when namespaces can be made here, else why not."""
        if os.geteuid() != 0:
            return 'not root'
        if shutil.which('ip') is None:
            return 'no ip command (iproute2)'
        if shutil.which('nsenter') is None:
            return 'no nsenter command (util-linux)'
        name = f'berth-probe-{os.getpid()}'
        p = _ip('netns', 'add', name, check=False)
        if p.returncode != 0:
            return 'cannot create a network namespace: ' + p.stderr.strip()
        _ip('netns', 'del', name, check=False)
        return None

    def __init__(self, hosts=('h1', 'h2', 'h3'), node_timeout=12):
        self.tag = f'{os.getpid() % 10000}{random.randint(0, 99):02d}'
        self.net = random.randint(100, 250)
        self.hosts = ['ctl', *hosts]
        self.ns = {h: f'bb{self.tag}-{h}' for h in self.hosts}
        self.switch = f'bb{self.tag}-sw'
        self.addr = {h: f'10.{self.net}.0.{i + 1}' for i, h in enumerate(self.hosts)}
        self.node_timeout = node_timeout
        self.cluster = None
        self.agents = {}
        self.made = []

    # --- the network ---
    def build(self):
        _ip('netns', 'add', self.switch)
        self.made.append(self.switch)
        _ip('-n', self.switch, 'link', 'add', 'br0', 'type', 'bridge')
        _ip('-n', self.switch, 'link', 'set', 'br0', 'up')
        _ip('-n', self.switch, 'link', 'set', 'lo', 'up')
        for h in self.hosts:
            ns = self.ns[h]
            _ip('netns', 'add', ns)
            self.made.append(ns)
            _ip('-n', ns, 'link', 'set', 'lo', 'up')
            _ip('-n', ns, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'p-' + h,
                'netns', self.switch)
            _ip('-n', ns, 'addr', 'add', self.addr[h] + '/24', 'dev', 'eth0')
            _ip('-n', ns, 'link', 'set', 'eth0', 'up')
            _ip('-n', self.switch, 'link', 'set', 'p-' + h, 'master', 'br0')
            _ip('-n', self.switch, 'link', 'set', 'p-' + h, 'up')
        return self

    def cut(self, host):
        _ip('-n', self.switch, 'link', 'set', 'p-' + host, 'down')

    def restore(self, host):
        _ip('-n', self.switch, 'link', 'set', 'p-' + host, 'up')

    def run_in(self, host, argv, **kw):
        # nsenter, not `ip netns exec`: that one also remounts /sys for the namespace, which hides
        # /sys/fs/cgroup, so the agents would run their jobs without cgroups (RLIMIT_DATA
        # instead), unlike on a real host.
        return subprocess.Popen(['nsenter', f'--net=/var/run/netns/{self.ns[host]}', *argv], **kw)

    # --- the daemons ---
    def start_controller(self):
        if self.cluster is None:
            self.cluster = Cluster(node_timeout=self.node_timeout)
        c = self.cluster
        c.controller = self.run_in(
            'ctl', [BERTH, 'controller', '--home', c.dir, '--socket', c.sock,
                    '--node-timeout', str(self.node_timeout),
                    '--k8s-listen', f'{self.addr["ctl"]}:6443', '--tls-san', self.addr['ctl']],
            stdout=c.log('controller'), stderr=subprocess.STDOUT)
        c.wait(c.ready, 'the controller to answer')
        return c

    def url(self):
        return f'https://{self.addr["ctl"]}:6443'

    def join_token(self):
        return self.cluster.cli('token', '--join').stdout.strip()

    def start_agent(self, host, *extra, join=True):
        c = self.cluster
        home = os.path.join(c.dir, 'host-' + host)
        os.makedirs(home, exist_ok=True)
        args = [BERTH, 'agent', '--home', home, '--controller', self.url(),
                '--ca-file', os.path.join(c.dir, 'pki', 'ca.crt'), '--node-name', host,
                '--cpus', '2', '--mem', '2G', *extra]
        if join:
            args += ['--join-token', self.join_token()]
        p = self.run_in(host, args, stdout=c.log('agent-' + host), stderr=subprocess.STDOUT)
        self.agents[host] = p
        return p

    def start(self):
        self.build()
        self.start_controller()
        for h in self.hosts[1:]:
            self.start_agent(h)
        for h in self.hosts[1:]:
            self.cluster.wait(lambda h=h: self.cluster.node_state(h) == 'IDLE', f'{h} to join')
        return self

    def stop_agent(self, host, sig=signal.SIGTERM):
        p = self.agents.pop(host, None)
        if p and p.poll() is None:
            p.send_signal(sig)
            p.wait(timeout=30)

    def stop(self, keep=False):
        for h in list(self.agents):
            self.stop_agent(h)
        if self.cluster:
            self.cluster.stop(keep=keep)
        for ns in self.made:
            # Whatever still runs in a namespace (nothing should) goes with it.
            pids = subprocess.run(['ip', 'netns', 'pids', ns], capture_output=True,
                                  text=True).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _ip('netns', 'del', ns, check=False)

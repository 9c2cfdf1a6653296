"""Jobs in containers (docs/containers.md): real runc, a real docker-registry on loopback with TLS
from a test CA (and htpasswd for private images), images built here from busybox-static and
pushed with skopeo. Nothing comes from the internet.

Each class starts one registry and one cluster; every job, container, mount and cgroup is gone
when it stops (harness.Cluster.stop, registry.Registry.stop).
"""
import base64
import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import harness
import registry
from harness import Cluster

USER = 'berthctr'
OTHER = 'berthctr2'


def can_run_containers():
    """Root, the programs, and a kernel that lets this machine mount overlayfs (a sandbox without
    it cannot run any container, berth's or another's)."""
    if os.geteuid() != 0 or not all(shutil.which(p) for p in
                                     ('runc', 'skopeo', 'docker-registry')):
        return False
    d = tempfile.mkdtemp(prefix='berth-overlay-probe-')
    try:
        for sub in ('l', 'u', 'w', 'm'):
            os.mkdir(os.path.join(d, sub))
        opts = 'lowerdir={0}/l,upperdir={0}/u,workdir={0}/w'.format(d)
        ok = subprocess.run(['mount', '-t', 'overlay', 'overlay', '-o', opts, d + '/m'],
                            capture_output=True).returncode == 0
        if ok:
            subprocess.run(['umount', d + '/m'], capture_output=True)
        return ok
    finally:
        shutil.rmtree(d, ignore_errors=True)


CAN_RUN = can_run_containers()


def dockerconfig(reg):
    token = base64.b64encode(('%s:%s' % reg.auth).encode()).decode()
    return json.dumps({'auths': {reg.host: {'auth': token}}})


@unittest.skipUnless(CAN_RUN, 'needs root, runc, skopeo, docker-registry and overlayfs')
class ContainerJobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.make_user(USER)
        harness.make_user(OTHER)
        cls.work = tempfile.mkdtemp(prefix='berth-ctr-')
        cls.reg = registry.Registry().start()
        cls.priv = registry.Registry(auth=('alice', 's3cret')).start()
        cls.app = registry.build_image(
            os.path.join(cls.work, 'app'), files={'etc/marker': b'inside-the-image\n'},
            entrypoint=['/bin/sh', '-c'], cmd=['echo from-cmd; cat /etc/marker'],
            env=['PATH=/bin', 'IMAGE_VAR=image', 'SHARED=image'], workdir='/etc')
        cls.reg.push(os.path.join(cls.work, 'app'), 'team/app:1.0')
        registry.build_image(os.path.join(cls.work, 'secret'),
                             files={'etc/marker': b'private-image\n'}, cmd=['/bin/sh'])
        cls.priv.push(os.path.join(cls.work, 'secret'), 'team/secret:1')
        registry.build_image(os.path.join(cls.work, 'escape'),
                             extra_layers=[registry.escape_layer()])
        cls.reg.push(os.path.join(cls.work, 'escape'), 'team/escape:1')
        cls.bad = registry.build_image(os.path.join(cls.work, 'bad'),
                                       files={'etc/marker': b'corrupt-me\n'})
        cls.reg.push(os.path.join(cls.work, 'bad'), 'team/bad:1')
        cls.many = registry.build_image(os.path.join(cls.work, 'many'),
                                        files={'etc/marker': b'many\n'})
        cls.reg.push(os.path.join(cls.work, 'many'), 'team/many:1')
        cls.c = Cluster(agent_args=['--registry-ca', cls.reg.certs]).start()
        # Both registries' CAs in one folder for the agent.
        shutil.copy(os.path.join(cls.priv.certs, 'ca.crt'),
                    os.path.join(cls.reg.certs, 'priv-ca.crt'))

    @classmethod
    def tearDownClass(cls):
        cls.c.stop()
        cls.reg.stop()
        cls.priv.stop()
        harness.remove_user(USER)
        harness.remove_user(OTHER)
        shutil.rmtree(cls.work, ignore_errors=True)

    def submit(self, script, image, user=USER, container=None, **kw):
        home = '/home/' + user
        spec = {'name': 'ctr', 'user': user, 'script': '#!/bin/sh\n' + script,
                'work_dir': home, 'stdout': home + '/ctr-%j.out',
                'container': dict({'image': image}, **(container or {}))}
        spec.update(kw)
        return self.c.submit(spec)

    def output(self, job_id, user=USER):
        with open('/home/%s/ctr-%d.out' % (user, job_id)) as f:
            return f.read()

    def end(self, job_id, timeout=120):
        return self.c.wait_state(job_id, ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT',
                                          'OUT_OF_MEMORY', 'NODE_FAIL'], timeout=timeout)

    def image(self, repo):
        return '%s/%s' % (self.reg.host, repo)

    def test_a_batch_script_runs_in_the_image_as_its_user(self):
        j = self.submit('id -u; cat /etc/marker; echo "$IMAGE_VAR $SHARED $PATH $SLURM_JOB_ID"; '
                        'pwd; touch /etc/x 2>/dev/null || echo read-only-for-the-user\n',
                        self.image('team/app:1.0'), container={'env': [['SHARED', 'job']]})
        r = self.end(j)
        self.assertEqual(r['state'], 'COMPLETED', r)
        out = self.output(j).splitlines()
        uid = subprocess.run(['id', '-u', USER], capture_output=True, text=True).stdout.strip()
        self.assertEqual(out[0], uid)
        self.assertEqual(out[1], 'inside-the-image')
        # The image's env under the job's; PATH stays the image's.
        self.assertEqual(out[2], 'image job /bin %d' % j)
        self.assertEqual(out[3], '/home/' + USER)  # the home is mounted: the job's folder
        self.assertEqual(out[4], 'read-only-for-the-user')

    def test_kubernetes_entry_uses_entrypoint_and_cmd_and_their_overrides(self):
        base = {'name': 'pod', 'user': USER, 'work_dir': '/home/' + USER}

        def run(**container):
            spec = dict(base, stdout='/home/%s/ctr-%%j.out' % USER,
                        container=dict({'image': self.image('team/app:1.0'),
                                        'entry': 'kubernetes'}, **container))
            j = self.c.submit(spec)
            self.assertEqual(self.end(j)['state'], 'COMPLETED')
            return self.output(j)

        self.assertEqual(run(), 'from-cmd\ninside-the-image\n')
        self.assertEqual(run(args=['echo args-only; pwd']), 'args-only\n/etc\n')
        self.assertEqual(run(command=['/bin/echo'], args=['command', 'and', 'args']),
                         'command and args\n')

    def test_a_private_image_needs_its_credentials(self):
        image = '%s/team/secret:1' % self.priv.host
        j = self.submit('cat /etc/marker\n', image, container={'auth_config': dockerconfig(self.priv)})
        r = self.end(j)
        self.assertEqual(r['state'], 'COMPLETED', r)
        self.assertEqual(self.output(j), 'private-image\n')
        # Another user without credentials may not use what alice's credentials pulled.
        j2 = self.submit('cat /etc/marker\n', image, user=OTHER)
        r2 = self.end(j2)
        self.assertEqual(r2['state'], 'FAILED', r2)
        self.assertIn('pulling ' + image, r2['message'])
        self.assertRegex(r2['message'].lower(), 'unauthorized|authentication|denied')
        # With their own credentials (their ~/.docker/config.json, read as them) they may.
        os.makedirs('/home/%s/.docker' % OTHER, exist_ok=True)
        with open('/home/%s/.docker/config.json' % OTHER, 'w') as f:
            f.write(dockerconfig(self.priv))
        subprocess.run(['chown', '-R', OTHER, '/home/%s/.docker' % OTHER], check=True)
        os.chmod('/home/%s/.docker/config.json' % OTHER, 0o600)
        j3 = self.submit('cat /etc/marker\n', image, user=OTHER)
        self.assertEqual(self.end(j3)['state'], 'COMPLETED')
        self.assertEqual(self.output(j3, OTHER), 'private-image\n')

    def test_an_unknown_tag_fails_with_the_registrys_reason(self):
        j = self.submit('true\n', self.image('team/app:no-such-tag'))
        r = self.end(j)
        self.assertEqual(r['state'], 'FAILED', r)
        self.assertRegex(r['message'], 'manifest unknown|not found')

    def test_a_layer_that_escapes_is_refused_and_writes_nothing_outside(self):
        sentinel = '/berth-escape-sentinel'
        if os.path.exists(sentinel):
            os.unlink(sentinel)
        j = self.submit('true\n', self.image('team/escape:1'))
        r = self.end(j)
        self.assertEqual(r['state'], 'FAILED', r)
        self.assertRegex(r['message'], 'escape|outside|\.\.')
        self.assertFalse(os.path.exists(sentinel))

    def test_a_corrupt_blob_is_refused_and_the_store_stays_usable(self):
        layer = self.bad['layers'][-1]
        original = self.reg.corrupt_blob(layer)
        try:
            j = self.submit('cat /etc/marker\n', self.image('team/bad:1'))
            r = self.end(j)
            self.assertEqual(r['state'], 'FAILED', r)
            self.assertRegex(r['message'], 'digest|sha256')
        finally:
            self.reg.restore_blob(layer, original)
        j = self.submit('cat /etc/marker\n', self.image('team/bad:1'))
        self.assertEqual(self.end(j)['state'], 'COMPLETED')
        self.assertEqual(self.output(j), 'corrupt-me\n')

    def test_memory_limit_ends_out_of_memory(self):
        j = self.submit('head -c 400m /dev/zero | tail > /dev/null; echo survived\n',
                        self.image('team/app:1.0'), mem_per_node=64)
        r = self.end(j)
        self.assertEqual(r['state'], 'OUT_OF_MEMORY', r)

    def test_time_limit_and_cancel_stop_every_process(self):
        t = self.submit('sleep 1000 & sleep 1001\n', self.image('team/app:1.0'), time_limit=1)
        c = self.submit('sleep 1002 & sleep 1003\n', self.image('team/app:1.0'))
        self.c.wait_state(c, 'RUNNING')
        time.sleep(1)
        self.c.cli('scancel', str(c))
        self.assertEqual(self.end(c)['state'], 'CANCELLED')
        self.assertEqual(self.end(t, timeout=180)['state'], 'TIMEOUT')
        self.c.wait(lambda: subprocess.run(['pgrep', '-f', 'sleep 100[0-3]']).returncode != 0,
                    'the containers\' processes to end')
        runc_root = os.path.join(self.c.dir, 'agent', 'runc')
        self.c.wait(lambda: not os.path.isdir(runc_root) or not os.listdir(runc_root),
                    'runc\'s containers to be deleted')

    def test_twenty_jobs_of_one_image_pull_it_once(self):
        jobs = [self.submit('cat /etc/marker\n', self.image('team/many:1')) for _ in range(20)]
        for j in jobs:
            self.assertEqual(self.end(j, timeout=300)['state'], 'COMPLETED')
            self.assertEqual(self.output(j), 'many\n')
        # One download of each blob for all twenty: the config and the image's own layer once;
        # the busybox layer, shared with the images pulled before, not at all.
        log = self.reg.log_text()

        def gets(digest):
            return sum(1 for line in log.splitlines()
                       if '"GET /v2/team/many/blobs/%s ' % digest in line and '" 200 ' in line)
        self.assertEqual(gets(self.many['config']), 1)
        self.assertEqual(gets(self.many['layers'][-1]), 1)
        self.assertLessEqual(gets(self.many['layers'][0]), 1)

    def test_the_controller_lists_each_nodes_image_cache(self):
        j = self.submit('sleep 60\n', self.image('team/app:1.0'))
        self.c.wait_state(j, 'RUNNING')
        name = self.image('team/app:1.0')

        def listed(in_use):
            status, body = self.c.api('GET', '/v1/images?node=node1')
            return status == 200 and any(
                name in i['names'] and i['node'] == 'node1' and i['in_use'] == in_use
                for i in body['images'])
        # The agent reports its cache when it changes (with its next heartbeat).
        self.c.wait(lambda: listed(True), 'the image in use on node1', timeout=30)
        self.c.cli('scancel', str(j))
        self.assertEqual(self.end(j)['state'], 'CANCELLED')
        self.c.wait(lambda: listed(False), 'the image unused on node1', timeout=30)
        out = self.c.cli('images', 'list', '--nodes', user=USER).stdout.splitlines()
        self.assertEqual(out[0].split(), ['NODE', 'REPOSITORY', 'TAG', 'DIGEST', 'SIZE', 'LAST',
                                          'USED', 'IN', 'USE'])
        rows = [line.split() for line in out[1:]]
        self.assertIn(['node1', self.image('team/app'), '1.0'], [r[:3] for r in rows])
        self.assertEqual(self.c.cli('images', 'list', '--node', 'node9').stdout.splitlines()[1:],
                         [])

    def test_the_job_survives_an_agent_restart_and_a_controller_kill(self):
        j = self.submit('sleep 3; exit 7\n', self.image('team/app:1.0'))
        self.c.wait_state(j, 'RUNNING')
        self.c.kill('agent', signal.SIGKILL)
        self.c.kill('controller', signal.SIGKILL)
        self.c.start_controller()
        self.c.start_agent()
        r = self.end(j)
        self.assertEqual(r['state'], 'FAILED', r)
        self.assertEqual(r['exit_code'], 7)


@unittest.skipUnless(CAN_RUN, 'needs root, runc, skopeo, docker-registry and overlayfs')
class NodeWithoutContainers(unittest.TestCase):
    def test_a_container_job_fails_with_the_reason_and_never_runs_bare(self):
        c = Cluster(agent_args=['--no-containers']).start()
        try:
            out = os.path.join(c.dir, 'bare-marker')
            j = c.submit({'script': '#!/bin/sh\ntouch %s\n' % out, 'work_dir': c.dir,
                          'container': {'image': 'busybox:1.36'}})
            r = c.wait_state(j, ['FAILED', 'NODE_FAIL', 'COMPLETED'])
            self.assertEqual(r['state'], 'FAILED', r)
            self.assertIn('runs no containers', r['message'])
            self.assertFalse(os.path.exists(out))
        finally:
            c.stop()


if __name__ == '__main__':
    unittest.main()


@unittest.skipUnless(CAN_RUN, 'needs root, runc, skopeo, docker-registry and overlayfs')
class PodsInImages(unittest.TestCase):
    """Pods through the real kubectl, run in their images (--container-pods yes)."""

    @classmethod
    def setUpClass(cls):
        from test_k8s_nodes import KUBECTL, Kubectl, write_kubeconfig
        if KUBECTL is None:
            raise unittest.SkipTest('kubectl is not installed')
        cls.work = tempfile.mkdtemp(prefix='berth-ctr-k8s-')
        os.chmod(cls.work, 0o755)
        cls.reg = registry.Registry(auth=('bob', 'pw')).start()
        registry.build_image(
            os.path.join(cls.work, 'pi'), files={'etc/marker': b'inside-the-image\n'},
            entrypoint=['/bin/sh', '-c'], cmd=['echo 3.14159; cat /etc/marker'],
            env=['PATH=/bin', 'IMAGE_VAR=image'])
        cls.reg.push(os.path.join(cls.work, 'pi'), 'team/pi:1')
        cls.c = Cluster(container_pods=True,
                        controller_args=['--k8s-listen', '127.0.0.1:0'],
                        agent_args=['--registry-ca', cls.reg.certs]).start()
        path = os.path.join(cls.work, 'kubeconfig')
        write_kubeconfig(cls.c, path)
        cls.k = Kubectl(path, os.path.join(cls.work, 'cache'))
        cls.k('create', 'secret', 'docker-registry', 'regcred',
              '--docker-server=' + cls.reg.host, '--docker-username=bob', '--docker-password=pw')

    @classmethod
    def tearDownClass(cls):
        if cls.exec_user:
            subprocess.run(cls.k.argv('delete', 'pods', '--all', '--timeout=60s'),
                           capture_output=True, timeout=90)
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        cls.reg.stop()
        if cls.exec_user:
            harness.remove_user(cls.exec_user)
        shutil.rmtree(cls.work, ignore_errors=True)

    exec_user = None  # the owner of the exec tests' pod, made by the first of them

    def exec_pod(self):
        """kubectl of a user of its own (not root) and that user's running pod 'execbox' in the
        image, shared by the exec tests (which need kubectl 1.30 or newer: they skip otherwise)."""
        from test_k8s_nodes import KUBECTL_VERSION, Kubectl, write_kubeconfig
        if KUBECTL_VERSION < (1, 30):
            self.skipTest('kubectl exec needs kubectl 1.30 or newer (WebSocket streams)')
        cls = type(self)
        if cls.exec_user is None:
            cls.exec_user = 'bcx%db' % (os.getpid() % 10000)
            harness.make_user(cls.exec_user)
            path = os.path.join(cls.work, 'kubeconfig-' + cls.exec_user)
            write_kubeconfig(cls.c, path, user=cls.exec_user)
            cache = os.path.join(cls.work, 'cache-' + cls.exec_user)
            os.makedirs(cache)
            shutil.chown(cache, cls.exec_user)
            cls.ku = Kubectl(path, cache, user=cls.exec_user)
            # Its own pull secret: a pod may use only its owner's.
            cls.ku('create', 'secret', 'docker-registry', 'regcred-exec', '--docker-server=' +
                   cls.reg.host, '--docker-username=bob', '--docker-password=pw')
            pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'execbox'},
                   'spec': {'restartPolicy': 'Never',
                            'imagePullSecrets': [{'name': 'regcred-exec'}],
                            'containers': [{'name': 'main', 'image': cls.reg.host + '/team/pi:1',
                                            'env': [{'name': 'MARK', 'value': 'from-the-pod'}],
                                            'args': ['cat /proc/self/cgroup; echo ready; '
                                                     'sleep 600']}]}}
            pod_path = os.path.join(cls.work, 'execbox.json')
            with open(pod_path, 'w') as f:
                json.dump(pod, f)
            os.chmod(pod_path, 0o644)
            cls.ku('apply', '-f', pod_path)
            try:
                self.c.wait(lambda: 'ready' in cls.ku('logs', 'execbox', check=False).stdout,
                            'pod execbox to run', 90)
            except AssertionError:
                raise AssertionError(cls.ku('get', 'pod', 'execbox', '-o', 'json').stdout[-1500:])
        return cls.ku

    def kexec(self, *args, input=None, k=None):
        k = k or self.exec_pod()
        return subprocess.run(k.argv('exec', *args), capture_output=True, text=True, input=input,
                              timeout=60)

    def test_exec_runs_in_the_pods_container_as_its_user(self):
        p = self.kexec('execbox', '--', 'cat', '/etc/marker')  # a file only the image has
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, 'inside-the-image\n', ''))
        p = self.kexec('execbox', '--', 'sh', '-c', 'id -u; id -g; echo "$MARK $IMAGE_VAR"; pwd; '
                       'cat /proc/sys/kernel/hostname')
        self.assertEqual(p.returncode, 0, p.stderr)
        user = pwd.getpwnam(self.exec_user)
        self.assertEqual(p.stdout.splitlines(),
                         [str(user.pw_uid), str(user.pw_gid), 'from-the-pod image', '/',
                          'execbox'])
        # In the pod's cgroups (the container's, within the job's): limited and ended with it.
        p = self.kexec('execbox', '--', 'cat', '/proc/self/cgroup')
        self.assertEqual(p.returncode, 0, p.stderr)
        pods = [line for line in self.ku('logs', 'execbox').stdout.splitlines() if ':' in line]
        self.assertTrue([line for line in pods if 'berth' in line], pods)
        execs = p.stdout.splitlines()
        if any(not line.startswith('0::') for line in pods):
            # A v1 or hybrid host: the v1 hierarchies' groups are the container's. (On a hybrid
            # host runc puts an exec in the cgroup2 group it made for the container, not in the
            # job's, where berth moved the pod's process: docs/containers.md.)
            pods = [line for line in pods if not line.startswith('0::')]
            execs = [line for line in execs if not line.startswith('0::')]
        self.assertEqual(sorted(execs), sorted(pods))

    def test_exec_exit_codes_and_stdin(self):
        p = self.kexec('execbox', '--', 'sh', '-c', 'echo to-out; echo to-err >&2; exit 7')
        self.assertEqual(p.returncode, 7, p.stderr)
        self.assertEqual(p.stdout, 'to-out\n')
        self.assertIn('to-err\n', p.stderr)
        self.assertIn('command terminated with exit code 7', p.stderr)
        p = self.kexec('execbox', '--', 'sh', '-c', 'kill -9 $$')
        self.assertEqual(p.returncode, 137, p.stderr)
        p = self.kexec('-i', 'execbox', '--', 'cat', input='hi\n')
        self.assertEqual((p.returncode, p.stdout), (0, 'hi\n'), p.stderr)
        big = 'x' * 300000
        p = self.kexec('-i', 'execbox', '--', 'busybox', 'wc', '-c', input=big)
        self.assertEqual(p.stdout.strip(), '300000', p.stderr)

    def test_exec_of_a_command_the_image_lacks(self):
        p = self.kexec('execbox', '--', 'no-such-command-here')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('executable file not found in $PATH', p.stderr)
        self.assertEqual(p.stdout, '')
        # /bin/bash is the host's, not the image's.
        p = self.kexec('execbox', '--', '/bin/bash', '-c', 'true')
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('stat /bin/bash: no such file or directory', p.stderr)

    def test_exec_with_a_terminal_of_the_callers_size(self):
        from test_k8s_exec import PtyKubectl
        argv = self.exec_pod().argv('exec', '-it', 'execbox', '--', 'sh', '-c',
                                    'busybox stty size; busybox tty; id -u; read a; '
                                    'busybox stty size; echo "a=$a"; exit 5')
        argv[0] = shutil.which(argv[0])  # runuser: PtyKubectl execs a path
        t = PtyKubectl(argv, rows=33, cols=101)
        try:
            t.read_until('33 101')
            t.read_until('/dev/pts/')
            t.read_until(str(pwd.getpwnam(self.exec_user).pw_uid))
            t.resize(40, 120)
            time.sleep(0.5)  # kubectl sends the new size on SIGWINCH
            t.write('typed\r')
            t.read_until('a=typed')
            self.assertIn('40 120', t.out.decode(errors='replace'))
            self.assertEqual(t.wait(), 5)
            self.assertIn('command terminated with exit code 5', t.out.decode(errors='replace'))
        finally:
            t.close()

    def test_exec_ends_when_the_client_goes_away_and_with_the_pod(self):
        k = self.exec_pod()
        # The client goes away: what it started in the container gets SIGHUP.
        kubectl = subprocess.Popen(k.argv('exec', 'execbox', '--', 'sh', '-c',
                                          'sleep 300 & echo $!; wait'),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            pid = int(kubectl.stdout.readline())
            self.assertTrue(os.path.exists('/proc/%d' % pid))
        finally:
            os.killpg(kubectl.pid, signal.SIGKILL)  # runuser and its kubectl
            kubectl.communicate()
        self.c.wait(lambda: not os.path.exists('/proc/%d' % pid),
                    'the exec\'d process to end with its client', 30)
        # The same with a terminal (runc detached, the command reaped by berth's watcher).
        from test_k8s_exec import PtyKubectl
        argv = k.argv('exec', '-it', 'execbox', '--', 'sh', '-c', 'echo "pid=$$."; sleep 300')
        argv[0] = shutil.which(argv[0])
        t = PtyKubectl(argv, rows=24, cols=80)
        try:
            out = t.read_until('.\r\n')
            pid = int(out.split('pid=')[1].split('.')[0])
            self.assertTrue(os.path.exists('/proc/%d' % pid))
        finally:
            t.close()
        self.c.wait(lambda: not os.path.exists('/proc/%d' % pid),
                    'the exec\'d process on a terminal to end with its client', 30)
        # The pod's end ends what an exec left running in its container.
        self.apply('execend', {'image': self.reg.host + '/team/pi:1',
                               'args': ['echo ready; sleep 600']})
        self.c.wait(lambda: 'ready' in self.k('logs', 'execend', check=False).stdout,
                    'pod execend to run', 90)
        p = self.kexec('execend', '--', 'sh', '-c', 'sleep 300 >/dev/null 2>&1 & echo $!', k=self.k)
        self.assertEqual(p.returncode, 0, p.stderr)
        pid = int(p.stdout.strip())
        self.assertTrue(os.path.exists('/proc/%d' % pid))
        self.k('delete', 'pod', 'execend', '--wait=false')
        self.c.wait(lambda: not os.path.exists('/proc/%d' % pid),
                    'the exec\'d process to end with its pod', 60)

    # kubectl attach -i/-t and kubectl run -i/-it to pods in their images (ADR 0006, attach): the
    # supervisor holds runc create's stdin pipe, or the master of the terminal runc made in the
    # container, as for a process pod.

    def needs_streams(self):
        from test_k8s_nodes import KUBECTL_VERSION
        if KUBECTL_VERSION < (1, 30):
            self.skipTest('kubectl attach needs kubectl 1.30 or newer (WebSocket streams)')

    def stdin_pod(self, name, script, **fields):
        """A running pod of root's in the image whose container has `fields` (stdin, stdinOnce,
        tty), running `sh -c script`, once its log says 'ready'."""
        self.needs_streams()
        self.apply(name, dict({'image': self.reg.host + '/team/pi:1', 'args': [script]},
                              **fields))
        self.addCleanup(lambda: subprocess.run(
            self.k.argv('delete', 'pod', name, '--wait=false', '--ignore-not-found'),
            capture_output=True, timeout=60))
        self.c.wait(lambda: 'ready' in self.k('logs', name, check=False).stdout,
                    'pod %s to run' % name, 90)

    def test_attach_i_writes_to_the_containers_stdin_that_stays_open(self):
        from test_k8s_attach import Attached
        self.stdin_pod('ctrreader', 'echo ready; while read l; do echo "got:$l"; done; echo eof',
                       stdin=True)
        a = Attached(self.k.argv('attach', '-i', 'ctrreader'), stdin=True)
        try:
            time.sleep(2)
            a.write('one\n')
            a.read_until('got:one')
            a.p.stdin.close()  # this client's stdin ends; the container's does not
            time.sleep(1)
        finally:
            a.close()
        b = Attached(self.k.argv('attach', '-i', 'ctrreader'), stdin=True)
        try:
            time.sleep(2)
            b.write('two\n')
            self.assertNotIn('eof', b.read_until('got:two'))
        finally:
            b.close()
        self.assertEqual(self.k('logs', 'ctrreader').stdout, 'ready\ngot:one\ngot:two\n')

    def test_stdin_once_ends_the_containers_stdin_with_the_first_client(self):
        self.stdin_pod('ctronce', 'echo ready; cat; echo after-eof; exit 3', stdin=True,
                       stdinOnce=True)
        p = subprocess.run(self.k.argv('attach', '-i', 'ctronce'), input='hello\n',
                           capture_output=True, text=True, timeout=60)
        self.assertIn('hello\nafter-eof\n', p.stdout)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.wait_phase('ctronce', 'Failed')
        self.assertEqual(self.k('logs', 'ctronce').stdout, 'ready\nhello\nafter-eof\n')

    def test_stdin_once_on_the_containers_terminal_types_its_eof(self):
        from test_k8s_exec import PtyKubectl
        self.stdin_pod('ctrttyonce', 'echo ready; cat; echo after-eof; exit 6', stdin=True,
                       stdinOnce=True, tty=True)
        t = PtyKubectl(self.k.argv('attach', '-it', 'ctrttyonce'), rows=24, cols=80)
        try:
            time.sleep(2)
            t.write('typed\r')
            t.read_until('typed\r\n')  # cat's echo of the line
        finally:
            t.close()  # the first client leaves: its stdin ended, the terminal's EOF is typed
        self.wait_phase('ctrttyonce', 'Failed')
        logs = self.k('logs', 'ctrttyonce').stdout
        self.assertIn('after-eof', logs)
        state = self.pod('ctrttyonce')['status']['containerStatuses'][0]['state']
        self.assertEqual(state['terminated']['exitCode'], 6, state)

    def test_attach_it_gets_the_containers_terminal_which_survives_an_agent_restart(self):
        from test_k8s_exec import PtyKubectl
        self.stdin_pod('ctrterm', 'echo ready; while read l; do busybox stty size; '
                       'echo "line=$l"; done', stdin=True, tty=True)
        t = PtyKubectl(self.k.argv('attach', '-it', 'ctrterm'), rows=33, cols=101)
        try:
            time.sleep(2)
            t.write('x\r')
            t.read_until('33 101')
            t.read_until('line=x')
            t.resize(40, 120)
            time.sleep(0.5)  # kubectl sends the new size on SIGWINCH
            t.write('y\r')
            t.read_until('40 120')
        finally:
            t.close()
        # The supervisor holds the terminal's master: a new agent asks it again.
        self.c.kill('agent')
        self.c.start_agent()
        t = PtyKubectl(self.k.argv('attach', '-it', 'ctrterm'), rows=24, cols=80)
        try:
            time.sleep(2)
            t.write('z\r')
            t.read_until('line=z')
        finally:
            t.close()
        logs = self.k('logs', 'ctrterm').stdout  # the terminal's output is the pod's log
        for line in ('ready', 'line=x', '40 120', 'line=z'):
            self.assertIn(line, logs)

    def test_kubectl_run_it_rm_drives_a_shell_in_the_image_as_its_user(self):
        from test_k8s_exec import PtyKubectl
        k = self.exec_pod()  # a user of its own, with its pull secret
        argv = k.argv('run', 'ctrshell', '-it', '--rm', '--restart=Never',
                      '--image=' + self.reg.host + '/team/pi:1', '--overrides=' + json.dumps(
                          {'apiVersion': 'v1',
                           'spec': {'imagePullSecrets': [{'name': 'regcred-exec'}]}}),
                      '--', 'sh')
        argv[0] = shutil.which(argv[0])  # runuser: PtyKubectl execs a path
        t = PtyKubectl(argv, rows=24, cols=80)
        try:
            time.sleep(1)
            t.write('\r')
            t.write('echo "v=$((6*7))"; cat /etc/marker; id -u; busybox tty\r')
            t.read_until('v=42')
            t.read_until('inside-the-image')  # the image's root
            t.read_until(str(pwd.getpwnam(self.exec_user).pw_uid))
            t.read_until('/dev/pts/')  # runc's terminal, in the container's devpts
            t.write('busybox stty size\r')
            t.read_until('24 80')
            t.write('sleep 100\r')
            time.sleep(0.5)
            t.write('\x03')  # Ctrl-C: the terminal's SIGINT to the foreground job
            t.write('echo after-interrupt\r')
            t.read_until('after-interrupt\r\n')
            t.write('exit\r')
            self.assertEqual(t.wait(60), 0, t.out)
        finally:
            t.close()
        self.assertIn('pod "ctrshell" deleted', t.out.decode(errors='replace'))
        p = subprocess.run(k.argv('get', 'pod', 'ctrshell'), capture_output=True, text=True,
                           timeout=60)
        self.assertIn('not found', p.stderr)

    def test_kubectl_run_i_with_piped_stdin_as_its_user(self):
        k = self.exec_pod()  # not root: runc hands the pipe to the container's user
        p = subprocess.run(k.argv(
            'run', 'ctrcat', '-i', '--rm', '--restart=Never',
            '--image=' + self.reg.host + '/team/pi:1',
            '--overrides=' + json.dumps({'apiVersion': 'v1', 'spec': {
                'imagePullSecrets': [{'name': 'regcred-exec'}]}}),
            '--', 'cat; id -u'), input='piped line\n', capture_output=True, text=True,
            timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('piped line\n%d\n' % pwd.getpwnam(self.exec_user).pw_uid, p.stdout)

    def apply(self, name, container, pull_secret=True, volumes=None):
        pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name},
               'spec': {'restartPolicy': 'Never',
                        'containers': [dict({'name': 'main'}, **container)]}}
        if volumes:
            pod['spec']['volumes'] = volumes
        if pull_secret:
            pod['spec']['imagePullSecrets'] = [{'name': 'regcred'}]
        path = os.path.join(self.work, name + '.json')
        with open(path, 'w') as f:
            json.dump(pod, f)
        self.k('apply', '-f', path)

    def pod(self, name):
        return json.loads(self.k('get', 'pod', name, '-o', 'json').stdout)

    def wait_phase(self, name, phase, timeout=90):
        last = {}

        def done():
            nonlocal last
            last = self.pod(name)
            return last.get('status', {}).get('phase') == phase
        self.c.wait(done, 'pod %s to be %s (%s)' % (name, phase, json.dumps(last)[-600:]),
                    timeout)
        return last

    def test_a_job_whose_image_gives_only_entrypoint_and_cmd(self):
        # The Kubernetes documentation's pi Job, with a local image in place of perl's.
        job = {'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': {'name': 'pi'},
               'spec': {'backoffLimit': 0, 'template': {'spec': {
                   'restartPolicy': 'Never', 'imagePullSecrets': [{'name': 'regcred'}],
                   'containers': [{'name': 'pi', 'image': self.reg.host + '/team/pi:1'}]}}}}
        path = os.path.join(self.work, 'pi-job.json')
        with open(path, 'w') as f:
            json.dump(job, f)
        self.k('apply', '-f', path)
        self.k('wait', '--for=condition=complete', 'job/pi', '--timeout=90s')
        self.assertEqual(self.k('logs', 'job/pi').stdout, '3.14159\ninside-the-image\n')
        pods = json.loads(self.k('get', 'pods', '-l', 'job-name=pi', '-o', 'json').stdout)
        status = pods['items'][0]['status']['containerStatuses'][0]
        self.assertRegex(status['imageID'], '^%s/team/pi@sha256:[0-9a-f]{64}$' % self.reg.host)

    def test_args_replace_cmd_with_the_pods_env_over_the_images(self):
        self.apply('args', {'image': self.reg.host + '/team/pi:1',
                            'env': [{'name': 'GREETING', 'value': 'hello'},
                                    {'name': 'IMAGE_VAR', 'value': 'pod'}],
                            'args': ['echo $(GREETING) $IMAGE_VAR; pwd; '
                                     'cat /proc/sys/kernel/hostname; echo $HOSTNAME']})
        self.wait_phase('args', 'Succeeded')
        # The Pod's own host name (a UTS namespace of its own), as kubelet gives it.
        self.assertEqual(self.k('logs', 'args').stdout, 'hello pod\n/\nargs\nargs\n')

    def test_config_maps_secrets_and_empty_dirs_reach_the_container(self):
        self.k('create', 'configmap', 'settings', '--from-literal=mode=fast',
               '--from-literal=level=3')
        self.k('create', 'secret', 'generic', 'token', '--from-literal=key=s3cr3t')
        self.apply('volumes', {
            'image': self.reg.host + '/team/pi:1',
            'args': ['cat /etc/settings/mode; echo; cat /etc/settings/level; echo; '
                     'echo "$TOKEN $NODE"; echo scratch > /scratch/f && cat /scratch/f; '
                     '(echo x > /etc/settings/y) 2>/dev/null || echo read-only'],
            'env': [{'name': 'TOKEN', 'valueFrom': {'secretKeyRef': {'name': 'token',
                                                                     'key': 'key'}}},
                    {'name': 'NODE', 'valueFrom': {'fieldRef': {'fieldPath': 'spec.nodeName'}}}],
            'volumeMounts': [{'name': 'settings', 'mountPath': '/etc/settings'},
                             {'name': 'scratch', 'mountPath': '/scratch'}]},
            volumes=[{'name': 'settings', 'configMap': {'name': 'settings'}},
                     {'name': 'scratch', 'emptyDir': {}}])
        self.wait_phase('volumes', 'Succeeded')
        self.assertEqual(self.k('logs', 'volumes').stdout,
                         'fast\n3\ns3cr3t node1\nscratch\nread-only\n')

    def test_the_pull_shows_in_the_pods_events(self):
        self.apply('pulled', {'image': self.reg.host + '/team/pi:1', 'args': ['sleep 8']})

        def reasons():
            events = json.loads(self.k('get', 'events', '--field-selector',
                                       'involvedObject.name=pulled', '-o', 'json').stdout)
            return {e['reason']: e['message'] for e in events['items']}
        self.c.wait(lambda: 'Pulled' in reasons(), 'a Pulled event', 60)
        self.assertRegex(reasons()['Pulled'],
                         r'^(Successfully pulled image "%s/team/pi:1" in [0-9.]+s|'
                         r'Container image "%s/team/pi:1" already present on machine)$'
                         % (self.reg.host, self.reg.host))
        self.assertIn('Started', reasons())
        self.k('delete', 'pod', 'pulled', '--wait=false')

    def test_over_its_memory_limit_the_container_is_oomkilled(self):
        self.apply('oom', {'image': self.reg.host + '/team/pi:1',
                           'args': ['head -c 400m /dev/zero | tail'],
                           'resources': {'limits': {'memory': '64Mi'}}})
        pod = self.wait_phase('oom', 'Failed')
        state = pod['status']['containerStatuses'][0]['state']
        self.assertEqual(state['terminated']['reason'], 'OOMKilled', state)

    def test_without_its_pull_secret_a_private_image_backs_off(self):
        self.apply('nosecret', {'image': self.reg.host + '/team/pi:1'}, pull_secret=False)

        def waiting():
            statuses = self.pod('nosecret').get('status', {}).get('containerStatuses') or [{}]
            return statuses[0].get('state', {}).get('waiting', {}).get('reason') == \
                'ImagePullBackOff'
        self.c.wait(waiting, 'the pod to wait in ImagePullBackOff', 90)
        pod = self.pod('nosecret')
        self.assertEqual(pod['status']['phase'], 'Pending')
        message = pod['status']['containerStatuses'][0]['state']['waiting']['message']
        self.assertRegex(message.lower(), 'unauthorized|authentication')
        self.assertIn('ImagePullBackOff', self.k('get', 'pod', 'nosecret').stdout)
        self.k('delete', 'pod', 'nosecret', '--wait=false')


@unittest.skipUnless(CAN_RUN, 'needs root, runc, skopeo, docker-registry and overlayfs')
class SlurmPyxis(unittest.TestCase):
    """sbatch and srun with pyxis's options, as a user, through the real CLI."""

    @classmethod
    def setUpClass(cls):
        harness.make_user(USER)
        cls.work = tempfile.mkdtemp(prefix='berth-ctr-slurm-')
        cls.reg = registry.Registry().start()
        registry.build_image(os.path.join(cls.work, 'img'),
                             files={'etc/marker': b'in-the-image\n', 'scratch': ('dir', 0o777)},
                             env=['PATH=/bin'])
        cls.reg.push(os.path.join(cls.work, 'img'), 'team/img:2')
        cls.c = Cluster(agent_args=['--registry-ca', cls.reg.certs]).start()
        cls.home = '/home/' + USER
        cls.image = '%s#team/img:2' % cls.reg.host  # pyxis's REGISTRY#IMAGE form

    @classmethod
    def tearDownClass(cls):
        cls.c.stop()
        cls.reg.stop()
        harness.remove_user(USER)
        shutil.rmtree(cls.work, ignore_errors=True)

    def sbatch(self, script, *args):
        path = os.path.join(self.home, 'job.sh')
        with open(path, 'w') as f:
            f.write(script)
        subprocess.run(['chown', USER, path], check=True)
        cmd = ['runuser', '-u', USER, '--', 'env', 'BERTH_SOCKET=' + self.c.sock,
               'PATH=/usr/bin:/bin', harness.BERTH, 'sbatch', '--parsable', *args, 'job.sh']
        p = subprocess.run(cmd, cwd=self.home, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout.strip().split(';')[0])

    def out(self, job_id):
        with open(os.path.join(self.home, 'slurm-%d.out' % job_id)) as f:
            return f.read()

    def test_sbatch_container_image_runs_the_batch_script_in_it(self):
        j = self.sbatch('#!/bin/sh\n#SBATCH --container-mounts=/etc/hostname:/mnt/host:ro\n'
                        'cat /etc/marker; pwd; cat /mnt/host >/dev/null && echo mounted\n',
                        '--container-image=' + self.image)
        r = self.c.wait_state(j, ['COMPLETED', 'FAILED'], timeout=120)
        self.assertEqual(r['state'], 'COMPLETED', r)
        self.assertEqual(self.out(j), 'in-the-image\n%s\nmounted\n' % self.home)

    def test_srun_steps_run_their_tasks_in_the_image_and_reuse_a_named_container(self):
        srun = harness.os.path.abspath(harness.BERTH) + ' srun'
        j = self.sbatch('#!/bin/sh\n'
                        'test -e /etc/marker || echo batch-on-the-host\n'
                        '%s -n 2 -l --container-image=%s --container-name=c1 cat /etc/marker\n'
                        "%s -l --container-name=c1 sh -c 'echo task $SLURM_PROCID'\n"
                        % (srun, self.image, srun), '-n', '2')
        r = self.c.wait_state(j, ['COMPLETED', 'FAILED'], timeout=120)
        self.assertEqual(r['state'], 'COMPLETED', (r, self.out(j)))
        lines = self.out(j).splitlines()
        self.assertEqual(lines[0], 'batch-on-the-host')
        self.assertEqual(sorted(lines[1:3]), ['0: in-the-image', '1: in-the-image'])
        self.assertEqual(sorted(lines[3:]), ['0: task 0', '1: task 1'])

    def test_a_named_container_keeps_its_writes_for_the_jobs_later_steps(self):
        srun = harness.os.path.abspath(harness.BERTH) + ' srun'
        j = self.sbatch('#!/bin/sh\n'
                        "%s --container-image=%s --container-name=keep sh -c 'echo kept > "
                        "/scratch/note'\n"
                        '%s --container-name=keep cat /scratch/note\n'
                        "%s --container-image=%s sh -c 'test -e /scratch/note && echo leaked || "
                        "echo fresh'\n"
                        % (srun, self.image, srun, srun, self.image))
        r = self.c.wait_state(j, ['COMPLETED', 'FAILED'], timeout=120)
        self.assertEqual(r['state'], 'COMPLETED', (r, self.out(j)))
        self.assertEqual(self.out(j), 'kept\nfresh\n')
        # Once the job is over the node removes the container: its root unmounted, its folder gone.
        named = os.path.join(self.c.dir, 'agent', 'named', '%d.0' % j)

        def mounted():
            with open('/proc/self/mountinfo') as f:
                return any(line.split()[4].startswith(named) for line in f)
        self.c.wait(lambda: not os.path.exists(named) and not mounted(),
                    'the named container to be removed', timeout=60)

"""Integration tests: the Kubernetes face, through the REAL kubectl and a kubeconfig from
`berth kubeconfig`: version, discovery, berth's nodes as Nodes (tables, -o wide, -o json,
selectors, watch), cordon/uncordon seen through berth's own API, and the 401/403/404 answers.

Skipped only where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_nodes (from this folder).
"""
import base64
import http.client
import json
import os
import queue
import shutil
import ssl
import subprocess
import tempfile
import threading
import unittest

from harness import Cluster, make_user, remove_user

KUBECTL = shutil.which('kubectl')


def kubectl_version():
    """(major, minor) of the kubectl on PATH; (0, 0) when there is none or it does not say."""
    if KUBECTL is None:
        return (0, 0)
    try:
        p = subprocess.run([KUBECTL, 'version', '--client', '-o', 'json'], capture_output=True,
                           text=True, timeout=30)
        v = json.loads(p.stdout)['clientVersion']
        return (int(v['major']), int(''.join(ch for ch in v['minor'] if ch.isdigit())))
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        return (0, 0)


KUBECTL_VERSION = kubectl_version()


def needs_kubectl(minor):
    """Skips a test (or class) without kubectl 1.`minor` or newer: pod streams need a kubectl
    that speaks WebSocket (exec and attach 1.30, port-forward 1.31: docs/adr/0006-pod-streams.md);
    Debian 12's kubernetes-client is 1.20."""
    have = '.'.join(map(str, KUBECTL_VERSION)) if KUBECTL else 'none'
    return unittest.skipIf(KUBECTL_VERSION < (1, minor),
                           f'needs kubectl 1.{minor} or newer (found: {have})')


def kube_cluster():
    """A cluster whose controller serves the Kubernetes API on a free port."""
    return Cluster(controller_args=['--k8s-listen', '127.0.0.1:0']).start()


def write_kubeconfig(c, path, user=None):
    p = c.cli('kubeconfig', user=user)
    config = json.loads(p.stdout)
    with open(path, 'w') as f:
        f.write(p.stdout)
    os.chmod(path, 0o644)
    return config


def start_kubectl_bed(cls, prefix):
    """A class's test bed: its cluster (cls.c), a folder (cls.tmp), the kubeconfig there
    (cls.config_path, its contents in cls.config) and a kubectl that uses it (cls.k)."""
    cls.c = kube_cluster()
    cls.tmp = tempfile.mkdtemp(prefix=prefix)
    os.chmod(cls.tmp, 0o755)
    cls.config_path = os.path.join(cls.tmp, 'kubeconfig')
    cls.config = write_kubeconfig(cls.c, cls.config_path)
    cls.k = Kubectl(cls.config_path, os.path.join(cls.tmp, 'cache'))


def kubectl_as(bed, user):
    """A kubectl for `user` (who exists) on a test bed of start_kubectl_bed: the user's own
    kubeconfig (their token) and a discovery cache they own."""
    cfg = os.path.join(bed.tmp, f'kubeconfig-{user}')
    write_kubeconfig(bed.c, cfg, user=user)
    cache = os.path.join(bed.tmp, f'cache-{user}')
    os.makedirs(cache)
    shutil.chown(cache, user)
    return Kubectl(cfg, cache, user=user)


class Kubectl:
    """kubectl with one kubeconfig and its own discovery cache (a fresh one per test bed)."""

    def __init__(self, kubeconfig, cache_dir, user=None):
        self.kubeconfig = kubeconfig
        self.cache_dir = cache_dir
        self.user = user

    def argv(self, *args):
        cmd = [KUBECTL, '--kubeconfig', self.kubeconfig, '--cache-dir', self.cache_dir, *args]
        if self.user:
            cmd = ['runuser', '-u', self.user, '--', *cmd]
        return cmd

    def __call__(self, *args, check=True):
        p = subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=120)
        if check and p.returncode != 0:
            raise AssertionError(f'kubectl {" ".join(args)} failed ({p.returncode}): {p.stderr}')
        return p


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
class KubeClusterTest(unittest.TestCase):
    """A base for tests of one cluster each that serves the Kubernetes API, driven through
    `self.k` (the real kubectl with a kubeconfig of its own)."""

    def setUp(self):
        self.c = kube_cluster()
        self.tmp = tempfile.mkdtemp(prefix='berth-k8s-')
        self.kubectl()

    def tearDown(self):
        self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        shutil.rmtree(self.tmp, ignore_errors=True)

    def kubectl(self):
        """A fresh kubeconfig (the port changes when the controller restarts)."""
        path = os.path.join(self.tmp, 'kubeconfig')
        write_kubeconfig(self.c, path)
        self.k = Kubectl(path, os.path.join(self.tmp, 'cache'))
        shutil.rmtree(self.k.cache_dir, ignore_errors=True)


class KubectlNodesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_kubectl_bed(cls, 'berth-k8s-')

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def berth_node(self):
        status, body = self.c.api('GET', '/v1/nodes/node1')
        self.assertEqual(status, 200, body)
        return body

    def resume(self):
        """Resumes node1 through berth's API and waits until its view says so."""
        self.c.api('POST', '/v1/nodes/node1/resume')
        self.c.wait(lambda: 'DRAIN' not in self.berth_node()['state'], 'node1 to resume')

    def drain(self, reason):
        status, body = self.c.api('POST', '/v1/nodes/node1/drain', {'reason': reason})
        self.assertEqual(status, 200, body)
        self.c.wait(lambda: 'DRAIN' in self.berth_node()['state'], 'node1 to drain')

    def test_kubeconfig_names_the_served_url_ca_and_a_token(self):
        with open(os.path.join(self.c.dir, 'kubernetes-api.url')) as f:
            url = f.read().strip()
        self.assertTrue(url.startswith('https://127.0.0.1:'), url)
        cluster = self.config['clusters'][0]['cluster']
        self.assertEqual(cluster['server'], url)
        self.assertIn('certificate-authority-data', cluster)
        self.assertTrue(self.config['users'][0]['user']['token'].startswith('berth.0.'))
        context = self.config['contexts'][0]['context']
        self.assertEqual(context['namespace'], 'default')
        self.assertEqual(self.config['current-context'], self.config['contexts'][0]['name'])
        help_text = self.c.cli('kubeconfig', '--help').stdout
        self.assertIn('berth kubeconfig > ~/.kube/config', help_text)

    def test_version(self):
        out = json.loads(self.k('version', '-o', 'json').stdout)
        server = out['serverVersion']
        self.assertEqual((server['major'], server['minor']), ('1', '33'))
        self.assertTrue(server['gitVersion'].startswith('v1.33.'), server)

    def test_api_resources(self):
        rows = [line.split() for line in self.k('api-resources').stdout.splitlines()]
        self.assertEqual(rows[0], ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'])
        self.assertIn(['namespaces', 'ns', 'v1', 'false', 'Namespace'], rows)
        self.assertIn(['nodes', 'no', 'v1', 'false', 'Node'], rows)

    def test_get_nodes_table_and_wide(self):
        lines = self.k('get', 'nodes').stdout.splitlines()
        self.assertEqual(lines[0].split(), ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'])
        row = lines[1].split()
        self.assertEqual(row[:3], ['node1', 'Ready', 'main'])
        wide = self.k('get', 'nodes', '-o', 'wide').stdout.splitlines()
        self.assertEqual(wide[0].split(), ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION',
                                           'INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE',
                                           'KERNEL-VERSION', 'CONTAINER-RUNTIME'])
        self.assertTrue(wide[1].split()[-1].startswith('berth://'), wide[1])
        labels = self.k('get', 'node', 'node1', '--show-labels').stdout
        self.assertIn('kubernetes.io/hostname=node1', labels)

    def test_get_nodes_json_has_capacity_labels_and_conditions(self):
        out = json.loads(self.k('get', 'nodes', '-o', 'json').stdout)
        self.assertEqual(out['kind'], 'List')
        node = out['items'][0]
        self.assertEqual(node['kind'], 'Node')
        self.assertEqual(node['metadata']['name'], 'node1')
        self.assertTrue(node['metadata']['resourceVersion'])
        self.assertEqual(node['metadata']['labels']['kubernetes.io/hostname'], 'node1')
        self.assertEqual(node['metadata']['labels']['partition.berth.io/main'], 'true')
        berth = self.berth_node()
        for field in ('capacity', 'allocatable'):
            self.assertEqual(node['status'][field]['nvidia.com/gpu'], '4')
            self.assertEqual(node['status'][field]['cpu'], str(berth['cpus']))
            self.assertIn(node['status'][field]['memory'],
                          (f"{berth['mem_mib']}Mi", f"{berth['mem_mib'] // 1024}Gi"))
        ready = [c for c in node['status']['conditions'] if c['type'] == 'Ready']
        self.assertEqual(ready[0]['status'], 'True')
        self.assertFalse(node['spec'].get('unschedulable', False))
        one = json.loads(self.k('get', 'node', 'node1', '-o', 'json').stdout)
        self.assertEqual(one['metadata']['uid'], node['metadata']['uid'])

    def test_selectors(self):
        self.assertIn('node1', self.k('get', 'nodes', '-l', 'kubernetes.io/hostname=node1').stdout)
        none = self.k('get', 'nodes', '-l', 'kubernetes.io/hostname=other')
        self.assertEqual(none.stdout, '')
        self.assertIn('No resources found', none.stderr)
        self.assertIn('node1', self.k('get', 'nodes', '--field-selector',
                                      'metadata.name=node1').stdout)
        self.assertNotIn('node1', self.k('get', 'nodes', '--field-selector',
                                         'metadata.name!=node1').stdout)
        bad = self.k('get', 'nodes', '--field-selector', 'spec.color=red', check=False)
        self.assertEqual(bad.returncode, 1)
        self.assertIn('field label not supported: spec.color', bad.stderr)

    def test_missing_node_is_not_found(self):
        p = self.k('get', 'node', 'nosuch', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Error from server (NotFound): nodes "nosuch" not found', p.stderr)

    def test_cordon_and_uncordon_drain_and_resume_the_berth_node(self):
        p = self.k('cordon', 'node1')
        self.assertIn('node/node1 cordoned', p.stdout)
        # The PATCH is answered once berth's own view shows the drain.
        node = self.berth_node()
        self.assertIn('DRAIN', node['state'])
        self.assertIn('Kubernetes API', node['reason'])
        self.assertIn('Ready,SchedulingDisabled', self.k('get', 'nodes').stdout)
        again = self.k('cordon', 'node1')
        self.assertIn('already cordoned', again.stdout)
        p = self.k('uncordon', 'node1')
        self.assertIn('node/node1 uncordoned', p.stdout)
        self.assertNotIn('DRAIN', self.berth_node()['state'])
        self.assertNotIn('SchedulingDisabled', self.k('get', 'nodes').stdout)

    def test_a_drain_through_berth_shows_as_cordoned(self):
        self.drain('bad fan')
        try:
            node = json.loads(self.k('get', 'node', 'node1', '-o', 'json').stdout)
            self.assertTrue(node['spec']['unschedulable'])
            self.assertIn('Ready,SchedulingDisabled', self.k('get', 'nodes').stdout)
        finally:
            self.resume()

    def test_watch_sees_a_cordon(self):
        watch = subprocess.Popen(self.k.argv('get', 'nodes', '-w'), stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        lines = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(line) for line in watch.stdout],
                                  daemon=True)
        reader.start()
        seen = []

        def read_line():
            try:
                seen.append(lines.get(timeout=60))
            except queue.Empty:
                self.fail(f'no more watch output; so far {seen}')
            return seen[-1]
        try:
            self.assertEqual(read_line().split()[:2], ['NAME', 'STATUS'])
            self.assertEqual(read_line().split()[:2], ['node1', 'Ready'])
            self.drain('watch me')
            while 'SchedulingDisabled' not in read_line():
                pass
        finally:
            watch.kill()
            watch.wait()
            self.resume()

    def test_no_token_and_a_wrong_token_are_unauthorized(self):
        # Without a bearer token (kubectl then offers basic credentials, which berth refuses).
        with open(self.config_path) as f:
            config = json.load(f)
        del config['users'][0]['user']['token']
        no_token = os.path.join(self.tmp, 'no-token')
        with open(no_token, 'w') as f:
            json.dump(config, f)
        k = Kubectl(no_token, os.path.join(self.tmp, 'cache-no-token'))
        for p in (k('get', 'nodes', '--username', 'u', '--password', 'p', check=False),
                  self.k('get', 'nodes', '--token', 'berth.0.' + '0' * 64, check=False),
                  self.k('get', 'nodes', '--token', 'not-a-token', check=False)):
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertIn('error: You must be logged in to the server', p.stderr)
        # The answer itself: a v1 Status.
        ca = ssl.create_default_context(cadata=base64.b64decode(
            self.config['clusters'][0]['cluster']['certificate-authority-data']).decode())
        url = self.config['clusters'][0]['cluster']['server']
        host, port = url[len('https://'):].rsplit(':', 1)
        conn = http.client.HTTPSConnection(host, int(port), context=ca, timeout=60)
        conn.request('GET', '/api/v1/nodes')
        r = conn.getresponse()
        self.assertEqual(r.status, 401)
        body = json.loads(r.read())
        self.assertEqual((body['kind'], body['status'], body['reason'], body['code']),
                         ('Status', 'Failure', 'Unauthorized', 401))
        conn.close()

    def test_a_plain_user_may_read_but_not_cordon(self):
        user = 'berthk8s'
        make_user(user)
        try:
            path = os.path.join(self.tmp, 'user-kubeconfig')
            config = write_kubeconfig(self.c, path, user=user)
            self.assertEqual(config['users'][0]['name'], user)
            cache = os.path.join(self.tmp, 'user-cache')
            os.makedirs(cache, exist_ok=True)
            shutil.chown(cache, user)
            k = Kubectl(path, cache, user=user)
            self.assertIn('node1', k('get', 'nodes').stdout)
            # kubectl 1.33 prints the refusal but exits 0 ("unable to cordon node").
            p = k('cordon', 'node1', check=False)
            self.assertNotIn('cordoned', p.stdout)
            self.assertIn(f'nodes "node1" is forbidden: User "{user}" cannot patch', p.stderr)
            self.assertNotIn('DRAIN', self.berth_node()['state'])
        finally:
            remove_user(user)


if __name__ == '__main__':
    unittest.main()

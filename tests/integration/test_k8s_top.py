"""Integration tests: `kubectl top pods|nodes` with the REAL kubectl against berth's
metrics.k8s.io/v1beta1 (PodMetrics and NodeMetrics from the usage the agent measures and sends
with its status reports), as metrics-server serves them: discovery, lists per namespace and
across all, label selectors, one object, --containers, and 404 for what has no metrics.

Skipped only where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_top (from this folder).
"""
import json
import os
import re
import shutil
import tempfile
import time
import unittest

from test_k8s_nodes import KUBECTL, Kubectl, kube_cluster, write_kubeconfig
from test_k8s_workloads import pod_yaml


def cpu_millis(text):
    """A CPU quantity as kubectl top prints it ("998m", "1") in thousandths of a CPU."""
    return int(text[:-1]) if text.endswith('m') else int(float(text) * 1000)


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
class KubectlTopTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = kube_cluster()
        cls.tmp = tempfile.mkdtemp(prefix='berth-k8s-top-')
        os.chmod(cls.tmp, 0o755)
        path = os.path.join(cls.tmp, 'kubeconfig')
        write_kubeconfig(cls.c, path)
        cls.k = Kubectl(path, os.path.join(cls.tmp, 'cache'))
        try:
            # One pod that keeps a CPU busy, one that sleeps with 64 MiB resident, one pending.
            cls.apply(pod_yaml('spin', 'while :; do :; done'))
            cls.apply(pod_yaml(
                'hold', 'exec python3 -c "import time; b = bytearray(64 << 20); time.sleep(600)"'))
            cls.apply(pod_yaml('never', 'true').replace(
                '    command:', '    resources: {limits: {nvidia.com/gpu: 64}}\n    command:'))
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def apply(cls, manifest):
        path = os.path.join(cls.tmp, 'm.yaml')
        with open(path, 'w') as f:
            f.write(manifest)
        cls.k('create', '-f', path)

    def rows(self, *args):
        """kubectl top ARGS once it prints rows for both running pods (agents report every 5 s;
        a rate needs two reports): the rows, split into words, without the header."""
        end = time.time() + 60
        while True:
            p = self.k('top', *args, check=False)
            lines = p.stdout.splitlines()
            if p.returncode == 0 and lines and all(
                    n in p.stdout for n in self.expect_names(args)):
                return [line.split() for line in lines[1:]], lines[0].split()
            if time.time() > end:
                self.fail(f'kubectl top {" ".join(args)}: {p.returncode} {p.stdout} {p.stderr}')
            time.sleep(1)

    @staticmethod
    def expect_names(args):
        if args[0] == 'nodes':
            return ['node1']
        named = [a for a in args[1:] if not a.startswith('-') and a not in ('app=spin',)]
        return named or (['spin'] if '-l' in args else ['spin', 'hold'])

    def test_top_pods_shows_each_running_pods_cpu_and_memory(self):
        rows, header = self.rows('pods')
        self.assertEqual(header, ['NAME', 'CPU(cores)', 'MEMORY(bytes)'])
        by_name = {r[0]: r for r in rows}
        self.assertNotIn('never', by_name)  # pending: no metrics
        # One CPU kept busy (on a loaded test machine it may get a fraction of one), one asleep.
        self.assertGreater(cpu_millis(by_name['spin'][1]), 100, rows)
        self.assertLess(cpu_millis(by_name['hold'][1]), cpu_millis(by_name['spin'][1]), rows)
        mem = re.fullmatch(r'(\d+)Mi', by_name['hold'][2])
        self.assertTrue(mem and int(mem.group(1)) >= 64, rows)

    def test_containers_and_all_namespaces_and_selectors(self):
        rows, header = self.rows('pods', '--containers')
        self.assertEqual(header, ['POD', 'NAME', 'CPU(cores)', 'MEMORY(bytes)'])
        self.assertIn(['spin', 'main'], [r[:2] for r in rows])
        rows, header = self.rows('pods', '-A')
        self.assertEqual(header[:2], ['NAMESPACE', 'NAME'])
        self.assertIn(['default', 'spin'], [r[:2] for r in rows])
        rows, _ = self.rows('pods', '-l', 'app=spin')
        self.assertEqual([r[0] for r in rows], ['spin'])
        p = self.k('top', 'pods', '-l', 'app=nothing', check=False)
        self.assertIn('No resources found', p.stdout + p.stderr)
        rows, _ = self.rows('pod', 'hold')
        self.assertEqual([r[0] for r in rows], ['hold'])

    def test_top_nodes(self):
        rows, header = self.rows('nodes')
        self.assertEqual(header[0], 'NAME')
        self.assertIn('CPU(cores)', header)
        node = {r[0]: r for r in rows}['node1']
        self.assertNotIn('<unknown>', node)
        self.assertRegex(node[2], r'^\d+%$')  # of the node's allocatable CPU
        rows, _ = self.rows('nodes', '-l', 'kubernetes.io/hostname=node1')
        self.assertEqual([r[0] for r in rows], ['node1'])

    def test_objects_as_metrics_server_serves_them(self):
        self.rows('pods')
        got = json.loads(self.k(
            'get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/spin').stdout)
        self.assertEqual(got['kind'], 'PodMetrics')
        self.assertEqual(got['apiVersion'], 'metrics.k8s.io/v1beta1')
        self.assertEqual(got['metadata']['labels']['app'], 'spin')  # the Pod's labels
        self.assertRegex(got['timestamp'], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')
        self.assertRegex(got['window'], r'^\d+(\.\d+)?s$')
        self.assertEqual([c['name'] for c in got['containers']], ['main'])
        self.assertRegex(got['containers'][0]['usage']['cpu'], r'^\d+[num]?$')
        self.assertRegex(got['containers'][0]['usage']['memory'], r'^\d+(Ki|Mi|Gi)?$')
        nodes = json.loads(self.k('get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes').stdout)
        self.assertEqual(nodes['kind'], 'NodeMetricsList')
        self.assertEqual([n['metadata']['name'] for n in nodes['items']], ['node1'])
        self.assertIn('cpu', nodes['items'][0]['usage'])
        group = json.loads(self.k('get', '--raw', '/apis/metrics.k8s.io').stdout)
        self.assertEqual(group['preferredVersion']['groupVersion'], 'metrics.k8s.io/v1beta1')
        resources = json.loads(self.k('get', '--raw', '/apis/metrics.k8s.io/v1beta1').stdout)
        self.assertEqual(sorted(r['kind'] for r in resources['resources']),
                         ['NodeMetrics', 'PodMetrics'])

    def test_what_has_no_metrics_is_not_found(self):
        p = self.k('get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/never',
                   check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('NotFound', p.stderr)
        p = self.k('top', 'pod', 'missing', check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn('not found', p.stderr)
        p = self.k('get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes?watch=1', check=False)
        self.assertNotEqual(p.returncode, 0)


if __name__ == '__main__':
    unittest.main()

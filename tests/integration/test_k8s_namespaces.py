"""Integration tests: core/v1 Namespaces through the REAL kubectl: the built-in ones, create,
get, delete, the AlreadyExists / Invalid / Forbidden / NotFound answers, and namespaces
surviving a controller restart (they are kept in the controller's store).

Skipped only where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_namespaces (from this folder).
"""
import json
import os
import unittest

from test_k8s_nodes import KUBECTL, KubeClusterTest


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
class KubectlNamespacesTest(KubeClusterTest):
    def names(self):
        return [line.split()[0] for line in self.k('get', 'ns').stdout.splitlines()[1:]]

    def test_builtin_namespaces(self):
        lines = self.k('get', 'ns').stdout.splitlines()
        self.assertEqual(lines[0].split(), ['NAME', 'STATUS', 'AGE'])
        self.assertEqual(self.names(), ['default', 'kube-system', 'slurm'])
        self.assertIn('Active', lines[1])
        p = self.k('delete', 'ns', 'default', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Error from server (Forbidden): namespaces "default" is forbidden', p.stderr)

    def test_create_get_delete(self):
        self.assertIn('namespace/team-a created', self.k('create', 'ns', 'team-a').stdout)
        self.assertEqual(self.names(), ['default', 'kube-system', 'slurm', 'team-a'])
        ns = json.loads(self.k('get', 'ns', 'team-a', '-o', 'json').stdout)
        self.assertEqual(ns['kind'], 'Namespace')
        self.assertEqual(ns['status']['phase'], 'Active')
        self.assertTrue(ns['metadata']['resourceVersion'])
        self.assertEqual(ns['metadata']['labels']['kubernetes.io/metadata.name'], 'team-a')
        p = self.k('create', 'ns', 'team-a', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Error from server (AlreadyExists): namespaces "team-a" already exists',
                      p.stderr)
        self.assertIn('team-a', self.k('get', 'ns', '-l',
                                       'kubernetes.io/metadata.name=team-a').stdout)
        self.assertIn('namespace "team-a" deleted', self.k('delete', 'ns', 'team-a').stdout)
        p = self.k('get', 'ns', 'team-a', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Error from server (NotFound): namespaces "team-a" not found', p.stderr)

    def test_an_invalid_name_is_refused_naming_the_field(self):
        p = self.k('create', 'ns', 'Not_Valid', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('"Not_Valid" is invalid: metadata.name: Invalid value', p.stderr)

    def test_create_from_a_manifest(self):
        manifest = os.path.join(self.tmp, 'ns.json')
        with open(manifest, 'w') as f:
            json.dump({'apiVersion': 'v1', 'kind': 'Namespace',
                       'metadata': {'name': 'from-file', 'labels': {'team': 'ml'}}}, f)
        self.assertIn('namespace/from-file created', self.k('create', '-f', manifest).stdout)
        self.assertIn('from-file', self.k('get', 'ns', '-l', 'team=ml').stdout)

    def test_namespaces_survive_a_controller_restart(self):
        self.k('create', 'ns', 'keep-me')
        self.c.kill('controller')
        self.c.start_controller()
        self.kubectl()
        self.assertIn('keep-me', self.names())


if __name__ == '__main__':
    unittest.main()

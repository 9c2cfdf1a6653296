"""Integration tests: core/v1 Secrets and ConfigMaps through the REAL kubectl: `create secret
generic` / `docker-registry` and `create configmap` (the protobuf bodies kubectl sends), get
(tables without values, -o json), describe, apply and patch, delete, who may read a Secret, the
Invalid / AlreadyExists / NotFound answers, and both surviving a controller restart (they are
kept in the controller's store). Process mode: no images are run here.

Skipped only where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_config (from this folder).
"""
import base64
import json
import os
import shutil
import unittest

from harness import make_user, remove_user
from test_k8s_nodes import KUBECTL, KubeClusterTest, Kubectl, write_kubeconfig

ROOT = os.geteuid() == 0


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
class KubectlConfigTest(KubeClusterTest):
    def get_json(self, *args):
        return json.loads(self.k('get', *args, '-o', 'json').stdout)

    def test_generic_secret_create_get_describe_delete(self):
        p = self.k('create', 'secret', 'generic', 'db', '--from-literal=password=hunter2',
                   '--from-literal=user=alice')
        self.assertIn('secret/db created', p.stdout)
        table = self.k('get', 'secrets').stdout
        lines = table.splitlines()
        self.assertEqual(lines[0].split(), ['NAME', 'TYPE', 'DATA', 'AGE'])
        self.assertEqual(lines[1].split()[:3], ['db', 'Opaque', '2'])
        self.assertNotIn('hunter2', table)
        self.assertNotIn(base64.b64encode(b'hunter2').decode(), table)
        secret = self.get_json('secret', 'db')
        self.assertEqual(secret['type'], 'Opaque')
        self.assertEqual(base64.b64decode(secret['data']['password']), b'hunter2')
        self.assertEqual(base64.b64decode(secret['data']['user']), b'alice')
        described = self.k('describe', 'secret', 'db').stdout
        self.assertIn('password:  7 bytes', described)
        self.assertNotIn('hunter2', described)
        p = self.k('create', 'secret', 'generic', 'db', '--from-literal=a=b', check=False)
        self.assertEqual(p.returncode, 1)
        # kubectl's create secret words it "failed to create secret secrets "db" already exists".
        self.assertIn('secrets "db" already exists', p.stderr)
        self.assertIn('secret "db" deleted', self.k('delete', 'secret', 'db').stdout)
        p = self.k('get', 'secret', 'db', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Error from server (NotFound): secrets "db" not found', p.stderr)

    def test_docker_registry_secret(self):
        p = self.k('create', 'secret', 'docker-registry', 'regcred',
                   '--docker-server=reg.example:5000', '--docker-username=alice',
                   '--docker-password=pw')
        self.assertIn('secret/regcred created', p.stdout)
        secret = self.get_json('secret', 'regcred')
        self.assertEqual(secret['type'], 'kubernetes.io/dockerconfigjson')
        config = json.loads(base64.b64decode(secret['data']['.dockerconfigjson']))
        auth = config['auths']['reg.example:5000']
        self.assertEqual(auth['username'], 'alice')
        self.assertEqual(base64.b64decode(auth['auth']), b'alice:pw')
        self.assertIn('kubernetes.io/dockerconfigjson',
                      self.k('get', 'secrets', 'regcred').stdout)

    def test_a_registry_secret_without_its_key_is_invalid(self):
        manifest = os.path.join(self.tmp, 'bad.json')
        with open(manifest, 'w') as f:
            json.dump({'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': 'bad'},
                       'type': 'kubernetes.io/dockerconfigjson',
                       'stringData': {'other': 'x'}}, f)
        p = self.k('create', '-f', manifest, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Secret "bad" is invalid: data[.dockerconfigjson]: Required value', p.stderr)
        p = self.k('create', 'secret', 'generic', 'Bad_Name', '--from-literal=a=b', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('is invalid: metadata.name: Invalid value', p.stderr)

    def test_configmap_create_get_describe_apply_patch_delete(self):
        p = self.k('create', 'configmap', 'settings', '--from-literal=mode=fast',
                   '--from-literal=level=3')
        self.assertIn('configmap/settings created', p.stdout)
        lines = self.k('get', 'cm').stdout.splitlines()
        self.assertEqual(lines[0].split(), ['NAME', 'DATA', 'AGE'])
        self.assertEqual(lines[1].split()[:2], ['settings', '2'])
        self.assertEqual(self.get_json('configmap', 'settings')['data'],
                         {'mode': 'fast', 'level': '3'})
        described = self.k('describe', 'configmap', 'settings').stdout
        self.assertIn('mode', described)
        self.assertIn('fast', described)
        self.k('patch', 'configmap', 'settings', '--type', 'merge', '-p',
               '{"data":{"mode":"slow"}}')
        self.assertEqual(self.get_json('configmap', 'settings')['data']['mode'], 'slow')
        manifest = os.path.join(self.tmp, 'cm.json')
        with open(manifest, 'w') as f:
            json.dump({'apiVersion': 'v1', 'kind': 'ConfigMap',
                       'metadata': {'name': 'applied', 'labels': {'team': 'ml'}},
                       'data': {'a': '1'}}, f)
        self.k('apply', '-f', manifest)
        with open(manifest, 'w') as f:
            json.dump({'apiVersion': 'v1', 'kind': 'ConfigMap',
                       'metadata': {'name': 'applied', 'labels': {'team': 'ml'}},
                       'data': {'a': '2'}}, f)
        self.k('apply', '-f', manifest)
        self.assertEqual(self.get_json('configmap', 'applied')['data'], {'a': '2'})
        self.assertIn('applied', self.k('get', 'cm', '-l', 'team=ml').stdout)
        self.assertIn('configmap "settings" deleted',
                      self.k('delete', 'configmap', 'settings').stdout)
        self.assertNotIn('settings', self.k('get', 'configmaps').stdout)

    def test_both_survive_a_controller_restart(self):
        self.k('create', 'secret', 'generic', 'keep', '--from-literal=k=v')
        self.k('create', 'configmap', 'keep', '--from-literal=k=v')
        self.c.kill('controller')
        self.c.start_controller()
        self.kubectl()
        self.assertEqual(base64.b64decode(self.get_json('secret', 'keep')['data']['k']), b'v')
        self.assertEqual(self.get_json('configmap', 'keep')['data'], {'k': 'v'})

    @unittest.skipUnless(ROOT, 'needs root to create a user')
    def test_another_user_may_not_read_a_secret(self):
        self.k('create', 'secret', 'generic', 'mine', '--from-literal=k=v')
        self.k('create', 'configmap', 'shared', '--from-literal=k=v')
        user = f'bkc{os.getpid() % 10000}'
        make_user(user)
        try:
            os.chmod(self.tmp, 0o755)  # the user reads its kubeconfig from here
            path = os.path.join(self.tmp, 'user-kubeconfig')
            write_kubeconfig(self.c, path, user=user)
            cache = os.path.join(self.tmp, 'user-cache')
            os.makedirs(cache)
            shutil.chown(cache, user)
            k = Kubectl(path, cache, user=user)
            p = k('get', 'secret', 'mine', check=False)
            self.assertEqual(p.returncode, 1)
            self.assertIn(f'secrets "mine" is forbidden: User "{user}" cannot get', p.stderr)
            self.assertNotIn('mine', k('get', 'secrets').stdout)
            self.assertIn('shared', k('get', 'configmaps').stdout)
            p = k('delete', 'configmap', 'shared', check=False)
            self.assertEqual(p.returncode, 1)
            self.assertIn('(Forbidden)', p.stderr)
        finally:
            remove_user(user)


if __name__ == '__main__':
    unittest.main()

"""The node image cache against a real registry: `berth images` with a temporary --store.

Two registries run on loopback for the whole file (Debian's docker-registry with TLS from a test
CA; the second with htpasswd auth). Images are built from /bin/busybox plus marker files and
pushed with skopeo (registry.py).
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

import harness
import registry

BERTH = os.path.abspath(harness.BERTH)


def tools_missing():
    return [t for t in ('skopeo', 'docker-registry', 'openssl') if not shutil.which(t)] + \
        ([registry.BUSYBOX] if not os.path.exists(registry.BUSYBOX) else [])


@unittest.skipIf(tools_missing(), 'missing: %s' % tools_missing())
class ImagesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='berth-images-')
        cls.public = registry.Registry()
        cls.private = registry.Registry(auth=('alice', 'wonderland'))
        try:
            cls.public.start()
            cls.private.start()
        except Exception:
            cls.public.stop()
            cls.private.stop()
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        cls.public.stop()
        cls.private.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        type(self).n += 1
        self.dir = os.path.join(self.tmp, 't%d' % self.n)
        os.makedirs(self.dir)
        self.store = os.path.join(self.dir, 'store')

    def berth(self, *args, check=True):
        r = subprocess.run([BERTH, 'images', *args, '--store', self.store],
                           capture_output=True, text=True, timeout=300)
        if check and r.returncode != 0:
            self.fail('berth images %s: rc %d\n%s%s' % (' '.join(args), r.returncode, r.stdout,
                                                        r.stderr))
        return r

    def images(self):
        return json.loads(self.berth('list', '--json').stdout)

    def image(self, name, reg=None, files=None, extra_layers=(), tag='1.0', **kw):
        """Builds and pushes NAME:TAG; returns (reference, build info)."""
        reg = reg or self.public
        layout = os.path.join(self.dir, 'layout-' + name.replace('/', '-'))
        info = registry.build_image(layout, files=files if files is not None else
                                    {'/marker': name.encode()}, extra_layers=extra_layers,
                                    tag=tag, **kw)
        reg.push(layout, '%s:%s' % (name, tag), tag=tag)
        return '%s/%s:%s' % (reg.host, name, tag), info

    def layer_dirs(self):
        return sorted(os.listdir(os.path.join(self.store, 'layers')))

    def assert_store_clean(self):
        self.assertEqual(self.images(), [])
        self.assertEqual(self.layer_dirs(), [])
        self.assertEqual(os.listdir(os.path.join(self.store, 'tmp')), [])

    def test_pull_public_image(self):
        ref, info = self.image('pub/app', cmd=['/bin/sh', '-c', 'cat /marker'], workdir='/w')
        r = self.berth('pull', ref)
        self.assertIn('pulled ' + ref, r.stdout)
        [img] = self.images()
        self.assertEqual(img['names'], [ref])
        self.assertEqual(img['digest'], info['manifest'])
        self.assertEqual(img['layers'], info['layers'])
        self.assertEqual(img['config']['cmd'], ['/bin/sh', '-c', 'cat /marker'])
        self.assertEqual(img['config']['working_dir'], '/w')
        top = os.path.join(self.store, 'layers', info['layers'][1][7:23])
        with open(os.path.join(top, 'marker')) as f:
            self.assertEqual(f.read(), 'pub/app')
        bottom = os.path.join(self.store, 'layers', info['layers'][0][7:23])
        self.assertEqual(os.readlink(os.path.join(bottom, 'bin/sh')), 'busybox')
        # The table lists it.
        table = self.berth('list').stdout
        self.assertIn('REPOSITORY', table)
        self.assertIn('%s/pub/app' % self.public.host, table)
        self.assertIn(info['manifest'][:19], table)
        # By digest: the image already there, nothing pulled.
        by_digest = '%s/pub/app@%s' % (self.public.host, info['manifest'])
        self.assertIn('up to date', self.berth('pull', by_digest).stdout)
        self.assertEqual(len(self.images()), 1)
        # Pulled again: up to date, no layer downloaded again.
        gets = self.public.blob_gets('pub/app')
        self.assertIn('up to date', self.berth('pull', ref).stdout)
        self.assertEqual(self.public.blob_gets('pub/app'), gets)

    def test_private_image_needs_credentials(self):
        ref, _ = self.image('team/secret', reg=self.private)
        r = self.berth('pull', ref, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith('berth images: '), r.stderr)
        self.assertIn('authentication required', r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        wrong = self.private.authfile(os.path.join(self.dir, 'wrong.json'), 'alice', 'nope')
        r = self.berth('pull', ref, '--authfile', wrong, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('unauthorized', r.stderr)
        self.assertEqual(self.images(), [])
        good = self.private.authfile(os.path.join(self.dir, 'config.json'))
        self.berth('pull', ref, '--authfile', good)
        [img] = self.images()
        self.assertEqual(img['pulled_by_uid'], os.getuid())

    def test_unknown_tag(self):
        ref, _ = self.image('pub/tags')
        r = self.berth('pull', ref.replace(':1.0', ':nope'), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('manifest unknown', r.stderr)
        r = self.berth('pull', '%s/no/such:1' % self.public.host, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('unknown', r.stderr)
        r = self.berth('pull', 'Bad/Name', check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('must be lowercase', r.stderr)

    def test_unreachable_registry(self):
        r = self.berth('pull', '127.0.0.1:%d/app:1' % registry.free_port(), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('connection refused', r.stderr)

    def test_escaping_layer_is_refused(self):
        sentinel = '/tmp/berth-escape-sentinel'
        if os.path.exists(sentinel):
            os.unlink(sentinel)
        ref, escape = self.image('evil/escape', extra_layers=[registry.escape_layer()])
        r = self.berth('pull', ref, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('escapes', r.stderr)
        self.assertIn('refused', r.stderr)
        self.assertFalse(os.path.exists(sentinel))
        outside = os.path.join(self.dir, 'outside')
        os.makedirs(outside)
        ref, trick = self.image('evil/symlink', extra_layers=[registry.symlink_layer(outside)])
        r = self.berth('pull', ref, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('symlink', r.stderr)
        self.assertEqual(os.listdir(outside), [])
        self.assertEqual(self.images(), [])
        self.assertEqual(os.listdir(os.path.join(self.store, 'tmp')), [])
        # The good layers unpacked before the bad one may stay (whole and verified, removed by
        # the next prune); the bad ones are not there.
        for info in (escape, trick):
            self.assertNotIn(info['layers'][-1][7:23], self.layer_dirs())
        self.berth('prune', '--all')
        self.assert_store_clean()

    def test_corrupt_blob_is_refused_and_the_store_stays_consistent(self):
        ref, info = self.image('pub/corrupt')
        original = self.public.corrupt_blob(info['layers'][1])
        r = self.berth('pull', ref, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('digest', r.stderr.lower())
        self.assertEqual(self.images(), [])
        blobs = os.listdir(os.path.join(self.store, 'blobs', 'sha256'))
        self.assertNotIn(info['layers'][1][7:], blobs)
        self.assertEqual(os.listdir(os.path.join(self.store, 'tmp')), [])
        self.public.restore_blob(info['layers'][1], original)
        self.berth('pull', ref)
        self.assertEqual([i['digest'] for i in self.images()], [info['manifest']])

    def test_twenty_concurrent_pulls_pull_once(self):
        ref, info = self.image('pub/many')
        before = self.public.blob_gets('pub/many')

        def pull(_):
            return self.berth('pull', ref)
        with ThreadPoolExecutor(20) as ex:
            results = list(ex.map(pull, range(20)))
        pulled = [r for r in results if r.stdout.startswith('pulled ')]
        self.assertEqual(len(pulled), 1, [r.stdout for r in results])
        # One download of each blob: the config and the two layers.
        self.assertEqual(self.public.blob_gets('pub/many') - before, 3)
        [img] = self.images()
        self.assertEqual(img['digest'], info['manifest'])

    def test_a_killed_pull_is_cleaned_up_and_pulled_again(self):
        big = {'/big': os.urandom(48 << 20)}  # random: gzip keeps it big
        ref, info = self.image('pub/big', files=big)
        p = subprocess.Popen([BERTH, 'images', 'pull', ref, '--store', self.store],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tmp = os.path.join(self.store, 'tmp')
        try:
            deadline = time.time() + 60
            while not (os.path.isdir(tmp) and any(n.startswith('pull-') and
                                                  not n.endswith('.lock')
                                                  for n in os.listdir(tmp))):
                self.assertIsNone(p.poll(), 'the pull ended before it could be killed')
                self.assertLess(time.time(), deadline)
                time.sleep(0.005)
            children = subprocess.run(['ps', '-o', 'pid=', '--ppid', str(p.pid)],
                                      capture_output=True, text=True).stdout.split()
            p.kill()
            for c in children:  # skopeo: its own process group
                try:
                    os.kill(int(c), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        finally:
            p.kill()
            p.wait()
        self.assertNotEqual(os.listdir(tmp), [])
        # The next use of the store (the agent's restart) removes what the pull left.
        self.assertEqual(self.images(), [])
        self.assertEqual(os.listdir(tmp), [])
        self.berth('pull', ref)
        [img] = self.images()
        self.assertEqual(img['digest'], info['manifest'])

    @unittest.skipUnless(os.geteuid() == 0, 'needs root to mount a small tmpfs')
    def test_a_full_disk_fails_the_pull_and_leaves_the_store_consistent(self):
        # Small once compressed, 24 MiB once unpacked: the store's disk fills while unpacking.
        zeros = registry._tar([('zeros', 'file', bytes(24 << 20))])
        ref, info = self.image('pub/full', extra_layers=[zeros])
        os.makedirs(self.store)
        subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=12m', 'tmpfs', self.store],
                       check=True)
        try:
            r = self.berth('pull', ref, check=False)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn('no space left', r.stderr)
            # Nothing half-made is kept, and what was whole stays usable.
            self.assertEqual(self.images(), [])
            self.assertEqual(os.listdir(os.path.join(self.store, 'tmp')), [])
            for layer in self.layer_dirs():  # whole layers only, each one complete
                self.assertTrue(os.listdir(os.path.join(self.store, 'layers', layer)))
            subprocess.run(['mount', '-o', 'remount,size=96m', self.store], check=True)
            self.berth('pull', ref)
            [img] = self.images()
            self.assertEqual(img['digest'], info['manifest'])
            self.assertEqual(len(self.layer_dirs()), 3)
        finally:
            subprocess.run(['umount', '-l', self.store], check=False)

    def test_import_layout_and_archive(self):
        layout = os.path.join(self.dir, 'demo')
        info = registry.build_image(layout, files={'/hello': b'hi'}, tag='1.0')
        r = self.berth('import', layout)
        self.assertIn('imported localhost/demo:1.0', r.stdout)
        arch = registry.archive(layout, os.path.join(self.dir, 'Demo-Arch.tar'))
        r = self.berth('import', arch)
        self.assertIn('localhost/demo-arch:1.0', r.stdout)
        [img] = self.images()
        self.assertEqual(img['digest'], info['manifest'])
        self.assertEqual(sorted(img['names']), ['localhost/demo-arch:1.0', 'localhost/demo:1.0'])
        r = self.berth('import', os.path.join(self.dir, 'missing'), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('missing', r.stderr)

    def test_shared_layers_unpacked_once_and_prune(self):
        ref_a, a = self.image('pub/a')
        ref_b, b = self.image('pub/b')
        self.assertEqual(a['layers'][0], b['layers'][0])  # the busybox layer
        self.berth('pull', ref_a)
        self.berth('pull', ref_b)
        self.assertEqual(len(self.images()), 2)
        self.assertEqual(len(self.layer_dirs()), 3)
        r = self.berth('prune', '--limit', '1T')
        self.assertIn('0 images removed', r.stdout)
        r = self.berth('prune', '--all')
        self.assertIn('2 images removed', r.stdout)
        self.assert_store_clean()
        self.assertEqual(os.listdir(os.path.join(self.store, 'blobs', 'sha256')), [])
        r = self.berth('prune', check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('--all or --limit', r.stderr)

    def test_help_and_bad_usage(self):
        r = self.berth('--help')
        self.assertIn('berth images pull REF', r.stdout)
        r = self.berth('frobnicate', check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown subcommand 'frobnicate'", r.stderr)


class ImageCacheSizeFromTheConfiguration(unittest.TestCase):
    def test_the_agent_takes_the_clusters_image_cache_size_unless_its_own_is_set(self):
        for agent_args, want in (((), 64 << 20), (('--image-cache-size', '1G'), 1 << 30)):
            c = harness.Cluster(gpus=0, agent_args=agent_args)
            try:
                path = os.path.join(c.dir, 'cluster.conf')
                with open(path, 'w') as f:
                    f.write('ImageCacheSize=64M\n')
                c.controller_args += ['--config', path]
                c.start()
                settings = os.path.join(c.dir, 'agent', 'containers.json')

                def cache_bytes():
                    with open(settings) as f:
                        return json.load(f).get('cache_bytes')
                c.wait(lambda: cache_bytes() == want, 'cache_bytes %d in %s' % (want, settings))
            finally:
                c.stop()


if __name__ == '__main__':
    unittest.main()

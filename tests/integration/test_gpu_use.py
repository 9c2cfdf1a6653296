"""Measured GPU use, live (docs/api.md: GET /v1/nodes' gpu_utilization, GET /v1/history's
gpus_used; docs/web.md): an agent that finds its GPUs through NVML reports each one's
utilisation and memory in use with every heartbeat, the controller shows them on the node and
sums them into the cluster's history, and the web console's GPU cells show them (a screenshot
goes to $BERTH_ARTIFACTS, default build/web-screenshots).

No GPU here: the agent loads tests/tools/fake_nvml.cc as libnvidia-ml.so.1 (LD_LIBRARY_PATH),
which lists the devices of a file the test rewrites. That also runs the agent's real NVML path:
discovery (the node's GPUs are the library's, typed from their names) and the jobs' devices.
Run: BERTH_BINARY=build/berth BERTH_FAKE_NVML_DIR=build/tests/fake-nvml \
     python3 -m unittest -v test_gpu_use (from this folder).
"""
import json
import os
import shutil
import tempfile
import time
import unittest

import webdriver
from harness import Cluster

FAKE_NVML_DIR = os.environ.get('BERTH_FAKE_NVML_DIR', '')
HERE = os.path.dirname(os.path.abspath(__file__))
ARTIFACTS = os.environ.get('BERTH_ARTIFACTS') or os.path.join(HERE, '..', '..', 'build',
                                                                 'web-screenshots')
GIB = 1 << 30


@unittest.skipIf(not os.path.exists(os.path.join(FAKE_NVML_DIR, 'libnvidia-ml.so.1')),
                 'the fake NVML library is not built (BERTH_FAKE_NVML_DIR)')
class GpuUseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.devices_dir = tempfile.mkdtemp(prefix='berth-nvml-')
        cls.devices = os.path.join(cls.devices_dir, 'devices')
        cls.write_devices([40, 90], [10 * GIB, 70 * GIB])
        cls.c = Cluster(controller_args=['--history-interval', '1', '--k8s-listen', '127.0.0.1:0'],
                        agent_env={'LD_LIBRARY_PATH': FAKE_NVML_DIR,
                                   'BERTH_FAKE_NVML_DEVICES': cls.devices})
        try:
            cls.c.start()
        except Exception:  # tearDownClass does not run when setUpClass fails
            cls.c.stop()
            shutil.rmtree(cls.devices_dir, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=bool(os.environ.get('BERTH_IT_KEEP')))
        shutil.rmtree(cls.devices_dir, ignore_errors=True)

    def tearDown(self):
        self.c.end_jobs()

    @classmethod
    def write_devices(cls, utilization, used):
        lines = [f'NVIDIA H100 80GB HBM3|GPU-fake-{i}|{80 * GIB}|{used[i]}|{u}'
                 for i, u in enumerate(utilization)]
        tmp = cls.devices + '.tmp'
        with open(tmp, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        os.replace(tmp, cls.devices)

    def node(self):
        status, body = self.c.api('GET', '/v1/nodes/node1')
        self.assertEqual(status, 200, body)
        return body

    def test_the_node_shows_each_gpus_measured_use(self):
        # Discovery went through NVML: the node has the library's two H100s, not the declared 4.
        self.assertEqual(self.node()['gpus'], ['h100', 'h100'])
        self.c.wait(lambda: self.node().get('gpu_utilization') == [40, 90],
                    "node1's measured GPU use", timeout=30)
        self.assertEqual(self.node()['gpu_memory_used_bytes'], [10 * GIB, 70 * GIB])
        # The list shows the same; a watch event does not carry it (it changes every heartbeat).
        _, nodes = self.c.api('GET', '/v1/nodes')
        self.assertEqual(nodes['nodes'][0]['gpu_utilization'], [40, 90])
        # A change of use shows with the next heartbeat.
        self.write_devices([5, 0], [GIB, 0])
        try:
            self.c.wait(lambda: self.node().get('gpu_utilization') == [5, 0],
                        'the new use', timeout=30)
        finally:
            self.write_devices([40, 90], [10 * GIB, 70 * GIB])

    def test_history_sums_the_measured_use(self):
        self.c.wait(lambda: self.node().get('gpu_utilization') == [40, 90],
                    "node1's measured GPU use", timeout=30)

        def series():
            status, body = self.c.api('GET', '/v1/history?series=gpus_used,gpus_measured')
            self.assertEqual(status, 200, body)
            return body

        # Samples every second: 2 GPUs measured, 0.4 + 0.9 = 1.3 GPUs' worth used.
        self.c.wait(lambda: [2, 1.3] in [[m[1], u[1]] for m, u in zip(
            series()['series']['gpus_measured'], series()['series']['gpus_used'])],
            'a history point of the measured use', timeout=30)
        body = series()
        self.assertNotIn('notes', body)
        # gpus_used has points only where some GPU was measured.
        measured = {t: v for t, v in body['series']['gpus_measured']}
        for t, _ in body['series']['gpus_used']:
            self.assertGreater(measured[t], 0)

    def test_a_job_gets_an_nvml_device(self):
        out = os.path.join(self.c.dir, 'cvd.out')
        job = self.c.submit({'argv': ['sh', '-c', 'echo "$CUDA_VISIBLE_DEVICES"'], 'gpus': 1,
                             'work_dir': '/tmp', 'stdout': out})
        self.c.wait_state(job, 'COMPLETED')
        with open(out) as f:
            self.assertIn(f.read().strip(), ['0', '1'])

    def test_a_jobs_gpu_use_is_sampled_on_its_device(self):
        # The job's supervisor samples its device by NVML's index (LaunchSpec's
        # gpu_nvml_indices), a second after the start: the record's usage shows it.
        self.write_devices([40, 90], [10 * GIB, 70 * GIB])
        job = self.c.submit({'argv': ['sleep', '2'], 'gpus': 1, 'work_dir': '/tmp',
                             'stdout': '/dev/null'})
        self.c.wait_state(job, 'COMPLETED')
        status, body = self.c.api('GET', f'/v1/jobs/{job}')
        self.assertEqual(status, 200, body)
        self.assertIn(body.get('usage', {}).get('gpu_utilization'), (40, 90), body)

    def test_a_bad_gpu_reading_is_refused_whole(self):
        def report(gpus):
            return self.c.api('POST', '/v1/agents/node1/status', {'events': [
                {'kind': 'usage', 'time_ms': int(time.time() * 1000),
                 'node': {'cpu_seconds': 1.0, 'memory_bytes': 1}, 'jobs': [], 'gpus': gpus}]})
        status, body = report([{'index': 5, 'utilization': 10}])
        self.assertEqual(status, 400, body)
        self.assertIn("GPU 5 is not one of the node's 2 GPUs", json.dumps(body))
        status, body = report([{'index': 0, 'utilization': 150}])
        self.assertEqual(status, 400, body)
        self.assertIn('150 is not a percentage', json.dumps(body))
        # Nothing of a refused report was kept: the agent's reading still stands.
        self.assertIn(self.node().get('gpu_utilization'), ([40, 90], None))

    @unittest.skipIf(webdriver.find_chromium() is None, webdriver.missing_reason())
    def test_the_console_shows_the_use_on_each_gpu(self):
        self.c.wait(lambda: self.node().get('gpu_utilization') == [40, 90],
                    "node1's measured GPU use", timeout=30)
        with open(os.path.join(self.c.dir, 'kubernetes-api.url')) as f:
            url = f.read().strip()
        token = self.c.cli('token').stdout.strip()
        b = webdriver.Browser()
        try:
            b.get(url + '/ui/#/cluster')
            b.wait_find('#token').type(token)
            b.wait(lambda: b.find('#signin-submit').click() or True, 'the sign-in')
            b.wait(lambda: b.text_of('#live') == 'live', 'the watch to be live')

            def cells():
                return b.execute(
                    'const t = document.querySelector(\'[data-node="node1"]\');'
                    'if (!t) return null;'
                    'return [...t.querySelectorAll(".gpu")].map((c) => [c.dataset.gpu,'
                    '  c.querySelector(".gpu-use") ? c.querySelector(".gpu-use").dataset.util'
                    '  : null]);')
            b.wait(lambda: cells() == [['0', '40'], ['1', '90']], 'the GPU cells with their use')
            self.assertIn('90%', b.text_of('[data-node="node1"] [data-gpu="1"]'))
            self.assertIn('GPUs 65% busy', b.text_of('[data-node="node1"] .measured'))
            self.assertEqual(b.text_of('#gpus-busy'), '1.3 of 2 measured GPUs busy')
            os.makedirs(ARTIFACTS, exist_ok=True)
            b.screenshot(os.path.join(ARTIFACTS, 'cluster-gpu-use.png'))
        finally:
            b.quit()


if __name__ == '__main__':
    unittest.main()

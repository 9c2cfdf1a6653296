"""Integration tests of GPU shares on a node with one declared GPU (docs/scheduling.md, "GPU
sharing and MIG"): two pods asking for nvidia.com/gpu.shared run at once on the same device and
see the same CUDA_VISIBLE_DEVICES; an `sbatch --gres=mps:50` job gets
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 and the node's MPS directories, and Slurm's views show the
share; a whole-GPU job waits while a share holds the only device, and starts once it ends.

The pod test needs kubectl (skipped without it).
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_gpu_sharing (from this folder).
"""
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import time
import unittest

from harness import BERTH, Cluster
from test_k8s_nodes import KUBECTL, Kubectl, write_kubeconfig


def shared_pod(name, units):
    return textwrap.dedent(f'''\
        apiVersion: v1
        kind: Pod
        metadata:
          name: {name}
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
            command: ["sh", "-c", "echo dev=$CUDA_VISIBLE_DEVICES; sleep 60"]
            resources:
              limits: {{nvidia.com/gpu.shared: {units}, memory: 64Mi}}
        ''')


class GpuSharingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='berth-gpushare-')
        os.chmod(cls.tmp, 0o755)
        cls.pipe = os.path.join(cls.tmp, 'mps-pipe')
        cls.c = Cluster(gpus=1, controller_args=['--k8s-listen', '127.0.0.1:0'],
                        agent_args=['--mps-pipe-dir', cls.pipe,
                                    '--mps-log-dir', os.path.join(cls.tmp, 'mps-log')]).start()

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def tearDown(self):
        self.c.end_jobs()

    def sbatch(self, *args):
        env = {k: v for k, v in self.c.env.items()
               if not k.startswith('SBATCH_') and not k.startswith('SLURM_')}
        p = subprocess.run([BERTH, 'sbatch', '--parsable', *args], cwd=self.tmp, env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip()

    def out(self, job_id):
        with open(os.path.join(self.tmp, f'slurm-{job_id}.out')) as f:
            return f.read()

    def test_an_mps_share_gets_its_percentage_and_slurm_shows_it(self):
        job = self.sbatch('--gres=mps:50', '--mem=50M', '--time=5',
                          '--wrap', 'env | grep -E "^CUDA_" | sort')
        self.c.wait_state(int(job), 'COMPLETED')
        env = dict(line.split('=', 1) for line in self.out(job).splitlines() if '=' in line)
        self.assertEqual(env.get('CUDA_MPS_ACTIVE_THREAD_PERCENTAGE'), '50', env)
        self.assertEqual(env.get('CUDA_VISIBLE_DEVICES'), '0', env)
        self.assertEqual(env.get('CUDA_MPS_PIPE_DIRECTORY'), self.pipe, env)
        self.assertIn('CUDA_MPS_LOG_DIRECTORY', env)
        body = self.c.job(int(job))
        self.assertEqual(body['allocation']['nodes'][0]['gpus'], [])
        self.assertEqual(body['allocation']['nodes'][0]['gpu_shares'], [{'device': 0, 'milli': 500}])
        show = self.c.cli('scontrol', 'show', 'job', job).stdout
        self.assertIn('TresPerNode=gres:mps:50', show)
        sacct = self.c.cli('sacct', '-j', job, '-X', '-n', '-P', '-o', 'AllocTRES').stdout
        self.assertIn('gres/mps=50', sacct)
        # Out of range: refused at submission, nothing queued.
        bad = subprocess.run([BERTH, 'sbatch', '--gres=mps:150', '--wrap', 'true'], cwd=self.tmp,
                             env=self.c.env, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn('Invalid generic resource (gres) specification', bad.stderr)

    def test_a_whole_gpu_job_waits_while_a_share_holds_the_only_device(self):
        share = self.sbatch('--gres=mps:30', '--mem=50M', '--time=5', '--wrap', 'sleep 60')
        other = self.sbatch('--gres=mps:70', '--mem=50M', '--time=5', '--wrap', 'sleep 60')
        self.c.wait_state(int(share), 'RUNNING')
        self.c.wait_state(int(other), 'RUNNING')  # 30 + 70: the device is full, not over
        self.assertEqual(self.c.job(int(other))['allocation']['nodes'][0]['gpu_shares'],
                         [{'device': 0, 'milli': 700}])
        whole = self.sbatch('--gres=gpu:1', '--mem=50M', '--time=5',
                            '--wrap', 'echo dev=$CUDA_VISIBLE_DEVICES')
        self.c.wait(lambda: self.c.job(int(whole)).get('reason') == 'Resources',
                    'the whole-GPU job to wait for Resources')
        self.assertEqual(self.c.job(int(whole))['state'], 'PENDING')
        self.c.cli('scancel', share, other)
        self.c.wait_state(int(whole), 'COMPLETED')
        self.assertEqual(self.out(whole).strip(), 'dev=0')

    @unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
    def test_two_shared_pods_run_at_once_on_the_same_device(self):
        k = Kubectl(os.path.join(self.tmp, 'kubeconfig'), os.path.join(self.tmp, 'cache'))
        write_kubeconfig(self.c, k.kubeconfig)
        node = json.loads(k('get', 'node', 'node1', '-o', 'json').stdout)
        self.assertEqual(node['status']['capacity']['nvidia.com/gpu.shared'], '4')
        self.assertEqual(node['status']['allocatable']['berth.io/gpu-milli'], '1000')
        for name in ('share-a', 'share-b'):
            path = os.path.join(self.tmp, name + '.yaml')
            with open(path, 'w') as f:
                f.write(shared_pod(name, 2))
            k('create', '-f', path)

        def running():
            pods = json.loads(k('get', 'pods', '-o', 'json').stdout)['items']
            phases = {p['metadata']['name']: p['status']['phase'] for p in pods}
            return phases.get('share-a') == 'Running' and phases.get('share-b') == 'Running'
        self.c.wait(running, 'both shared pods to run')
        for name in ('share-a', 'share-b'):
            self.c.wait(lambda n=name: 'dev=' in k('logs', n).stdout, f'{name} to print')
            self.assertEqual(k('logs', name).stdout.strip(), 'dev=0')
        # A third share does not fit (2 + 2 of 4 units) and waits.
        path = os.path.join(self.tmp, 'share-c.yaml')
        with open(path, 'w') as f:
            f.write(shared_pod('share-c', 1))
        k('create', '-f', path)
        time.sleep(1)
        pod = json.loads(k('get', 'pod', 'share-c', '-o', 'json').stdout)
        self.assertEqual(pod['status']['phase'], 'Pending')
        # More units than one device offers: refused with the reason.
        with open(path, 'w') as f:
            f.write(shared_pod('share-d', 5))
        bad = k('create', '-f', path, check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn('offers 4 units', bad.stderr)
        k('delete', 'pod', 'share-a', 'share-b', 'share-c', '--wait=false')


if __name__ == '__main__':
    unittest.main()

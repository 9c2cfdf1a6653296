"""Integration tests: autoscaling with berth's `local` provider (docs/autoscaling.md). The
controller reads slurm.conf's power-saving keys; CLOUD nodes start powered down; a burst of jobs
that does not fit on the node that is up wakes the fewest cloud nodes, whose `berth agent`
processes the provider starts on this machine; the jobs wait CONFIGURING, run once the agents
register, and the nodes are powered down again after SuspendTime idle. A resume that never
registers (ResumeProgram=/bin/true) goes DOWN after ResumeTimeout and its job is requeued.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_autoscale (from this folder).
"""
import os
import unittest

from harness import Cluster


def spec(body, cpus=2, **extra):
    s = {'name': 'burst', 'script': '#!/bin/sh\n' + body + '\n', 'work_dir': '/tmp',
         'stdout': '/dev/null', 'time_limit': 600, 'cpus_per_task': cpus}
    s.update(extra)
    return s


def nodes(job):
    return ','.join(n['node'] for n in job.get('allocation', {}).get('nodes', []))


def cluster(conf_text):
    c = Cluster(gpus=0)
    path = os.path.join(c.dir, 'cluster.conf')
    with open(path, 'w') as f:
        f.write(conf_text)
    c.controller_args += ['--config', path]
    return c.start()


NODES = ('NodeName=node1 CPUs=2 RealMemory=2000\n'
         'NodeName=cloud[1-2] CPUs=2 RealMemory=2000 State=CLOUD\n'
         'PartitionName=main Nodes=node1,cloud[1-2] Default=YES\n')


class LocalProviderTest(unittest.TestCase):
    def setUp(self):
        self.c = cluster('ResumeProgram=local SuspendProgram=local SuspendTime=3 '
                         'SuspendTimeout=1 ResumeTimeout=30 SuspendExcNodes=node1\n' + NODES)

    def tearDown(self):
        self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def power(self):
        status, body = self.c.api('GET', '/v1/power')
        self.assertEqual(status, 200, body)
        return body

    def test_scale_up_for_a_burst_then_down_after_idle(self):
        self.assertEqual(self.c.node_state('cloud1'), 'IDLE+POWERED_DOWN')
        self.assertTrue(self.power()['enabled'])
        # Holds node1 until the burst is done, so that the burst can only go to cloud nodes.
        first = self.c.submit(spec('sleep 120'))
        self.c.wait_state(first, 'RUNNING')
        self.assertEqual(nodes(self.c.job(first)), 'node1')
        # node1 is full: the next two need one cloud node each (2 CPUs apiece).
        burst = [self.c.submit(spec('hostname; sleep 1')) for _ in range(2)]
        for j in burst:
            self.assertIn(self.c.job(j)['state'], ('PENDING', 'CONFIGURING', 'RUNNING',
                                                   'COMPLETED'))
        self.c.wait(lambda: any(e['action'] == 'resume' for e in self.power()['events']),
                    'a resume')
        for j in burst:
            done = self.c.wait_state(j, 'COMPLETED', timeout=60)
            self.assertIn(nodes(done), ('cloud1', 'cloud2'))
        self.assertNotEqual(nodes(self.c.job(burst[0])), nodes(self.c.job(burst[1])))
        self.c.cli('scancel', str(first))
        events = self.power()['events']
        resumed = [e for e in events if e['action'] == 'resume']
        woken = ','.join(e['nodes'] for e in resumed)
        self.assertTrue('cloud1' in woken or 'cloud[1-2]' in woken, events)
        self.assertIn(f'job {burst[0]} needs 1 node, 2 CPUs', ' '.join(e['reason'] for e in resumed))
        self.assertTrue(any(e['action'] == 'up' for e in events), events)
        # Idle for SuspendTime (3 s), then SuspendTimeout (1 s): powered down again; node1 is
        # excluded (SuspendExcNodes).
        for node in ('cloud1', 'cloud2'):
            self.c.wait(lambda n=node: self.c.node_state(n) == 'IDLE+POWERED_DOWN',
                        f'{node} to power down', timeout=30)
        suspended = [e for e in self.power()['events'] if e['action'] == 'suspend']
        self.assertTrue(suspended)
        self.assertIn('idle for SuspendTime (3 s)', suspended[0]['reason'])
        self.assertNotIn('node1', ','.join(e['nodes'] for e in suspended))
        self.assertEqual(self.c.node_state('node1'), 'IDLE')
        for node in ('cloud1', 'cloud2'):
            self.assertFalse(os.path.exists(os.path.join(self.c.dir, 'power', node, 'agent.pid')))
        # And up again for the next job.
        again = self.c.submit(spec('true', cpus=1, nodelist='cloud2'))
        self.assertEqual(nodes(self.c.wait_state(again, 'COMPLETED', timeout=60)), 'cloud2')


class ResumeTimeoutTest(unittest.TestCase):
    def setUp(self):
        self.c = cluster('ResumeProgram=/bin/true ResumeTimeout=3\n' + NODES)

    def tearDown(self):
        self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def test_a_job_waiting_for_power_can_be_cancelled(self):
        self.c.submit(spec('sleep 30'))  # node1 full
        waiting = self.c.submit(spec('true'))
        self.c.wait_state(waiting, 'CONFIGURING')
        self.c.cli('scancel', str(waiting))
        self.assertEqual(self.c.wait_state(waiting, 'CANCELLED', timeout=10)['state'],
                         'CANCELLED')

    def test_a_node_that_never_registers_goes_down_and_its_job_is_requeued(self):
        self.c.submit(spec('sleep 60'))  # node1 full
        waiting = self.c.submit(spec('true'))
        job = self.c.wait_state(waiting, 'CONFIGURING')
        node = nodes(job)
        self.c.wait(lambda: self.c.node_state(node) == 'DOWN', f'{node} to go DOWN', timeout=30)
        status, body = self.c.api('GET', f'/v1/nodes/{node}')
        self.assertEqual(body['reason'], 'ResumeTimeout reached', body)
        self.c.wait(lambda: self.c.job(waiting)['restart_count'] >= 1, 'the requeue', timeout=30)
        self.assertIn('did not resume within ResumeTimeout (3 s)', self.c.job(waiting)['message'])
        events = [e for e in self.c.api('GET', '/v1/power')[1]['events']
                  if e['action'] == 'resume_timeout']
        self.assertTrue(events)
        self.assertIn(f'requeued job {waiting}', events[0]['reason'])


if __name__ == '__main__':
    unittest.main()

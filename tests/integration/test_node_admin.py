"""Integration tests: what operators set on nodes survives restarts and re-registration, and
jobs on a node that never comes back after a controller restart do not stay RUNNING forever.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_node_admin (from this folder).
"""
import json
import os
import unittest

from harness import Cluster, UnixHTTPConnection


def spec(body, **extra):
    s = {'name': 'n', 'script': '#!/bin/sh\n' + body + '\n', 'work_dir': '/tmp',
         'stdout': '/dev/null', 'time_limit': 600}
    s.update(extra)
    return s


class NodeAdminTest(unittest.TestCase):
    def setUp(self):
        self.c = Cluster(node_timeout=3).start()

    def tearDown(self):
        self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def node(self):
        status, body = self.c.api('GET', '/v1/nodes/node1')
        self.assertEqual(status, 200, body)
        return body

    def test_watchers_see_node_changes(self):
        c = UnixHTTPConnection(self.c.sock, timeout=30)
        c.request('GET', '/v1/watch?kinds=node')
        r = c.getresponse()
        self.assertEqual(json.loads(r.readline()), {'type': 'hello'})
        status, body = self.c.api('POST', '/v1/nodes/node1/drain', {'reason': 'watch me'})
        self.assertEqual(status, 200, body)
        for _ in range(50):  # keep-alive lines come once a second at most
            line = r.readline().strip()
            if not line:
                continue
            event = json.loads(line)
            self.assertEqual(event['type'], 'node')
            if event['node']['reason'] == 'watch me':
                self.assertEqual(event['node']['name'], 'node1')
                self.assertIn('DRAIN', event['node']['state'])
                break
        else:
            self.fail('no node event for the drain')
        c.close()

    def test_drain_survives_a_controller_restart(self):
        status, body = self.c.api('POST', '/v1/nodes/node1/drain', {'reason': 'bad fan'})
        self.assertEqual(status, 200, body)
        self.c.kill('controller')
        self.c.start_controller()
        self.c.wait(lambda: self.node()['state'] != 'DOWN', 'the agent to register again')
        self.assertIn('DRAIN', self.node()['state'])
        self.assertEqual(self.node()['reason'], 'bad fan')
        status, body = self.c.api('POST', '/v1/nodes/node1/resume')
        self.assertEqual(status, 200, body)
        self.c.kill('controller')
        self.c.start_controller()
        self.c.wait(lambda: self.node()['state'] == 'IDLE', 'the node to be idle after resume')

    def test_down_survives_the_agent_registering_again(self):
        status, body = self.c.api('POST', '/v1/nodes/node1/down', {'reason': 'replacing GPU'})
        self.assertEqual(status, 200, body)
        self.c.kill('agent')
        self.c.agent = None
        # The agent registers again (a restart); the node stays DOWN with the operator's reason.
        import subprocess
        from harness import BERTH
        self.c.agent = subprocess.Popen(
            [BERTH, 'agent', '--home', self.c.dir, '--controller', 'unix:' + self.c.sock,
             '--node-name', 'node1', '--gpus', '4', '--gpu-type', 'test'],
            stdout=self.c.log('agent2'), stderr=subprocess.STDOUT)
        self.c.wait(lambda: self.node().get('agent_connected'), 'the agent to register')
        self.assertEqual(self.node()['state'], 'DOWN')
        self.assertEqual(self.node()['reason'], 'replacing GPU')
        status, body = self.c.api('POST', '/v1/nodes/node1/resume')
        self.assertEqual(status, 200, body)
        self.c.wait(lambda: self.node()['state'] == 'IDLE', 'the node to come back on resume')

    def test_jobs_of_a_node_that_never_returns_end_after_the_timeout(self):
        kept = self.c.submit(spec('sleep 300', requeue=False))
        requeued = self.c.submit(spec('sleep 300', requeue=True))
        self.c.wait_state(kept, 'RUNNING', 30)
        self.c.wait_state(requeued, 'RUNNING', 30)
        # A read may show a start whose commit is still under way (records are published before
        # the store's commit returns); a change answered after it proves that commit done, so
        # that the kill -9 below finds both starts in the store.
        self.c.submit(spec('true', hold=True))
        self.c.kill('agent')
        self.c.kill('controller')
        self.c.start_controller()  # the node's agent never comes back
        self.assertEqual(self.c.job(kept)['state'], 'RUNNING')
        self.c.wait_state(kept, 'NODE_FAIL', 30)
        job = self.c.wait_state(requeued, 'PENDING', 30)
        self.assertEqual(job['restart_count'], 1)


if __name__ == '__main__':
    unittest.main()

"""Prometheus metrics (docs/metrics.md): GET /metrics on the controller (Unix socket and TCP) and
on an agent started with --metrics-listen, checked series by series and with `promtool check
metrics` (Debian package prometheus; that part skips itself, saying so, when promtool is absent).

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_metrics (from this folder).
"""
import base64
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import unittest

from harness import BERTH, Cluster, UnixHTTPConnection

PROMTOOL = shutil.which('promtool')
CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{(name, frozenset of (label, value)): value} of a text exposition; checks its shape."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        assert m, f'not a sample line: {line!r}'
        labels = frozenset(LABEL.findall(m.group(2) or ''))
        key = (m.group(1), labels)
        assert key not in out, f'series twice: {line!r}'
        out[key] = float(m.group(3))
    return out


def value(series, name, **labels):
    key = (name, frozenset(labels.items()))
    if key not in series:
        raise AssertionError(f'no series {name}{labels}; have '
                             f'{sorted(k for k in series if k[0] == name)}')
    return series[key]


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class MetricsCluster(Cluster):
    """The harness's cluster, with the agent serving its metrics on a free port."""

    def start_agent(self):
        self.agent = subprocess.Popen(
            [BERTH, 'agent', '--home', self.dir, '--controller', 'unix:' + self.sock,
             '--node-name', 'node1', '--gpus', str(self.gpus), '--gpu-type', 'test',
             '--metrics-listen', '127.0.0.1:0'],
            stdout=self.log('agent'), stderr=subprocess.STDOUT)
        self.wait(lambda: self.node_state('node1') not in (None, 'DOWN'),
                  'the agent to register')
        self.wait(lambda: self.agent_metrics_port() is not None, 'the agent to print its port')

    def agent_metrics_port(self):
        with open(os.path.join(self.dir, 'agent.log')) as f:
            m = re.search(r'metrics on http://127\.0\.0\.1:(\d+)/metrics', f.read())
        return int(m.group(1)) if m else None

    def scrape(self, conn):
        conn.request('GET', '/metrics')
        r = conn.getresponse()
        body = r.read().decode()
        conn.close()
        assert r.status == 200, (r.status, body)
        assert r.getheader('Content-Type') == CONTENT_TYPE, r.getheader('Content-Type')
        return body

    def controller_metrics(self):
        return self.scrape(UnixHTTPConnection(self.sock))

    def agent_metrics(self):
        return self.scrape(http.client.HTTPConnection('127.0.0.1', self.agent_metrics_port(),
                                                      timeout=30))


class MetricsTest(unittest.TestCase):
    def setUp(self):
        self.tcp_port = free_port()
        self.c = MetricsCluster(controller_args=[
            '--k8s-listen', '127.0.0.1:0', '--listen-tcp', f'127.0.0.1:{self.tcp_port}']).start()
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work, exist_ok=True)
        os.chmod(self.work, 0o777)

    def tearDown(self):
        self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def spec(self, body='true', **extra):
        s = {'name': 'it', 'script': '#!/bin/sh\n' + body + '\n', 'work_dir': self.work,
             'stdout': '%x-%j.out', 'time_limit': 60}
        s.update(extra)
        return s

    def create_pod(self, name, command):
        config = json.loads(self.c.cli('kubeconfig').stdout)
        cluster = config['clusters'][0]['cluster']
        ca = ssl.create_default_context(
            cadata=base64.b64decode(cluster['certificate-authority-data']).decode())
        host, port = cluster['server'][len('https://'):].rsplit(':', 1)
        conn = http.client.HTTPSConnection(host, int(port), context=ca, timeout=60)
        pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name},
               'spec': {'restartPolicy': 'Never',
                        'containers': [{'name': 'main', 'image': 'busybox',
                                        'command': ['sh', '-c', command]}]}}
        conn.request('POST', '/api/v1/namespaces/default/pods', body=json.dumps(pod),
                     headers={'Authorization': 'Bearer ' + config['users'][0]['user']['token'],
                              'Content-Type': 'application/json'})
        r = conn.getresponse()
        body = r.read().decode()
        conn.close()
        self.assertEqual(r.status, 201, body)

    def promtool_check(self, text, what):
        if PROMTOOL is None:
            print(f'\nskipped: promtool check metrics of the {what}: promtool is not installed '
                  '(Debian package prometheus; scripts/setup installs it)')
            return
        p = subprocess.run([PROMTOOL, 'check', 'metrics'], input=text, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, f'{what}: {p.stdout}{p.stderr}')
        self.assertEqual(p.stdout + p.stderr, '', f'{what}: promtool found problems')

    def test_controller_and_agent_metrics(self):
        c = self.c
        partition = c.api('GET', '/v1/partitions')[1]['partitions'][0]['name']
        cpus = c.api('GET', '/v1/nodes/node1')[1]['cpus']
        done = c.submit(self.spec('true'))
        failed = c.submit(self.spec('exit 3'))
        held = c.submit(self.spec(hold=True))
        blocked = c.submit(self.spec(dependency=f'afterok:{held}'))
        self.create_pod('metrics-pod', 'true')
        c.wait_state(done, 'COMPLETED', 30)
        c.wait_state(failed, 'FAILED', 30)
        c.wait(lambda: c.job(blocked).get('reason') == 'Dependency', 'the pass')
        c.wait(lambda: value(parse(c.controller_metrics()), 'berth_job_ends_total',
                             state='COMPLETED') == 2, 'the pod to complete')
        # The agent counts an end once the controller has acknowledged its report.
        c.wait(lambda: value(parse(c.agent_metrics()), 'berth_agent_jobs_ended_total') == 3,
               'the agent to count three ends')

        text = c.controller_metrics()
        m = parse(text)
        self.assertEqual(value(m, 'berth_jobs', partition=partition, state='COMPLETED'), 2)
        self.assertEqual(value(m, 'berth_jobs', partition=partition, state='FAILED'), 1)
        self.assertEqual(value(m, 'berth_jobs', partition=partition, state='PENDING'), 2)
        self.assertEqual(value(m, 'berth_jobs', partition=partition, state='RUNNING'), 0)
        self.assertEqual(value(m, 'berth_jobs_pending', partition=partition,
                               reason='JobHeldUser'), 1)
        self.assertEqual(value(m, 'berth_jobs_pending', partition=partition,
                               reason='Dependency'), 1)
        self.assertEqual(value(m, 'berth_job_submissions_total', face='slurm'), 4)
        self.assertEqual(value(m, 'berth_job_submissions_total', face='kubernetes'), 1)
        self.assertEqual(value(m, 'berth_job_ends_total', state='COMPLETED'), 2)
        self.assertEqual(value(m, 'berth_job_ends_total', state='FAILED'), 1)
        self.assertEqual(value(m, 'berth_job_ends_total', state='CANCELLED'), 0)
        self.assertEqual(value(m, 'berth_nodes', state='IDLE'), 1)
        self.assertEqual(sum(v for (n, _), v in m.items() if n == 'berth_nodes'), 1)
        self.assertEqual(value(m, 'berth_agents_connected'), 1)
        self.assertEqual(value(m, 'berth_cpus', state='idle'), cpus)
        self.assertEqual(value(m, 'berth_cpus', state='allocated'), 0)
        self.assertEqual(value(m, 'berth_gpus', state='idle'), 4)
        self.assertEqual(value(m, 'berth_power_actions_total', action='resume'), 0)
        passes = value(m, 'berth_scheduling_passes_total')
        self.assertGreaterEqual(passes, 1)
        self.assertEqual(value(m, 'berth_scheduling_pass_duration_seconds_count'), passes)
        self.assertEqual(value(m, 'berth_scheduling_pass_duration_seconds_bucket', le='+Inf'),
                         passes)
        # Aggregates only: no user name anywhere.
        user = c.job(done)['request']['user']
        self.assertNotIn(f'"{user}"', text)
        self.promtool_check(text, 'controller')

        # Read-only callers on TCP may scrape too.
        tcp = c.scrape(http.client.HTTPConnection('127.0.0.1', self.tcp_port, timeout=30))
        self.assertEqual(value(parse(tcp), 'berth_job_submissions_total', face='slurm'), 4)

        agent_text = c.agent_metrics()
        a = parse(agent_text)
        info = [(dict(labels), v) for (n, labels), v in a.items() if n == 'berth_node_info']
        self.assertEqual(len(info), 1, info)
        self.assertEqual(info[0][0]['node'], 'node1')
        self.assertIn(info[0][0]['cgroups'], ('v1', 'v2', 'none'))
        self.assertEqual(info[0][1], 1)
        self.assertEqual(value(a, 'berth_agent_registered'), 1)
        self.assertEqual(value(a, 'berth_agent_jobs_started_total'), 3)
        self.assertEqual(value(a, 'berth_agent_jobs_ended_total'), 3)
        self.assertEqual(value(a, 'berth_agent_jobs_running'), 0)
        self.assertEqual(value(a, 'berth_node_cpus'), cpus)
        self.assertGreater(value(a, 'berth_node_cpu_seconds_total', mode='idle'), 0)
        self.assertGreater(value(a, 'berth_node_memory_size_bytes'),
                           value(a, 'berth_node_memory_available_bytes'))
        self.promtool_check(agent_text, 'agent')

        # A drained node's free CPUs count as down.
        status, body = c.api('POST', '/v1/nodes/node1/drain', {'reason': 'metrics test'})
        self.assertEqual(status, 200, body)
        c.wait(lambda: value(parse(c.controller_metrics()), 'berth_nodes', state='DRAINED') == 1,
               'the node to be drained')
        m = parse(c.controller_metrics())
        self.assertEqual(value(m, 'berth_cpus', state='down'), cpus)
        self.assertEqual(value(m, 'berth_cpus', state='idle'), 0)
        self.assertEqual(value(m, 'berth_nodes', state='IDLE'), 0)

    def test_agent_metrics_answer_only_get_metrics(self):
        port = self.c.agent_metrics_port()
        for method, path, status in (('GET', '/', 404), ('POST', '/metrics', 405)):
            conn = http.client.HTTPConnection('127.0.0.1', port, timeout=30)
            conn.request(method, path)
            r = conn.getresponse()
            r.read()
            conn.close()
            self.assertEqual(r.status, status, (method, path))


class MetricsOptionTest(unittest.TestCase):
    def run_berth(self, *args):
        return subprocess.run([BERTH, *args], capture_output=True, text=True, timeout=30)

    def test_bad_addresses_are_refused_clearly(self):
        for bad, why in (('9464', 'no port'), ('host:x', 'the port is not in 0..65535'),
                         ('::1:9464', 'an IPv6 address goes in brackets')):
            p = self.run_berth('agent', '--metrics-listen', bad)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn('berth: --metrics-listen: expected HOST:PORT', p.stderr)
            self.assertIn(f"got '{bad}': {why}", p.stderr)

    def test_the_controller_says_where_its_metrics_are(self):
        p = self.run_berth('controller', '--metrics-listen', '127.0.0.1:0')
        self.assertEqual(p.returncode, 2)
        self.assertIn('--metrics-listen is an agent option', p.stderr)

    def test_help_names_the_option(self):
        p = self.run_berth('agent', '--help')
        self.assertEqual(p.returncode, 0)
        self.assertIn('--metrics-listen H:P', p.stdout)


if __name__ == '__main__':
    unittest.main()

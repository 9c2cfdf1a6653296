"""Browser tests of the web console (docs/web.md) in headless Chromium, driven through
chromedriver by webdriver.py, against real daemons and real jobs: sign-in by token (a wrong one
refused with the API's message) and by a `berth web` link (its cookie session following a job's
output, sign-out, the used link refused), the security headers, the cluster page's node and GPU states as
the API reports them (allocated, idle, drained; powered down, powering up and down on cloud
nodes), jobs from sbatch and Pods from kubectl appearing live in the queue with their pending
reason, arrays folded as squeue folds them, hold and release, a job's output followed and seff's
advice, a user cancelling their own job and refused on another's, an operator draining a node,
the usage page's figures equal to `berth report usage --json`'s and its CSV to `--format csv`'s,
the power actions on the autoscaling page, and the watch reconnecting after a controller restart.
Each test saves screenshots into $BERTH_ARTIFACTS (default build/web-screenshots).

Skipped where chromium or chromedriver is missing (scripts/setup installs both); slow (a browser
and a cluster), so run in the default build only.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_web (from this folder).
"""
import http.client
import json
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import unittest

import webdriver
from harness import Cluster, make_user, remove_user, slow_in_one_build
from test_k8s_nodes import KUBECTL, write_kubeconfig, Kubectl

USER = 'berthui'
HERE = os.path.dirname(os.path.abspath(__file__))
ARTIFACTS = os.environ.get('BERTH_ARTIFACTS') or os.path.join(HERE, '..', '..', 'build',
                                                                 'web-screenshots')
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")


@slow_in_one_build
@unittest.skipIf(webdriver.find_chromium() is None, webdriver.missing_reason())
class WebConsoleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        make_user(USER)
        cls.c = Cluster(controller_args=['--k8s-listen', '127.0.0.1:0']).start()
        try:
            with open(os.path.join(cls.c.dir, 'kubernetes-api.url')) as f:
                cls.url = f.read().strip()
            cls.port = int(cls.url.rsplit(':', 1)[1])
            cls.ca = os.path.join(cls.c.dir, 'pki', 'ca.crt')
            cls.root_token = cls.c.cli('token').stdout.strip()
            cls.user_token = cls.c.cli('token', user=USER).stdout.strip()
            cls.b = webdriver.Browser()
        except Exception:
            cls.c.stop()
            remove_user(USER)
            raise
        os.makedirs(ARTIFACTS, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        cls.b.quit()
        cls.c.stop(keep=bool(os.environ.get('BERTH_IT_KEEP')))
        remove_user(USER)

    def tearDown(self):
        self.c.end_jobs()

    # --- helpers ---

    def https(self, method, path, token=None):
        ctx = ssl.create_default_context(cafile=self.ca)
        conn = http.client.HTTPSConnection('127.0.0.1', self.port, context=ctx, timeout=30)
        headers = {'Authorization': 'Bearer ' + token} if token else {}
        conn.request(method, path, headers=headers)
        r = conn.getresponse()
        body = r.read().decode()
        conn.close()
        return r.status, dict(r.getheaders()), body

    def shot(self, name):
        self.b.screenshot(os.path.join(ARTIFACTS, name + '.png'))

    def sign_in(self, token, page='cluster'):
        """A fresh page signed in with `token`, showing #/page."""
        self.b.get(self.url + '/ui/#/' + page)
        self.b.execute('sessionStorage.clear();')
        self.b.refresh()
        self.b.wait_find('#token').type(token)
        self.click('#signin-submit')
        self.b.wait(lambda: self.b.text_of('#who'), 'the signed-in user')
        self.b.wait(lambda: self.b.text_of('#live') == 'live', 'the watch to be live')

    def click(self, css):
        """Clicks the element `css` once it is there (found again if a redraw replaced it)."""
        self.b.wait(lambda: self.b.find(css).click() or True, f'a click on {css}')

    def confirm(self, reason=None):
        self.b.wait(lambda: self.b.execute('return document.getElementById("confirm").open'),
                    'the confirmation')
        if reason is not None:
            self.b.find('#confirm-input').type(reason)
        self.click('#confirm-ok')

    def mark_page(self):
        """Marks the page's window: still there later means no reload happened."""
        self.b.execute('window.__berthMark = 42;')

    def assert_not_reloaded(self):
        self.assertEqual(self.b.execute('return window.__berthMark;'), 42)

    def sbatch(self, *args, user=None):
        # Output to /dev/null: a /tmp/slurm-N.out left by another run may be someone else's.
        p = self.c.cli('sbatch', '--parsable', '-o', '/dev/null', *args, user=user)
        return int(p.stdout.strip().split(';')[0])

    # --- tests ---

    def test_sign_in_by_token_and_a_wrong_token_is_refused(self):
        status, headers, body = self.https('GET', '/ui/')
        self.assertEqual(status, 200)
        self.assertEqual(headers['Content-Security-Policy'], CSP)
        self.assertEqual(headers['X-Content-Type-Options'], 'nosniff')
        self.assertEqual(headers['Referrer-Policy'], 'no-referrer')
        self.assertIn('/ui/assets/app.js', body)
        self.assertEqual(self.https('GET', '/ui/assets/nothing.js')[0], 404)
        self.assertEqual(self.https('GET', '/v1/whoami')[0], 401)
        # The reports' bad parameters: 400 naming the problem.
        for query, message in [
                ('usage?start=x', '"start" must be a Unix time in seconds'),
                ('usage?start=10&end=5', 'the period is empty: start 10 is not before end 5'),
                ('usage?top=-1', '"top" must be a whole number >= 0'),
                ('usage?format=xml', "unknown format 'xml' (json or csv)"),
                ('advice?job=abc', 'Invalid job id specified: abc')]:
            status, _, body = self.https('GET', '/v1/reports/' + query, self.root_token)
            self.assertEqual((status, json.loads(body)['error']['message']), (400, message))
        bad = 'berth.0.' + '0' * 64
        status, _, body = self.https('GET', '/v1/whoami', bad)
        self.assertEqual(status, 401)
        refusal = json.loads(body)['error']['message']

        self.b.get(self.url + '/ui/')
        self.b.execute('sessionStorage.clear();')
        self.b.refresh()
        self.b.wait_find('#token').type(bad)
        self.click('#signin-submit')
        self.b.wait(lambda: self.b.text_of('#signin-error'), 'the refusal')
        self.assertEqual(self.b.text_of('#signin-error'), refusal)
        self.assertEqual(self.b.text_of('#who'), '')
        self.shot('signin')
        self.b.find('#token').clear()
        self.b.find('#token').type(self.user_token)
        self.click('#signin-submit')
        self.b.wait(lambda: self.b.text_of('#who') == USER, 'the user signed in')
        self.sign_in(self.root_token)
        self.assertEqual(self.b.text_of('#who'), 'root (operator)')

    def test_cluster_page_shows_each_node_and_gpu_state(self):
        job = self.c.submit({'argv': ['sleep', '300'], 'gpus': 2, 'work_dir': '/tmp',
                             'stdout': '/dev/null'})
        self.c.wait_state(job, 'RUNNING')
        self.sign_in(self.root_token, 'cluster')
        self.c.api('POST', '/v1/nodes/node1/drain', {'reason': 'web test'})
        try:
            self.c.wait(lambda: 'DRAIN' in self.c.node_state('node1'), 'node1 draining')
            _, nodes = self.c.api('GET', '/v1/nodes')
            held = self.c.job(job)['allocation']['nodes'][0]['gpus']
            for n in nodes['nodes']:
                sel = f'article.node[data-node="{n["name"]}"]'
                self.b.wait(lambda: self.b.execute(
                    'const e = document.querySelector(arguments[0] + " .badge");'
                    'return e && e.dataset.state;', sel) == n['state'],
                    f'{n["name"]} shown as {n["state"]}')
                cells = self.b.execute(
                    'return [...document.querySelectorAll(arguments[0] + " .gpu")].map('
                    'e => [Number(e.dataset.gpu), e.dataset.state, e.textContent]);', sel)
                self.assertEqual(len(cells), len(n['gpus']))
                for index, state, text in cells:
                    if index in held:
                        self.assertEqual(state, 'alloc')
                        self.assertIn(f'job {job}', text)
                    else:
                        # DRAINING or DRAINED: the GPUs no job holds show drained, in words too.
                        self.assertEqual(state, 'drained')
                        self.assertIn('drained', text)
            self.shot('cluster')
        finally:
            self.c.api('POST', '/v1/nodes/node1/resume')
        self.c.wait(lambda: 'DRAIN' not in self.c.node_state('node1'), 'node1 resumed')
        self.b.wait(lambda: self.b.execute(
            'return [...document.querySelectorAll(".gpu[data-state=idle]")].length') ==
            4 - len(held), 'the idle GPUs')

    def test_jobs_and_pods_appear_live_with_their_pending_reason(self):
        self.sign_in(self.root_token, 'queue')
        self.mark_page()
        job = self.sbatch('-H', '--wrap', 'sleep 1', '-D', '/tmp', user=USER)
        self.c.wait(lambda: self.c.job(job).get('reason'), 'a reason')
        reason = self.c.job(job)['reason']
        row = f'#queue-rows tr[data-job="{job}"]'
        self.b.wait(lambda: f'({reason})' in (self.b.text_of(row) or ''),
                    f'job {job} with ({reason})')
        self.assertIn(USER, self.b.text_of(row))
        pod_job = None
        if KUBECTL:
            tmp = tempfile.mkdtemp(prefix='berth-web-')
            cfg = os.path.join(tmp, 'kubeconfig')
            write_kubeconfig(self.c, cfg)
            k = Kubectl(cfg, os.path.join(tmp, 'cache'))
            manifest = os.path.join(tmp, 'pod.json')
            with open(manifest, 'w') as f:
                json.dump({'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'webpod'},
                           'spec': {'restartPolicy': 'Never', 'containers': [{
                               'name': 'main', 'image': 'busybox', 'command': ['sleep', '1'],
                               'resources': {'limits': {'nvidia.com/gpu': 16}}}]}}, f)
            k('create', '-f', manifest)

            def find_pod():
                _, body = self.c.api('GET', '/v1/jobs')
                for j in body['jobs']:
                    if (j.get('k8s') or {}).get('name') == 'webpod' and j.get('reason'):
                        return j
                return None
            pod_job = self.c.wait(find_pod, 'the pod\'s job') or find_pod()
            prow = f'#queue-rows tr[data-job="{pod_job["id"]}"]'
            self.b.wait(lambda: f'({pod_job["reason"]})' in (self.b.text_of(prow) or ''),
                        'the pod with its reason')
            self.assertIn('Pod', self.b.text_of(prow))
            self.assertIn('webpod', self.b.text_of(prow))
        self.assert_not_reloaded()
        self.shot('queue')
        if pod_job:
            # The Pod's page shows its manifest (from the Kubernetes face) and its reason.
            self.click(f'#queue-rows tr[data-job="{pod_job["id"]}"] td a')
            self.b.wait(lambda: '"kind": "Pod"' in (self.b.text_of('#job-source') or ''),
                        'the pod manifest')
            self.assertEqual(self.b.text_of('#job-source-title'), 'Pod manifest')
            self.assertIn(pod_job['reason'], self.b.text_of('#job-body'))
            k('delete', 'pod', 'webpod', '--wait=false')
            shutil.rmtree(tmp, ignore_errors=True)

    def test_a_jobs_output_tail_follows(self):
        out = os.path.join(self.c.dir, 'follow.out')
        job = self.c.submit({'script': '#!/bin/sh\nfor i in $(seq 1 40); do echo line$i; '
                                       'sleep 0.25; done\n',
                             'work_dir': '/tmp', 'stdout': out})
        self.c.wait_state(job, 'RUNNING')
        self.sign_in(self.root_token, f'job/{job}')
        self.mark_page()
        self.b.wait(lambda: 'line' in (self.b.text_of('#job-output') or ''), 'the first lines')
        first = self.b.text_of('#job-output')
        self.b.wait(lambda: 'line40' in (self.b.text_of('#job-output') or ''), 'the last line',
                    timeout=60)
        self.assertNotIn('line40', first)
        self.assertTrue(self.b.text_of('#job-output').startswith('line1\n'))
        self.b.wait(lambda: 'COMPLETED' in (self.b.text_of('#job-state') or '').upper(),
                    'the job to show as completed')
        self.assert_not_reloaded()
        # seff's suggestions, as `berth seff` prints them.
        seff = [line[len('Suggestion: '):] for line in
                self.c.cli('seff', str(job)).stdout.splitlines()
                if line.startswith('Suggestion: ')]
        shown = self.b.wait(lambda: self.b.execute(
            'const li = [...document.querySelectorAll("#job-advice li")];'
            'return li.length && !li[0].classList.contains("muted") ? '
            'li.map(e => e.textContent) : null;'), 'the advice')
        self.assertEqual(shown, [f'Suggestion: {s}' for s in seff] or
                         ['No suggestion: the request fits.'])
        self.shot('job')

    def test_sign_in_by_a_berth_web_link_and_the_output_follows(self):
        # The cookie session a `berth web` link opens reads the job's output (its Pod's log on
        # the Kubernetes face) as a token does.
        out_dir = tempfile.mkdtemp(prefix='berth-web-link-')
        self.addCleanup(shutil.rmtree, out_dir, True)
        os.chmod(out_dir, 0o777)
        self.addCleanup(lambda: self.b.call('DELETE', '/cookie'))
        job = self.sbatch('-D', '/tmp', '-o', os.path.join(out_dir, 'out'), '--wrap',
                          'for i in $(seq 1 24); do echo link$i; sleep 0.25; done', user=USER)
        link = self.c.cli('web', user=USER).stdout.strip()
        self.assertTrue(link.startswith(self.url + '/ui/login?code='), link)
        self.b.get(self.url + '/ui/')
        self.b.execute('sessionStorage.clear();')
        self.b.get(link)
        self.b.wait(lambda: self.b.text_of('#who') == USER, 'the user signed in by the link')
        names = [c['name'] for c in self.b.call('GET', '/cookie')]
        self.assertIn('berth_session', names)
        self.assertEqual(self.b.execute('return sessionStorage.length;'), 0)  # no token typed
        self.c.wait_state(job, 'RUNNING')
        self.b.get(self.url + f'/ui/#/job/{job}')
        self.b.wait(lambda: 'link24' in (self.b.text_of('#job-output') or ''), 'the last line',
                    timeout=60)
        self.assertTrue(self.b.text_of('#job-output').startswith('link1\n'))
        # A used link signs nobody in again; signing out ends the session.
        self.click('#signout')
        self.b.wait_find('#token')
        self.b.wait(lambda: 'berth_session' not in
                    [c['name'] for c in self.b.call('GET', '/cookie')], 'the cookie cleared')
        self.b.get(link)
        self.assertIn('used already', self.b.text_of('body'))

    def test_a_user_cancels_their_own_job_and_not_anothers(self):
        mine = self.sbatch('-H', '--wrap', 'sleep 1', '-D', '/tmp', user=USER)
        theirs = self.sbatch('-H', '--wrap', 'sleep 1', '-D', '/tmp')
        self.sign_in(self.user_token, 'queue')
        for job in (mine, theirs):
            self.b.wait_find(f'#queue-rows tr[data-job="{job}"] button[data-action=cancel]')
        self.click(f'#queue-rows tr[data-job="{mine}"] button[data-action=cancel]')
        self.confirm()
        self.c.wait(lambda: self.c.job(mine)['state'] == 'CANCELLED', 'the own job cancelled')
        self.click(f'#queue-rows tr[data-job="{theirs}"] button[data-action=cancel]')
        self.confirm()
        status, _, body = self.https('POST', f'/v1/jobs/{theirs}/cancel', self.user_token)
        self.assertEqual(status, 403)
        refusal = json.loads(body)['error']['message']
        self.b.wait(lambda: refusal in (self.b.text_of('#notice') or ''), 'the refusal shown')
        self.shot('refused')
        self.assertEqual(self.c.job(theirs)['state'], 'PENDING')

    def test_arrays_fold_as_squeue_folds_them_and_hold_release(self):
        array = self.sbatch('-H', '--array=0-5%2', '--wrap', 'sleep 1', '-D', '/tmp', user=USER)
        later = self.sbatch('--begin=now+1hour', '--wrap', 'sleep 1', '-D', '/tmp', user=USER)
        self.sign_in(self.user_token, 'queue')
        folded = self.c.cli('squeue', '-h', '-o', '%i', '-j', str(array)).stdout.split()
        self.assertEqual(len(folded), 1, folded)
        row = f'#queue-rows tr[data-job="{array}"]'
        self.b.wait(lambda: self.b.execute(
            'const a = document.querySelector(arguments[0] + " td a");'
            'return a && a.textContent;', row) == folded[0], f'the array as {folded[0]}')
        # Hold and release from the page: the reason follows.
        self.c.wait(lambda: self.c.job(later).get('reason') == 'BeginTime', 'BeginTime')
        lrow = f'#queue-rows tr[data-job="{later}"]'
        self.click(lrow + ' button[data-action=hold]')
        self.confirm()
        self.c.wait(lambda: self.c.job(later).get('reason') == 'JobHeldUser', 'the hold')
        self.b.wait(lambda: '(JobHeldUser)' in (self.b.text_of(lrow) or ''), 'held on the page')
        self.click(lrow + ' button[data-action=release]')
        self.confirm()
        self.c.wait(lambda: self.c.job(later).get('reason') != 'JobHeldUser', 'the release')
        self.b.wait(lambda: '(JobHeldUser)' not in (self.b.text_of(lrow) or ''),
                    'released on the page')

    def test_an_operator_drains_a_node(self):
        self.sign_in(self.root_token, 'cluster')
        self.click('article.node[data-node="node1"] button[data-action=drain]')
        self.confirm('bad fan')
        try:
            self.c.wait(lambda: 'DRAIN' in self.c.node_state('node1'), 'node1 drained')
            _, node = self.c.api('GET', '/v1/nodes/node1')
            self.assertEqual(node['reason'], 'bad fan')
            self.b.wait(lambda: 'bad fan' in (self.b.text_of('article.node[data-node="node1"]')
                                              or ''), 'the reason on the page')
            # Readable on a phone's width too (the tiles reflow into one column).
            self.b.set_size(390, 844)
            self.shot('cluster-phone')
            self.b.set_size(1280, 900)
            self.click('article.node[data-node="node1"] button[data-action=resume]')
            self.confirm()
            self.c.wait(lambda: 'DRAIN' not in self.c.node_state('node1'), 'node1 resumed')
        finally:
            self.c.api('POST', '/v1/nodes/node1/resume')

    def test_the_usage_page_equals_berth_report_usage(self):
        for cmd in (['true'], ['sh', '-c', 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done']):
            job = self.c.submit({'argv': cmd, 'work_dir': '/tmp', 'stdout': '/dev/null',
                                 'gpus': 1})
            self.c.wait_state(job, 'COMPLETED')
        job = self.sbatch('--wrap', 'true', '-D', '/tmp', user=USER)
        self.c.wait_state(job, 'COMPLETED')
        self.sign_in(self.root_token, 'usage')
        self.b.wait(lambda: self.b.execute(
            'return document.querySelectorAll("#usage-rows tbody tr").length') >= 3,
            'the usage rows')
        start = int(self.b.execute('return document.getElementById("usage-out").dataset.start'))
        end = int(self.b.execute('return document.getElementById("usage-out").dataset.end'))
        page = self.b.execute(
            'return [...document.querySelectorAll("#usage-rows tbody tr")].map(tr => '
            'Object.fromEntries([...tr.children].map(td => [td.dataset.key, td.textContent])));')
        cli = json.loads(self.c.cli('report', 'usage', '--format', 'json', '-a',
                                    '-S', f'uts{start}', '-E', f'uts{end}').stdout)
        rows = cli['rows'] + [dict(cli['total'], account='total', user='')]
        self.assertEqual(len(page), len(rows))
        for shown, want in zip(page, rows):
            self.assertEqual(shown['account'], want['account'] or '(none)')
            self.assertEqual(shown['user'], want['user'])
            self.assertEqual(int(shown['jobs']), want['jobs'])
            for key in ('cpu_hours', 'cpu_hours_used', 'mem_gib_hours', 'mem_peak_gib_hours',
                        'gpu_hours', 'gpu_hours_used', 'gpu_hours_unmeasured'):
                self.assertEqual(shown[key], f'{want[key]:.2f}', key)
            for key in ('cpu_efficiency', 'mem_efficiency'):
                self.assertEqual(shown[key], '' if want[key] is None else f'{want[key]:.1f}%', key)
        self.assertIn(USER, [r['user'] for r in page])
        # Export CSV: the file the page makes (read from its blob) is the CLI's --format csv.
        exported = self.b.execute_async(
            'const done = arguments[0]; const make = URL.createObjectURL;'
            'URL.createObjectURL = (blob) => { blob.text().then(done); return make(blob); };'
            'document.getElementById("usage-csv").click();')
        csv = self.c.cli('report', 'usage', '--format', 'csv', '-a', '-S', f'uts{start}',
                         '-E', f'uts{end}').stdout
        self.assertEqual(exported, csv)
        self.shot('usage')
        self.b.get(self.url + '/ui/#/power')
        self.b.wait_find('#power-settings')
        self.shot('autoscaling')


def gpu_state_for(node_state):
    """What an idle GPU of a node in this state shows (docs/web.md)."""
    if 'POWERING_UP' in node_state:
        return 'boot'
    if 'POWERED_DOWN' in node_state or 'POWERING_DOWN' in node_state:
        return 'off'
    if node_state.startswith('DOWN'):
        return 'down'
    if node_state.startswith('DRAIN'):
        return 'drained'
    return 'idle'


@slow_in_one_build
@unittest.skipIf(webdriver.find_chromium() is None, webdriver.missing_reason())
class WebPowerStatesTest(unittest.TestCase):
    """Cloud nodes: powered down, powering up (a resume that never registers), then down after
    ResumeTimeout; the cluster page shows each state the API reports, and the autoscaling page
    the power actions."""

    def setUp(self):
        self.c = Cluster(gpus=0, controller_args=['--k8s-listen', '127.0.0.1:0'])
        conf = os.path.join(self.c.dir, 'cluster.conf')
        with open(conf, 'w') as f:
            f.write('ResumeProgram=/bin/true ResumeTimeout=8\n'
                    'NodeName=node1 CPUs=2 RealMemory=2000 Topology=blockB/leaf1\n'
                    'NodeName=cloud[1-2] CPUs=2 RealMemory=2000 Gres=gpu:test:2 State=CLOUD'
                    ' Topology=blockA/leaf1\n'
                    'PartitionName=main Nodes=node1,cloud[1-2] Default=YES\n')
        self.c.controller_args += ['--config', conf]
        self.c.start()
        self.addCleanup(self.c.stop)
        with open(os.path.join(self.c.dir, 'kubernetes-api.url')) as f:
            self.url = f.read().strip()
        self.b = webdriver.Browser()
        self.addCleanup(self.b.quit)
        os.makedirs(ARTIFACTS, exist_ok=True)

    def check_nodes(self, want=lambda states: True):
        """Each node's state and each GPU's as the API says (held by a job, else by its node's
        state), once the page has caught up with a snapshot of the API (states move on while
        cloud nodes resume and time out: a new snapshot each try). Returns the snapshot."""
        snapshot = {}

        def consistent():
            _, jobs = self.c.api('GET', '/v1/jobs')
            held = {}
            for j in jobs['jobs']:
                for a in (j.get('allocation') or {}).get('nodes', []):
                    for g in a.get('gpus', []):
                        held[(a['node'], g)] = j['id']
            _, body = self.c.api('GET', '/v1/nodes')
            page = self.b.execute(
                'return Object.fromEntries([...document.querySelectorAll("article.node")].map('
                'a => [a.dataset.node, [a.querySelector(".badge").dataset.state, [...a'
                '.querySelectorAll(".gpu")].map(e => [Number(e.dataset.gpu), e.dataset.state,'
                ' e.textContent])]]));')
            for n in body['nodes']:
                shown = page.get(n['name'])
                if not shown or shown[0] != n['state'] or len(shown[1]) != len(n['gpus']):
                    return False
                for index, state, text in shown[1]:
                    job = held.get((n['name'], index))
                    expected = 'alloc' if job else gpu_state_for(n['state'])
                    label = f'job {job}' if job else {'boot': 'powering up',
                                                      'off': 'powered down'}.get(expected,
                                                                                 expected)
                    if state != expected or label not in text:
                        return False
            states = {n['name']: n['state'] for n in body['nodes']}
            snapshot.update(states)
            return want(states)
        self.b.wait(consistent, 'the page to show the API\'s node and GPU states')
        return snapshot

    def test_powered_down_powering_up_and_down(self):
        token = self.c.cli('token').stdout.strip()
        self.b.get(self.url + '/ui/#/cluster')
        self.b.execute('sessionStorage.setItem("berth_token", arguments[0]);', token)
        self.b.refresh()
        self.b.wait(lambda: self.b.text_of('#live') == 'live', 'the watch')
        self.check_nodes(lambda states: 'POWERED_DOWN' in states['cloud1'])
        # Grouped by the nodes' topology blocks, as the API names them.
        _, body = self.c.api('GET', '/v1/nodes')
        self.assertEqual({n['name']: n['topology'] for n in body['nodes']},
                         {'node1': 'blockB/leaf1', 'cloud1': 'blockA/leaf1',
                          'cloud2': 'blockA/leaf1'})
        groups = self.b.execute(
            'return Object.fromEntries([...document.querySelectorAll("section.partition > h3")]'
            '.map(h => [h.textContent, [...h.nextElementSibling.querySelectorAll("article.node")]'
            '.map(a => a.dataset.node)]));')
        self.assertEqual(groups, {'Block blockB/leaf1': ['node1'],
                                  'Block blockA/leaf1': ['cloud1', 'cloud2']})
        job = self.c.submit({'argv': ['true'], 'work_dir': '/tmp', 'stdout': '/dev/null',
                             'gpus': 1})
        self.c.wait(lambda: 'POWERING_UP' in (self.c.node_state('cloud1') or '') or
                    'POWERING_UP' in (self.c.node_state('cloud2') or ''), 'a resume')
        self.check_nodes(lambda states: any('POWERING_UP' in s for s in states.values()))
        self.b.screenshot(os.path.join(ARTIFACTS, 'cluster-power.png'))
        self.c.wait(lambda: any(e['action'] == 'resume_timeout'
                                for e in self.c.api('GET', '/v1/power')[1]['events']),
                    'the resume timeout', timeout=30)
        self.c.api('POST', '/v1/jobs/cancel', {'ids': [str(job)]})  # no further resumes
        self.check_nodes(lambda states: any(s.startswith('DOWN') for s in states.values()))
        self.b.get(self.url + '/ui/#/power')
        # (The requeued job may wake the other cloud node meanwhile: a second resume.)
        self.b.wait(lambda: {'pw-resume', 'pw-resume_timeout'} <= set(self.b.execute(
            'return [...document.querySelectorAll("#power-events tr")].map(tr => '
            'tr.className);')), 'the resume and its timeout on the autoscaling page')
        self.b.screenshot(os.path.join(ARTIFACTS, 'autoscaling.png'))


@slow_in_one_build
@unittest.skipIf(webdriver.find_chromium() is None, webdriver.missing_reason())
class WebReconnectTest(unittest.TestCase):
    """The watch stream comes back after a controller restart (the page retries with backoff),
    and what happened meanwhile shows without a reload."""

    def setUp(self):
        port = webdriver.free_port()  # the same address after the restart
        self.c = Cluster(controller_args=['--k8s-listen', f'127.0.0.1:{port}']).start()
        self.addCleanup(self.c.stop)
        self.url = f'https://127.0.0.1:{port}'
        self.b = webdriver.Browser()
        self.addCleanup(self.b.quit)

    def test_the_page_reconnects_after_a_controller_restart(self):
        token = self.c.cli('token').stdout.strip()
        self.b.get(self.url + '/ui/#/queue')
        self.b.execute('sessionStorage.setItem("berth_token", arguments[0]);', token)
        self.b.refresh()
        self.b.wait(lambda: self.b.text_of('#live') == 'live', 'the watch')
        self.b.execute('window.__berthMark = 42;')
        self.c.kill('controller', signal.SIGTERM)
        self.b.wait(lambda: self.b.text_of('#live') == 'reconnecting', 'the page to notice')
        self.c.start_controller()
        job = self.c.submit({'argv': ['true'], 'work_dir': '/tmp', 'stdout': '/dev/null',
                             'hold': True})
        self.b.wait(lambda: self.b.text_of('#live') == 'live', 'the watch again', timeout=60)
        self.b.wait(lambda: self.b.execute(
            'return !!document.querySelector(arguments[0]);',
            f'#queue-rows tr[data-job="{job}"]'), 'the job submitted meanwhile')
        self.assertEqual(self.b.execute('return window.__berthMark;'), 42)


if __name__ == '__main__':
    unittest.main()

"""The web console's server side over real HTTPS (docs/security.md, "The web console"; docs/api.md):
`berth web` prints a sign-in link whose code works once; the session cookie acts as its user on
/v1, mutations need the CSRF token and the controller's own Origin, bearer tokens need neither;
sign-out ends the session; the cluster's history fills and survives a restart; node changes reach
a watcher over the cookie.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_web_auth (from this folder).
"""
import http.client
import json
import os
import shutil
import signal
import ssl
import tempfile
import time
import unittest
import urllib.parse

from harness import Cluster, make_user, remove_user

USER = 'berthweb'


class WebAuthTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        make_user(USER)

    @classmethod
    def tearDownClass(cls):
        remove_user(USER)

    def setUp(self):
        self.c = Cluster(controller_args=['--k8s-listen', '127.0.0.1:0',
                                          '--history-interval', '1']).start()
        self.addCleanup(lambda: self.c.stop(keep=bool(os.environ.get('BERTH_IT_KEEP'))))
        self.read_url()

    def read_url(self):
        with open(os.path.join(self.c.dir, 'kubernetes-api.url')) as f:
            self.url = f.read().strip()
        self.port = int(self.url.rsplit(':', 1)[1])
        self.origin = f'https://127.0.0.1:{self.port}'
        self.ca = os.path.join(self.c.dir, 'pki', 'ca.crt')

    def conn(self, timeout=30):
        ctx = ssl.create_default_context(cafile=self.ca)
        return http.client.HTTPSConnection('127.0.0.1', self.port, context=ctx, timeout=timeout)

    def https(self, method, path, body=None, headers=None):
        conn = self.conn()
        h = {'Content-Type': 'application/json'}
        h.update(headers or {})
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=h)
        r = conn.getresponse()
        text = r.read().decode()
        conn.close()
        try:
            parsed = json.loads(text) if text.strip() else {}
        except ValueError:
            parsed = {'raw': text}
        return r.status, parsed, r.msg

    def sign_in(self, user=USER):
        """Runs `berth web` as `user` and opens its link: the cookies' values by name."""
        p = self.c.cli('web', user=user)
        url = p.stdout.strip()
        self.assertTrue(url.startswith(self.url + '/ui/login?code='), url)
        path = urllib.parse.urlsplit(url)
        status, _, msg = self.https('GET', path.path + '?' + path.query)
        self.assertEqual(status, 303)
        self.assertEqual(msg['Location'], '/ui/')
        cookies = {}
        for header in msg.get_all('Set-Cookie'):
            name, rest = header.split('=', 1)
            value, attributes = rest.split(';', 1)
            cookies[name] = (value, attributes)
        self.assertIn('HttpOnly', cookies['berth_session'][1])
        self.assertNotIn('HttpOnly', cookies['berth_csrf'][1])
        for _, attributes in cookies.values():
            self.assertIn('Secure', attributes)
            self.assertIn('SameSite=Strict', attributes)
            self.assertIn('Path=/', attributes)
        self.assertEqual(len(cookies['berth_session'][0]), 64)
        return url, {k: v for k, (v, _) in cookies.items()}

    def job_count(self):
        status, body = self.c.api('GET', '/v1/jobs')
        self.assertEqual(status, 200, body)
        return len(body['jobs'])

    def test_a_code_signs_in_once_and_the_cookie_acts_as_its_user(self):
        theirs = self.c.submit({'script': '#!/bin/sh\nsleep 30\n', 'work_dir': '/tmp',
                                'stdout': '/dev/null'})
        url, cookies = self.sign_in()
        # The code is used up.
        path = urllib.parse.urlsplit(url)
        status, body, msg = self.https('GET', path.path + '?' + path.query)
        self.assertEqual(status, 401)
        self.assertIn('used already', body['raw'])
        self.assertIsNone(msg.get_all('Set-Cookie'))
        status, body, _ = self.https('GET', '/ui/login?code=0123')
        self.assertEqual(status, 401)

        cookie = {'Cookie': f"berth_session={cookies['berth_session']}; "
                            f"berth_csrf={cookies['berth_csrf']}"}
        status, body, _ = self.https('GET', '/v1/jobs', headers=cookie)
        self.assertEqual(status, 200, body)
        self.assertIn(theirs, [j['id'] for j in body['jobs']])
        job = {'script': '#!/bin/sh\ntrue\n', 'work_dir': '/tmp', 'stdout': '/dev/null'}
        before = self.job_count()
        # A mutation without the CSRF token, with a wrong one, or from another origin: refused,
        # nothing changes.
        status, body, _ = self.https('POST', '/v1/jobs', job, cookie)
        self.assertEqual(status, 403, body)
        self.assertEqual(body['error']['message'], 'CSRF token missing or wrong')
        status, body, _ = self.https('POST', '/v1/jobs', job,
                                     {**cookie, 'X-CSRF-Token': 'f' * 32})
        self.assertEqual(status, 403, body)
        status, body, _ = self.https('POST', '/v1/jobs', job,
                                     {**cookie, 'X-CSRF-Token': cookies['berth_csrf'],
                                      'Origin': 'https://evil.example'})
        self.assertEqual(status, 403, body)
        self.assertIn('https://evil.example', body['error']['message'])
        self.assertEqual(self.job_count(), before)
        # With the token (and this controller's own Origin) it is the user's own submission.
        ok = {**cookie, 'X-CSRF-Token': cookies['berth_csrf'], 'Origin': self.origin}
        status, body, _ = self.https('POST', '/v1/jobs', job, ok)
        self.assertEqual(status, 201, body)
        self.assertEqual(self.c.job(body['job_id'])['request']['user'], USER)
        # The user's rights, no more: not root's job, no credentials minted from a session.
        status, body, _ = self.https('POST', f'/v1/jobs/{theirs}/cancel', {}, ok)
        self.assertEqual(status, 403, body)
        for method, path in (('POST', '/v1/tokens'), ('POST', '/v1//tokens/'),
                             ('POST', '/v1/web/codes'), ('GET', '/v1/kubeconfig')):
            status, body, _ = self.https(method, path, {} if method == 'POST' else None, ok)
            self.assertEqual(status, 403, (path, body))
            self.assertIn('may not issue credentials', body['error']['message'])
        # A bearer token needs no CSRF token.
        token = self.c.cli('token', user=USER).stdout.strip()
        status, body, _ = self.https('POST', '/v1/jobs', job, {'Authorization': 'Bearer ' + token})
        self.assertEqual(status, 201, body)
        # A wrong bearer token is not passed over for the cookie.
        status, body, _ = self.https('GET', '/v1/jobs',
                                     headers={**cookie, 'Authorization': 'Bearer berth.0.x'})
        self.assertEqual(status, 401, body)
        # Sign-out: with the CSRF token only; then the cookie names nobody.
        status, body, _ = self.https('POST', '/ui/logout', {}, cookie)
        self.assertEqual(status, 403, body)
        status, body, msg = self.https('POST', '/ui/logout', {}, ok)
        self.assertEqual(status, 200, body)
        self.assertTrue(all('Max-Age=0' in h for h in msg.get_all('Set-Cookie')))
        status, body, _ = self.https('GET', '/v1/jobs', headers=cookie)
        self.assertEqual(status, 401, body)
        status, body, msg = self.https('POST', '/ui/logout', {}, ok)
        self.assertEqual(status, 401, body)
        self.assertEqual(len(msg.get_all('Set-Cookie')), 2)

    def test_the_cookie_reads_a_pods_log_and_object_but_changes_nothing_there(self):
        # The console shows a job's output (its Pod's log) and manifest from the Kubernetes face:
        # a session's cookie names its user there on reads; changes there take a bearer token.
        out_dir = tempfile.mkdtemp(prefix='berth-web-log-')
        self.addCleanup(shutil.rmtree, out_dir, True)
        os.chmod(out_dir, 0o777)
        _, cookies = self.sign_in()
        cookie = {'Cookie': f"berth_session={cookies['berth_session']}; "
                            f"berth_csrf={cookies['berth_csrf']}"}
        ok = {**cookie, 'X-CSRF-Token': cookies['berth_csrf'], 'Origin': self.origin}
        status, body, _ = self.https('POST', '/v1/jobs',
                                     {'script': '#!/bin/sh\necho hello from the console\n',
                                      'work_dir': '/tmp', 'stdout': os.path.join(out_dir, 'o')},
                                     ok)
        self.assertEqual(status, 201, body)
        job = body['job_id']
        self.c.wait_state(job, 'COMPLETED')
        pod = f'/api/v1/namespaces/slurm/pods/job-{job}'
        status, body, _ = self.https('GET', pod + '/log', headers=cookie)
        self.assertEqual(status, 200, body)
        self.assertEqual(body['raw'], 'hello from the console\n')
        status, body, _ = self.https('GET', pod, headers=cookie)
        self.assertEqual(status, 200, body)
        self.assertEqual(body['metadata']['name'], f'job-{job}')
        # Not a change, even with the CSRF token: 401, and the Pod is still there.
        status, body, _ = self.https('DELETE', pod, None, ok)
        self.assertEqual(status, 401, body)
        token = self.c.cli('token', user=USER).stdout.strip()
        status, body, _ = self.https('GET', pod, headers={'Authorization': 'Bearer ' + token})
        self.assertEqual(status, 200, body)
        # A wrong bearer token is not passed over for the cookie here either.
        status, body, _ = self.https('GET', pod + '/log',
                                     headers={**cookie, 'Authorization': 'Bearer berth.0.x'})
        self.assertEqual(status, 401, body)
        # Signed out: the cookie names nobody on the Kubernetes face.
        status, body, _ = self.https('POST', '/ui/logout', {}, ok)
        self.assertEqual(status, 200, body)
        status, body, _ = self.https('GET', pod + '/log', headers=cookie)
        self.assertEqual(status, 401, body)

    def history(self, query):
        status, body = self.c.api('GET', '/v1/history?' + query)
        self.assertEqual(status, 200, body)
        return body

    def test_history_fills_and_survives_a_restart(self):
        status, body = self.c.api('GET', '/v1/history?series=gpus_total,gpus_stolen')
        self.assertEqual(status, 400, body)
        self.assertIn('gpus_stolen', body['error']['message'])
        status, body = self.c.api('GET', '/v1/history?range=2h')
        self.assertEqual(status, 400, body)

        def enough():
            points = self.history('series=gpus_total,nodes_up&range=1h')['series']['gpus_total']
            return len(points) >= 3 and points[-1][1] == 4
        self.c.wait(enough, 'three samples of the history', timeout=30)
        body = self.history('range=1h')
        self.assertEqual(body['step_s'], 1)
        for name in ('gpus_total', 'gpus_allocated', 'gpus_used', 'cpus_allocated',
                     'jobs_running', 'jobs_pending', 'nodes_up', 'nodes_powered'):
            self.assertIn(name, body['series'])
        self.assertIn('gpus_used', body['notes'])
        self.assertEqual(body['series']['nodes_up'][-1][1], 1)
        self.assertEqual(self.history('range=1d&series=gpus_total')['step_s'], 60)
        kept = self.history('series=gpus_total')['series']['gpus_total']
        # Over HTTPS with a bearer token too.
        token = self.c.cli('token').stdout.strip()
        status, body, _ = self.https('GET', '/v1/history?series=nodes_powered',
                                     headers={'Authorization': 'Bearer ' + token})
        self.assertEqual(status, 200, body)

        self.c.kill('controller', signal.SIGTERM)
        self.c.start_controller()
        after = self.history('series=gpus_total')['series']['gpus_total']
        times = [t for t, _ in after]
        for t, v in kept:
            self.assertIn(t, times)

    def test_a_node_drain_reaches_a_cookie_watcher(self):
        _, cookies = self.sign_in()
        conn = self.conn()
        conn.request('GET', '/v1/watch?kinds=nodes',
                     headers={'Cookie': f"berth_session={cookies['berth_session']}"})
        r = conn.getresponse()
        self.assertEqual(r.status, 200)
        self.assertEqual(json.loads(r.readline()), {'type': 'hello'})
        status, body = self.c.api('POST', '/v1/nodes/node1/drain', {'reason': 'web watch'})
        self.assertEqual(status, 200, body)
        deadline = time.time() + 20
        while time.time() < deadline:
            line = r.readline().strip()
            if not line:
                continue
            event = json.loads(line)
            self.assertEqual(event['type'], 'node')
            if event['node']['reason'] == 'web watch':
                break
        else:
            self.fail('no node event for the drain')
        conn.close()
        status, node = self.c.api('GET', '/v1/nodes/node1')
        self.assertEqual(status, 200, node)
        # The event carries the same object as GET /v1/nodes/NAME (last_seen moves on).
        node.pop('last_seen')
        got = dict(event['node'])
        got.pop('last_seen')
        self.assertEqual(got, node)
        self.assertIn('DRAIN', got['state'])


if __name__ == '__main__':
    unittest.main()

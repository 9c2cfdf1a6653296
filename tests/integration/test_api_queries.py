"""Integration tests of the API endpoints the Slurm face stands on: sbatch --test-only, batch
cancel (scancel) with array tasks, sprio's priorities, scontrol update and show config.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_api_queries (from this folder).
"""
import os
import unittest

import json
import subprocess

from harness import Cluster, make_user, remove_user

ROOT = os.geteuid() == 0


def script(body):
    return '#!/bin/sh\n' + body + '\n'


class ApiQueriesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = Cluster().start()
        cls.work = os.path.join(cls.c.dir, 'work')
        os.makedirs(cls.work, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        cls.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def spec(self, body='true', **extra):
        s = {'name': 'q', 'script': script(body), 'work_dir': self.work, 'time_limit': 600}
        s.update(extra)
        return s

    def test_test_only_answers_where_and_stores_nothing(self):
        before = self.c.api('GET', '/v1/jobs?all=1')[1]['jobs']
        status, body = self.c.api('POST', '/v1/jobs?test_only=1', self.spec(cpus_per_task=1))
        self.assertEqual(status, 200, body)
        self.assertEqual(body['nodes'], ['node1'])
        self.assertEqual(body['cpus'], 1)
        self.assertIsInstance(body['expected_start'], int)
        self.assertEqual(self.c.api('GET', '/v1/jobs?all=1')[1]['jobs'], before)
        # The id it announced is the one the next real submit gets.
        self.assertEqual(self.c.submit(self.spec(hold=True)), body['job_id'])
        # A job that can never run is refused, as a real submit would be.
        status, body = self.c.api('POST', '/v1/jobs?test_only=1', self.spec(nodes='5'))
        self.assertEqual(status, 400, body)

    def test_batch_cancel_splits_pending_array_tasks(self):
        array = self.c.submit(self.spec(array='0-3', hold=True))
        single = self.c.submit(self.spec(hold=True))
        status, body = self.c.api('POST', '/v1/jobs/cancel',
                                  {'ids': [f'{array}_2', str(single), '999999', 'x_1',
                                           'q"\\1\u00e9']})
        self.assertEqual(status, 200, body)
        results = body['results']
        self.assertEqual([r['id'] for r in results],
                         [f'{array}_2', str(single), '999999', 'x_1', 'q"\\1\u00e9'])
        self.assertEqual(results[4]['code'], 400)  # an id that needs escapes, back as it was
        self.assertIn('q"\\1\u00e9', results[4]['error'])
        self.assertNotIn('error', results[0])
        self.assertNotIn('error', results[1])
        self.assertEqual(results[2]['code'], 404)
        self.assertIn('Invalid job id', results[2]['error'])
        self.assertEqual(results[3]['code'], 400)
        # The cancelled task has its own record; the array keeps its other tasks.
        task = self.c.job(f'{array}_2')
        self.assertEqual(task['state'], 'CANCELLED')
        self.assertEqual(task['array_task_id'], 2)
        master = self.c.job(array)
        self.assertEqual(master['state'], 'PENDING')
        self.assertEqual(master['request']['array'], '0-1,3')
        self.assertEqual(self.c.job(f'{array}_3')['id'], array)
        self.assertEqual(self.c.job(single)['state'], 'CANCELLED')
        status, body = self.c.api('POST', '/v1/jobs/cancel', {'ids': '12'})
        self.assertEqual(status, 400)
        status, body = self.c.api('POST', '/v1/jobs/cancel', {'ids': [str(array)], 'signal': 'NOPE'})
        self.assertEqual(status, 400)
        self.assertIn('NOPE', body['error']['message'])
        self.assertEqual(self.c.job(array)['state'], 'PENDING')

    def test_hold_and_release_one_array_task(self):
        array = self.c.submit(self.spec(array='0-2', hold=True))
        status, body = self.c.api('POST', f'/v1/jobs/{array}_1/release')
        self.assertEqual(status, 200, body)
        task = self.c.job(f'{array}_1')
        self.assertNotEqual(task['id'], array)
        self.assertEqual(self.c.job(array)['request']['array'], '0,2')

    def test_priorities_show_each_pending_job_with_its_factors(self):
        held = self.c.submit(self.spec(hold=True))
        a = self.c.submit(self.spec(nice=100, dependency=f'afterok:{held}'))
        status, body = self.c.api('GET', '/v1/priorities')
        self.assertEqual(status, 200, body)
        self.assertEqual(body['weights']['fairshare'], 10000)
        jobs = {j['id']: j for j in body['jobs']}
        self.assertIn(a, jobs)
        self.assertNotIn(held, jobs)  # as sprio: held jobs are not listed
        mine = jobs[a]
        self.assertEqual(mine['nice'], 100)
        f = mine['factors']
        total = f['age'] + f['fairshare'] + f['jobsize'] + f['partition'] + f['qos'] + f['tres']
        self.assertAlmostEqual(mine['priority'], round(total) - 100, delta=1)
        for k, v in mine['normalized'].items():
            self.assertGreaterEqual(v, 0, k)
            self.assertLessEqual(v, 1, k)

    def test_update_pending_request_is_checked_and_atomic(self):
        jid = self.c.submit(self.spec(hold=True))
        status, body = self.c.api('PATCH', f'/v1/jobs/{jid}',
                                  {'num_nodes': '1', 'time_min': 120, 'features': '',
                                   'time_limit': 300, 'nice': 5})
        self.assertEqual(status, 200, body)
        job = self.c.job(jid)
        self.assertEqual(job['request']['time_limit'], 300)
        self.assertEqual(job['request']['time_min'], 120)
        self.assertEqual(job['request']['nice'], 5)
        # A bad field changes nothing, not even the good ones before it.
        status, body = self.c.api('PATCH', f'/v1/jobs/{jid}', {'nice': 7, 'num_nodes': '9'})
        self.assertEqual(status, 400, body)
        self.assertEqual(self.c.job(jid)['request']['nice'], 5)
        status, body = self.c.api('PATCH', f'/v1/jobs/{jid}', {'time_limit': 'soon'})
        self.assertEqual(status, 400, body)
        status, body = self.c.api('PATCH', f'/v1/jobs/{jid}', {'colour': 'red'})
        self.assertEqual(status, 400, body)
        self.assertIn('colour', body['error']['message'])

    def test_new_time_limit_of_a_running_job_is_enforced_by_its_node(self):
        jid = self.c.submit(self.spec('sleep 60', time_limit=600))
        self.c.wait_state(jid, 'RUNNING', 90)
        status, body = self.c.api('PATCH', f'/v1/jobs/{jid}', {'time_limit': 2})
        self.assertEqual(status, 200, body)
        job = self.c.wait_state(jid, 'TIMEOUT', 90)
        self.assertLess(job['end_time'] - job['start_time'], 55)  # not the 600 s it had

    def test_a_batch_with_a_bad_job_submits_none_of_it(self):
        before = len(self.c.api('GET', '/v1/jobs?all=1')[1]['jobs'])
        status, body = self.c.api('POST', '/v1/jobs', {'jobs': [
            self.spec(hold=True), self.spec(hold=True, nodes='9'), self.spec(hold=True)]})
        self.assertEqual(status, 400, body)
        self.assertIn('job 2', body['error']['message'])
        self.assertEqual(len(self.c.api('GET', '/v1/jobs?all=1')[1]['jobs']), before)

    def test_comment_submit_host_and_listing_with_exec(self):
        body = self.spec(hold=True, comment='first')
        body['submit_host'] = 'login7'
        jid = self.c.submit(body)
        status, b = self.c.api('PATCH', f'/v1/jobs/{jid}', {'comment': 'second'})
        self.assertEqual(status, 200, b)
        job = self.c.job(jid)
        self.assertEqual(job['request']['comment'], 'second')
        self.assertEqual(job['submit_host'], 'login7')
        listed = {j['id']: j for j in self.c.api('GET', '/v1/jobs?exec=1')[1]['jobs']}
        self.assertEqual(listed[jid]['request']['script'], body['script'])
        plain = {j['id']: j for j in self.c.api('GET', '/v1/jobs')[1]['jobs']}
        self.assertNotIn('script', plain[jid]['request'])

    def test_the_list_says_what_each_job_says(self):
        # The list is assembled from each record's cached text plus the last pass's word on it:
        # it must agree with the single-job answer, which is encoded afresh.
        held = self.c.submit(self.spec(hold=True, comment='a "quoted" comment'))
        blocked = self.c.submit(self.spec(dependency=f'afterok:{held}'))
        running = self.c.submit(self.spec('sleep 30', cpus_per_task=1))
        self.c.wait_state(running, 'RUNNING', 30)
        self.c.wait(lambda: self.c.job(blocked).get('reason') == 'Dependency', 'the pass')
        exec_keys = ('script', 'environment', 'work_dir', 'comment', 'stdout', 'stderr',
                     'command', 'argv', 'script_args')
        listed = {j['id']: j for j in self.c.api('GET', '/v1/jobs')[1]['jobs']}
        for jid in (held, blocked, running):
            one = self.c.job(jid)
            for k in exec_keys:
                one['request'].pop(k, None)
            # What the node reports may arrive between the two requests.
            self.assertEqual(listed[jid].pop('usage', None) is None, one.pop('usage', None) is None)
            self.assertEqual(listed[jid], one)
        self.assertEqual(listed[blocked]['reason'], 'Dependency')
        self.assertEqual(listed[held]['reason'], 'JobHeldUser')
        self.c.api('POST', '/v1/jobs/cancel', {'ids': [str(running), str(blocked), str(held)]})

    def test_config_lists_slurm_keys(self):
        status, body = self.c.api('GET', '/v1/config')
        self.assertEqual(status, 200, body)
        config = dict(body['config'])
        self.assertEqual(config['PriorityType'], 'priority/multifactor')
        self.assertEqual(config['SchedulerType'], 'sched/backfill')
        self.assertEqual(config['PriorityWeightFairShare'], '10000')

    def test_bad_numbers_in_queries_are_400_not_a_crash(self):
        status, _ = self.c.api('GET', '/v1/accounting/jobs?start=yesterday')
        self.assertEqual(status, 400)
        self.assertTrue(self.c.ready())

    def test_values_of_the_wrong_type_are_400_with_a_json_error(self):
        jid = self.c.submit(self.spec(hold=True))
        for path, body in [(f'/v1/jobs/{jid}/signal', {'signal': 9}),
                           (f'/v1/jobs/{jid}/hold', {'admin': 'yes'}),
                           ('/v1/nodes/node1/drain', {'reason': ['x']}),
                           (f'/v1/jobs/{jid}', {'nice': 'high'})]:
            method = 'PATCH' if path.endswith(str(jid)) else 'POST'
            status, b = self.c.api(method, path, body)
            self.assertEqual(status, 400, (path, b))
            self.assertIn('message', b['error'], (path, b))
        self.assertEqual(self.c.job(jid)['state'], 'PENDING')
        self.assertNotIn('DRAIN', self.c.node_state('node1'))

    def test_unknown_action_on_an_array_task_changes_nothing(self):
        array = self.c.submit(self.spec(array='0-2', hold=True))
        status, _ = self.c.api('POST', f'/v1/jobs/{array}_1/bogus')
        self.assertEqual(status, 404)
        self.assertEqual(self.c.job(array)['request']['array'], '0-2')


@unittest.skipUnless(ROOT, 'needs root to make a user')
class ApiPermissionsTest(unittest.TestCase):
    USER = 'berthq'

    @classmethod
    def setUpClass(cls):
        make_user(cls.USER)
        cls.c = Cluster().start()
        os.chmod(cls.c.dir, 0o755)
        os.chmod(cls.c.sock, 0o777)

    @classmethod
    def tearDownClass(cls):
        cls.c.stop()
        remove_user(cls.USER)

    def as_user(self, method, path, body=None):
        code = ('import json,sys; sys.path.insert(0, %r); from harness import UnixHTTPConnection as C;'
                'c = C(%r); c.request(%r, %r, body=%r, headers={"Content-Type": "application/json"});'
                'r = c.getresponse(); print(r.status); print(r.read().decode())'
                % (os.path.dirname(os.path.abspath(__file__)), self.c.sock, method, path,
                   None if body is None else json.dumps(body)))
        p = subprocess.run(['runuser', '-u', self.USER, '--', 'python3', '-c', code],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        status, text = p.stdout.split('\n', 1)
        return int(status), json.loads(text) if text.strip() else {}

    def test_configured_operators_may_act_on_every_job(self):
        other = Cluster(controller_args=['--operator', f'nobody,{self.USER}']).start()
        try:
            os.chmod(other.dir, 0o755)
            os.chmod(other.sock, 0o777)
            jid = other.submit({'script': '#!/bin/sh\ntrue\n', 'work_dir': '/tmp', 'hold': True})
            saved, self.c = self.c, other
            try:
                status, body = self.as_user('DELETE', f'/v1/jobs/{jid}')
                self.assertEqual(status, 200, body)
                status, body = self.as_user('POST', '/v1/jobs', {
                    'script': '#!/bin/sh\ntrue\n', 'work_dir': '/tmp', 'hold': True,
                    'priority': 5})
                self.assertEqual(status, 201, body)
            finally:
                self.c = saved
            self.assertEqual(other.job(jid)['state'], 'CANCELLED')
        finally:
            other.stop()
        # Without --operator the same user may not.
        jid = self.c.submit({'script': '#!/bin/sh\ntrue\n', 'work_dir': '/tmp', 'hold': True})
        status, body = self.as_user('DELETE', f'/v1/jobs/{jid}')
        self.assertEqual(status, 403, body)

    def test_operator_only_values_are_refused_at_submit(self):
        job = {'script': '#!/bin/sh\ntrue\n', 'work_dir': '/tmp', 'hold': True}
        for extra in ({'priority': 5}, {'nice': -5}, {'hold': 'admin'}):
            status, body = self.as_user('POST', '/v1/jobs', dict(job, **extra))
            self.assertEqual(status, 403, (extra, body))
        status, body = self.as_user('POST', '/v1/jobs', dict(job, nice=5))
        self.assertEqual(status, 201, body)

    def test_others_do_not_see_a_jobs_script_or_environment(self):
        jid = self.c.submit({'script': '#!/bin/sh\necho secret\n', 'work_dir': '/tmp',
                             'hold': True, 'environment': {'TOKEN': 'abc'}})
        status, body = self.as_user('GET', f'/v1/jobs/{jid}')
        self.assertEqual(status, 200, body)
        self.assertNotIn('script', body['request'])
        self.assertNotIn('environment', body['request'])
        self.assertEqual(body['request']['work_dir'], '/tmp')
        self.assertIn('script', self.c.job(jid)['request'])
        # Nor may they split someone else's array.
        array = self.c.submit({'script': '#!/bin/sh\ntrue\n', 'work_dir': '/tmp',
                               'hold': True, 'array': '0-2'})
        status, body = self.as_user('POST', '/v1/jobs/cancel', {'ids': [f'{array}_1']})
        self.assertEqual(status, 200, body)
        self.assertEqual(body['results'][0]['code'], 403)
        self.assertEqual(self.c.job(array)['request']['array'], '0-2')


if __name__ == '__main__':
    unittest.main()

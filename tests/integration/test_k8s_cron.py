"""Integration tests: batch/v1 CronJobs with the REAL kubectl: `kubectl create cronjob`, get (the
Table's columns as Kubernetes prints them), the Jobs it makes each minute (named
<cronjob>-<minutes since the epoch>, owned by it, with the scheduled-timestamp annotation) and
their pods running, status.active / lastScheduleTime / lastSuccessfulTime, suspend, Forbid,
history limits, `kubectl create job --from=cronjob/NAME` (and `kubectl create job --image`), patch, the 422s of a bad schedule or
time zone, a controller restart that keeps it, and delete (its Jobs go with it).

A CronJob's schedule has minute granularity, so two tests wait for minute boundaries (about three
minutes): they run in the default build only, not again under the sanitizers (slow_in_one_build).
Skipped where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_cron (from this folder).
"""
import json
import os
import time
import unittest

from harness import slow_in_one_build
from test_k8s_nodes import KUBECTL, KubeClusterTest


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
class CronJobTest(KubeClusterTest):
    def get(self, *args):
        return json.loads(self.k('get', *args, '-o', 'json').stdout)

    def jobs_of(self, name):
        jobs = self.get('jobs')['items']
        return sorted((j for j in jobs if any(
            r['kind'] == 'CronJob' and r['name'] == name
            for r in j['metadata'].get('ownerReferences', []))),
            key=lambda j: j['metadata']['name'])

    def wait_for(self, what, cond, timeout=150):
        end = time.time() + timeout
        while time.time() < end:
            got = cond()
            if got:
                return got
            time.sleep(1)
        self.fail(f'timed out waiting for {what}')

    @slow_in_one_build
    def test_every_minute_jobs_status_history_restart_and_delete(self):
        self.k('create', 'cronjob', 'tick', '--image=busybox', '--schedule=* * * * *',
               '--', 'sh', '-c', 'echo tick')
        # The Table kubectl prints, with Kubernetes' columns.
        out = self.k('get', 'cronjobs').stdout.splitlines()
        self.assertEqual(out[0].split(), ['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE',
                                          'LAST', 'SCHEDULE', 'AGE'])
        self.assertEqual(out[1].split()[:1] + out[1].split()[6:9], ['tick', '<none>', 'False', '0'])
        cj = self.get('cronjob', 'tick')
        self.assertEqual(cj['spec']['concurrencyPolicy'], 'Allow')
        self.assertEqual(cj['spec']['successfulJobsHistoryLimit'], 3)
        self.assertEqual(cj['spec']['failedJobsHistoryLimit'], 1)
        self.assertFalse(cj['spec']['suspend'])
        # The first Job, at the next minute, named for it and owned by the CronJob.
        job = self.wait_for('the first job', lambda: self.jobs_of('tick'))[0]
        scheduled = json.loads(self.k('get', 'cronjob', 'tick', '-o', 'json').stdout)
        minutes = int(job['metadata']['name'].rsplit('-', 1)[1])
        stamp = job['metadata']['annotations']['batch.kubernetes.io/cronjob-scheduled-timestamp']
        self.assertEqual(stamp, time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(minutes * 60)))
        ref = job['metadata']['ownerReferences'][0]
        self.assertEqual((ref['kind'], ref['name'], ref['uid'], ref['controller']),
                         ('CronJob', 'tick', cj['metadata']['uid'], True))
        self.assertEqual(scheduled['status']['lastScheduleTime'], stamp)
        name = job['metadata']['name']
        self.wait_for('the job to complete', lambda: any(
            c['type'] == 'Complete' and c['status'] == 'True'
            for c in self.get('job', name)['status'].get('conditions', [])), 60)
        cj = self.wait_for('lastSuccessfulTime', lambda: (
            lambda c: c if c['status'].get('lastSuccessfulTime') else None)(
                self.get('cronjob', 'tick')))
        self.assertNotIn('active', cj['status'])
        self.assertIn('tick', self.k('logs', f'job/{name}').stdout)
        # A restarted controller keeps the CronJob and its schedule.
        self.c.kill('controller')
        self.c.start_controller()
        self.kubectl()
        kept = self.get('cronjob', 'tick')
        self.assertEqual(kept['metadata']['uid'], cj['metadata']['uid'])
        self.assertEqual(kept['status']['lastSuccessfulTime'], cj['status']['lastSuccessfulTime'])
        # Suspended: no new Job.
        self.k('patch', 'cronjob', 'tick', '-p', '{"spec":{"suspend":true}}')
        # NAME, the five words of SCHEDULE, TIMEZONE, then SUSPEND.
        self.assertEqual(self.k('get', 'cronjob', 'tick').stdout.splitlines()[1].split()[7],
                         'True')
        count = len(self.jobs_of('tick'))
        time.sleep(max(0, 62 - time.time() % 60))  # past the next minute
        self.assertEqual(len(self.jobs_of('tick')), count)
        # Deleted: its Jobs go with it.
        self.k('delete', 'cronjob', 'tick')
        self.wait_for('its jobs to go', lambda: not self.jobs_of('tick'), 30)
        p = self.k('get', 'cronjob', 'tick', check=False)
        self.assertIn('NotFound', p.stderr)

    def test_create_job_from_a_cronjob(self):
        self.k('create', 'cronjob', 'yearly', '--image=busybox', '--schedule=@yearly',
               '--', 'sh', '-c', 'echo by hand')
        self.k('create', 'job', 'by-hand', '--from=cronjob/yearly')
        job = self.get('job', 'by-hand')
        self.assertEqual(job['metadata']['annotations']['cronjob.kubernetes.io/instantiate'],
                         'manual')
        self.assertEqual(job['metadata']['ownerReferences'][0]['kind'], 'CronJob')
        self.wait_for('the job to complete', lambda: any(
            c['type'] == 'Complete' and c['status'] == 'True'
            for c in self.get('job', 'by-hand')['status'].get('conditions', [])), 60)
        self.assertIn('by hand', self.k('logs', 'job/by-hand').stdout)
        # The same protobuf body of a Job made from an image, without a CronJob.
        self.k('create', 'job', 'plain', '--image=busybox', '--', 'sh', '-c', 'echo plain')
        self.wait_for('the plain job to complete', lambda: any(
            c['type'] == 'Complete' and c['status'] == 'True'
            for c in self.get('job', 'plain')['status'].get('conditions', [])), 60)
        self.assertIn('plain', self.k('logs', 'job/plain').stdout)

    def test_time_zone_and_refusals(self):
        path = os.path.join(self.tmp, 'cj.yaml')

        def manifest(schedule, tz=None):
            spec = {'schedule': schedule, 'jobTemplate': {'spec': {'template': {'spec': {
                'restartPolicy': 'Never',
                'containers': [{'name': 'c', 'image': 'busybox', 'command': ['true']}]}}}}}
            if tz:
                spec['timeZone'] = tz
            with open(path, 'w') as f:
                json.dump({'apiVersion': 'batch/v1', 'kind': 'CronJob',
                           'metadata': {'name': 'zoned'}, 'spec': spec}, f)
            return path
        self.k('create', '-f', manifest('30 2 * * *', 'Europe/Berlin'))
        row = self.k('get', 'cronjob', 'zoned').stdout.splitlines()[1].split()
        self.assertEqual(row[:7], ['zoned', '30', '2', '*', '*', '*', 'Europe/Berlin'])
        self.k('delete', 'cronjob', 'zoned')
        for schedule, tz, words in (
                ('61 * * * *', None, 'spec.schedule: Invalid value: "61 * * * *": end of range'),
                ('CRON_TZ=UTC 0 * * * *', None, 'cannot use TZ or CRON_TZ in schedule'),
                ('0 * * * *', 'Mars/Base', 'spec.timeZone: Invalid value: "Mars/Base": unknown '
                                            'time zone Mars/Base'),
                ('* * * *', None, 'expected exactly 5 fields, found 4')):
            with self.subTest(schedule=schedule, tz=tz):
                p = self.k('create', '-f', manifest(schedule, tz), check=False)
                self.assertNotEqual(p.returncode, 0)
                self.assertIn('is invalid', p.stderr)
                self.assertIn(words, p.stderr)

    @slow_in_one_build
    def test_forbid_waits_for_the_running_job(self):
        self.k('create', 'cronjob', 'slow', '--image=busybox', '--schedule=* * * * *',
               '--', 'sleep', '300')
        self.k('patch', 'cronjob', 'slow', '-p', '{"spec":{"concurrencyPolicy":"Forbid"}}')
        first = self.wait_for('the first job', lambda: self.jobs_of('slow'))
        self.assertEqual(len(first), 1)
        cj = self.wait_for('status.active', lambda: (
            lambda c: c if c['status'].get('active') else None)(self.get('cronjob', 'slow')))
        self.assertEqual([a['name'] for a in cj['status']['active']],
                         [first[0]['metadata']['name']])
        time.sleep(max(0, 63 - time.time() % 60))  # past the next minute
        self.assertEqual(len(self.jobs_of('slow')), 1)
        events = self.k('get', 'events', '--field-selector',
                        'involvedObject.kind=CronJob,involvedObject.name=slow').stdout
        self.assertIn('JobAlreadyActive', events)
        self.k('delete', 'cronjob', 'slow')


if __name__ == '__main__':
    unittest.main()

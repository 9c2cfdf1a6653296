"""Integration tests of issue 4: real controller and agent daemons in temporary folders.

Run: BERTH_BINARY=build/berth python3 -m unittest -v tests/integration/test_daemons.py
Tests that need root (cgroups, users) skip themselves otherwise.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from harness import BERTH, Cluster, kill_processes_naming, make_user, remove_user

ROOT = os.geteuid() == 0


def read_text(path):
    with open(path) as f:
        return f.read()


def script(body):
    return '#!/bin/sh\n' + body + '\n'


class DaemonTest(unittest.TestCase):
    def setUp(self):
        self.c = Cluster(node_timeout=int(os.environ.get('BERTH_IT_NODE_TIMEOUT', '60'))).start()
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work, exist_ok=True)
        os.chmod(self.work, 0o777)

    def tearDown(self):
        self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def spec(self, body, **extra):
        s = {'name': 'it', 'script': script(body), 'work_dir': self.work,
             'stdout': '%x-%j.out', 'time_limit': 60}
        s.update(extra)
        return s

    def test_submit_run_complete_with_output(self):
        jid = self.c.submit(self.spec('echo "hello $SLURM_JOB_ID on $SLURM_JOB_NODELIST"; '
                                      'echo "gpus=$CUDA_VISIBLE_DEVICES"', gpus_per_node=2))
        j = self.c.wait_state(jid, 'COMPLETED', 30)
        self.assertEqual(j['exit_code'], 0)
        out = read_text(os.path.join(self.work, f'it-{jid}.out'))
        self.assertIn(f'hello {jid} on node1', out)
        self.assertIn('gpus=0,1', out)

    def test_failed_job_reports_exit_code(self):
        jid = self.c.submit(self.spec('exit 3'))
        j = self.c.wait_state(jid, 'FAILED', 30)
        self.assertEqual(j['exit_code'], 3)

    @unittest.skipUnless(ROOT, 'needs root for cgroups')
    def test_memory_limit_gives_out_of_memory(self):
        jid = self.c.submit(self.spec('tail /dev/zero', mem_per_node=64))
        self.c.wait_state(jid, 'OUT_OF_MEMORY', 60)

    def test_time_limit_gives_timeout(self):
        jid = self.c.submit(self.spec('sleep 300', time_limit=2))
        t0 = time.time()
        self.c.wait_state(jid, 'TIMEOUT', 60)
        self.assertLess(time.time() - t0, 45)

    def test_cancel_kills_every_process_of_the_job(self):
        marker = f'berth-it-marker-{os.getpid()}-{time.time_ns()}'
        body = (f'setsid bash -c "exec -a {marker} sleep 300" & '
                f'(exec -a {marker} sleep 300) & '
                f'exec -a {marker} sleep 300')
        jid = self.c.submit(self.spec(body, script='#!/bin/bash\n' + body + '\n'))
        self.c.wait_state(jid, 'RUNNING', 30)
        self.c.wait(lambda: subprocess.run(['pgrep', '-f', marker], capture_output=True)
                    .stdout.count(b'\n') >= 3, 'the job processes to start')
        status, _ = self.c.api('DELETE', f'/v1/jobs/{jid}')
        self.assertEqual(status, 200)
        self.c.wait_state(jid, 'CANCELLED', 60)
        self.c.wait(lambda: subprocess.run(['pgrep', '-f', marker]).returncode != 0,
                    'every process of the job to be gone', 30)

    def test_rest_errors_name_the_problem(self):
        status, body = self.c.api('POST', '/v1/jobs', {'script': 'x', 'nodes': 'x'})
        self.assertEqual(status, 400)
        self.assertIn('nodes', body['error']['message'])
        status, body = self.c.api('GET', '/v1/jobs/999999')
        self.assertEqual(status, 404)
        status, body = self.c.api('POST', '/v1/jobs', {'script': 'x', 'partition': 'nope'})
        self.assertEqual(status, 400)
        self.assertIn('invalid partition', body['error']['message'])
        status, body = self.c.api('POST', '/v1/jobs', {'script': 'x', 'cpus_per_task': 100000})
        self.assertEqual(status, 400)
        self.assertIn('Requested node configuration is not available', body['error']['message'])

    def test_batch_submit_and_list_filters(self):
        status, body = self.c.api('POST', '/v1/jobs',
                                  {'jobs': [self.spec('true', hold=True) for _ in range(50)]})
        self.assertEqual(status, 201)
        self.assertEqual(len(body['job_ids']), 50)
        status, body = self.c.api('GET', '/v1/jobs?state=PENDING')
        self.assertEqual(len(body['jobs']), 50)
        self.assertTrue(all(j['reason'] == 'JobHeldUser' for j in body['jobs']))

    def test_controller_kill9_loses_no_acknowledged_job(self):
        # kill -9 in the middle of a burst of submissions
        acked = self.c.acked_until_kill9(self.spec('true', hold=True))
        self.assertGreater(len(acked), 20)
        self.c.start_controller()
        status, body = self.c.api('GET', '/v1/jobs?state=PENDING')
        known = {j['id'] for j in body['jobs']}
        missing = [j for j in acked if j not in known]
        self.assertEqual(missing, [], 'acknowledged jobs lost by kill -9')
        # Ids keep increasing across the restart.
        self.assertGreater(self.c.submit(self.spec('true', hold=True)), max(acked))

    def test_a_restart_with_thousands_of_jobs_gives_each_back_as_it_was(self):
        # Recovery decodes the store's rows in batches (of 4,096) on other threads while the
        # state thread applies the batch before: 10,000 jobs, ended ones among them, and jobs
        # of different requests next to each other.
        ids = []
        for k in range(10):
            jobs = [self.spec('true', hold=True, name=f'j{k}-{i}', time_limit=10 + i % 3,
                              cpus_per_task=1 + i % 2) for i in range(1000)]
            status, body = self.c.api('POST', '/v1/jobs', {'jobs': jobs})
            self.assertEqual(status, 201, body)
            ids += body['job_ids']
        ended = ids[::7]
        status, body = self.c.api('POST', '/v1/jobs/cancel', {'ids': [str(i) for i in ended]})
        self.assertEqual(status, 200, body)

        keys = ('state', 'partition', 'time_limit', 'submit_time', 'eligible_time', 'end_time',
                'exit_code', 'priority', 'reason', 'request')

        def jobs():
            status, body = self.c.api('GET', '/v1/jobs?all=1')
            self.assertEqual(status, 200)
            return {j['id']: json.dumps([j.get(k) for k in keys], sort_keys=True)
                    for j in body['jobs']}

        before = jobs()
        self.assertEqual(set(before), set(ids))
        self.assertEqual(sum(1 for v in before.values() if '"CANCELLED"' in v), len(ended))
        self.c.kill('controller')
        self.c.start_controller()
        after = jobs()
        self.assertEqual(len(after), len(before))
        changed = [(before[i], after.get(i)) for i in ids if after.get(i) != before[i]]
        self.assertEqual(changed[:3], [], f'{len(changed)} jobs differ after the restart')
        self.assertGreater(self.c.submit(self.spec('true', hold=True)), max(ids))

    def test_controller_restart_adopts_running_jobs(self):
        jid = self.c.submit(self.spec('sleep 4; echo done'))
        self.c.wait_state(jid, 'RUNNING', 30)
        self.c.kill('controller')
        time.sleep(1)
        self.c.start_controller()
        j = self.c.wait_state(jid, 'COMPLETED', 60)
        self.assertEqual(j['restart_count'], 0)
        self.assertIn('done', read_text(os.path.join(self.work, f'it-{jid}.out')))

    def test_agent_kill9_job_finishes_and_is_reported(self):
        jid = self.c.submit(self.spec('sleep 3; echo survived'))
        self.c.wait_state(jid, 'RUNNING', 30)
        self.c.kill('agent')
        time.sleep(4)  # the job ends while no agent runs
        self.c.start_agent()
        j = self.c.wait_state(jid, 'COMPLETED', 60)
        self.assertEqual(j['restart_count'], 0)
        self.assertIn('survived', read_text(os.path.join(self.work, f'it-{jid}.out')))

    def test_a_cancel_queued_for_an_agent_that_registers_again_is_not_lost(self):
        # A registration drops what was queued for the agent (it reconciles afresh): a cancel
        # asked just before must reach the job all the same (it used to be lost when the cancel
        # met an agent registering again, and the job ran on with cancel_requested set).
        jid = self.c.submit(self.spec('sleep 300'))
        self.c.wait_state(jid, 'RUNNING', 30)
        self.c.agent.send_signal(signal.SIGSTOP)  # the cancel waits in the agent's queue
        try:
            status, _ = self.c.api('POST', f'/v1/jobs/{jid}/cancel')
            self.assertEqual(status, 200)
        finally:
            self.c.kill('agent')
        self.c.start_agent()
        self.c.wait_state(jid, 'CANCELLED', 30)

    def test_a_time_limit_queued_for_an_agent_that_registers_again_is_not_lost(self):
        # As for the cancel above: the new limit must reach the node that enforces it (the
        # registration sends every running job's current limit again; the agent sets it from
        # the job's start, so that changes nothing where the limit did not change).
        jid = self.c.submit(self.spec('sleep 600', time_limit=600))
        self.c.wait_state(jid, 'RUNNING', 30)
        self.c.agent.send_signal(signal.SIGSTOP)  # the new limit waits in the agent's queue
        try:
            status, body = self.c.api('PATCH', f'/v1/jobs/{jid}', {'time_limit': 2})
            self.assertEqual(status, 200, body)
        finally:
            self.c.kill('agent')
        self.c.start_agent()
        self.c.wait_state(jid, 'TIMEOUT', 30)

    def test_a_signal_warning_moves_with_a_time_limit_the_agent_gets_again(self):
        # --signal=B:USR1@10 on a 600 s limit lowered to 12 s while the agent was away: the
        # limit sent again at registration moves the warning (due at once) and the end.
        out = os.path.join(self.work, 'warned.txt')
        jid = self.c.submit(self.spec(f"trap 'echo warned >> {out}' USR1; "
                                      'while :; do sleep 0.1; done',
                                      time_limit=600, signal='B:USR1@10'))
        self.c.wait_state(jid, 'RUNNING', 30)
        self.c.agent.send_signal(signal.SIGSTOP)
        try:
            status, body = self.c.api('PATCH', f'/v1/jobs/{jid}', {'time_limit': 12})
            self.assertEqual(status, 200, body)
        finally:
            self.c.kill('agent')
        self.c.start_agent()
        self.c.wait(lambda: os.path.exists(out), 'the --signal warning', 30)
        self.c.wait_state(jid, 'TIMEOUT', 30)
        self.assertEqual(read_text(out), 'warned\n')

    def test_a_signal_queued_for_an_agent_that_registers_again_is_not_lost(self):
        # A signal no agent acknowledged is sent again to the agent that registers (at least
        # once, as slurmctld retries a signal its slurmd did not answer).
        out = os.path.join(self.work, 'usr1.txt')
        jid = self.c.submit(self.spec(f"trap 'echo got-usr1 >> {out}' USR1; "
                                      'while :; do sleep 0.1; done', time_limit=120))
        self.c.wait_state(jid, 'RUNNING', 30)
        time.sleep(0.5)  # the trap is set
        self.c.agent.send_signal(signal.SIGSTOP)
        try:
            status, body = self.c.api('POST', f'/v1/jobs/{jid}/signal',
                                      {'signal': 'USR1', 'batch_only': True})
            self.assertEqual(status, 200, body)
        finally:
            self.c.kill('agent')
        self.c.start_agent()
        self.c.wait(lambda: os.path.exists(out), 'the job to get SIGUSR1', 30)
        time.sleep(1)
        self.assertEqual(read_text(out), 'got-usr1\n', 'delivered once')
        self.assertEqual(self.c.job(jid)['state'], 'RUNNING')
        self.c.api('POST', f'/v1/jobs/{jid}/cancel')
        self.c.wait_state(jid, 'CANCELLED', 30)

    @unittest.skipUnless(ROOT, 'needs root to create users')
    def test_jobs_run_as_their_user_who_cannot_cancel_others(self):
        alice, bob = f'bit{os.getpid() % 10000}a', f'bit{os.getpid() % 10000}b'
        make_user(alice)
        make_user(bob)
        try:
            home = f'/home/{alice}'
            p = self.c.cli('submit', f'--chdir={home}', '--output=who-%j.out', '--wrap',
                           'id -un; echo $HOME $USER; sleep 30', user=alice)
            jid = int(p.stdout.split()[-1])
            self.c.wait_state(jid, 'RUNNING', 30)
            out = os.path.join(home, f'who-{jid}.out')
            self.c.wait(lambda: os.path.exists(out) and os.path.getsize(out) > 0, 'output')
            self.assertEqual(os.stat(out).st_uid, int(subprocess.check_output(['id', '-u', alice])))
            self.assertIn(alice, read_text(out))
            p = self.c.cli('cancel', str(jid), user=bob, check=False)
            self.assertEqual(p.returncode, 1)
            self.assertIn('permission denied', p.stderr.lower())
            self.assertEqual(self.c.job(jid)['state'], 'RUNNING')
            self.c.cli('cancel', str(jid), user=alice)
            self.c.wait_state(jid, 'CANCELLED', 30)
        finally:
            remove_user(alice)
            remove_user(bob)


class NodeFailureTest(unittest.TestCase):
    def test_silent_node_goes_down_and_its_job_is_requeued(self):
        c = Cluster(node_timeout=3).start()
        try:
            work = os.path.join(c.dir, 'work')
            os.makedirs(work)
            jid = c.submit({'script': script('sleep 30'), 'work_dir': work, 'time_limit': 60})
            c.wait_state(jid, 'RUNNING', 30)
            c.agent.send_signal(signal.SIGSTOP)  # silent, not dead
            c.wait(lambda: c.node_state('node1') == 'DOWN', 'the node to go DOWN', 30)
            j = c.job(jid)
            self.assertEqual(j['state'], 'PENDING')
            self.assertEqual(j['restart_count'], 1)
            c.agent.send_signal(signal.SIGCONT)
            # Back: the stale attempt is stopped, the job runs again (attempt 1).
            j = c.wait_state(jid, 'RUNNING', 60)
            self.assertEqual(j['restart_count'], 1)
        finally:
            c.stop()



def stop_up(p):
    """Stops a `berth up` as Ctrl-C does (SIGKILL if it has not ended within a minute)."""
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


class BerthUpKubernetesPortTest(unittest.TestCase):
    """`berth up` that cannot serve the Kubernetes face says so (issue 19): an address asked for
    that is taken is an error (exit non-zero); the default address taken is one line of its
    summary that says the face is off, and why."""

    def setUp(self):
        self.home = tempfile.mkdtemp(prefix='berth-up-')
        self.taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.taken.bind(('127.0.0.1', 0))
        self.taken.listen(1)
        self.port = self.taken.getsockname()[1]

    def tearDown(self):
        self.taken.close()
        kill_processes_naming(self.home)
        shutil.rmtree(self.home, ignore_errors=True)

    def up(self, *args):
        return subprocess.Popen([BERTH, 'up', '--home', self.home, '--socket',
                                 os.path.join(self.home, 'c.sock'), *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def test_an_address_asked_for_and_taken_is_an_error(self):
        p = self.up('--k8s-listen', '127.0.0.1:%d' % self.port)
        try:
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertNotEqual(p.returncode, 0, out)
        self.assertIn('127.0.0.1:%d' % self.port, err)

    def test_the_default_address_taken_is_said_in_the_summary(self):
        default = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            default.bind(('127.0.0.1', 6443))
            default.listen(1)
        except OSError:
            default.close()
            self.skipTest('127.0.0.1:6443 is held by another process, which may let it go')
        p = self.up()
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(iter(p.stdout.readline, '')),
                                  daemon=True)
        reader.start()
        try:
            deadline = time.time() + 60
            while time.time() < deadline and not any(l.startswith('Watch with:') for l in lines):
                time.sleep(0.1)
            time.sleep(1)  # the summary's last line comes with the one before it
            kube = [l for l in lines if l.startswith('Kubernetes:')]
            self.assertEqual(len(kube), 1, ''.join(lines))
            self.assertRegex(kube[0], r'^Kubernetes: +off: .*6443.*--k8s-listen')
        finally:
            stop_up(p)
            reader.join(timeout=10)
            p.stdout.close()
            p.stderr.close()
            default.close()


class BerthUpNodeIdentityTest(unittest.TestCase):
    """The agent of `berth up --slurm-conf` is the node whose NodeHostname is this host, as slurmd
    finds its NodeName (issue 19), not a new node named after the host."""

    def test_the_node_whose_hostname_is_this_host(self):
        home = tempfile.mkdtemp(prefix='berth-up-id-')
        self.addCleanup(shutil.rmtree, home, True)
        host = socket.gethostname().split('.')[0]
        conf = os.path.join(home, 'slurm.conf')
        with open(conf, 'w') as f:
            f.write('ClusterName=idtest\n'
                    'NodeName=bench1 NodeHostname=%s CPUs=1 RealMemory=500\n'
                    'PartitionName=main Nodes=bench1 Default=YES\n' % host)
        sock = os.path.join(home, 'c.sock')
        p = subprocess.Popen([BERTH, 'up', '--home', home, '--socket', sock, '--slurm-conf', conf,
                              '--k8s-listen', 'off'],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            env = dict(os.environ, BERTH_SOCKET=sock)

            def nodes():
                r = subprocess.run([BERTH, 'sinfo', '-h', '-N', '-o', '%N %t'], env=env,
                                   capture_output=True, text=True, timeout=30)
                return r.stdout.split('\n')[:-1] if r.returncode == 0 else None
            deadline = time.time() + 60
            while time.time() < deadline and nodes() != ['bench1 idle']:
                time.sleep(0.2)
            self.assertEqual(nodes(), ['bench1 idle'])
        finally:
            stop_up(p)
            kill_processes_naming(home)


if __name__ == '__main__':
    unittest.main()

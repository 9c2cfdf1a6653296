"""Integration tests of advance reservations against real daemons: `scontrol create|update|
delete|show reservation`, `sinfo -T`, the node states `maint` and `resv`, a maintenance
window that the scheduler plans around (a long job waits with Slurm's reason, a short one
starts), a job with --reservation running inside one, operators only, and reservations surviving
a controller kill -9.

Run: BERTH_BINARY=build/berth python3 -m unittest -v test_slurm_reservations (from this folder).
"""
import os
import time
import unittest

from harness import Cluster, make_user, remove_user

USER = 'brsvtest'


def fields(text):
    """Key=Value pairs of `scontrol -o show ...` (values without blanks)."""
    out = {}
    for tok in text.split():
        if '=' in tok:
            k, v = tok.split('=', 1)
            out[k] = v
    return out


def local(t):
    return time.strftime('%Y-%m-%dT%H:%M:%S', time.localtime(t))


class ReservationTest(unittest.TestCase):
    def setUp(self):
        self.c = Cluster().start()
        self.work = os.path.join(self.c.dir, 'work')
        os.makedirs(self.work, exist_ok=True)
        os.chmod(self.work, 0o777)

    def tearDown(self):
        self.c.stop(keep=os.environ.get('BERTH_IT_KEEP') == '1')

    def scontrol(self, *args, check=True, user=None):
        return self.c.cli('scontrol', *args, check=check, user=user)

    def sbatch(self, *args, check=True, user=None):
        p = self.c.cli('sbatch', '--parsable', '-D', self.work, '-o', '/dev/null', *args,
                       check=check, user=user)
        return int(p.stdout.strip()) if p.returncode == 0 else p

    def show(self, name):
        p = self.scontrol('-o', 'show', 'reservation', name)
        self.assertEqual(p.stdout.count('\n'), 1, p.stdout)
        return fields(p.stdout)

    def sinfo_state(self):
        return self.c.cli('sinfo', '-h', '-o', '%t').stdout.strip()

    def test_create_show_update_delete(self):
        p = self.scontrol('create', 'reservation', 'ReservationName=r1', 'StartTime=now+1hour',
                          'Duration=60', 'Nodes=node1', 'Users=root', 'Flags=MAINT')
        self.assertEqual(p.stdout, 'Reservation created: r1\n')
        f = self.show('r1')
        self.assertEqual(f['Duration'], '01:00:00')
        self.assertEqual(f['Nodes'], 'node1')
        self.assertEqual(f['NodeCnt'], '1')
        self.assertEqual(f['Flags'], 'MAINT,SPEC_NODES')  # Nodes= named them
        self.assertEqual(f['Users'], 'root')
        self.assertEqual(f['Accounts'], '(null)')
        self.assertEqual(f['State'], 'INACTIVE')
        start = time.mktime(time.strptime(f['StartTime'], '%Y-%m-%dT%H:%M:%S'))
        self.assertLess(abs(start - (time.time() + 3600)), 60)
        # The full layout: five lines and a blank one.
        full = self.scontrol('show', 'reservation').stdout
        self.assertTrue(full.startswith('ReservationName=r1 StartTime='), full)
        self.assertIn('\n   Nodes=node1 NodeCnt=1 CoreCnt=', full)
        self.assertIn(' Features=(null) PartitionName=(null) Flags=MAINT,SPEC_NODES\n   TRES=cpu=',
                      full)
        self.assertIn('\n   Users=root Groups=(null) Accounts=(null) Licenses=(null) '
                      'State=INACTIVE BurstBuffer=(null) Watts=n/a\n   MaxStartDelay=(null)\n\n',
                      full)
        # sinfo -T
        lines = self.c.cli('sinfo', '-T').stdout.splitlines()
        self.assertEqual(lines[0], 'RESV_NAME     STATE           START_TIME             '
                                   'END_TIME     DURATION  NODELIST')
        self.assertEqual(lines[1].split(), ['r1', 'INACTIVE', f['StartTime'], f['EndTime'],
                                            '01:00:00', 'node1'])
        # Another reservation of the same node at an overlapping time: busy.
        p = self.scontrol('create', 'res', 'StartTime=now+90minutes', 'Duration=60',
                          'Nodes=node1', 'Users=root', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stderr, 'Error creating the reservation: Requested nodes are busy\n')
        # Update: a longer window; the start stays.
        p = self.scontrol('update', 'ReservationName=r1', 'Duration=2:00:00', 'Flags=')
        self.assertEqual(p.stdout, 'Reservation updated.\n')
        g = self.show('r1')
        self.assertEqual(g['Duration'], '02:00:00')
        self.assertEqual(g['StartTime'], f['StartTime'])
        self.assertEqual(g['Flags'], 'SPEC_NODES')
        # NodeCnt: the controller picks (the one node is taken from now+1h to now+3h).
        p = self.scontrol('create', 'res', 'ReservationName=r2', 'StartTime=now',
                          'Duration=30', 'NodeCnt=1', 'Accounts=default')
        self.assertEqual(p.stdout, 'Reservation created: r2\n')
        self.assertEqual(self.show('r2')['Nodes'], 'node1')
        self.assertEqual(self.show('r2')['Flags'], '')  # picked, not named
        self.assertEqual(self.show('r2')['State'], 'ACTIVE')
        # Nodes=ALL: every node.
        self.scontrol('create', 'res', 'ReservationName=r3', 'StartTime=now+1day',
                      'Duration=10', 'Nodes=ALL', 'Users=root')
        self.assertEqual(self.show('r3')['Nodes'], 'node1')
        # Delete.
        self.assertEqual(self.scontrol('delete', 'ReservationName=r1').returncode, 0)
        p = self.scontrol('show', 'reservation', 'r1', check=False)
        self.assertEqual((p.returncode, p.stdout), (1, 'Reservation r1 not found\n'))
        p = self.scontrol('delete', 'ReservationName=r1', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Requested reservation is invalid', p.stderr)
        # Slurm's checks of the words.
        p = self.scontrol('create', 'res', 'StartTime=now', 'Nodes=node1', 'Users=root',
                          check=False)
        self.assertEqual((p.returncode, p.stderr), (
            1, 'An end time or duration must be specified.  No reservation created.\n'))
        p = self.scontrol('create', 'res', 'StartTime=now', 'Duration=5', 'Nodes=nosuch',
                          'Users=root', check=False)
        self.assertEqual(p.stderr, 'Error creating the reservation: Invalid node name specified\n')

    def test_maintenance_window_that_backfill_plans_around(self):
        self.scontrol('create', 'reservation', 'ReservationName=maint', 'StartTime=now+5minutes',
                      'Duration=30', 'Nodes=node1', 'Users=root', 'Flags=MAINT')
        end = time.mktime(time.strptime(self.show('maint')['EndTime'], '%Y-%m-%dT%H:%M:%S'))
        long_job = self.sbatch('--time=60', '--wrap', 'sleep 300')
        short_job = self.sbatch('--time=2', '--wrap', 'sleep 300')
        self.c.wait_state(short_job, 'RUNNING')
        self.c.wait(lambda: self.c.job(long_job).get('reason') ==
                    'ReqNodeNotAvail, Reserved for maintenance', 'the long job\'s reason')
        out = self.c.cli('squeue', '-h', '-j', str(long_job), '-o', '%r').stdout
        self.assertEqual(out, 'ReqNodeNotAvail, Reserved for maintenance\n')
        show = self.scontrol('-o', 'show', 'job', str(long_job)).stdout
        self.assertIn(' Reason=ReqNodeNotAvail,_Reserved_for_maintenance ', show)
        # squeue --start: after the window.
        self.assertEqual(self.c.job(long_job)['expected_start'], int(end))
        row = self.c.cli('squeue', '--start', '-h', '-j', str(long_job)).stdout.split()
        self.assertIn(local(end), row)
        self.c.cli('scancel', str(long_job), str(short_job))

    def test_job_with_reservation_runs_in_it_and_others_stay_off(self):
        self.scontrol('create', 'reservation', 'ReservationName=ws', 'StartTime=now',
                      'Duration=30', 'Nodes=node1', 'Users=root')
        self.c.wait(lambda: self.sinfo_state() == 'resv', 'the node to show resv')
        other = self.sbatch('--time=5', '--wrap', 'sleep 300')
        inside = self.sbatch('--time=5', '--reservation=ws', '--wrap', 'sleep 300')
        self.c.wait_state(inside, 'RUNNING')
        self.assertEqual(self.c.job(other)['state'], 'PENDING')
        self.assertIn(' Reservation=ws ', self.scontrol('-o', 'show', 'job', str(inside)).stdout)
        # A pending job moved into the reservation starts there.
        self.scontrol('update', f'JobId={other}', 'Reservation=ws')
        self.c.wait_state(other, 'RUNNING')
        self.assertIn(' Reservation=ws ', self.scontrol('-o', 'show', 'job', str(other)).stdout)
        # A reservation that has not begun: the job waits with reason Reservation.
        self.scontrol('create', 'reservation', 'ReservationName=later',
                      'StartTime=now+2hours', 'Duration=30', 'Nodes=node1', 'Users=root',
                      'Flags=IGNORE_JOBS')
        waiting = self.sbatch('--time=5', '--reservation=later', '--wrap', 'sleep 300')
        self.c.wait(lambda: self.c.job(waiting).get('reason') == 'Reservation',
                    'the reason Reservation')
        p = self.sbatch('--reservation=nosuch', '--wrap', 'true', check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Requested reservation is invalid', p.stderr)
        self.c.cli('scancel', str(other), str(inside), str(waiting))
        # A maintenance reservation that is active shows the node as maint.
        self.c.wait_state(inside, ['CANCELLED'])
        self.scontrol('delete', 'ReservationName=ws')
        self.scontrol('update', 'ReservationName=later', 'StartTime=now', 'Flags=MAINT')
        self.c.wait(lambda: self.sinfo_state() == 'maint', 'the node to show maint')

    def test_only_operators_change_reservations(self):
        make_user(USER)
        self.addCleanup(remove_user, USER)
        p = self.scontrol('create', 'reservation', 'StartTime=now', 'Duration=10', 'Nodes=node1',
                          f'Users={USER}', check=False, user=USER)
        self.assertEqual((p.returncode, p.stderr),
                         (1, 'Error creating the reservation: Access/permission denied\n'))
        p = self.scontrol('create', 'reservation', 'StartTime=now+1hour', 'Duration=10',
                          'Nodes=node1', 'Users=root')
        name = p.stdout.split(': ')[1].strip()
        self.assertEqual(name, 'root_1')  # named after its first user, as Slurm does
        for args in (('update', f'ReservationName={name}', 'Duration=20'),
                     ('delete', f'ReservationName={name}')):
            p = self.scontrol(*args, check=False, user=USER)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn('Access/permission denied', p.stderr)
        # Everyone may look.
        self.assertIn(f'ReservationName={name} ',
                      self.scontrol('show', 'reservation', user=USER).stdout)
        # A user the reservation does not list may not submit into it.
        p = self.sbatch(f'--reservation={name}', '--wrap', 'true', check=False, user=USER)
        self.assertEqual(p.returncode, 1)
        self.assertIn('Access denied to requested reservation', p.stderr)

    def test_reservation_survives_a_controller_kill(self):
        self.scontrol('create', 'reservation', 'ReservationName=keep', 'StartTime=now+1hour',
                      'Duration=60', 'Nodes=node1', 'Users=root', 'Flags=MAINT,WEEKLY')
        before = self.show('keep')
        self.c.kill('controller')
        self.c.start_controller()
        self.assertEqual(self.show('keep'), before)
        self.scontrol('delete', 'ReservationName=keep')
        self.c.kill('controller')
        self.c.start_controller()
        p = self.scontrol('show', 'reservation', check=False)
        self.assertEqual(p.stdout, 'No reservations in the system\n')

    def test_an_ended_reservation_is_removed_for_good(self):
        self.scontrol('create', 'reservation', 'ReservationName=brief', 'StartTime=now',
                      'EndTime=now+2', 'Nodes=node1', 'Users=root')
        self.c.wait(lambda: 'brief' not in self.scontrol('show', 'reservation').stdout,
                    'the ended reservation to go', timeout=30)
        self.c.kill('controller')
        self.c.start_controller()
        self.assertEqual(self.scontrol('show', 'reservation').stdout,
                         'No reservations in the system\n')


if __name__ == '__main__':
    unittest.main()

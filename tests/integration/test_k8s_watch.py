"""Integration tests: watches as the Kubernetes API server serves them, on every resource berth
watches, through the REAL kubectl (`get --raw` streams a watch's body until it ends):
`timeoutSeconds` ends the stream cleanly, `allowWatchBookmarks=true` brings BOOKMARK events (only
the kind, apiVersion and metadata.resourceVersion; one 2 s before the deadline, then about every
minute) and none without it, `sendInitialEvents=true` ends the initial events with a bookmark
annotated `k8s.io/initial-events-end`, and bad values are 400.

Skipped only where kubectl is not installed.
Run: BERTH_BINARY=build/berth python3 -m unittest -v test_k8s_watch (from this folder).
"""
import json
import os
import time
import unittest

from test_k8s_nodes import KUBECTL, KubeClusterTest
from test_k8s_workloads import pod_yaml

# (path, kind, apiVersion) of each watched collection.
WATCHED = [
    ('/api/v1/nodes', 'Node', 'v1'),
    ('/api/v1/namespaces', 'Namespace', 'v1'),
    ('/api/v1/namespaces/default/pods', 'Pod', 'v1'),
    ('/api/v1/pods', 'Pod', 'v1'),
    ('/api/v1/namespaces/default/events', 'Event', 'v1'),
    ('/api/v1/namespaces/default/configmaps', 'ConfigMap', 'v1'),
    ('/api/v1/namespaces/default/secrets', 'Secret', 'v1'),
    ('/apis/batch/v1/namespaces/default/jobs', 'Job', 'batch/v1'),
]


@unittest.skipIf(KUBECTL is None, 'kubectl is not installed')
class WatchTest(KubeClusterTest):
    def watch(self, path, query):
        """The events of a watch that must end by itself (the kubectl's exit status 0), and how
        long it lasted."""
        start = time.time()
        p = self.k('get', '--raw', f'{path}?watch=true&{query}')
        events = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
        return events, time.time() - start

    def test_timeout_ends_every_watch_with_a_bookmark_only_when_asked(self):
        path = os.path.join(self.tmp, 'p.yaml')
        with open(path, 'w') as f:
            f.write(pod_yaml('w', 'sleep 30'))
        self.k('create', '-f', path)
        self.k('create', 'configmap', 'cm', '--from-literal=a=b')
        for path, kind, api_version in WATCHED:
            with self.subTest(path=path):
                events, took = self.watch(path, 'timeoutSeconds=3&allowWatchBookmarks=true')
                self.assertGreaterEqual(took, 2.5, events)
                self.assertLess(took, 10, events)
                marks = [e for e in events if e['type'] == 'BOOKMARK']
                self.assertEqual(len(marks), 1, events)  # 2 s before the deadline
                obj = marks[0]['object']
                self.assertEqual((obj['kind'], obj['apiVersion']), (kind, api_version))
                self.assertEqual(sorted(obj['metadata']), ['creationTimestamp', 'resourceVersion'])
                self.assertTrue(obj['metadata']['resourceVersion'].isdigit(), obj)
                self.assertNotIn('spec', obj)
                # The bookmark comes after what existed (ADDED), and is the last event.
                self.assertEqual(events[-1]['type'], 'BOOKMARK', events)
                events, took = self.watch(path, 'timeoutSeconds=2')
                self.assertGreaterEqual(took, 1.5, events)
                self.assertNotIn('BOOKMARK', [e['type'] for e in events])
                self.assertTrue(all(e['type'] == 'ADDED' for e in events), events)
        events, _ = self.watch('/api/v1/namespaces/default/pods', 'timeoutSeconds=2')
        self.assertEqual([e['object']['metadata']['name'] for e in events], ['w'])

    def test_a_bookmark_carries_the_lists_resource_version_and_resumes(self):
        events, _ = self.watch('/api/v1/nodes', 'timeoutSeconds=3&allowWatchBookmarks=1')
        rv = events[-1]['object']['metadata']['resourceVersion']
        # Resuming from the bookmark's version: nothing changed, so no event but the next mark.
        events, _ = self.watch('/api/v1/nodes',
                               f'timeoutSeconds=3&allowWatchBookmarks=true&resourceVersion={rv}')
        self.assertEqual([e['type'] for e in events], ['BOOKMARK'])

    def test_send_initial_events_ends_them_with_an_annotated_bookmark(self):
        events, _ = self.watch(
            '/api/v1/namespaces',
            'timeoutSeconds=3&allowWatchBookmarks=true&sendInitialEvents=true'
            '&resourceVersionMatch=NotOlderThan&resourceVersion=1')
        types = [e['type'] for e in events]
        self.assertIn('ADDED', types)
        first_mark = types.index('BOOKMARK')
        self.assertTrue(all(t == 'ADDED' for t in types[:first_mark]), types)
        self.assertEqual(
            events[first_mark]['object']['metadata']['annotations'],
            {'k8s.io/initial-events-end': 'true'})

    def test_bad_values_are_bad_requests(self):
        for query in ('timeoutSeconds=soon', 'allowWatchBookmarks=maybe'):
            with self.subTest(query=query):
                p = self.k('get', '--raw', f'/api/v1/nodes?watch=true&{query}', check=False)
                self.assertNotEqual(p.returncode, 0)
                self.assertIn('BadRequest', p.stderr)


if __name__ == '__main__':
    unittest.main()

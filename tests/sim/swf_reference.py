#!/usr/bin/env python3
"""An independent implementation of the SWF replay rules for `--policy fcfs` and `--policy easy`
(docs/sim.md), written from the spec and sharing no code with berth. The test suite runs both on
the same traces and requires every metric to agree to 6 significant digits.

Usage: swf_reference.py TRACE fcfs|easy [--procs P]   -> prints the metrics as JSON
"""
import json
import sys


def read_swf(path, procs_override):
    max_procs = max_nodes = 0
    rows = []
    largest = 0
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line:
                continue
            if line.startswith(';'):
                body = line[1:].strip()
                if ':' in body:
                    key, _, val = body.partition(':')
                    key = key.strip()
                    try:
                        v = int(float(val.split()[0]))
                    except (ValueError, IndexError):
                        continue
                    if key == 'MaxProcs':
                        max_procs = v
                    elif key == 'MaxNodes':
                        max_nodes = v
                continue
            fields = line.split()
            jid = int(float(fields[0]))
            submit = int(float(fields[1]) // 1)
            run = float(fields[3])
            alloc = float(fields[4])
            reqp = float(fields[7])
            reqt = float(fields[8])
            procs = alloc if alloc > 0 else reqp
            req = reqt if reqt > 0 else run
            largest = max(largest, procs)
            rows.append((jid, submit, run, procs, req))
    if procs_override > 0:
        P = procs_override
    elif max_procs > 0:
        P = max_procs
    elif max_nodes > 0:
        P = max_nodes
    else:
        P = largest
    jobs, dropped = [], 0
    for jid, submit, run, procs, req in rows:
        if run <= 0 or procs <= 0 or procs > P:
            dropped += 1
            continue
        jobs.append({'id': jid, 'submit': submit, 'run': run, 'procs': procs, 'req': req})
    return P, jobs, dropped


def simulate(P, jobs, policy):
    jobs = sorted(jobs, key=lambda j: (j['submit'], j['id']))
    free = P
    queue, running = [], []  # running: dicts with start, end
    i = 0
    ends = []  # (end, id, job)
    import heapq
    while i < len(jobs) or ends:
        t = min([jobs[i]['submit']] if i < len(jobs) else [float('inf')] +
                ([] if not ends else []))
        if ends:
            t = min(t, ends[0][0])
        while ends and ends[0][0] == t:
            _, _, j = heapq.heappop(ends)
            free += j['procs']
            running.remove(j)
        while i < len(jobs) and jobs[i]['submit'] == t:
            queue.append(jobs[i])
            i += 1
        queue.sort(key=lambda j: (j['submit'], j['id']))

        def start(j):
            nonlocal free
            j['start'] = t
            j['end'] = t + min(j['run'], j['req'])
            free -= j['procs']
            running.append(j)
            heapq.heappush(ends, (j['end'], j['id'], j))

        rest = []
        head = None
        for k, j in enumerate(queue):
            if j['procs'] <= free:
                start(j)
            else:
                head = j
                rest = queue[k + 1:]
                break
        if head is None:
            queue = []
            continue
        if policy == 'fcfs':
            queue = [head] + rest
            continue
        avail = free
        shadow = None
        est = sorted(running, key=lambda r: (r['start'] + r['req'], r['id']))
        idx = 0
        while idx < len(est):
            r = est[idx]
            avail += r['procs']
            idx += 1
            if avail >= head['procs']:
                shadow = r['start'] + r['req']
                break
        while idx < len(est) and est[idx]['start'] + est[idx]['req'] == shadow:
            avail += est[idx]['procs']
            idx += 1
        extra = avail - head['procs']
        waiting = [head]
        for j in rest:
            if j['procs'] <= free:
                if t + j['req'] <= shadow:
                    start(j)
                    continue
                if j['procs'] <= extra:
                    start(j)
                    extra -= j['procs']
                    continue
            waiting.append(j)
        queue = waiting
    return jobs


def metrics(P, jobs):
    waits = sorted(j['start'] - j['submit'] for j in jobs)
    n = len(waits)
    actual = [j['end'] - j['start'] for j in jobs]
    median = waits[n // 2] if n % 2 else (waits[n // 2 - 1] + waits[n // 2]) / 2
    bsld = [max(1.0, (j['start'] - j['submit'] + a) / max(a, 10)) for j, a in zip(jobs, actual)]
    first = min(j['submit'] for j in jobs)
    last = max(j['end'] for j in jobs)
    makespan = last - first
    work = sum(j['procs'] * a for j, a in zip(jobs, actual))
    return {
        'procs': P, 'jobs': n,
        'avg_wait_s': sum(waits) / n, 'median_wait_s': median, 'max_wait_s': waits[-1],
        'avg_bsld': sum(bsld) / n, 'utilization': work / (P * makespan), 'makespan_s': makespan,
    }


def main():
    path, policy = sys.argv[1], sys.argv[2]
    procs = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == '--procs' else 0
    P, jobs, dropped = read_swf(path, procs)
    done = simulate(P, jobs, policy)
    m = metrics(P, done)
    m['dropped'] = dropped
    print(json.dumps(m))


if __name__ == '__main__':
    main()

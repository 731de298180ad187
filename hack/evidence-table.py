#!/usr/bin/env python3
"""Print the seed-002 evidence table (markdown) from a hack/reproduce.sh results directory: per pulse phase at
1 and 64 threads, read time per round, storage read (device), flushes, compaction, w-amp, stalls and levels."""
import json, sys, glob, os
d = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(d, '*.result.json'))):
    name = os.path.basename(f).replace('.result.json', '')
    bench, engine = name.rsplit('-', 1)
    r = json.load(open(f)); r = r.get('result', r)
    for p in r['phases']:
        if p['workload'] != 'pulse' or p['threads'] not in (1, 64):
            continue
        rounds = [x['readSeconds'] for x in p.get('pulseRounds', [])]
        es = p.get('engineStats') or {}
        dev = p.get('device') or {}
        u = p.get('usage') or {}
        rd = dev.get('readBytes', u.get('readBytes', 0))
        lv = ', '.join('L%d %d files (%.0f MiB)' % (l['level'], l['files'], l['bytes'] / 2**20) for l in es.get('levels', []) if l.get('files'))
        wa = es.get('writeAmplification')
        stall = es.get('stallSeconds')
        rows.append('| %s / %s | %d | %.2f–%.2f | %s MiB | %s MiB | %s MiB | %s | %s | %s |' % (
            bench.replace('seed-002-', ''), engine, p['threads'], min(rounds), max(rounds), format(round(rd / 2**20), ','),
            format(round(es.get('flushBytesWritten', 0) / 2**20), ','), format(round(es.get('compactionBytesWritten', 0) / 2**20), ','),
            ('%.1f' % wa) if wa else '—', ('%g s' % stall) if stall is not None else '(LevelDB cannot say)', lv or '—'))
print('| benchmark / engine | threads | read time per round (s) | storage read per phase | flushed | compaction written | w-amp | stalls | LSM shape at the end |')
print('|---|---|---|---|---|---|---|---|---|')
print('\n'.join(rows))

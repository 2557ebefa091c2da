import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../helpers/prometheus-text.js';

/** The tests' Prometheus text parser: what it reads, and what it refuses instead of skipping. */
describe('parsePrometheusText', () => {
  it('reads counters, gauges and histograms with their labels, escapes and special values', () => {
    const families = parsePrometheusText(
      [
        '# HELP jobs_total Jobs ended',
        '# TYPE jobs_total counter',
        'jobs_total{type="email",status="completed"} 3',
        'jobs_total{type="a\\"b\\\\c\\nd",status="failed"} 1e3',
        '# TYPE lag gauge',
        'lag Nan',
        '# TYPE req histogram',
        'req_bucket{le="0.1",route="/v1/x/:id"} 1',
        'req_bucket{le="+Inf",route="/v1/x/:id"} 2',
        'req_sum{route="/v1/x/:id"} 0.35',
        'req_count{route="/v1/x/:id"} 2',
        '',
      ].join('\n'),
    );
    expect(families.get('jobs_total')).toMatchObject({ type: 'counter', help: 'Jobs ended' });
    expect(families.get('jobs_total')!.samples).toEqual([
      { name: 'jobs_total', labels: { type: 'email', status: 'completed' }, value: 3 },
      { name: 'jobs_total', labels: { type: 'a"b\\c\nd', status: 'failed' }, value: 1000 },
    ]);
    expect(families.get('lag')!.samples[0]!.value).toBeNaN();
    const req = families.get('req')!;
    expect(req.type).toBe('histogram');
    expect(req.samples.find((s) => s.name === 'req_count')).toEqual({ name: 'req_count', labels: { route: '/v1/x/:id' }, value: 2 });
    expect(req.samples.find((s) => s.labels.le === '+Inf')!.value).toBe(2);
  });

  it.each([
    ['a line that is no sample', 'jobs_total{type="x"}'],
    ['an unterminated label value', 'jobs_total{type="x} 1'],
    ['an unknown escape', 'jobs_total{type="\\t"} 1'],
    ['a duplicate series', 'jobs_total{type="x"} 1\njobs_total{type="x"} 2'],
    ['a repeated label', 'jobs_total{type="x",type="y"} 1'],
    ['a bad value', 'jobs_total 1,5'],
    ['an unknown type', '# TYPE jobs_total countr'],
    ['a family split in two', '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x="1"} 2'],
    ['a histogram whose +Inf bucket differs from its count', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3'],
    ['a histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 2\nh_sum 1\nh_count 2'],
  ])('refuses %s', (_what, text) => {
    expect(() => parsePrometheusText(`# TYPE jobs_total counter\n${text}\n`)).toThrow();
  });
});

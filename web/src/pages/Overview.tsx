import { lazy, Suspense, useEffect, useMemo, useState, type FormEvent } from 'react';
import { get } from '../api';
import { Link, navigate } from '../router';
import { CHANNEL_LABEL, localInputToIso } from '../status';
import { Empty, ErrorNote, Field, Loading, PageHeader, useLoad } from '../ui';
import type { ChartSeries } from './OverviewChart';

const loadChart = () => import('./OverviewChart');
const OverviewChart = lazy(loadChart);

interface WorkflowRef {
  workflowId: string;
  name: string;
  identifier?: string;
}
interface Latency {
  count: number;
  p50Ms?: number;
  p95Ms?: number;
}
export interface OverviewData {
  range: { from: string; to: string; bucket: 'hour' | 'day' };
  channels: string[];
  series: Array<{ start: string; counts: Record<string, number> }>;
  outcomes: { sent: number; failed: number; skipped: number; delivered: number; bounced: number };
  failuresByProvider: Array<{ providerId: string; channel: string; count: number }>;
  failuresByWorkflow: Array<WorkflowRef & { count: number }>;
  topWorkflows: Array<WorkflowRef & { sent: number; failed: number; skipped: number }>;
  inApp: { sent: number; read: number; seen: number; readRate?: number; seenRate?: number };
  latency: Latency & { byChannel: Array<Latency & { channel: string }> };
}

/** Okabe–Ito colours: told apart with the common colour-vision deficiencies, each with enough contrast on white. */
export const CHANNEL_COLOURS: Record<string, string> = {
  in_app: '#0072B2',
  email: '#E69F00',
  sms: '#009E73',
  chat: '#CC79A7',
  push: '#56B4E9',
};

const RANGES: Array<[value: string, label: string]> = [
  ['24h', '24 h'],
  ['7d', '7 d'],
  ['30d', '30 d'],
  ['custom', 'Custom'],
];
const POLL_MS = 15_000;

const number = new Intl.NumberFormat();
const percent = (rate: number | undefined) => (rate === undefined ? '—' : `${(rate * 100).toFixed(1)} %`);
export function duration(ms: number | undefined): string {
  if (ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** ISO → the value of a `datetime-local` input in the browser's zone (the Activity filters' format). */
function isoToLocalInput(iso: string): string {
  const date = new Date(iso);
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

function bucketLabel(start: string, bucket: 'hour' | 'day'): string {
  const date = new Date(start);
  return bucket === 'hour'
    ? date.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

export function OverviewPage({ query }: { query: URLSearchParams }) {
  const range = RANGES.some(([value]) => value === query.get('range')) ? query.get('range')! : '24h';
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  const [draft, setDraft] = useState({ from, to });
  const custom = range === 'custom';
  const ready = !custom || Boolean(from && to);
  const overview = useLoad(
    (signal) =>
      ready
        ? get<{ data: OverviewData }>('/v1/dashboard/overview', { signal, query: { range, from: custom ? localInputToIso(from) : undefined, to: custom ? localInputToIso(to) : undefined } })
        : Promise.resolve(undefined),
    [range, from, to],
    { every: POLL_MS },
  );
  const data = overview.data?.data;
  // The chart's chunk is fetched alongside the numbers, not after them.
  useEffect(() => void loadChart().catch(() => undefined), []);

  const choose = (value: string) => {
    const params = new URLSearchParams({ range: value });
    if (value === 'custom' && draft.from && draft.to) {
      params.set('from', draft.from);
      params.set('to', draft.to);
    }
    navigate(`/overview?${params}`, { replace: true });
  };
  const applyCustom = (event: FormEvent) => {
    event.preventDefault();
    navigate(`/overview?${new URLSearchParams({ range: 'custom', from: draft.from, to: draft.to })}`, { replace: true });
  };

  return (
    <>
      <PageHeader title="Overview">
        <span className="muted live" aria-live="off">
          Updates every {POLL_MS / 1000} s
        </span>
      </PageHeader>
      <div className="range-picker" role="group" aria-label="Time range">
        {RANGES.map(([value, label]) => (
          <button key={value} type="button" aria-pressed={range === value} className={range === value ? 'primary' : undefined} onClick={() => choose(value)}>
            {label}
          </button>
        ))}
      </div>
      {custom && (
        <form className="filters custom-range" onSubmit={applyCustom} aria-label="Custom range">
          <Field label="From" type="datetime-local" value={draft.from} onChange={(value) => setDraft((current) => ({ ...current, from: value }))} />
          <Field label="To" type="datetime-local" value={draft.to} onChange={(value) => setDraft((current) => ({ ...current, to: value }))} />
          <div className="filter-buttons">
            <button type="submit" className="primary">
              Show range
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={overview.error} />
      {!ready && <Empty>Choose a start and an end for the custom range.</Empty>}
      {ready && !data && overview.loading && <Loading what="the overview" />}
      {data && <OverviewBody data={data} />}
    </>
  );
}

function OverviewBody({ data }: { data: OverviewData }) {
  const labels = useMemo(() => data.series.map((point) => bucketLabel(point.start, data.range.bucket)), [data]);
  const series: ChartSeries[] = useMemo(
    () => data.channels.map((channel) => ({ label: CHANNEL_LABEL[channel] ?? channel, colour: CHANNEL_COLOURS[channel] ?? '#6e7781', values: data.series.map((point) => point.counts[channel] ?? 0) })),
    [data],
  );
  const perChannel = data.channels.map((channel) => [channel, data.series.reduce((sum, point) => sum + (point.counts[channel] ?? 0), 0)] as const);
  const summary = `Messages sent per channel, ${data.range.bucket === 'hour' ? 'per hour' : 'per day'}: ${perChannel
    .map(([channel, count]) => `${CHANNEL_LABEL[channel] ?? channel} ${number.format(count)}`)
    .join(', ')}.`;
  const activityRange = `after=${encodeURIComponent(isoToLocalInput(data.range.from))}&before=${encodeURIComponent(isoToLocalInput(data.range.to))}`;
  const outcomes: Array<[key: keyof OverviewData['outcomes'], label: string, note?: string]> = [
    ['sent', 'Sent'],
    ['failed', 'Failed'],
    ['skipped', 'Skipped'],
    ['delivered', 'Delivered', 'from provider reports'],
    ['bounced', 'Bounced', 'from provider reports'],
  ];

  return (
    <>
      <section className="panel" aria-labelledby="outcome-title">
        <h2 id="outcome-title">Delivery outcome</h2>
        <dl className="tiles">
          {outcomes.map(([key, label, note]) => (
            <div key={key} className={`tile tile-${key}`}>
              <dt>{label}</dt>
              <dd data-testid={`outcome-${key}`}>{number.format(data.outcomes[key])}</dd>
              {note && <dd className="muted small">{note}</dd>}
            </div>
          ))}
        </dl>
      </section>

      <section className="panel" aria-labelledby="engagement-title">
        <h2 id="engagement-title">In-app engagement and latency</h2>
        <dl className="tiles">
          <div className="tile">
            <dt>In-app read</dt>
            <dd data-testid="read-rate">{percent(data.inApp.readRate)}</dd>
            <dd className="muted small">
              {number.format(data.inApp.read)} of {number.format(data.inApp.sent)}
            </dd>
          </div>
          <div className="tile">
            <dt>In-app seen</dt>
            <dd data-testid="seen-rate">{percent(data.inApp.seenRate)}</dd>
            <dd className="muted small">
              {number.format(data.inApp.seen)} of {number.format(data.inApp.sent)}
            </dd>
          </div>
          <div className="tile">
            <dt>Latency p50</dt>
            <dd data-testid="latency-p50">{duration(data.latency.p50Ms)}</dd>
            <dd className="muted small">trigger to delivery</dd>
          </div>
          <div className="tile">
            <dt>Latency p95</dt>
            <dd data-testid="latency-p95">{duration(data.latency.p95Ms)}</dd>
            <dd className="muted small">{number.format(data.latency.count)} messages</dd>
          </div>
        </dl>
      </section>

      <section className="panel" aria-labelledby="channels-title">
        <h2 id="channels-title">Messages per channel</h2>
        <Suspense fallback={<Loading what="the chart" />}>
          <OverviewChart labels={labels} series={series} summary={summary} />
        </Suspense>
        <details className="chart-table">
          <summary>Show the chart's numbers as a table</summary>
          <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
            <table>
              <caption className="visually-hidden">Messages sent per channel and {data.range.bucket}</caption>
              <thead>
                <tr>
                  <th scope="col">{data.range.bucket === 'hour' ? 'Hour' : 'Day'}</th>
                  {data.channels.map((channel) => (
                    <th scope="col" key={channel}>
                      {CHANNEL_LABEL[channel] ?? channel}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.series.map((point, index) => (
                  <tr key={point.start}>
                    <th scope="row">{labels[index]}</th>
                    {data.channels.map((channel) => (
                      <td key={channel}>{number.format(point.counts[channel] ?? 0)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">Total</th>
                  {perChannel.map(([channel, count]) => (
                    <td key={channel} data-testid={`channel-total-${channel}`}>
                      {number.format(count)}
                    </td>
                  ))}
                </tr>
              </tfoot>
            </table>
          </div>
        </details>
      </section>

      <div className="overview-grid">
        <section className="panel" aria-labelledby="provider-failures-title">
          <h2 id="provider-failures-title">Failures by provider</h2>
          {data.failuresByProvider.length === 0 ? (
            <Empty>No failed deliveries in this range.</Empty>
          ) : (
            <table>
              <caption className="visually-hidden">Failed steps by provider</caption>
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col">Failed</th>
                </tr>
              </thead>
              <tbody>
                {data.failuresByProvider.map((row) => (
                  <tr key={`${row.channel}|${row.providerId}`}>
                    <td>
                      {/* Activity filters by channel: the provider's failures are among its channel's. */}
                      <Link to={`/activity?status=failed&channel=${encodeURIComponent(row.channel)}&${activityRange}`}>
                        {row.providerId || 'no provider'} <span className="muted">({CHANNEL_LABEL[row.channel] ?? row.channel})</span>
                      </Link>
                    </td>
                    <td data-testid={`provider-failures-${row.providerId}`}>{number.format(row.count)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>

        <section className="panel" aria-labelledby="workflow-failures-title">
          <h2 id="workflow-failures-title">Failures by workflow</h2>
          {data.failuresByWorkflow.length === 0 ? (
            <Empty>No failed deliveries in this range.</Empty>
          ) : (
            <table>
              <caption className="visually-hidden">Failed steps by workflow</caption>
              <thead>
                <tr>
                  <th scope="col">Workflow</th>
                  <th scope="col">Failed</th>
                </tr>
              </thead>
              <tbody>
                {data.failuresByWorkflow.map((row) => (
                  <tr key={row.workflowId}>
                    <td>
                      {row.workflowId ? (
                        <Link to={`/activity?status=failed&workflow=${encodeURIComponent(row.workflowId)}&${activityRange}`}>{row.name}</Link>
                      ) : (
                        row.name
                      )}
                    </td>
                    <td data-testid={`workflow-failures-${row.identifier ?? row.workflowId}`}>{number.format(row.count)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>

        <section className="panel" aria-labelledby="top-workflows-title">
          <h2 id="top-workflows-title">Top workflows</h2>
          {data.topWorkflows.length === 0 ? (
            <Empty>Nothing sent in this range.</Empty>
          ) : (
            <table>
              <caption className="visually-hidden">Workflows by messages sent</caption>
              <thead>
                <tr>
                  <th scope="col">Workflow</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Failed</th>
                </tr>
              </thead>
              <tbody>
                {data.topWorkflows.map((row) => (
                  <tr key={row.workflowId}>
                    <td>{row.workflowId ? <Link to={`/activity?workflow=${encodeURIComponent(row.workflowId)}&${activityRange}`}>{row.name}</Link> : row.name}</td>
                    <td data-testid={`top-sent-${row.identifier ?? row.workflowId}`}>{number.format(row.sent)}</td>
                    <td>{number.format(row.failed)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>

        <section className="panel" aria-labelledby="latency-title">
          <h2 id="latency-title">Trigger to delivery</h2>
          {data.latency.count === 0 ? (
            <Empty>Nothing sent in this range.</Empty>
          ) : (
            <table>
              <caption className="visually-hidden">Latency by channel</caption>
              <thead>
                <tr>
                  <th scope="col">Channel</th>
                  <th scope="col">p50</th>
                  <th scope="col">p95</th>
                  <th scope="col">Sent</th>
                </tr>
              </thead>
              <tbody>
                {data.latency.byChannel.map((row) => (
                  <tr key={row.channel}>
                    <td>{CHANNEL_LABEL[row.channel] ?? row.channel}</td>
                    <td>{duration(row.p50Ms)}</td>
                    <td>{duration(row.p95Ms)}</td>
                    <td>{number.format(row.count)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <p className="muted small">Estimated from a fixed histogram (50 ms … 1 h buckets); hours are UTC.</p>
        </section>
      </div>
    </>
  );
}

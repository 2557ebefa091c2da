import { ValidationError } from '../../domain/errors.js';
import {
  bucketStarts,
  histogramQuantile,
  hourOf,
  LATENCY_BUCKET_BOUNDS_MS,
  OVERVIEW_CHANNELS,
  OVERVIEW_OUTCOMES,
  resolveOverviewRange,
  type OverviewOutcome,
  type OverviewRange,
} from '../../domain/overview.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface GetOverviewInput {
  caller: Caller;
  range: OverviewRange;
  from?: string;
  to?: string;
}

export interface WorkflowRef {
  /** The workflow's `_id` ('' for steps of no known workflow). */
  workflowId: string;
  name: string;
  identifier?: string;
}

export interface LatencySummary {
  count: number;
  p50Ms?: number;
  p95Ms?: number;
}

export interface Overview {
  range: { from: string; to: string; bucket: 'hour' | 'day' };
  channels: string[];
  /** Messages sent per channel in each bucket of the range (every bucket present, zeros included). */
  series: Array<{ start: string; counts: Record<string, number> }>;
  outcomes: Record<OverviewOutcome, number>;
  failuresByProvider: Array<{ providerId: string; channel: string; count: number }>;
  failuresByWorkflow: Array<WorkflowRef & { count: number }>;
  topWorkflows: Array<WorkflowRef & { sent: number; failed: number; skipped: number }>;
  inApp: { sent: number; read: number; seen: number; readRate?: number; seenRate?: number };
  latency: LatencySummary & { byChannel: Array<LatencySummary & { channel: string }> };
}

const TOP = 10;

/**
 * The dashboard's overview of the caller's environment over a range: from the counts kept at write time (migration
 * 0024), never from the events. Rates and quantiles are computed here; the latency quantiles are estimates from a
 * fixed histogram (domain/overview.ts).
 */
export async function getOverview(deps: Pick<Deps, 'store' | 'clock'>, input: GetOverviewInput): Promise<Overview> {
  const range = resolveOverviewRange(input, deps.clock.now());
  if ('error' in range) throw new ValidationError([range.error]);
  const environmentId = input.caller.environmentId;
  const rows = await deps.store.overview.read(environmentId, { fromHour: hourOf(range.from), toHour: hourOf(range.to), bucket: range.bucket });

  const starts = bucketStarts(range);
  const keyOf = (start: string) => (range.bucket === 'hour' ? hourOf(start) : start.slice(0, 10));
  const byKey = new Map(starts.map((start) => [keyOf(start), Object.fromEntries(OVERVIEW_CHANNELS.map((channel) => [channel, 0])) as Record<string, number>]));
  for (const row of rows.series) {
    if (row.outcome !== 'sent') continue;
    const counts = byKey.get(row.bucket);
    if (counts) counts[row.channel] = (counts[row.channel] ?? 0) + row.count;
  }

  const outcomes = Object.fromEntries(OVERVIEW_OUTCOMES.map((outcome) => [outcome, 0])) as Record<OverviewOutcome, number>;
  const providers = new Map<string, { providerId: string; channel: string; count: number }>();
  const workflows = new Map<string, { sent: number; failed: number; skipped: number }>();
  const inApp = { sent: 0, read: 0, seen: 0 };
  for (const row of rows.totals) {
    if ((OVERVIEW_OUTCOMES as readonly string[]).includes(row.outcome)) outcomes[row.outcome as OverviewOutcome] += row.count;
    if (row.channel === 'in_app' && (row.outcome === 'sent' || row.outcome === 'read' || row.outcome === 'seen')) inApp[row.outcome] += row.count;
    if (row.outcome === 'failed') {
      const key = `${row.channel}|${row.providerId}`;
      const entry = providers.get(key) ?? { providerId: row.providerId, channel: row.channel, count: 0 };
      entry.count += row.count;
      providers.set(key, entry);
    }
    if (row.outcome === 'sent' || row.outcome === 'failed' || row.outcome === 'skipped') {
      const entry = workflows.get(row.workflowId) ?? { sent: 0, failed: 0, skipped: 0 };
      entry[row.outcome] += row.count;
      workflows.set(row.workflowId, entry);
    }
  }

  const names = new Map<string, WorkflowRef>();
  const refOf = async (workflowId: string): Promise<WorkflowRef> => {
    if (!names.has(workflowId)) {
      const workflow = workflowId ? await deps.store.workflows.get(environmentId, workflowId) : undefined;
      names.set(workflowId, workflow ? { workflowId, name: workflow.name, identifier: workflow.workflowId } : { workflowId, name: workflowId ? 'Deleted workflow' : 'No workflow' });
    }
    return names.get(workflowId)!;
  };
  const failing = [...workflows.entries()].filter(([, counts]) => counts.failed > 0).sort((a, b) => b[1].failed - a[1].failed).slice(0, TOP);
  const top = [...workflows.entries()].filter(([, counts]) => counts.sent > 0).sort((a, b) => b[1].sent - a[1].sent).slice(0, TOP);

  const histograms = new Map<string, number[]>();
  const all = new Array<number>(LATENCY_BUCKET_BOUNDS_MS.length + 1).fill(0);
  for (const row of rows.latency) {
    const histogram = histograms.get(row.channel) ?? new Array<number>(LATENCY_BUCKET_BOUNDS_MS.length + 1).fill(0);
    histogram[row.bucket] += row.count;
    all[row.bucket] += row.count;
    histograms.set(row.channel, histogram);
  }
  const summary = (counts: number[]): LatencySummary => {
    const count = counts.reduce((sum, value) => sum + value, 0);
    return { count, ...(count > 0 ? { p50Ms: histogramQuantile(counts, 0.5), p95Ms: histogramQuantile(counts, 0.95) } : {}) };
  };

  return {
    range,
    channels: [...OVERVIEW_CHANNELS],
    series: starts.map((start) => ({ start, counts: byKey.get(keyOf(start))! })),
    outcomes,
    failuresByProvider: [...providers.values()].sort((a, b) => b.count - a.count).slice(0, TOP),
    failuresByWorkflow: await Promise.all(failing.map(async ([workflowId, counts]) => ({ ...(await refOf(workflowId)), count: counts.failed }))),
    topWorkflows: await Promise.all(top.map(async ([workflowId, counts]) => ({ ...(await refOf(workflowId)), ...counts }))),
    inApp: {
      ...inApp,
      ...(inApp.sent > 0 ? { readRate: Math.min(1, inApp.read / inApp.sent), seenRate: Math.min(1, inApp.seen / inApp.sent) } : {}),
    },
    latency: {
      ...summary(all),
      byChannel: [...histograms.entries()].map(([channel, counts]) => ({ channel, ...summary(counts) })).sort((a, b) => b.count - a.count),
    },
  };
}

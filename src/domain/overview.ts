/**
 * The overview's pure rules: what is counted, the fixed latency histogram, the ranges a caller may ask for, and
 * quantiles estimated from the histogram. The counts themselves are kept at write time (store/sql/overview-repository.ts).
 */

/** Outcomes a channel step's counts are kept under. `delivered` and `bounced` stay 0 until providers report them. */
export const OVERVIEW_OUTCOMES = ['sent', 'failed', 'skipped', 'delivered', 'bounced'] as const;
export type OverviewOutcome = (typeof OVERVIEW_OUTCOMES)[number];
/** In-app engagement, counted by the hour the message was created in: +1 when it becomes read/seen, −1 when undone. */
export type OverviewEngagement = 'read' | 'seen';

/** The delivery channels whose steps are counted (action steps such as delay or digest are not deliveries). */
export const OVERVIEW_CHANNELS = ['in_app', 'email', 'sms', 'chat', 'push'] as const;

/**
 * Upper bounds (ms) of the trigger-to-delivery histogram's buckets; the last bucket is open. Fixed, so hours and
 * processes add up; roughly ×2–2.5 apart, so a quantile read from them is within one bucket's width.
 */
export const LATENCY_BUCKET_BOUNDS_MS = [50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000] as const;

export function latencyBucket(ms: number): number {
  const index = LATENCY_BUCKET_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return index === -1 ? LATENCY_BUCKET_BOUNDS_MS.length : index;
}

/**
 * The q-quantile (0..1) of a histogram (counts per bucket index), interpolated linearly inside the bucket it falls in;
 * in the open last bucket, its lower bound. Undefined for an empty histogram.
 */
export function histogramQuantile(counts: number[], q: number): number | undefined {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return undefined;
  const rank = q * total;
  let seen = 0;
  for (let index = 0; index < counts.length; index++) {
    const count = counts[index] ?? 0;
    if (count === 0) continue;
    if (seen + count >= rank) {
      const lower = index === 0 ? 0 : LATENCY_BUCKET_BOUNDS_MS[index - 1];
      const upper = LATENCY_BUCKET_BOUNDS_MS[index];
      if (upper === undefined) return lower;
      return Math.round(lower + ((rank - seen) / count) * (upper - lower));
    }
    seen += count;
  }
  return LATENCY_BUCKET_BOUNDS_MS[LATENCY_BUCKET_BOUNDS_MS.length - 1];
}

/** The hour an instant falls in, as stored: `2026-11-25T14` (UTC). */
export function hourOf(iso: string): string {
  return iso.slice(0, 13);
}

export const OVERVIEW_RANGES = ['24h', '7d', '30d', 'custom'] as const;
export type OverviewRange = (typeof OVERVIEW_RANGES)[number];
const HOUR_MS = 3_600_000;
const RANGE_HOURS: Record<Exclude<OverviewRange, 'custom'>, number> = { '24h': 24, '7d': 24 * 7, '30d': 24 * 30 };
/** At most a year of hourly buckets per request. */
export const MAX_RANGE_DAYS = 366;

export interface ResolvedRange {
  /** Inclusive, on an hour boundary (UTC). */
  from: string;
  /** Exclusive, on an hour boundary (UTC). */
  to: string;
  /** Time-series points per hour up to 72 hours, per UTC day beyond. */
  bucket: 'hour' | 'day';
}

/**
 * The range asked for, widened to whole hours: the last 24 hours / 7 / 30 days up to the end of the current hour, or
 * a custom `from`..`to`. Returns a readable error instead of throwing, for the caller to map.
 */
export function resolveOverviewRange(input: { range: OverviewRange; from?: string; to?: string }, nowMs: number): ResolvedRange | { error: string } {
  let fromMs: number;
  let toMs: number;
  if (input.range === 'custom') {
    if (!input.from || !input.to) return { error: 'from and to are required when range is custom' };
    fromMs = Date.parse(input.from);
    toMs = Date.parse(input.to);
    if (Number.isNaN(fromMs)) return { error: 'from must be an ISO 8601 date' };
    if (Number.isNaN(toMs)) return { error: 'to must be an ISO 8601 date' };
    if (fromMs >= toMs) return { error: 'from must be before to' };
    if (toMs - fromMs > MAX_RANGE_DAYS * 24 * HOUR_MS) return { error: `the range must not exceed ${MAX_RANGE_DAYS} days` };
    fromMs = Math.floor(fromMs / HOUR_MS) * HOUR_MS;
    toMs = Math.ceil(toMs / HOUR_MS) * HOUR_MS;
  } else {
    toMs = Math.floor(nowMs / HOUR_MS) * HOUR_MS + HOUR_MS;
    fromMs = toMs - RANGE_HOURS[input.range] * HOUR_MS;
  }
  return { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), bucket: toMs - fromMs <= 72 * HOUR_MS ? 'hour' : 'day' };
}

/** Every bucket start in the range, so a chart shows empty hours or days as zero instead of skipping them. */
export function bucketStarts(range: ResolvedRange): string[] {
  const step = range.bucket === 'hour' ? HOUR_MS : 24 * HOUR_MS;
  let start = Date.parse(range.from);
  if (range.bucket === 'day') start = Math.floor(start / (24 * HOUR_MS)) * 24 * HOUR_MS;
  const starts: string[] = [];
  for (let at = start; at < Date.parse(range.to); at += step) starts.push(new Date(at).toISOString());
  return starts;
}

/**
 * What a provider's report adds to the overview's outcomes: `delivered` the first time a message is reported delivered
 * (not again after a later delivered, opened or clicked report of it), `bounced` the first time it bounces; nothing
 * for other reports.
 */
export function overviewOutcomeOfReport(previousProviderStatus: string | undefined, reported: string): 'delivered' | 'bounced' | undefined {
  if (reported === 'delivered') return previousProviderStatus === 'delivered' || previousProviderStatus === 'opened' || previousProviderStatus === 'clicked' ? undefined : 'delivered';
  if (reported === 'bounced') return previousProviderStatus === 'bounced' ? undefined : 'bounced';
  return undefined;
}

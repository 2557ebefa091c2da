import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * A bounded HTTP load generator: `connections` keep-alive clients (autocannon) hammer one URL for
 * `durationSeconds`, each client sending its next request as soon as the previous answer arrives.
 * It runs on its own worker thread so the clients never share an event loop with the server under test.
 * Latency is recorded per request (autocannon's own histogram has 1 ms resolution, too coarse for
 * sub-millisecond endpoints) and percentiles are computed exactly from the sorted samples.
 */
export interface HttpLoadOptions {
  url: string;
  headers?: Record<string, string>;
  connections: number;
  durationSeconds: number;
  /** Per-request timeout; a timed-out request counts as an error. Default 10 s. */
  timeoutSeconds?: number;
}

export interface HttpLoadResult {
  /** Completed requests with a 2xx status. */
  ok: number;
  /** Completed requests with any other status. */
  notOk: number;
  /** Connection errors and timeouts. */
  errors: number;
  statusCounts: Record<string, number>;
  elapsedMs: number;
  /** 2xx responses per second over the whole run. */
  requestsPerSecond: number;
  /** Latency of 2xx responses, in milliseconds. */
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** Mean body size of the responses, in bytes. */
  meanResponseBytes: number;
}

interface WorkerReport {
  latencies: Float64Array;
  statusCounts: Record<string, number>;
  bytes: number;
  responses: number;
  /** Connection errors, timeouts included. */
  errors: number;
  elapsedMs: number;
  failure?: string;
}

// CommonJS so it can run with `eval: true`, without a loader for TypeScript in the worker thread.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const autocannon = require(workerData.autocannonPath);
const latencies = [];
const statusCounts = {};
let bytes = 0;
let responses = 0;
const started = Date.now();
const instance = autocannon({
  url: workerData.url,
  headers: workerData.headers,
  connections: workerData.connections,
  duration: workerData.durationSeconds,
  timeout: workerData.timeoutSeconds,
  pipelining: 1,
});
instance.on('response', (_client, statusCode, resBytes, responseTime) => {
  statusCounts[statusCode] = (statusCounts[statusCode] || 0) + 1;
  if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  bytes += resBytes;
  responses++;
});
instance.then(
  (result) => {
    const samples = Float64Array.from(latencies);
    parentPort.postMessage(
      { latencies: samples, statusCounts, bytes, responses, errors: result.errors, elapsedMs: Date.now() - started },
      [samples.buffer],
    );
  },
  (error) => parentPort.postMessage({ failure: String(error && error.stack || error) }),
);
`;

const autocannonPath = createRequire(import.meta.url).resolve('autocannon');

export function runHttpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        autocannonPath,
        url: options.url,
        headers: options.headers ?? {},
        connections: options.connections,
        durationSeconds: options.durationSeconds,
        timeoutSeconds: options.timeoutSeconds ?? 10,
      },
    });
    worker.once('message', (report: WorkerReport) => {
      void worker.terminate();
      if (report.failure) reject(new Error(`load generator failed: ${report.failure}`));
      else resolve(summarise(report));
    });
    worker.once('error', reject);
  });
}

export function summarise(report: Pick<WorkerReport, 'latencies' | 'statusCounts' | 'bytes' | 'responses' | 'errors' | 'elapsedMs'>): HttpLoadResult {
  const sorted = Float64Array.from(report.latencies).sort();
  const ok = sorted.length;
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    ok,
    notOk: report.responses - ok,
    errors: report.errors,
    statusCounts: report.statusCounts,
    elapsedMs: report.elapsedMs,
    requestsPerSecond: report.elapsedMs > 0 ? (ok * 1000) / report.elapsedMs : 0,
    latencyMs: {
      p50: percentile(sorted, 50),
      p90: percentile(sorted, 90),
      p99: percentile(sorted, 99),
      max: ok ? sorted[ok - 1] : NaN,
      mean: ok ? sum / ok : NaN,
    },
    meanResponseBytes: report.responses ? report.bytes / report.responses : 0,
  };
}

/** Nearest-rank percentile of ascending samples. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

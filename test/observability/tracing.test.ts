import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../fakes/otlp-receiver.js';
import { freePort, startHerald, type HeraldProcess } from '../helpers/herald-process.js';
import { scaleoutModeRequested, servicesAvailable } from '../helpers/databases.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';
import { scrape } from '../helpers/metrics-scrape.js';

/**
 * One trace from the trigger's HTTP request, through the queue (the traceparent carried in the job), to each step run
 * and the provider call, received by a local OTLP/HTTP (JSON) collector from real Herald processes: `herald start`
 * embedded, or `herald api` + `herald worker` scaled out, where the worker's spans must join the API's trace.
 */
const CLIENT_TRACE_ID = randomBytes(16).toString('hex');
const CLIENT_SPAN_ID = randomBytes(8).toString('hex');
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

function otelEnv(receiver: OtlpReceiver): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'herald-under-test',
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=abc%20def',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    HERALD_OUTBOUND_ALLOW: '127.0.0.1',
    HERALD_JOB_ATTEMPTS: '1',
  };
}

async function call(url: string, key: string, method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `ApiKey ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  expect(response.status, text).toBeLessThan(300);
  return JSON.parse(text);
}

/** Sets up an email workflow over a fake SendGrid, triggers it once with the client's traceparent, waits for the provider span. */
async function triggerTraced(apiUrl: string, key: string, vendor: HttpFake, receiver: OtlpReceiver): Promise<ReceivedSpan[]> {
  await call(apiUrl, key, 'POST', '/v1/integrations', {
    providerId: 'sendgrid',
    identifier: 'sg-traced',
    active: true,
    check: false,
    credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl: vendor.url },
  });
  await call(apiUrl, key, 'POST', '/v2/workflows', {
    workflowId: 'traced',
    name: 'traced',
    steps: [
      { name: 'inbox', type: 'in_app', controlValues: { body: 'Hello' } },
      { name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: '<p>Hello</p>' } },
    ],
  });
  await call(
    apiUrl,
    key,
    'POST',
    '/v1/events/trigger',
    { name: 'traced', to: { subscriberId: 'traced-1', email: 'traced-1@example.com' } },
    { traceparent: `00-${CLIENT_TRACE_ID}-${CLIENT_SPAN_ID}-01` },
  );
  await receiver.waitFor((spans) => spans.some((span) => span.name === 'provider sendgrid send') && spans.some((span) => span.name === 'step email'));
  expect(vendor.requests).toHaveLength(1);
  expect(receiver.rejected).toEqual([]);
  // OTEL_EXPORTER_OTLP_HEADERS, URL-decoded, on every export.
  expect(receiver.exportHeaders.every((headers) => headers['x-collector-token'] === 'abc def')).toBe(true);
  return receiver.spans.filter((span) => span.traceId === CLIENT_TRACE_ID);
}

function only(spans: ReceivedSpan[], predicate: (span: ReceivedSpan) => boolean, what: string): ReceivedSpan {
  const found = spans.filter(predicate);
  expect(found, `${what} in ${spans.map((span) => span.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

/** The chain: request → process-trigger job → in_app step (inside it) → run-step job of the email step → provider call. */
function expectOneTrace(trace: ReceivedSpan[]): { request: ReceivedSpan; triggerJob: ReceivedSpan; email: ReceivedSpan; provider: ReceivedSpan } {
  const request = only(trace, (span) => span.name === 'POST /v1/events/trigger', 'the trigger request span');
  expect(request).toMatchObject({ kind: SERVER, parentSpanId: CLIENT_SPAN_ID });
  expect(request.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/v1/events/trigger', 'http.response.status_code': 201 });
  expect(request.resource).toMatchObject({ 'service.name': 'herald-under-test' });

  const triggerJob = only(trace, (span) => span.name === 'job process-trigger', 'the trigger job span');
  expect(triggerJob).toMatchObject({ kind: CONSUMER, parentSpanId: request.spanId });
  expect(triggerJob.attributes).toMatchObject({ 'herald.job.name': 'process-trigger', 'herald.outcome': 'completed' });

  const inApp = only(trace, (span) => span.name === 'step in_app', 'the in-app step span');
  expect(inApp.parentSpanId).toBe(triggerJob.spanId);
  expect(inApp.attributes).toMatchObject({ 'herald.workflow.id': 'traced', 'herald.step.type': 'in_app', 'herald.channel': 'in_app', 'herald.provider.id': 'novu', 'herald.outcome': 'completed' });

  const email = only(trace, (span) => span.name === 'step email', 'the email step span');
  expect(email.kind).toBe(CONSUMER);
  // Enqueued by the in-app step once it ended: its child, in the same trace.
  expect(email.parentSpanId).toBe(inApp.spanId);
  expect(email.attributes).toMatchObject({
    'herald.job.name': 'run-step',
    'herald.workflow.id': 'traced',
    'herald.step.type': 'email',
    'herald.channel': 'email',
    'herald.provider.id': 'sendgrid',
    'herald.outcome': 'completed',
  });

  const provider = only(trace, (span) => span.name === 'provider sendgrid send', 'the provider call span');
  expect(provider).toMatchObject({ kind: CLIENT, parentSpanId: email.spanId });
  expect(provider.attributes).toMatchObject({ 'herald.provider.id': 'sendgrid', 'herald.channel': 'email', 'herald.workflow.id': 'traced', 'herald.outcome': 'sent' });
  return { request, triggerJob, email, provider };
}

/** A vendor that refuses the send (400): the provider span ends in error, the step span says `failed`. */
async function expectRefusedSendTraced(apiUrl: string, key: string, receiver: OtlpReceiver): Promise<void> {
  const refusing = await startHttpFake(() => ({ status: 400, body: { errors: [{ message: 'bad from address' }] } }));
  try {
    await call(apiUrl, key, 'POST', '/v1/integrations', {
      providerId: 'sendgrid',
      identifier: 'sg-refusing',
      active: true,
      check: false,
      credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl: refusing.url },
    });
    const traceId = randomBytes(16).toString('hex');
    await call(
      apiUrl,
      key,
      'POST',
      '/v1/events/trigger',
      { name: 'traced', to: { subscriberId: 'traced-2', email: 'traced-2@example.com' }, overrides: { integrationIdentifier: 'sg-refusing' } },
      { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    );
    await receiver.waitFor((spans) => spans.some((span) => span.traceId === traceId && span.name === 'step email'));
    const trace = receiver.spans.filter((span) => span.traceId === traceId);
    const email = only(trace, (span) => span.name === 'step email', 'the email step span');
    expect(email.attributes).toMatchObject({ 'herald.step.type': 'email', 'herald.provider.id': 'sendgrid', 'herald.outcome': 'failed' });
    const provider = only(trace, (span) => span.name === 'provider sendgrid send', 'the provider call span');
    expect(provider.parentSpanId).toBe(email.spanId);
    expect(provider.attributes).toMatchObject({ 'herald.outcome': 'error', 'herald.provider.retryable': false });
    expect(provider.status?.code).toBe(2); // ERROR
    expect(refusing.requests).toHaveLength(1);
  } finally {
    await refusing.close();
  }
}

const scaleout = scaleoutModeRequested();

describe.skipIf(scaleout)('tracing, embedded (herald start)', () => {
  let receiver: OtlpReceiver;
  let vendor: HttpFake;
  let herald: HeraldProcess;
  let dataDir: string;
  const key = 'sk_traced_embedded_0123456789abcdef0123456789';

  beforeAll(async () => {
    [receiver, vendor] = await Promise.all([startOtlpReceiver(), startHttpFake(() => ({ status: 202, body: '' }))]);
    dataDir = mkdtempSync(join(tmpdir(), 'herald-traces-'));
    herald = await startHerald({ HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: key, HERALD_QUEUE_POLL_MS: '20', ...otelEnv(receiver) });
  }, 90_000);
  afterAll(async () => {
    await herald?.stop();
    await Promise.all([receiver?.close(), vendor?.close()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('joins the request, the job, each step and the provider call in one trace, with their attributes', async () => {
    const trace = await triggerTraced(herald.url, key, vendor, receiver);
    const { request, provider } = expectOneTrace(trace);
    // One process made every span.
    expect(request.resource['process.pid']).toBe(herald.child.pid);
    expect(provider.resource['process.pid']).toBe(herald.child.pid);
  }, 60_000);

  it('marks a refused provider call in error and its step failed', async () => {
    await expectRefusedSendTraced(herald.url, key, receiver);
  }, 60_000);
});

const scaleoutRun = scaleout && (await servicesAvailable(['PostgreSQL', 'Redis']));

describe.skipIf(!scaleoutRun)('tracing and the worker metrics port, scaled out (herald api + herald worker)', () => {
  let receiver: OtlpReceiver;
  let vendor: HttpFake;
  let cluster: ScaleoutProcesses;
  let workerMetrics: string;
  const token = 'metrics-token-scaleout';

  beforeAll(async () => {
    [receiver, vendor] = await Promise.all([startOtlpReceiver(), startHttpFake(() => ({ status: 202, body: '' }))]);
    const port = await freePort();
    workerMetrics = `http://127.0.0.1:${port}/metrics`;
    cluster = await startScaleoutProcesses({
      apis: 1,
      workers: 1,
      env: { ...otelEnv(receiver), HERALD_METRICS_PORT: String(port), HERALD_METRICS_TOKEN: token, HOST: '127.0.0.1' },
    });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await Promise.all([receiver?.close(), vendor?.close()]);
  });

  it("puts the worker's job, step and provider spans in the API request's trace", async () => {
    const api = cluster.apis[0]!;
    const worker = cluster.workers[0]!;
    const trace = await triggerTraced(api.url, SCALEOUT_SECRET, vendor, receiver);
    const { request, triggerJob, email, provider } = expectOneTrace(trace);
    expect(request.resource['process.pid']).toBe(api.child.pid);
    for (const span of [triggerJob, email, provider]) expect(span.resource['process.pid']).toBe(worker.child.pid);
  }, 60_000);

  it('marks a refused provider call in error and its step failed', async () => {
    await expectRefusedSendTraced(cluster.apis[0]!.url, SCALEOUT_SECRET, receiver);
  }, 60_000);

  it('serves the worker its own /metrics on HERALD_METRICS_PORT, behind the token; the API counts the trigger', async () => {
    const refused = await fetch(workerMetrics);
    expect(refused.status).toBe(401);
    expect((await fetch(workerMetrics, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    expect((await fetch(workerMetrics.replace('/metrics', '/other'), { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);

    // Two triggers so far: one delivered, one refused by its vendor.
    const worker = await scrape(workerMetrics, token);
    expect(worker.value('herald_jobs_total', { type: 'process-trigger', status: 'completed' })).toBe(2);
    expect(worker.value('herald_jobs_total', { type: 'in_app', status: 'completed' })).toBe(2);
    expect(worker.value('herald_jobs_total', { type: 'email', status: 'completed' })).toBe(1);
    expect(worker.value('herald_jobs_total', { type: 'email', status: 'failed' })).toBe(1);
    expect(worker.value('herald_deliveries_total', { channel: 'email', provider: 'sendgrid', status: 'sent' })).toBe(1);
    expect(worker.value('herald_deliveries_total', { channel: 'email', provider: 'sendgrid', status: 'error' })).toBe(1);
    expect(worker.count('herald_provider_request_duration_seconds', { provider: 'sendgrid' })).toBe(2);
    expect(worker.value('herald_triggers_total')).toBe(0);
    expect(worker.value('herald_queue_jobs', { state: 'waiting' })).toBe(0);
    expect(worker.family('herald_db_pool_in_use')).toBeDefined();
    expect(worker.value('process_cpu_seconds_total')).toBeGreaterThan(0);

    const api = await scrape(`${cluster.apis[0]!.url}/metrics`, token);
    expect(api.value('herald_triggers_total')).toBe(2);
    expect(api.count('herald_http_request_duration_seconds', { method: 'POST', route: '/v1/events/trigger', status_code: '201' })).toBe(2);
    expect(api.labelSets('herald_jobs_total')).toEqual([]);
  });
});

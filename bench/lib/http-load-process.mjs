// One load run of `npm run bench:http`, in a process of its own (the independent measurement's set-up: autocannon in a
// separate process on the same machine). argv[2] is the options as JSON; the result is printed as JSON.
//   {url, connections, durationSeconds, headers, kind: 'fixed' | 'trigger' | 'rotate', paths?: string[],
//    workflowId?, subscriberPrefix?}
// 'trigger' POSTs a trigger to a new subscriber per request ("<prefix>-<n>"); 'rotate' GETs `paths` in turn, so
// consecutive requests ask for different subscribers and pages; 'fixed' GETs `url` itself.
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2] ?? '{}');
const latencies = [];
const statusCounts = {};
let responses = 0;
let next = 0;

function setupRequest(request) {
  const n = next++;
  if (options.kind === 'trigger') {
    return {
      ...request,
      method: 'POST',
      path: '/v1/events/trigger',
      body: JSON.stringify({ name: options.workflowId, to: `${options.subscriberPrefix}-${n}`, payload: { n, text: 'Hello from bench:http' } }),
    };
  }
  if (options.kind === 'rotate') return { ...request, path: options.paths[n % options.paths.length] };
  return request;
}

const started = Date.now();
const instance = autocannon({
  url: options.url,
  connections: options.connections,
  duration: options.durationSeconds,
  timeout: 10,
  pipelining: 1,
  headers: { 'content-type': 'application/json', ...(options.headers ?? {}) },
  requests: [{ setupRequest }],
});
instance.on('response', (_client, statusCode, _bytes, responseTime) => {
  statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
  if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  responses += 1;
});
const result = await instance;
const elapsedMs = Date.now() - started;
latencies.sort((a, b) => a - b);
const at = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] : NaN);
process.stdout.write(JSON.stringify({
  ok: latencies.length,
  notOk: responses - latencies.length,
  errors: result.errors + result.timeouts,
  statusCounts,
  elapsedMs,
  requestsPerSecond: (latencies.length * 1000) / elapsedMs,
  latencyMs: { p50: at(50), p99: at(99), max: latencies.at(-1) ?? NaN },
}));

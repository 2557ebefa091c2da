/**
 * An embedded Herald whose metrics recording is switched on and off from its parent (bench:metrics `--toggle`), so
 * that "on" and "off" are measured in ONE process: the same JIT state, heap and data. Two processes differ in these
 * by more than metrics cost (an A/A pair of identical processes settled 4-50 % apart on one list, 2026-11-26).
 *
 * Run with IPC (`spawn(node, ['--import', 'tsx', this file], { stdio: [..., 'ipc'] })`) and the usual Herald env
 * (HERALD_METRICS must be on). Messages: parent → child 'on' | 'off'; child → parent { ready: url } once listening,
 * then 'on' | 'off' when a switch is done; 'drain' → 'drained' once the queue is empty. prom-client's process collectors (GC, event-loop delay) run in both
 * states: this measures the recorders of each operation, not those.
 */
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/main.js';
import { PromMetrics } from '../../src/observability/metrics.js';
import { noopMetrics } from '../../src/observability/noop.js';
import type { Metrics } from '../../src/observability/ports.js';
import type { SqlQueue } from '../../src/queue/sql-queue.js';

const config = loadConfig();
if (!config.metrics.enabled) throw new Error('metrics-toggle-server: HERALD_METRICS must be on');
const prom = new PromMetrics({ dbPool: () => ({ inUse: 1, waiting: 0 }), logger: { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } as never });
let current: Metrics = prom;
// Every method forwards to the current recorder; the forwarding costs the same in both states.
const switchable: Metrics = {
  triggersAccepted: (count) => current.triggersAccepted(count),
  jobFinished: (type, status, seconds) => current.jobFinished(type, status, seconds),
  delivery: (channel, providerId, status) => current.delivery(channel, providerId, status),
  providerRequest: (providerId, seconds) => current.providerRequest(providerId, seconds),
  webhookDelivery: (status) => current.webhookDelivery(status),
  httpRequest: (method, route, statusCode, seconds) => current.httpRequest(method, route, statusCode, seconds),
  trackRealtimeConnections: (count) => prom.trackRealtimeConnections(count),
  scrape: () => prom.scrape(),
};
const server = await startServer(config, { container: { metrics: switchable } });
const queue = server.container.deps.queue as SqlQueue;
process.on('message', (message) => {
  if (message === 'drain') {
    // Answers once every queued job has run (a wave of triggers delivered): polled, at the same cost in both states.
    const poll = () => void queue.pendingCount().then((pending) => (pending > 0 ? setTimeout(poll, 2) : process.send!('drained')));
    poll();
    return;
  }
  if (message !== 'on' && message !== 'off') return;
  current = message === 'on' ? prom : noopMetrics;
  process.send!(message);
});
process.on('SIGTERM', () => {
  void server.stop().then(() => process.exit(0));
});
process.send!({ ready: server.url });

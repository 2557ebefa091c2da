// A load generator on its own thread, so the clients do not steal the server's event loop.
// Runs `concurrency` fetch loops for `durationMs` against one URL and reports counts by status.
import { parentPort, workerData } from 'node:worker_threads';

const { url, method, headers, bodies, concurrency, durationMs } = workerData;
const statuses = {};
let sent = 0;
let errors = 0;
const deadline = Date.now() + durationMs;

async function loop(clientIndex) {
  let i = clientIndex;
  while (Date.now() < deadline) {
    const body = bodies ? JSON.stringify(bodies.template).replaceAll('__N__', `${workerData.prefix}-${i}`) : undefined;
    i += concurrency;
    sent++;
    try {
      const response = await fetch(url, { method, headers, body });
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    } catch {
      errors++;
    }
  }
}

const started = Date.now();
await Promise.all(Array.from({ length: concurrency }, (_, index) => loop(index)));
parentPort.postMessage({ statuses, sent, errors, elapsedMs: Date.now() - started });

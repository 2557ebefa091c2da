// `node --import tsx bench/request-logging.ts` (issue 24, session 18): the logging work per request, alternated in one
// process: main's (a pino child per request + the request line through the redacting child) against the branch's (a
// LazyRequestLogger + the line through a child without redaction paths). CPU µs per request, 7 rounds of 100,000.
import pino from 'pino';
import { LazyRequestLogger } from '../src/http/request-logger.js';
const dest = pino.destination({ dest: '/dev/null', sync: true, minLength: 8192 });
const root = pino({ level: 'info', redact: { paths: ['req.headers.authorization', '*.credentials', '*.secretKey', '*.apiKey', '*.password'], censor: '[redacted]' } }, dest);
const plain = root.child({}, { redact: [] });
const N = 100_000; const res: { main: number[]; branch: number[] } = { main: [], branch: [] };
for (let r = 0; r < 7; r++) {
  let t = process.cpuUsage();
  for (let i = 0; i < N; i++) { const log = root.child({ reqId: `req-${i}` }, {}); log.info({ method: 'GET', url: '/v1/messages', statusCode: 200, ms: 3 }, 'request'); }
  let u = process.cpuUsage(t); res.main.push((u.user + u.system) / N);
  t = process.cpuUsage();
  for (let i = 0; i < N; i++) { const id = `req-${i}`; new LazyRequestLogger(root, { reqId: id }, {}); plain.info({ reqId: id, method: 'GET', url: '/v1/messages', statusCode: 200, ms: 3 }, 'request'); }
  u = process.cpuUsage(t); res.branch.push((u.user + u.system) / N);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1].toFixed(2);
console.log(JSON.stringify({ mainUs: res.main.map((x) => x.toFixed(2)), branchUs: res.branch.map((x) => x.toFixed(2)), medianMain: med(res.main), medianBranch: med(res.branch) }));

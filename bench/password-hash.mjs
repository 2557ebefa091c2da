// The cost of one dashboard password hash (scrypt N=2^15, r=8, p=1, as src/usecases/dashboard/passwords.ts):
// 10 hashes one after another, median / min / max in ms. Usage: node bench/password-hash.mjs
import { randomBytes, scryptSync } from 'node:crypto';

const times = [];
for (let i = 0; i < 10; i++) {
  const started = process.hrtime.bigint();
  scryptSync('password', randomBytes(16), 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 256 * 2 ** 15 * 8 });
  times.push(Number(process.hrtime.bigint() - started) / 1e6);
}
times.sort((a, b) => a - b);
console.log(`scrypt N=2^15 r=8 p=1: median ${times[5].toFixed(1)} ms, min ${times[0].toFixed(1)} ms, max ${times[9].toFixed(1)} ms`);

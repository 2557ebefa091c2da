import type { onRequestHookHandler } from 'fastify';
import { turnGathering } from '../turn-gathering.js';

/**
 * Embedded Herald: read requests (GET, HEAD) that arrive in one event-loop turn go on together after it.
 *
 * Writes already do: each waits for the SQLite group commit, one per turn. A read has nothing to wait for, so without
 * this each ran from its socket's data callback to its response before the next request was parsed, and a list request
 * cost ~1.6× the CPU (530 against 330 µs of user time per `GET /v1/messages` page, `bench/profile-lists.ts`,
 * 2026-11-26). The rate-limit upsert used to gather them as a side effect of its commit; counting in memory removed
 * that and halved the list rates of `npm run bench:http` until this hook. Resolving each request in its own
 * `setImmediate` does not help: the turn's requests must continue together, from one callback.
 */
export function readGathering(): onRequestHookHandler {
  const gather = turnGathering();
  return (request, _reply, done) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return done();
    gather(done);
  };
}

import { valueGathering, type ValueGathering } from '../../turn-gathering.js';

/**
 * A serving process's PostgreSQL results continue together (issue 24): every result that arrives in one pass of the
 * event loop's poll phase is handed on in one `setImmediate` callback right after it, in arrival order, instead of
 * each running its request on to the reply from its own socket's data callback.
 *
 * The embedded server does the same for its reads (http/read-gathering.ts). Scaled out, a list request's page arrives
 * on one of the pool's connections; without this each page's continuation (the connection's release, which submits a
 * waiting request's statement, the page's reply and its write) ran between the parses of the other connections'
 * results. Run together they cost the API process 10-25 % less CPU per messages list request (BENCHMARKS.md, session 24).
 * Nothing waits longer than the end of the loop turn the result arrived in; errors are handed on at once. Only reads'
 * results are gathered (connection.ts): a write's result often starts the next batch of a serial chain of batches,
 * whose rate any wait cuts.
 */
export type ResultGathering = ValueGathering;

/** One gathering per pool (the shared turn gathering, ../../turn-gathering.ts). */
export function resultGathering(): ResultGathering {
  return valueGathering();
}

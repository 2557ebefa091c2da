import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/domain/errors.js';
import { isBackendUnavailable } from '../../src/queue/bullmq-queue.js';
import { PermanentJobError, RetryableJobError } from '../../src/queue/ports.js';

/**
 * Which job failures the BullMQ queue postpones without using up an attempt: a PostgreSQL or Redis outage
 * (so a restart longer than the backoff budget fails nothing), never a job's own error or a vendor outage.
 */
function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('isBackendUnavailable', () => {
  it('recognises lost PostgreSQL and Redis connections', () => {
    expect(isBackendUnavailable(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(isBackendUnavailable(withCode('terminating connection due to administrator command', '57P01'))).toBe(true);
    expect(isBackendUnavailable(withCode('the database system is starting up', '57P03'))).toBe(true);
    expect(isBackendUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isBackendUnavailable(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(isBackendUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isBackendUnavailable(new UnavailableError('the job queue cannot be reached'))).toBe(true);
  });

  it('leaves the job\'s own failures and the dispatcher\'s verdicts alone', () => {
    expect(isBackendUnavailable(new Error('Template could not be rendered'))).toBe(false);
    expect(isBackendUnavailable(withCode('duplicate key value violates unique constraint', '23505'))).toBe(false);
    expect(isBackendUnavailable(new RetryableJobError('connect ECONNREFUSED 10.0.0.1:443 (vendor down)'))).toBe(false);
    expect(isBackendUnavailable(new PermanentJobError('bad payload'))).toBe(false);
    expect(isBackendUnavailable('a string')).toBe(false);
    expect(isBackendUnavailable(undefined)).toBe(false);
  });
});

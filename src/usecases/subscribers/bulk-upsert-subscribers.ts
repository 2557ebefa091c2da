import { DomainError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { upsertSubscriber } from './create-subscriber.js';
import type { SubscriberProfileInput } from './subscriber-profile.js';

/** Novu's limit on one bulk call. */
export const BULK_SUBSCRIBERS_MAX = 500;

export interface BulkUpsertSubscribersInput {
  caller: Caller;
  subscribers: Array<SubscriberProfileInput & { subscriberId: string }>;
}

/** Novu's bulk report: which subscriberIds were created, which updated, and why the others failed. */
export interface BulkUpsertReport {
  created: Array<{ subscriberId: string }>;
  updated: Array<{ subscriberId: string }>;
  failed: Array<{ subscriberId: string; message: string }>;
}

/**
 * Creates or updates each subscriber in order, each on its own (a subscriber that fails a domain rule, such as an
 * invalid email, is reported in `failed` and the others still go through, as Novu does). A subscriberId listed twice
 * is created by the first entry and updated by the second.
 */
export async function bulkUpsertSubscribers(deps: Deps, input: BulkUpsertSubscribersInput): Promise<BulkUpsertReport> {
  const report: BulkUpsertReport = { created: [], updated: [], failed: [] };
  for (const { subscriberId, ...profile } of input.subscribers) {
    try {
      const { created } = await upsertSubscriber(deps, { caller: input.caller, subscriberId, ...profile });
      (created ? report.created : report.updated).push({ subscriberId });
    } catch (error) {
      // Only a domain error is a per-subscriber failure; anything else (the database is gone) fails the call.
      if (!(error instanceof DomainError)) throw error;
      report.failed.push({ subscriberId, message: error.message });
    }
  }
  return report;
}

import { UnauthorizedError, UnprocessableError, ValidationError } from '../../domain/errors.js';
import { verifySubscriberHash } from '../../domain/subscriber-hash.js';
import { SEVERITIES, type Severity } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { createSubscriberToken } from '../auth/subscriber-tokens.js';
import { createSubscriber } from '../subscribers/create-subscriber.js';
import type { SubscriberProfileInput } from '../subscribers/subscriber-profile.js';

export interface InboxSessionInput {
  applicationIdentifier: string;
  subscriber: SubscriberProfileInput & { subscriberId: string };
  subscriberHash?: string;
}

export interface UnreadCount {
  total: number;
  severity: Record<Severity, number>;
}

export interface InboxSession {
  token: string;
  unreadCount: UnreadCount;
  removeNovuBranding: boolean;
  isDevelopmentMode: boolean;
  maxSnoozeDurationHours: number;
  applicationIdentifier: string;
}

/**
 * POST /v1/inbox/session: the environment is found by its public application identifier; the subscriber is created
 * or updated from the profile sent; when the environment's active in-app integration has `credentials.hmac: true`
 * the `subscriberHash` must be the subscriber's HMAC under one of the environment's secret keys. Nothing is written
 * before these checks pass.
 */
export async function createInboxSession(deps: Deps, input: InboxSessionInput): Promise<InboxSession> {
  if (!input.applicationIdentifier) throw new ValidationError(['applicationIdentifier must not be empty']);
  const subscriberId = input.subscriber.subscriberId;
  if (typeof subscriberId !== 'string' || subscriberId.trim() === '') throw new ValidationError(['subscriber.subscriberId must not be empty']);
  const environment = await deps.store.tenancy.findEnvironmentByIdentifier(input.applicationIdentifier);
  if (!environment) throw new ValidationError([`applicationIdentifier ${input.applicationIdentifier} is not a known application identifier`]);

  if (await hmacRequired(deps, environment._id)) {
    if (!input.subscriberHash) throw new UnauthorizedError('subscriberHash is required: HMAC is enabled for this environment');
    const keys = await deps.store.tenancy.listHmacKeys(environment._id);
    if (keys.length === 0) {
      throw new UnprocessableError(
        'HMAC is enabled but this environment has no secret key that can verify it (keys made before Herald kept an encrypted copy cannot): create one with `herald keys create`',
      );
    }
    if (!verifySubscriberHash(keys, subscriberId, input.subscriberHash)) throw new UnauthorizedError('subscriberHash is not valid for this subscriber');
  }

  const { subscriberId: _ignored, ...profile } = input.subscriber;
  const caller = { kind: 'session' as const, environmentId: environment._id, organizationId: environment._organizationId, actorId: 'inbox-session' };
  const subscriber = await createSubscriber(deps, { caller, subscriberId, ...pickProfile(profile) });
  const scope = { environmentId: environment._id, organizationId: environment._organizationId, subscriberRecordId: subscriber._id, subscriberId };
  return {
    token: await createSubscriberToken(deps, scope),
    unreadCount: await countUnread(deps, environment._id, subscriber._id),
    removeNovuBranding: true,
    isDevelopmentMode: false,
    maxSnoozeDurationHours: deps.config.inbox.maxSnoozeDurationHours,
    applicationIdentifier: environment.identifier,
  };
}

/** HMAC is on when an active in-app integration of the environment has `credentials.hmac: true` (Novu's rule). */
export async function hmacRequired(deps: Pick<Deps, 'store'>, environmentId: string): Promise<boolean> {
  const integrations = await deps.store.integrations.list(environmentId, { channel: 'in_app', activeOnly: true });
  return integrations.some((integration) => integration.credentials?.hmac === true || integration.credentials?.hmac === 'true');
}

/** The bell's count: unread, not archived, not snoozed; by severity (a message without one counts as `none`). */
export async function countUnread(deps: Pick<Deps, 'store'>, environmentId: string, subscriberRecordId: string): Promise<UnreadCount> {
  const counts = await deps.store.messages.countInbox(
    environmentId,
    subscriberRecordId,
    SEVERITIES.map((level) => ({ read: false, archived: false, snoozed: false, severity: [level] })),
  );
  const severity = {} as Record<Severity, number>;
  SEVERITIES.forEach((level, index) => (severity[level] = counts[index]));
  return { total: counts.reduce((sum, count) => sum + count, 0), severity };
}

const PROFILE_FIELDS = ['firstName', 'lastName', 'email', 'phone', 'avatar', 'locale', 'timezone', 'data'] as const;

function pickProfile(profile: Record<string, unknown>): SubscriberProfileInput {
  const picked: Record<string, unknown> = {};
  for (const field of PROFILE_FIELDS) if (profile[field] !== undefined) picked[field] = profile[field];
  return picked as SubscriberProfileInput;
}

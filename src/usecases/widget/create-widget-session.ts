import { NotFoundError, UnprocessableError, ValidationError } from '../../domain/errors.js';
import { verifySubscriberHash } from '../../domain/subscriber-hash.js';
import type { Deps } from '../deps.js';
import { createSubscriberToken } from '../auth/subscriber-tokens.js';
import { hmacRequired } from '../inbox/create-inbox-session.js';
import { createSubscriber } from '../subscribers/create-subscriber.js';

export interface WidgetSessionInput {
  applicationIdentifier: string;
  subscriberId: string;
  /** `null` when the app gives no `subscriberHash` (@novu/client sends it so). */
  hmacHash?: string | null;
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
}

export interface WidgetSession {
  token: string;
  profile: { _id: string; firstName: string | null; lastName: string | null; phone: string | null };
}

/**
 * POST /v1/widgets/session/initialize, the older widget's session (widget-client-protocol.md §2), with Novu's checks
 * in Novu's order and answers: an unknown application identifier is a 400; an environment without an active in-app
 * integration a 404; with `credentials.hmac` on, `hmacHash` must be the subscriber's HMAC under one of the
 * environment's secret keys (400 otherwise). Then the subscriber is created or updated with the profile sent, and
 * the answer carries the same subscriber token as the Inbox session (one token model for both route families and
 * the socket). Nothing is written before the checks pass.
 */
export async function createWidgetSession(deps: Deps, input: WidgetSessionInput): Promise<WidgetSession> {
  const problems: string[] = [];
  if (input.applicationIdentifier.trim() === '') problems.push('applicationIdentifier must not be empty');
  if (input.subscriberId.trim() === '') problems.push('subscriberId must not be empty');
  if (problems.length) throw new ValidationError(problems);

  const environment = await deps.store.tenancy.findEnvironmentByIdentifier(input.applicationIdentifier);
  if (!environment) throw new ValidationError(['Please provide a valid app identifier']);
  const inApp = await deps.store.integrations.list(environment._id, { channel: 'in_app', activeOnly: true });
  if (inApp.length === 0) throw new NotFoundError('In app integration could not be found');

  if (await hmacRequired(deps, environment._id)) {
    const keys = await deps.store.tenancy.listHmacKeys(environment._id);
    if (keys.length === 0) {
      throw new UnprocessableError(
        'HMAC is enabled but this environment has no secret key that can verify it (keys made before Herald kept an encrypted copy cannot): create one with `herald keys create`',
      );
    }
    if (!input.hmacHash || !verifySubscriberHash(keys, input.subscriberId, input.hmacHash)) throw new ValidationError(['Please provide a valid HMAC hash']);
  }

  const caller = { kind: 'session' as const, environmentId: environment._id, organizationId: environment._organizationId, actorId: 'widget-session' };
  const profile = Object.fromEntries(
    (['firstName', 'lastName', 'email', 'phone'] as const).filter((field) => input[field] !== undefined).map((field) => [field, input[field]]),
  );
  const subscriber = await createSubscriber(deps, { caller, subscriberId: input.subscriberId, ...profile });
  const token = await createSubscriberToken(deps, {
    environmentId: environment._id,
    organizationId: environment._organizationId,
    subscriberRecordId: subscriber._id,
    subscriberId: subscriber.subscriberId,
  });
  return {
    token,
    profile: { _id: subscriber._id, firstName: subscriber.firstName ?? null, lastName: subscriber.lastName ?? null, phone: subscriber.phone ?? null },
  };
}

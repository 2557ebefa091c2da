import { NotFoundError, UnprocessableError } from '../../domain/errors.js';
import { subscriberHashOf } from '../../domain/subscriber-hash.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { hmacRequired } from '../inbox/create-inbox-session.js';

export interface InboxPreviewInput {
  caller: Caller;
  subscriberId: string;
}

export interface InboxPreview {
  applicationIdentifier: string;
  subscriberId: string;
  /** Only when the environment's in-app integration asks for HMAC. */
  subscriberHash?: string;
}

/**
 * What the dashboard's live `<Inbox />` preview of one subscriber needs, in the caller's (selected) environment:
 * the environment's application identifier and, when HMAC is on, the subscriber's hash, computed here so the
 * browser never holds a secret key. The hash is made with the newest unrevoked key that has an encrypted copy
 * (the Inbox session accepts any of them). A subscriber of another environment is a 404 like an unknown one.
 */
export async function getInboxPreview(deps: Pick<Deps, 'store'>, input: InboxPreviewInput): Promise<InboxPreview> {
  const { environmentId } = input.caller;
  const [environment, subscriber] = await Promise.all([
    deps.store.tenancy.getEnvironment(environmentId),
    deps.store.subscribers.findBySubscriberId(environmentId, input.subscriberId),
  ]);
  if (!environment || !subscriber) throw NotFoundError.subscriber(input.subscriberId);
  const preview: InboxPreview = { applicationIdentifier: environment.identifier, subscriberId: subscriber.subscriberId };
  if (!(await hmacRequired(deps, environmentId))) return preview;
  const [newestKey] = await deps.store.tenancy.listHmacKeys(environmentId);
  if (!newestKey) {
    throw new UnprocessableError(
      'HMAC is enabled but this environment has no secret key that can sign the subscriber hash (keys made before Herald kept an encrypted copy cannot): create one in Settings',
    );
  }
  return { ...preview, subscriberHash: subscriberHashOf(newestKey, subscriber.subscriberId) };
}

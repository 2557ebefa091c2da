import type { Subscriber } from '../../domain/types.js';

export interface RemovedDeviceTokens {
  /** The subscriber without those tokens; the same object when none was held. Version and updatedAt untouched. */
  subscriber: Subscriber;
  /** The tokens actually removed (held by an entry of the provider), de-duplicated, in the order given. */
  removed: string[];
}

/**
 * Pure: drops `tokens` (the ones a push vendor reported invalid) from every entry of `providerId`.
 * Other providers' entries keep theirs, even the same token string, since validity is per vendor.
 * The caller saves the result (bumping `__v`/`updatedAt`) only when `removed` is not empty;
 * `pruneInvalidDeviceTokens` does exactly that.
 */
export function removeInvalidDeviceTokens(subscriber: Subscriber, providerId: string, tokens: readonly string[]): RemovedDeviceTokens {
  const invalid = new Set(tokens);
  const held = new Set(
    subscriber.channels
      .filter((entry) => entry.providerId === providerId)
      .flatMap((entry) => entry.credentials.deviceTokens ?? []),
  );
  const removed = [...invalid].filter((token) => held.has(token));
  if (removed.length === 0) return { subscriber, removed };
  const channels = subscriber.channels.map((entry) => {
    if (entry.providerId !== providerId || !entry.credentials.deviceTokens) return entry;
    const deviceTokens = entry.credentials.deviceTokens.filter((token) => !invalid.has(token));
    return { ...entry, credentials: { ...entry.credentials, deviceTokens } };
  });
  return { subscriber: { ...subscriber, channels }, removed };
}

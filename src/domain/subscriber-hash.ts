import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The Inbox HMAC rule (@novu/js README, "HMAC Encryption"): `subscriberHash` is the lowercase hex HMAC-SHA256 of the
 * UTF-8 subscriberId, keyed with the environment's secret key.
 */
export function subscriberHashOf(secretKey: string, subscriberId: string): string {
  return createHmac('sha256', secretKey).update(subscriberId, 'utf8').digest('hex');
}

/** True when `hash` is the subscriber's HMAC under any of the keys (an environment may hold several); constant-time per key. */
export function verifySubscriberHash(keys: string[], subscriberId: string, hash: string): boolean {
  const given = Buffer.from(hash.toLowerCase(), 'utf8');
  let matched = false;
  for (const key of keys) {
    const expected = Buffer.from(subscriberHashOf(key, subscriberId), 'utf8');
    if (expected.length === given.length && timingSafeEqual(expected, given)) matched = true;
  }
  return matched;
}

import { randomBytes } from 'node:crypto';

/**
 * Record ids: 24 lowercase hex characters laid out like a MongoDB ObjectId, which Novu clients expect: a 4-byte seconds
 * prefix, a 3-byte counter and 5 random bytes chosen once per process. Ids sort by creation time; the counter keeps
 * those made within one second ordered in this process, and the process bytes keep processes apart. (Fresh random
 * bytes per id cost a `randomFillSync` call each, 4 % of the trigger path's CPU.)
 */
let counter = randomBytes(3).readUIntBE(0, 3);
const processBytes = randomBytes(5).toString('hex');

export function newId(now: number = Date.now()): string {
  const seconds = Math.floor(now / 1000).toString(16).padStart(8, '0');
  counter = (counter + 1) % 0xffffff;
  return seconds + counter.toString(16).padStart(6, '0') + processBytes;
}

const ID_PATTERN = /^[0-9a-f]{24}$/;

/** A path id of the wrong shape is treated like an unknown id (404), so callers check with this. */
export function isRecordId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/**
 * The public application identifier of an environment (Novu's `applicationIdentifier`, sent by browsers): 12
 * URL-safe characters from 9 random bytes. Public, so it only needs to be unguessable enough not to collide.
 */
export function newApplicationIdentifier(): string {
  return randomBytes(9).toString('base64url');
}

import { randomBytes } from 'node:crypto';

/**
 * Record ids: 24 lowercase hex characters, a 4-byte seconds prefix, a 3-byte counter and 5 random bytes, so they sort
 * by creation time like the ObjectIds Novu clients expect. A counter after the prefix keeps ids made
 * within the same second ordered in this process.
 */
let counter = randomBytes(3).readUIntBE(0, 3);

export function newId(now: number = Date.now()): string {
  const seconds = Math.floor(now / 1000).toString(16).padStart(8, '0');
  counter = (counter + 1) % 0xffffff;
  return seconds + counter.toString(16).padStart(6, '0') + randomBytes(5).toString('hex');
}

const ID_PATTERN = /^[0-9a-f]{24}$/;

/** A path id of the wrong shape is treated like an unknown id (404), so callers check with this. */
export function isRecordId(value: string): boolean {
  return ID_PATTERN.test(value);
}

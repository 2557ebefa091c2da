import { randomBytes, randomFillSync } from 'node:crypto';

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

/**
 * A generated transactionId: a UUID version 7 (RFC 9562), the Unix milliseconds first, then 74 random bits. It is still
 * a UUID, but successive triggers' ids sort by time, so the indexes keyed by transaction id (the triggers' unique one,
 * and the events' and messages' list seeks) grow at their ends: with version 4 ids each trigger's entry landed on a
 * random leaf page of each of them, a page of its own written to the WAL at every commit (and, at 10M rows, a page
 * that may not be cached). Random bytes are drawn 4 KB at a time: a `randomFillSync` per id costs more than the id.
 */
export function newTransactionId(now: number = Date.now()): string {
  if (randomOffset + 10 > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  const random = randomPool.subarray(randomOffset, randomOffset + 10);
  randomOffset += 10;
  const time = Math.max(0, Math.floor(now)).toString(16).padStart(12, '0').slice(-12);
  const hex = random.toString('hex');
  // Version nibble 7; the variant's two high bits 10.
  const variant = ((random[2]! & 0x3f) | 0x80).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${hex.slice(0, 3)}-${variant}${hex.slice(6, 8)}-${hex.slice(8, 20)}`;
}

const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;

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

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Session cookies, setup links and invite links carry 32 random bytes (base64url); only their sha256 is stored,
 * so a copy of the database signs nobody in.
 */
export function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashOpaqueToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The CSRF token of a session: an HMAC of the session token under the server's session secret. Nothing to store,
 * the same on every process, and unknowable without the HttpOnly cookie value.
 */
export function csrfTokenFor(sessionSecret: Uint8Array, sessionToken: string): string {
  return createHmac('sha256', sessionSecret).update(`herald-csrf:${sessionToken}`).digest('base64url');
}

export function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

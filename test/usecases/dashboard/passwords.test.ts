import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../../src/usecases/dashboard/passwords.js';
import { csrfTokenFor, hashOpaqueToken, newOpaqueToken, sameToken } from '../../../src/usecases/dashboard/opaque-tokens.js';

describe('password hashing (scrypt)', () => {
  it('verifies the right password only, with a different salt per hash', async () => {
    const first = await hashPassword('correct horse');
    const second = await hashPassword('correct horse');
    expect(first).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(first).not.toBe(second);
    expect(await verifyPassword('correct horse', first)).toBe(true);
    expect(await verifyPassword('correct horse', second)).toBe(true);
    expect(await verifyPassword('correct horsE', first)).toBe(false);
    expect(await verifyPassword('', first)).toBe(false);
  });

  it('treats composed and decomposed Unicode alike, and refuses unknown hash formats', async () => {
    const hash = await hashPassword('caf\u00e9 au lait');
    expect(await verifyPassword('cafe\u0301 au lait', hash)).toBe(true);
    expect(await verifyPassword('anything', 'plain-text')).toBe(false);
    expect(await verifyPassword('anything', 'bcrypt$10$x$y')).toBe(false);
  });
});

describe('opaque tokens and CSRF tokens', () => {
  it('makes 256-bit url-safe tokens, stored as sha256', () => {
    const token = newOpaqueToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newOpaqueToken()).not.toBe(token);
    expect(hashOpaqueToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashOpaqueToken(token)).not.toContain(token);
  });

  it('derives a CSRF token per session and secret', () => {
    const secret = new Uint8Array(32).fill(7);
    const other = new Uint8Array(32).fill(8);
    const csrf = csrfTokenFor(secret, 'session-a');
    expect(csrfTokenFor(secret, 'session-a')).toBe(csrf);
    expect(csrfTokenFor(secret, 'session-b')).not.toBe(csrf);
    expect(csrfTokenFor(other, 'session-a')).not.toBe(csrf);
    expect(sameToken(csrf, csrfTokenFor(secret, 'session-a'))).toBe(true);
    expect(sameToken(csrf, csrf.slice(1))).toBe(false);
  });
});

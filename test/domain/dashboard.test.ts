import { describe, expect, it } from 'vitest';
import { isPlausibleEmail, maskedKey, normalizeEmail, passwordProblems } from '../../src/domain/dashboard.js';
import { canSeeCredentials } from '../../src/domain/types.js';

describe('dashboard rules', () => {
  it('normalizes emails for comparison and checks their shape loosely', () => {
    expect(normalizeEmail('  Ada@Example.COM ')).toBe('ada@example.com');
    expect(isPlausibleEmail('ada@example.com')).toBe(true);
    expect(isPlausibleEmail('ada@localhost')).toBe(true);
    for (const bad of ['ada', 'ada@', '@example.com', 'a b@example.com', 'a@b@c', `${'a'.repeat(250)}@x.io`]) expect(isPlausibleEmail(bad), bad).toBe(false);
  });

  it('asks for passwords of 8 to 256 characters, naming the field', () => {
    expect(passwordProblems('1234567')).toEqual(['password must have at least 8 characters']);
    expect(passwordProblems('12345678')).toEqual([]);
    expect(passwordProblems('x'.repeat(257), 'newPassword')).toEqual(['newPassword must have at most 256 characters']);
  });

  it('masks a key down to its last four characters', () => {
    expect(maskedKey('beef')).toBe('••••••••beef');
    expect(maskedKey(undefined)).toBe('••••••••');
  });

  it('shows credentials to Bearer session callers and dashboard admins only', () => {
    const base = { environmentId: 'e', organizationId: 'o', actorId: 'a' };
    expect(canSeeCredentials({ ...base, kind: 'session' })).toBe(true);
    expect(canSeeCredentials({ ...base, kind: 'dashboard', role: 'admin' })).toBe(true);
    expect(canSeeCredentials({ ...base, kind: 'dashboard', role: 'viewer' })).toBe(false);
    expect(canSeeCredentials({ ...base, kind: 'apiKey' })).toBe(false);
  });
});

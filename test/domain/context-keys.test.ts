import { describe, expect, it } from 'vitest';
import {
  contextKeysFromContext, normalizeContextKeys, parseContextKey, type TriggerContext,
} from '../../src/domain/context-keys.js';
import { validationMessages } from '../helpers/validation-messages.js';

describe('contextKeysFromContext', () => {
  it('turns strings and {id, data} objects into sorted type:id keys', () => {
    expect(contextKeysFromContext({ tenant: 'acme' })).toEqual(['tenant:acme']);
    expect(contextKeysFromContext({ tenant: 'acme', app: { id: 'web', data: { plan: 'pro' } } })).toEqual(['app:web', 'tenant:acme']);
    expect(contextKeysFromContext({ urn: 'a:b:c' })).toEqual(['urn:a:b:c']);
  });
  it('gives no keys for no context', () => {
    expect(contextKeysFromContext(undefined)).toEqual([]);
    expect(contextKeysFromContext(null)).toEqual([]);
    expect(contextKeysFromContext({})).toEqual([]);
  });
  it('rejects empty ids, bad types and line breaks, naming each entry', () => {
    expect(validationMessages(() => contextKeysFromContext({ tenant: '' }))).toEqual([
      'context.tenant must be a non-empty string or an object with a non-empty string id',
    ]);
    expect(validationMessages(() => contextKeysFromContext({ 'a:b': 'x', '': 'y' }))).toEqual([
      `context type "a:b" must not contain ':'`,
      'context type "" must not be empty',
    ]);
    expect(validationMessages(() => contextKeysFromContext({ tenant: { id: '' } }))).toHaveLength(1);
    expect(validationMessages(() => contextKeysFromContext({ tenant: { data: 1 } } as unknown as TriggerContext))).toHaveLength(1);
    expect(validationMessages(() => contextKeysFromContext({ tenant: 5 } as unknown as TriggerContext))).toHaveLength(1);
    expect(validationMessages(() => contextKeysFromContext({ tenant: 'a\nb' }))).toEqual([
      'context.tenant id must not contain a line break',
    ]);
    expect(validationMessages(() => contextKeysFromContext(['x'] as unknown as TriggerContext))).toEqual(['context must be an object']);
  });
});

describe('parseContextKey', () => {
  it('splits at the first colon', () => {
    expect(parseContextKey('tenant:acme')).toEqual({ type: 'tenant', id: 'acme' });
    expect(parseContextKey('urn:a:b')).toEqual({ type: 'urn', id: 'a:b' });
  });
  it('returns an error text for anything else', () => {
    for (const bad of ['tenant', ':acme', 'tenant:', '', ' :x', 'a: ', 'a:b\nc']) {
      expect(parseContextKey(bad), bad).toHaveProperty('error');
    }
    expect(parseContextKey('tenant')).toEqual({ error: 'contextKeys entry "tenant" must have the form type:id' });
  });
});

describe('normalizeContextKeys', () => {
  it('is order-insensitive and de-duplicated', () => {
    expect(normalizeContextKeys(['tenant:acme', 'app:web'])).toBe('app:web\ntenant:acme');
    expect(normalizeContextKeys(['app:web', 'tenant:acme', 'app:web'])).toBe(normalizeContextKeys(['tenant:acme', 'app:web']));
  });
  it("is '' for no keys and distinguishes different sets", () => {
    expect(normalizeContextKeys([])).toBe('');
    expect(normalizeContextKeys(undefined)).toBe('');
    expect(normalizeContextKeys(['a:b'])).not.toBe(normalizeContextKeys(['a:b', 'c:d']));
  });
  it('round-trips with contextKeysFromContext', () => {
    const keys = contextKeysFromContext({ tenant: 'acme', app: { id: 'web' } });
    expect(normalizeContextKeys(keys)).toBe(normalizeContextKeys(['tenant:acme', 'app:web']));
  });
});

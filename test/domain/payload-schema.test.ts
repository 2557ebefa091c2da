import { describe, expect, it } from 'vitest';
import { payloadSchemaProblem, validatePayload } from '../../src/domain/payload-schema.js';

const orderSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    orderId: { type: 'string' },
    total: { type: 'number', minimum: 0 },
    status: { enum: ['new', 'shipped'] },
    email: { type: 'string', format: 'email' },
    placedAt: { type: 'string', format: 'date-time' },
    items: {
      type: 'array',
      items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } }, required: ['sku'] },
    },
    meta: { type: 'object', properties: { 'odd key': { type: 'string' } }, additionalProperties: false },
  },
  required: ['orderId'],
};

describe('validatePayload', () => {
  it('accepts a conforming payload, and anything when there is no schema', () => {
    const payload = { orderId: 'o-1', total: 3, status: 'new', email: 'a@b.co', placedAt: '2026-05-01T12:00:00Z', items: [{ sku: 'A', qty: 2 }] };
    expect(validatePayload(orderSchema, payload)).toEqual([]);
    expect(validatePayload(undefined, { anything: 1 })).toEqual([]);
    expect(validatePayload(null, 'not even an object')).toEqual([]);
    expect(validatePayload({}, { x: 1 })).toEqual([]);
  });

  it('names the field in every message', () => {
    expect(validatePayload(orderSchema, { orderId: 5 })).toEqual(['payload.orderId must be string']);
    expect(validatePayload(orderSchema, {})).toEqual(['payload.orderId is required']);
    expect(validatePayload(orderSchema, { orderId: 'o', total: -1 })).toEqual(['payload.total must be >= 0']);
    expect(validatePayload(orderSchema, { orderId: 'o', status: 'lost' })).toEqual(['payload.status must be one of: "new", "shipped"']);
    expect(validatePayload(orderSchema, { orderId: 'o', items: [{ sku: 'A' }, { qty: 1.5 }] })).toEqual([
      'payload.items[1].sku is required',
      'payload.items[1].qty must be integer',
    ]);
    expect(validatePayload(orderSchema, { orderId: 'o', meta: { 'odd key': 1, extra: true } })).toEqual([
      'payload.meta.extra is not allowed',
      'payload.meta["odd key"] must be string',
    ]);
    expect(validatePayload({ type: 'object' }, [1])).toEqual(['payload must be object']);
    expect(validatePayload({ const: 'x' }, 'y')).toEqual(['payload must be "x"']);
  });

  it('reports every problem at once', () => {
    expect(validatePayload(orderSchema, { total: 'many', status: 'lost' })).toHaveLength(3);
  });

  it('checks common formats', () => {
    expect(validatePayload(orderSchema, { orderId: 'o', email: 'not-an-email' })).toEqual(['payload.email must match format "email"']);
    expect(validatePayload(orderSchema, { orderId: 'o', placedAt: 'yesterday' })).toEqual(['payload.placedAt must match format "date-time"']);
    expect(validatePayload({ type: 'string', format: 'uuid' }, '3f2c1a4e-8b9d-4e2f-a1b0-123456789abc')).toEqual([]);
    expect(validatePayload({ type: 'string', format: 'made-up' }, 'anything')).toEqual([]);
  });

  it('never changes the payload', () => {
    const payload = { orderId: 'o' };
    validatePayload({ type: 'object', properties: { n: { type: 'number', default: 1 } } }, payload);
    expect(payload).toEqual({ orderId: 'o' });
    expect(validatePayload({ properties: { n: { type: 'number' } } }, { n: '5' })).toEqual(['payload.n must be number']);
  });

  it('compiles schemas sharing an $id, or naming a newer draft, independently', () => {
    const a = { $id: 'order', type: 'object', required: ['a'] };
    const b = { $id: 'order', type: 'object', required: ['b'] };
    expect(validatePayload(a, {})).toEqual(['payload.a is required']);
    expect(validatePayload(b, {})).toEqual(['payload.b is required']);
    expect(validatePayload({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string' }, 1)).toEqual([
      'payload must be string',
    ]);
  });

  it('reuses and evicts cached compilations without changing results', () => {
    for (let i = 0; i < 520; i++) {
      expect(validatePayload({ type: 'object', required: [`k${i}`] }, {})).toEqual([`payload.k${i} is required`]);
    }
    expect(validatePayload({ type: 'object', required: ['k0'] }, { k0: 1 })).toEqual([]);
  });

  it('reports an unusable schema instead of throwing', () => {
    expect(validatePayload({ type: 'strange' }, {})).toEqual([expect.stringMatching(/^workflow payload schema is invalid: /)]);
    expect(validatePayload('nope', {})).toEqual(['workflow payload schema is invalid: must be an object']);
  });
});

describe('payloadSchemaProblem', () => {
  it('is undefined for a usable schema and explains an unusable one', () => {
    expect(payloadSchemaProblem(orderSchema)).toBeUndefined();
    expect(payloadSchemaProblem(undefined)).toBeUndefined();
    expect(payloadSchemaProblem({ type: 'strange' })).toMatch(/type/);
    expect(payloadSchemaProblem([])).toBe('must be an object');
  });
});

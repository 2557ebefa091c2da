import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { startTestServer, type TestServer, type TestResponse } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import type { Deps } from '../../src/usecases/deps.js';
import { EncryptedIdempotencyStore } from '../../src/store/encrypted-idempotency-store.js';
import { SqlIdempotencyStore } from '../../src/store/sql/idempotency-store.js';

/**
 * Test-only routes, so these tests do not depend on the resource routes: `things` records every effect
 * it has, `gated` waits until the test opens its gate, `failing` throws (a 500), `rejecting` answers 404.
 */
interface Probe {
  effects: Array<{ name: string }>;
  gate: Gate;
  /** Opened by the gated route when a request reaches its handler. */
  entered: Gate;
  failures: number;
}

interface Gate {
  open: () => void;
  opened: Promise<void>;
}

function newGate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

function newProbe(): Probe {
  return { effects: [], gate: newGate(), entered: newGate(), failures: 0 };
}

function probeRoutes(probe: Probe) {
  return async (app: FastifyInstance, _deps: Deps) => {
    const body = Type.Object({ name: Type.String(), count: Type.Optional(Type.Integer({ default: 1 })) });
    app.post('/test/things', { schema: { body } }, async (request, reply) => {
      const { name } = request.body as { name: string };
      probe.effects.push({ name });
      return reply.status(201).send({ data: { name, effect: probe.effects.length } });
    });
    app.post('/test/gated', async (_request, reply) => {
      probe.entered.open();
      await probe.gate.opened;
      probe.effects.push({ name: 'gated' });
      return reply.status(201).send({ data: { effect: probe.effects.length } });
    });
    app.post('/test/failing', async () => {
      probe.failures++;
      if (probe.failures === 1) throw new Error('boom');
      return { data: { attempt: probe.failures } };
    });
    app.delete('/test/things/:id', async (request, reply) =>
      reply.status(404).send({ statusCode: 404, message: `Thing with id ${(request.params as { id: string }).id} not found`, effect: probe.effects.push({ name: 'delete' }) }),
    );
    app.get('/test/things', async () => ({ data: probe.effects }));
  };
}

/**
 * The stored key read back from the SQL table. Under HERALD_TEST_MODE=scaleout the keys live in Redis
 * (its own contract tests cover it): storage assertions are then skipped and only the HTTP ones run.
 */
function sqlBacked(server: TestServer): boolean {
  const store = server.deps.idempotency;
  return (store instanceof EncryptedIdempotencyStore ? store.inner : store) instanceof SqlIdempotencyStore;
}

/** A stored answer body: encrypted at rest (it may hold secrets), never the plain text. */
function openedBody(server: TestServer, stored: string | null | undefined): string | undefined {
  if (!stored) return undefined;
  expect(stored.startsWith('enc:v1:')).toBe(true);
  return server.container.secretBox.decrypt(stored.slice('enc:'.length));
}

async function storedKey(server: TestServer, environmentId: string, key: string) {
  return server.container.db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where('key', '=', key)
    .executeTakeFirst();
}

describe('Idempotency-Key', () => {
  let server: TestServer;
  let now = Date.parse('2026-11-22T12:00:00.000Z');
  const probe = newProbe();

  beforeAll(async () => {
    server = await startTestServer({ clock: { now: () => now }, appOptions: { extraRoutes: [probeRoutes(probe)] } });
  });
  afterAll(async () => server?.close());

  const post = (path: string, key: string | undefined, body: unknown, extra: { rawBody?: string; apiKey?: string } = {}) =>
    server.request('POST', path, {
      body: extra.rawBody === undefined ? body : undefined,
      rawBody: extra.rawBody,
      key: extra.apiKey,
      headers: { ...(key ? { 'idempotency-key': key } : {}), ...(extra.rawBody ? { 'content-type': 'application/json' } : {}) },
    });

  it('replays the first answer for the same key, method, path and body, with Idempotency-Replay', async () => {
    const first = await post('/test/things', 'key-replay', { name: 'a', extra: 'x' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-key')).toBe('key-replay');
    expect(first.headers.get('idempotency-replay')).toBeNull();
    const effectsAfterFirst = probe.effects.length;

    // Same JSON with other whitespace and key order: the same request.
    const again = await post('/test/things', 'key-replay', undefined, { rawBody: '{ "extra" : "x",\n  "name":"a" }' });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotency-replay')).toBe('true');
    expect(again.headers.get('idempotency-key')).toBe('key-replay');
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
    expect(probe.effects.length).toBe(effectsAfterFirst);

    if (sqlBacked(server)) {
      const row = await storedKey(server, server.devEnvironmentId, 'key-replay');
      expect(row).toMatchObject({ method: 'POST', path: '/test/things', state: 'done', response_status: 201 });
      expect(row!.response_body).not.toBe(first.text);
      expect(openedBody(server, row!.response_body)).toBe(first.text);
      expect(row!.expires_at).toBe(new Date(now + server.config.idempotencyTtlSeconds * 1000).toISOString());
    }
  });

  it('answers 422 with the errors shape when the key is reused with another body, method or path', async () => {
    await post('/test/things', 'key-mismatch', { name: 'first' });
    const effects = probe.effects.length;

    // A field the schema would strip still makes it another body: the hash is over what was sent.
    for (const response of [
      await post('/test/things', 'key-mismatch', { name: 'other' }),
      await post('/test/things', 'key-mismatch', { name: 'first', unknownField: 1 }),
      await post('/test/gated', 'key-mismatch', { name: 'first' }),
      await server.request('DELETE', '/test/things/1', { headers: { 'idempotency-key': 'key-mismatch' } }),
    ]) {
      expect(response.status).toBe(422);
      expectErrorBody(response.body, 422);
      expect(response.body.errors['idempotency-key']).toEqual({ messages: [expect.any(String)], value: 'key-mismatch' });
      expect(response.headers.get('idempotency-key')).toBe('key-mismatch');
    }
    expect(probe.effects.length).toBe(effects);
    if (sqlBacked(server)) expect((await storedKey(server, server.devEnvironmentId, 'key-mismatch'))!.response_status).toBe(201);
  });

  it('scopes keys by environment', async () => {
    const dev = await post('/test/things', 'key-scope', { name: 'dev' });
    const prod = await post('/test/things', 'key-scope', { name: 'prod' }, { apiKey: server.prodKey });
    expect(dev.status).toBe(201);
    expect(prod.status).toBe(201);
    expect(prod.headers.get('idempotency-replay')).toBeNull();
    expect(prod.body.data.name).toBe('prod');
    if (sqlBacked(server)) expect(openedBody(server, (await storedKey(server, server.prodEnvironmentId, 'key-scope'))!.response_body)).toBe(prod.text);
  });

  it('answers 409 with Retry-After: 1 while the first request runs, then replays its answer', async () => {
    probe.gate = newGate();
    probe.entered = newGate();
    const first = post('/test/gated', 'key-gated', {});
    await probe.entered.opened;

    const during = await post('/test/gated', 'key-gated', {});
    expect(during.status).toBe(409);
    expectErrorBody(during.body, 409);
    expect(during.headers.get('retry-after')).toBe('1');
    expect(during.headers.get('idempotency-key')).toBe('key-gated');
    if (sqlBacked(server)) expect((await storedKey(server, server.devEnvironmentId, 'key-gated'))!.state).toBe('in_progress');

    probe.gate.open();
    const done = await first;
    expect(done.status).toBe(201);
    const after = await post('/test/gated', 'key-gated', {});
    expect(after.status).toBe(201);
    expect(after.text).toBe(done.text);
    expect(after.headers.get('idempotency-replay')).toBe('true');
  });

  it('gives concurrent duplicates exactly one effect; the others get 409', async () => {
    probe.gate = newGate();
    const before = probe.effects.length;
    let settled = 0;
    const responses = Array.from({ length: 10 }, () =>
      post('/test/gated', 'key-concurrent', {}).then((response) => {
        if (++settled === 9) probe.gate.open();
        return response;
      }),
    );
    const results = await Promise.all(responses);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array(9).fill(409)]);
    expect(probe.effects.length - before).toBe(1);
    if (sqlBacked(server)) expect((await storedKey(server, server.devEnvironmentId, 'key-concurrent'))!.state).toBe('done');
  });

  it('releases the key after a 5xx so a retry runs again, and stores and replays a 4xx', async () => {
    const failed = await post('/test/failing', 'key-5xx', {});
    expect(failed.status).toBe(500);
    expect(failed.headers.get('idempotency-key')).toBe('key-5xx');
    if (sqlBacked(server)) expect(await storedKey(server, server.devEnvironmentId, 'key-5xx')).toBeUndefined();
    const retried = await post('/test/failing', 'key-5xx', {});
    expect(retried.status).toBe(200);
    expect(retried.body.data.attempt).toBe(2);

    const effects = probe.effects.length;
    const missing = await server.request('DELETE', '/test/things/7', { headers: { 'idempotency-key': 'key-4xx' } });
    expect(missing.status).toBe(404);
    const replayed = await server.request('DELETE', '/test/things/7', { headers: { 'idempotency-key': 'key-4xx' } });
    expect(replayed.status).toBe(404);
    expect(replayed.text).toBe(missing.text);
    expect(replayed.headers.get('idempotency-replay')).toBe('true');
    expect(probe.effects.length).toBe(effects + 1);
    if (sqlBacked(server)) expect((await storedKey(server, server.devEnvironmentId, 'key-4xx'))!.response_status).toBe(404);
  });

  it('does not claim a key for a request that fails validation', async () => {
    const invalid = await post('/test/things', 'key-invalid', { name: { not: 'a string' } });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('idempotency-key')).toBe('key-invalid');
    if (sqlBacked(server)) expect(await storedKey(server, server.devEnvironmentId, 'key-invalid')).toBeUndefined();
    const fixed = await post('/test/things', 'key-invalid', { name: 'ok' });
    expect(fixed.status).toBe(201);
  });

  it('rejects a key over 255 characters with 400 and accepts one of exactly 255', async () => {
    const long = await post('/test/things', 'k'.repeat(256), { name: 'long' });
    expect(long.status).toBe(400);
    expectErrorBody(long.body, 400);
    expect(long.body.message).toEqual([expect.stringMatching(/^idempotency-key must be at most 255 characters/)]);
    const exact = await post('/test/things', 'k'.repeat(255), { name: 'exact' });
    expect(exact.status).toBe(201);
    if (sqlBacked(server)) expect(await storedKey(server, server.devEnvironmentId, 'k'.repeat(255))).toBeDefined();
  });

  it('accepts and ignores the key on GET, echoing it', async () => {
    const first = await server.request('GET', '/test/things', { headers: { 'idempotency-key': 'key-get' } });
    probe.effects.push({ name: 'between' });
    const second = await server.request('GET', '/test/things', { headers: { 'idempotency-key': 'key-get' } });
    expect(first.status).toBe(200);
    expect(second.body.data.length).toBe(first.body.data.length + 1);
    expect(second.headers.get('idempotency-key')).toBe('key-get');
    expect(second.headers.get('idempotency-replay')).toBeNull();
    if (sqlBacked(server)) expect(await storedKey(server, server.devEnvironmentId, 'key-get')).toBeUndefined();
  });

  it('never reaches idempotency without authentication', async () => {
    const response = await server.request('POST', '/test/things', { key: null, body: { name: 'x' }, headers: { 'idempotency-key': 'key-anon' } });
    expect(response.status).toBe(401);
    if (sqlBacked(server)) expect(await storedKey(server, server.devEnvironmentId, 'key-anon')).toBeUndefined();
  });

  it('treats an expired key as new', async (context) => {
    // Redis expires keys on its own clock, not the injected one.
    if (!sqlBacked(server)) return context.skip();
    await post('/test/things', 'key-expiry', { name: 'before' });
    now += (server.config.idempotencyTtlSeconds + 1) * 1000;
    const after = await post('/test/things', 'key-expiry', { name: 'after' });
    expect(after.status).toBe(201);
    expect(after.headers.get('idempotency-replay')).toBeNull();
    expect(openedBody(server, (await storedKey(server, server.devEnvironmentId, 'key-expiry'))!.response_body)).toBe(after.text);
  });

  it('with the real POST /v2/subscribers route when it exists: one subscriber, replayed answer', async (context) => {
    if (!server.app.hasRoute({ method: 'POST', url: '/v2/subscribers' })) return context.skip();
    const body = { subscriberId: 'idem-sub-1', firstName: 'Ada' };
    const first = await server.request('POST', '/v2/subscribers', { body, headers: { 'idempotency-key': 'key-subscriber' } });
    expect(first.status).toBe(201);
    await server.request('PATCH', '/v2/subscribers/idem-sub-1', { body: { firstName: 'Grace' } });
    const replay = await server.request('POST', '/v2/subscribers', { body, headers: { 'idempotency-key': 'key-subscriber' } });
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotency-replay')).toBe('true');
    const stored = await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'idem-sub-1');
    expect(stored?.firstName).toBe('Grace');
  });
});

describe('Idempotency-Key across a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-idem-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('replays the stored answer after the server restarts on the same data directory', async () => {
    const probe = newProbe();
    let first: TestResponse;
    const before = await startTestServer({ dataDir, appOptions: { extraRoutes: [probeRoutes(probe)] } });
    try {
      first = await before.request('POST', '/test/things', { body: { name: 'durable' }, headers: { 'idempotency-key': 'key-restart' } });
      expect(first.status).toBe(201);
    } finally {
      await before.close({ keepData: true });
    }
    const after = await startTestServer({ dataDir, appOptions: { extraRoutes: [probeRoutes(probe)] } });
    try {
      const replay = await after.request('POST', '/test/things', { body: { name: 'durable' }, headers: { 'idempotency-key': 'key-restart' } });
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(first.text);
      expect(replay.headers.get('idempotency-replay')).toBe('true');
      expect(probe.effects).toHaveLength(1);
    } finally {
      await after.close();
    }
  });
});

import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { readGathering } from '../../src/http/read-gathering.js';

describe('readGathering', () => {
  const apps: Array<ReturnType<typeof Fastify>> = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('lets the reads of one turn go on together after it, and writes at once', async () => {
    const app = Fastify();
    apps.push(app);
    const order: string[] = [];
    app.addHook('onRequest', readGathering());
    app.get('/r/:n', async (request) => {
      order.push(`read ${(request.params as { n: string }).n}`);
      return {};
    });
    app.delete('/w', async () => {
      order.push('write');
      return {};
    });
    await app.ready();
    setImmediate(() => order.push('end of turn'));
    const responses = await Promise.all([app.inject('/r/1'), app.inject({ method: 'DELETE', url: '/w' }), app.inject('/r/2')]);
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200]);
    // The write did not wait for the turn; both reads ran after it, one after the other from one callback.
    expect(order.indexOf('write')).toBeLessThan(order.indexOf('read 1'));
    expect(order.slice(-2)).toEqual(['read 1', 'read 2']);
  });
});

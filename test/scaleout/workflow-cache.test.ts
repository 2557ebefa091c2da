import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servicesAvailable } from '../helpers/databases.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';

/**
 * Scale-out caches workflows per process (store/sql/workflow-cache.ts, issue 24). A workflow written through one API
 * process must be what the next trigger through another API process, and the worker processing it, use: the write
 * announces itself over Redis pub/sub before it answers. Each step below first fills the other processes' caches
 * with the old workflow, then writes, then triggers at once.
 */
const PROCESS_TEST_MS = 240_000;

describe('workflow cache across processes', () => {
  let processes: ScaleoutProcesses | undefined;

  beforeAll(async () => {
    if (!(await servicesAvailable(['PostgreSQL', 'Redis']))) return;
    processes = await startScaleoutProcesses({ apis: 2, workers: 1 });
  }, PROCESS_TEST_MS);

  afterAll(async () => {
    await processes?.close();
  });

  it('a write through one API process is seen by the next trigger through another, and by the worker', async (context) => {
    if (!processes) return context.skip();
    const [writer, reader] = processes.apis.map((api) => api.url);
    const call = async (url: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `ApiKey ${SCALEOUT_SECRET}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    };
    const workflow = (text: string, active = true) => ({
      name: 'cached',
      active,
      steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: text } }],
    });
    const bodyOfLastMessage = async (subscriberId: string) => {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const { body } = await call(writer!, 'GET', `/v1/messages?subscriberId=${subscriberId}&channel=in_app&limit=1`);
        if (body.data.length > 0) return body.data[0].content as string;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no in-app message for ${subscriberId} after 30 s`);
    };
    const trigger = (url: string, to: string) => call(url, 'POST', '/v1/events/trigger', { name: 'cached', to, payload: {} });

    expect((await call(writer!, 'POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true })).status).toBe(201);
    expect((await call(writer!, 'POST', '/v2/workflows', { workflowId: 'cached', ...workflow('first') })).status).toBe(201);
    // Both processes that read workflows on the trigger path (the reading API, the worker) now hold "first".
    expect((await trigger(reader!, 's1')).status).toBe(201);
    expect(await bodyOfLastMessage('s1')).toBe('first');

    for (let round = 2; round <= 4; round++) {
      expect((await call(writer!, 'PUT', '/v2/workflows/cached', workflow(`version ${round}`))).status).toBe(200);
      expect((await trigger(reader!, `s${round}`)).status).toBe(201);
      expect(await bodyOfLastMessage(`s${round}`)).toBe(`version ${round}`);
    }

    // Deactivated through one process: refused at once through the other.
    expect((await call(writer!, 'PATCH', '/v2/workflows/cached', { active: false })).status).toBe(200);
    const inactive = await trigger(reader!, 's5');
    expect(inactive.status).toBe(422);
    expect(JSON.stringify(inactive.body)).toContain('is not active');
    expect((await call(writer!, 'PATCH', '/v2/workflows/cached', { active: true })).status).toBe(200);
    expect((await trigger(reader!, 's6')).status).toBe(201);

    // Deleted through one process: unknown at once through the other.
    expect((await call(writer!, 'DELETE', '/v2/workflows/cached')).status).toBe(204);
    const deleted = await trigger(reader!, 's7');
    expect(deleted.status).toBe(422);
    expect(JSON.stringify(deleted.body)).toContain('cannot be found');
  }, PROCESS_TEST_MS);
});

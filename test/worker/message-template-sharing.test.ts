import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createWorkflow, messagesOf, trigger } from './engine-helpers.js';

/**
 * The messages of one workflow, read from the workflow cache, share one template object (workflowTemplateOf), so the
 * store makes its snapshot's JSON text once for that object rather than once per message (TemplateSnapshots
 * .idOfTemplate; JSON.stringify of ~1 KB per delivery before). The messages read back with the template as before.
 */
const isTemplate = (value: unknown) => value !== null && typeof value === 'object' && 'notificationGroup' in value && 'steps' in value;

describe('message templates of a cached workflow', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
    await createWorkflow(server, { workflowId: 'shared-template', name: 'Shared template', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hi {{ payload.n }}' } }] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('are stringified once per cached workflow object, not once per message', async () => {
    const stringify = vi.spyOn(JSON, 'stringify');
    const transactionIds: string[] = [];
    let templateTexts: number;
    try {
      for (let n = 0; n < 6; n++) {
        const response = await trigger(server, { name: 'shared-template', to: `sharer-${n}`, payload: { n } });
        expect(response.status).toBe(201);
        transactionIds.push(response.body.data.transactionId);
        await server.waitForIdle();
      }
    } finally {
      templateTexts = stringify.mock.calls.filter(([value]) => isTemplate(value)).length;
      stringify.mockRestore();
    }
    // The first trigger reads the workflow before it is cached (its own template), the next ones share the cached one.
    expect(templateTexts).toBeLessThanOrEqual(2);
    const templates = [];
    for (const transactionId of transactionIds) {
      const [message] = await messagesOf(server, transactionId);
      templates.push(message.template);
    }
    expect(templates[0]).toMatchObject({ name: 'Shared template', triggers: [{ identifier: 'shared-template' }] });
    for (const template of templates) expect(template).toEqual(templates[0]);
  });
});

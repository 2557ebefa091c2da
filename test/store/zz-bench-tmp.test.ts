import { it } from 'vitest';
import { buildMessage, insertMessages, insertSubscriber, scopeOf } from '../helpers/factories.js';
import { startTestServer } from '../helpers/test-server.js';
it('times', async () => {
  let t = Date.now();
  const server = await startTestServer();
  console.log('start', Date.now() - t); t = Date.now();
  const dev = await scopeOf(server.deps.store, server.devEnvironmentId);
  const s = await insertSubscriber(server.deps.store, dev);
  const msgs = Array.from({ length: 5000 }, () => buildMessage(s));
  console.log('build', Date.now() - t); t = Date.now();
  await insertMessages(server.deps.store, msgs);
  console.log('insert', Date.now() - t); t = Date.now();
  await server.close();
}, 120000);

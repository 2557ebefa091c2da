import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { errorBody } from './error-handler.js';

/**
 * Where a server process is in its life, for `GET /health/ready`: `starting` until everything it runs has started
 * (listening comes before the worker and the setup link), `ready`, then `draining` from SIGTERM on. Liveness does
 * not depend on it: a draining process is alive.
 */
export type LifecycleState = 'starting' | 'ready' | 'draining';

export class Lifecycle {
  constructor(public state: LifecycleState = 'starting') {}

  ready(): void {
    if (this.state === 'starting') this.state = 'ready';
  }

  drain(): void {
    this.state = 'draining';
  }
}

/**
 * Stops HTTP gracefully within `deadline` (epoch ms): marks the process not ready, closes the listener (no new
 * connections; idle keep-alive ones are closed, a request arriving on a busy one is answered 503 by Fastify) and waits
 * for the requests in flight. Past the deadline the remaining connections are cut, so a hung request cannot hold the
 * shutdown. Sockets close first (buildApp's preClose hook).
 */
export async function drainHttp(app: FastifyInstance, lifecycle: Lifecycle | undefined, deadline: number): Promise<void> {
  lifecycle?.drain();
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      app.log.warn('shutdown timeout reached: closing the connections still open');
      app.server.closeAllConnections();
      resolve();
    }, Math.max(0, deadline - Date.now()));
  });
  const closed = app.close();
  await Promise.race([closed, cut]);
  clearTimeout(timer);
  // After a cut, close() settles once its hooks finish; the container is closed after this either way.
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
}

/**
 * While draining, a new request (one that arrives on a kept-alive connection after SIGTERM) is answered 503 in the
 * API's error shape with Retry-After, and its connection is closed so the client reconnects elsewhere. Registered
 * first, in place of Fastify's own bare 503 (`return503OnClosing`). The probes answer for themselves.
 */
export function lifecycleGate(lifecycle: Lifecycle) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (lifecycle.state !== 'draining' || request.url.startsWith('/health')) return done();
    void reply
      .status(503)
      .headers({ 'retry-after': '1', connection: 'close' })
      .send(errorBody(request, 503, 'The server is shutting down; retry the request'));
  };
}

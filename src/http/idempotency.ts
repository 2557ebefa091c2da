import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../usecases/deps.js';
import { assertIdempotencyKey, claimIdempotencyKey, hashRequestBody } from '../usecases/requests/claim-idempotency-key.js';
import { finishIdempotencyKey, releaseIdempotencyKey } from '../usecases/requests/finish-idempotency-key.js';

const HONOURED_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Response headers replayed with the stored body; rate-limit headers describe the replay itself. */
const STORED_HEADERS = ['content-type', 'location'];

interface IdempotencyState {
  key: string;
  environmentId: string;
  bodyHash: string;
  /** This request holds the claim and must complete or release it. */
  claimed: boolean;
  settled: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: IdempotencyState;
  }
}

function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers['idempotency-key'];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function storedHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of STORED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return headers;
}

/**
 * Idempotency-Key (API-CONVENTIONS.md). The body hash is taken in preValidation, before schema
 * validation strips or defaults fields, so it is the body the client sent. The claim happens in
 * preHandler: a request that fails auth or validation never holds a key. onSend stores the answer
 * (or releases the claim on a 5xx); every answer to a request with a key echoes it.
 * The hooks run on every request, not-found answers included, and are synchronous until a request holds a key:
 * most requests carry none and pay no promise.
 */
export const idempotencyPlugin = fp(async (app: FastifyInstance, opts: { deps: Deps }) => {
  const { deps } = opts;
  app.decorateRequest('idempotency', undefined);

  app.addHook('onRequest', (request, _reply, done) => {
    const key = idempotencyKeyOf(request);
    // Not for Inbox callers: keys are scoped by environment, so one subscriber could replay another's stored answer.
    if (!key || !request.caller || request.caller.kind === 'subscriber' || !HONOURED_METHODS.has(request.method)) return done();
    assertIdempotencyKey(key);
    request.idempotency = { key, environmentId: request.caller.environmentId, bodyHash: '', claimed: false, settled: false };
    done();
  });

  app.addHook('preValidation', (request, _reply, done) => {
    if (request.idempotency) request.idempotency.bodyHash = hashRequestBody(request.body);
    done();
  });

  app.addHook('preHandler', (request, reply, done) => {
    const state = request.idempotency;
    if (!state) return done();
    claimIdempotencyKey(deps, { environmentId: state.environmentId, key: state.key, method: request.method, path: request.url, bodyHash: state.bodyHash }).then(
      (outcome) => {
        if (outcome.kind === 'claimed') {
          state.claimed = true;
          return done();
        }
        // Answered here: the handler does not run.
        void reply
          .code(outcome.status)
          .headers({ 'content-type': 'application/json; charset=utf-8', ...outcome.headers, 'idempotency-replay': 'true' })
          .send(outcome.body);
      },
      done,
    );
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const key = idempotencyKeyOf(request);
    if (key) void reply.header('idempotency-key', key);
    const state = request.idempotency;
    if (!state?.claimed || state.settled) return done(null, payload);
    state.settled = true;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    const stored = body === undefined ? releaseIdempotencyKey(deps, state) : finishIdempotencyKey(deps, { ...state, status: reply.statusCode, body, headers: storedHeaders(reply) });
    stored
      .catch((error: unknown) => {
        // The answer itself is already decided; losing its stored copy must not turn it into an error.
        request.log.warn({ err: error, idempotencyKey: state.key }, 'idempotency key not stored');
      })
      .then(() => done(null, payload));
  });

  // A request that ended without onSend (hijacked reply) must not hold its key until expiry.
  app.addHook('onResponse', (request, _reply, done) => {
    const state = request.idempotency;
    if (!state?.claimed || state.settled) return done();
    state.settled = true;
    releaseIdempotencyKey(deps, state)
      .catch((error: unknown) => request.log.warn({ err: error }, 'idempotency key not released'))
      .then(() => done());
  });
});

import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../usecases/deps.js';
import { assertIdempotencyKey, claimIdempotencyKey, hashRequestBody, renewIdempotencyClaims } from '../usecases/requests/claim-idempotency-key.js';
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
  /** Set with the claim: the same on a run after a crash as on the first (see IdempotencyRecord.seed). */
  seed?: string;
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

/**
 * A stable id for what this request creates when the client names none (a trigger's transactionId): the claim's
 * seed, so a request run again after its process died finds what the first run stored instead of creating it
 * twice. `index` tells apart several ids of one request (bulk). Undefined without an Idempotency-Key.
 */
export function idempotentId(request: FastifyRequest, index?: number): string | undefined {
  const seed = request.idempotency?.seed;
  if (!seed || index === undefined) return seed;
  const hex = createHash('sha256').update(`${seed}:${index}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
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

  // Claims this process holds, renewed several times per lease so that only a dead process's claims lapse.
  const held = new Set<IdempotencyState>();
  const heartbeat = setInterval(() => {
    if (held.size === 0) return;
    renewIdempotencyClaims(deps, [...held]).catch((error: unknown) => app.log.warn({ err: error }, 'idempotency claims not renewed'));
  }, Math.max(250, Math.floor(deps.config.idempotencyLeaseMs / 4)));
  heartbeat.unref();
  app.addHook('onClose', (_instance, done) => {
    clearInterval(heartbeat);
    done();
  });

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
          state.seed = outcome.seed;
          held.add(state);
          if (outcome.resumed) request.log.info({ idempotencyKey: state.key }, 'idempotency key taken over from a claim whose process stopped');
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
    held.delete(state);
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
    held.delete(state);
    releaseIdempotencyKey(deps, state)
      .catch((error: unknown) => request.log.warn({ err: error }, 'idempotency key not released'))
      .then(() => done());
  });
});

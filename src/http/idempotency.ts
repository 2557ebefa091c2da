import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../usecases/deps.js';

/** Placeholder: Idempotency-Key handling (API-CONVENTIONS.md) is implemented by its owner. */
export const idempotencyPlugin = fp(async (_app: FastifyInstance, _opts: { deps: Deps }) => {});

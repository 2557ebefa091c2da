import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../usecases/deps.js';

/** Placeholder: per-environment rate limits (API-CONVENTIONS.md) are implemented by their owner. */
export const rateLimitPlugin = fp(async (_app: FastifyInstance, _opts: { deps: Deps }) => {});

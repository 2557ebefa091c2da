import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';

/** Placeholder: the owning engineer registers the subscribers routes here. */
export const subscribersRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async () => {};

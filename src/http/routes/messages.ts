import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';

/** Placeholder: the owning engineer registers the messages routes here. */
export const messagesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async () => {};

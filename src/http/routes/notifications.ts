import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';

/** Placeholder: the owning engineer registers the notifications routes here. */
export const notificationsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async () => {};

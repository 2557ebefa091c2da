import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';

/** Placeholder: the owning engineer registers the integrations routes here. */
export const integrationsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async () => {};

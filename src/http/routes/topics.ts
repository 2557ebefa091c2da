import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';

export const topicsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async () => {};

import { Type, type Static } from '@sinclair/typebox';
import type { Environment } from '../../domain/types.js';

/**
 * Novu's EnvironmentResponseDto. `identifier` is the public application identifier the Inbox clients send.
 * `apiKeys` is left out: Herald keeps keys hashed and encrypted and never shows one again after creating it.
 */
export const EnvironmentResponse = Type.Object({
  _id: Type.String(),
  name: Type.String(),
  _organizationId: Type.String(),
  identifier: Type.String(),
  type: Type.Union([Type.Literal('dev'), Type.Literal('prod')]),
  createdAt: Type.String(),
});
export type EnvironmentResponse = Static<typeof EnvironmentResponse>;

export function toEnvironmentResponse(environment: Environment): EnvironmentResponse {
  return {
    _id: environment._id,
    name: environment.name,
    _organizationId: environment._organizationId,
    identifier: environment.identifier,
    type: environment.name === 'production' ? 'prod' : 'dev',
    createdAt: environment.createdAt,
  };
}

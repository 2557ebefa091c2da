import { Type } from '@sinclair/typebox';
import { FreeObject, IsoDateTime } from './common.js';

export const BridgeUrlBody = Type.Object({
  bridgeUrl: Type.String({ minLength: 1, maxLength: 2000, description: 'The app\'s @novu/framework endpoint, e.g. https://app.example.com/api/novu' }),
});

export const SyncQuery = Type.Object({
  source: Type.Optional(Type.String({ description: 'Who syncs (`cli`, `sdk`); recorded by Novu, ignored by Herald' })),
});

export const BridgeDiffResponse = Type.Object({
  created: Type.Array(Type.String()),
  updated: Type.Array(Type.String()),
  unchanged: Type.Array(Type.String()),
  deleted: Type.Array(Type.String()),
});

export const BridgeStatusResponse = Type.Object({
  bridgeUrl: Type.Union([Type.String(), Type.Null()]),
  status: Type.String({ description: '`ok`, `unreachable` (see `error`) or `not_synced`' }),
  health: Type.Optional(FreeObject),
  error: Type.Optional(Type.String()),
  syncedAt: Type.Optional(IsoDateTime),
});

export const BridgeValidateResponse = Type.Object({ isValid: Type.Boolean(), error: Type.Optional(Type.String()) });

export const StepParams = Type.Object({ workflowId: Type.String(), stepId: Type.String() });

export const StepControlsResponse = Type.Object({
  workflowId: Type.String(),
  stepId: Type.String(),
  type: Type.String(),
  values: FreeObject,
  schema: FreeObject,
  updatedAt: Type.Optional(IsoDateTime),
});

export const PutStepControlsBody = Type.Object({
  variables: Type.Optional(FreeObject),
  controls: Type.Optional(FreeObject),
});

export const PreviewStepBody = Type.Object({
  controls: Type.Optional(FreeObject),
  payload: Type.Optional(FreeObject),
  subscriberId: Type.Optional(Type.String({ minLength: 1 })),
});

export const PreviewStepResponse = Type.Object({
  outputs: FreeObject,
  providers: FreeObject,
  options: FreeObject,
  metadata: Type.Optional(FreeObject),
});

import { Type } from '@sinclair/typebox';

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(schema: T) => Type.Union([schema, Type.Null()]);

const Window = (variable: string) =>
  Type.Object({
    days: Nullable(Type.Integer({ description: 'null: kept forever' })),
    deletesBefore: Nullable(Type.String({ description: 'rows created before this time are deleted by the next sweep' })),
    variable: Type.Literal(variable),
  });

export const RetentionSettingsSchema = Type.Object({
  events: Window('HERALD_RETENTION_DAYS'),
  messages: Window('HERALD_MESSAGE_RETENTION_DAYS'),
  sweepIntervalSeconds: Type.Integer(),
  database: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
  lastSweep: Type.Union([
    Type.Object({
      owner: Type.String(),
      startedAt: Type.String(),
      finishedAt: Type.String(),
      events: Type.Integer(),
      jobs: Type.Integer(),
      executionDetails: Type.Integer(),
      triggers: Type.Integer(),
      messages: Type.Integer(),
      reclaimedPages: Type.Integer(),
      interrupted: Type.Boolean(),
    }),
    Type.Null(),
  ]),
});

import { Type, type Static } from '@sinclair/typebox';
import { OVERVIEW_RANGES } from '../../domain/overview.js';

export const OverviewQuery = Type.Object({
  range: Type.Optional(Type.Union(OVERVIEW_RANGES.map((range) => Type.Literal(range)), { default: '24h', description: '24h, 7d, 30d, or custom with from and to' })),
  from: Type.Optional(Type.String({ description: 'ISO 8601; with range=custom, widened down to its hour' })),
  to: Type.Optional(Type.String({ description: 'ISO 8601; with range=custom, widened up to its hour' })),
});
export type OverviewQueryType = Static<typeof OverviewQuery>;

const Count = Type.Integer({ minimum: 0 });
const WorkflowRef = {
  workflowId: Type.String({ description: "The workflow's _id ('' when the steps had none)" }),
  name: Type.String(),
  identifier: Type.Optional(Type.String({ description: 'The trigger identifier' })),
};
const Latency = {
  count: Type.Integer({ description: 'Messages sent in the range with a measured latency' }),
  p50Ms: Type.Optional(Type.Integer({ description: 'Median trigger-to-delivery time, estimated from a fixed histogram' })),
  p95Ms: Type.Optional(Type.Integer()),
};

export const OverviewSchema = Type.Object({
  range: Type.Object({
    from: Type.String({ description: 'Inclusive, on an hour (UTC)' }),
    to: Type.String({ description: 'Exclusive, on an hour (UTC)' }),
    bucket: Type.Union([Type.Literal('hour'), Type.Literal('day')], { description: 'Hourly up to 72 hours, else per UTC day' }),
  }),
  channels: Type.Array(Type.String()),
  series: Type.Array(Type.Object({ start: Type.String(), counts: Type.Record(Type.String(), Count) }), { description: 'Messages sent per channel per bucket' }),
  outcomes: Type.Object(
    { sent: Count, failed: Count, skipped: Count, delivered: Count, bounced: Count },
    { description: 'Channel steps that ended in the range; delivered and bounced stay 0 until providers report them' },
  ),
  failuresByProvider: Type.Array(Type.Object({ providerId: Type.String(), channel: Type.String(), count: Count })),
  failuresByWorkflow: Type.Array(Type.Object({ ...WorkflowRef, count: Count })),
  topWorkflows: Type.Array(Type.Object({ ...WorkflowRef, sent: Count, failed: Count, skipped: Count })),
  inApp: Type.Object({
    sent: Count,
    read: Count,
    seen: Count,
    readRate: Type.Optional(Type.Number({ description: 'Of the in-app messages sent in the range, the share read now' })),
    seenRate: Type.Optional(Type.Number()),
  }),
  latency: Type.Object({ ...Latency, byChannel: Type.Array(Type.Object({ channel: Type.String(), ...Latency })) }),
});

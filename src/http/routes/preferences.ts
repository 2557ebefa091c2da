import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { DeliverySchedule } from '../../domain/delivery-schedule.js';
import type { Deps } from '../../usecases/deps.js';
import { getSubscriberPreferences } from '../../usecases/preferences/get-subscriber-preferences.js';
import { patchSubscriberPreferences } from '../../usecases/preferences/patch-subscriber-preferences.js';
import { updateGlobalPreference } from '../../usecases/preferences/update-global-preference.js';
import { updateWorkflowPreferences } from '../../usecases/preferences/update-workflow-preferences.js';
import { callerOf } from '../auth.js';
import { DataEnvelope, IdempotencyHeaders, commonErrorResponses } from '../schemas/common.js';
import {
  BulkPreferencesBody,
  CriticalityQuery,
  PatchPreferencesBody,
  PreferenceLevelParams,
  SubscriberPreferenceParams,
  V1GlobalPreferenceBody,
  V1GlobalRow,
  V1PreferenceRow,
  V1WorkflowPreferenceBody,
  V2LevelPreference,
  V2SubscriberPreferences,
  WorkflowPreferenceParams,
  toV1GlobalRow,
  toV1PreferenceRow,
  toV2LevelPreference,
  toV2Preferences,
} from '../schemas/preference.js';

const tags = ['Subscriber preferences'];

/** Novu's subscriber preference routes, v2 (`@novu/api`) and v1 (`@novu/node`), for API-key and session callers. */
export const preferencesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/v2/subscribers/:subscriberId/preferences',
    {
      schema: {
        tags,
        summary: "A subscriber's global and per-workflow preferences",
        params: SubscriberPreferenceParams,
        querystring: CriticalityQuery,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(V2SubscriberPreferences), ...commonErrorResponses },
      },
    },
    async (request) => {
      const view = await getSubscriberPreferences(deps, {
        environmentId: callerOf(request).environmentId,
        subscriberId: request.params.subscriberId,
        criticality: request.query.criticality,
      });
      return { data: toV2Preferences(view) };
    },
  );

  app.patch(
    '/v2/subscribers/:subscriberId/preferences',
    {
      schema: {
        tags,
        summary: "Update a subscriber's global preference (and schedule), or one workflow's with workflowId",
        params: SubscriberPreferenceParams,
        body: PatchPreferencesBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(V2SubscriberPreferences), ...commonErrorResponses },
      },
    },
    async (request) => {
      const { channels, workflowId, schedule } = request.body;
      const view = await patchSubscriberPreferences(deps, {
        environmentId: callerOf(request).environmentId,
        subscriberId: request.params.subscriberId,
        channels,
        workflowId,
        schedule: schedule as DeliverySchedule | null | undefined,
      });
      return { data: toV2Preferences(view) };
    },
  );

  app.patch(
    '/v2/subscribers/:subscriberId/preferences/bulk',
    {
      schema: {
        tags,
        summary: "Update a subscriber's preferences of up to 100 workflows at once",
        params: SubscriberPreferenceParams,
        body: BulkPreferencesBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(Type.Array(V2LevelPreference)), ...commonErrorResponses },
      },
    },
    async (request) => {
      const views = await updateWorkflowPreferences(deps, {
        environmentId: callerOf(request).environmentId,
        subscriberId: request.params.subscriberId,
        changes: request.body.preferences,
        fieldPath: 'preferences',
      });
      return { data: views.map(toV2LevelPreference) };
    },
  );

  app.get(
    '/v1/subscribers/:subscriberId/preferences',
    {
      schema: {
        tags,
        summary: "A subscriber's preference for every active workflow (v1 rows)",
        params: SubscriberPreferenceParams,
        querystring: Type.Object({ includeInactiveChannels: Type.Optional(Type.Boolean({ description: 'accepted; only the channels of active steps are listed' })) }),
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(Type.Array(V1PreferenceRow)), ...commonErrorResponses },
      },
    },
    async (request) => {
      const view = await getSubscriberPreferences(deps, { environmentId: callerOf(request).environmentId, subscriberId: request.params.subscriberId, criticality: 'all' });
      return { data: view.workflows.map(toV1PreferenceRow) };
    },
  );

  app.get(
    '/v1/subscribers/:subscriberId/preferences/:level',
    {
      schema: {
        tags,
        summary: "A subscriber's preferences of one level: global (one row) or template (a row per workflow)",
        params: PreferenceLevelParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(Type.Array(Type.Union([V1PreferenceRow, V1GlobalRow]))), ...commonErrorResponses },
      },
    },
    async (request) => {
      const view = await getSubscriberPreferences(deps, { environmentId: callerOf(request).environmentId, subscriberId: request.params.subscriberId, criticality: 'all' });
      return { data: request.params.level === 'global' ? [toV1GlobalRow(view.global)] : view.workflows.map(toV1PreferenceRow) };
    },
  );

  app.patch(
    '/v1/subscribers/:subscriberId/preferences/:workflowId',
    {
      schema: {
        tags,
        summary: "Update a subscriber's preference for one workflow (its _id or identifier)",
        params: WorkflowPreferenceParams,
        body: V1WorkflowPreferenceBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(V1PreferenceRow), ...commonErrorResponses },
      },
    },
    async (request) => {
      const { channel, enabled } = request.body;
      const [view] = await updateWorkflowPreferences(deps, {
        environmentId: callerOf(request).environmentId,
        subscriberId: request.params.subscriberId,
        changes: [{ workflowId: request.params.workflowId, channels: channel ? { [channel.type]: channel.enabled } : undefined, enabled }],
      });
      return { data: toV1PreferenceRow(view) };
    },
  );

  app.patch(
    '/v1/subscribers/:subscriberId/preferences',
    {
      schema: {
        tags,
        summary: "Update a subscriber's global preference",
        params: SubscriberPreferenceParams,
        body: V1GlobalPreferenceBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(V1GlobalRow), ...commonErrorResponses },
      },
    },
    async (request) => {
      const { enabled, preferences } = request.body;
      const view = await updateGlobalPreference(deps, {
        environmentId: callerOf(request).environmentId,
        subscriberId: request.params.subscriberId,
        enabled,
        channels: preferences ? Object.fromEntries(preferences.map((preference) => [preference.type, preference.enabled])) : undefined,
      });
      return { data: toV1GlobalRow(view.global) };
    },
  );
};

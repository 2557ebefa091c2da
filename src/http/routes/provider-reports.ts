import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PROVIDER_REPORTED_STATES } from '../../domain/types.js';
import { isRecordId } from '../../domain/ids.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Deps } from '../../usecases/deps.js';
import { recordDeliveryReport } from '../../usecases/delivery-reports/record-delivery-report.js';
import { checkRateLimit, RateLimitExceeded } from '../../usecases/requests/check-rate-limit.js';
import { commonErrorResponses } from '../schemas/common.js';
import { StringEnum } from '../schemas/message.js';

const Params = Type.Object({
  organizationId: Type.String(),
  environmentId: Type.String(),
  integrationId: Type.String({ description: "the integration's _id, or its providerId when the environment has one such integration with reports on" }),
});
type Params = { organizationId: string; environmentId: string; integrationId: string };

const RecordedReport = Type.Object({
  eventId: Type.String(),
  state: StringEnum(PROVIDER_REPORTED_STATES),
  vendorEvent: Type.String(),
  outcome: StringEnum(['recorded', 'duplicate', 'unmatched'] as const),
  messageId: Type.Optional(Type.String()),
});
const ReportAnswer = Type.Object({
  data: Type.Object({ subscriptionConfirmed: Type.Boolean(), reports: Type.Array(RecordedReport) }),
});

/**
 * Provider delivery reports in (docs/provider-delivery-reports.md), on Novu's paths. No API key: each vendor's own
 * signature over the raw request proves the report, so the body reaches the reader as the bytes sent (JSON, form
 * data from Twilio, text/plain JSON from SNS). Counted per integration, before the body is read.
 */
export const providerReportsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  // This plugin's own parsers: every content type arrives as a Buffer (the app elsewhere takes JSON only).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const limit = async (request: FastifyRequest, reply: FastifyReply) => {
    const { integrationId } = request.params as Params;
    // A malformed id is answered 404 by the handler without a look-up; it has no counter to use up.
    if (!deps.config.rateLimit.enabled || !isIntegrationSegment(integrationId)) return;
    try {
      const state = await checkRateLimit(deps, { environmentId: `integration:${integrationId}`, category: 'provider-reports' });
      if (state) void reply.headers({ 'ratelimit-limit': String(state.limit), 'ratelimit-remaining': String(state.remaining), 'ratelimit-reset': String(state.resetSeconds), 'ratelimit-policy': state.policy });
    } catch (error) {
      if (error instanceof RateLimitExceeded) {
        void reply.headers({ 'ratelimit-limit': String(error.state.limit), 'ratelimit-remaining': '0', 'ratelimit-reset': String(error.state.resetSeconds), 'ratelimit-policy': error.state.policy });
      }
      throw error;
    }
  };

  for (const channel of ['email', 'sms'] as const) {
    app.post(
      `/v1/webhooks/organizations/:organizationId/environments/:environmentId/${channel}/:integrationId`,
      {
        config: { public: true },
        onRequest: limit,
        schema: {
          tags: ['Provider delivery reports'],
          summary: `A delivery report from an ${channel} provider (signed by the vendor; no API key)`,
          description:
            'SendGrid, Mailgun, Postmark, Amazon SES (SNS) and Resend for email; Twilio for SMS. The body is read as sent; ' +
            'the vendor signature is checked against the integration (configurations.inboundWebhookEnabled/SigningKey).',
          security: [],
          params: Params,
          response: { 200: ReportAnswer, ...commonErrorResponses },
        },
      },
      async (request, reply) => {
        const { organizationId, environmentId, integrationId } = request.params;
        if (!isRecordId(organizationId) || !isRecordId(environmentId) || !isIntegrationSegment(integrationId)) {
          throw NotFoundError.entity('Integration', integrationId);
        }
        const result = await recordDeliveryReport(deps, {
          organizationId,
          environmentId,
          integrationId,
          channel,
          request: {
            url: (deps.config.publicUrl ?? `${request.protocol}://${request.headers.host ?? ''}`) + request.url,
            headers: headersOf(request),
            body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          },
        });
        return reply.status(200).send({ data: result });
      },
    );
  }
};

/** An integration id, or a provider id in its place (Novu's `providerOrIntegrationId`). */
function isIntegrationSegment(value: string): boolean {
  return isRecordId(value) || /^[a-z][a-z0-9-]{1,40}$/.test(value);
}

function headersOf(request: FastifyRequest): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}

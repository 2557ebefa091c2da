import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest, onSendAsyncHookHandler } from 'fastify';
import type { AuditEntry } from '../domain/dashboard.js';
import { normalizeEmail } from '../domain/dashboard.js';
import type { Deps } from '../usecases/deps.js';
import { recordAudit, type AuditInput } from '../usecases/dashboard/record-audit.js';

/**
 * The audit log is written here and nowhere else: one table of the audited operations, keyed by method and route,
 * and one onSend hook that records each answered one (before the answer leaves, so a client that reads the log next
 * finds the entry). Sign-ins are recorded when refused as well; everything else when it succeeded.
 */
interface AuditRule {
  action: string;
  /**
   * The record acted on: path parameters (several are joined with `/`: a subscriber's credentials for one provider),
   * or the `_id` (or `user._id`) of the response's `data`.
   */
  target?: { type: string; param?: string | string[] };
  /** Also record refusals (401, 429, 400) of this operation. */
  failuresToo?: boolean;
}

/**
 * Sign-ins, credential changes (integrations, subscribers' channel credentials), key changes, configuration changes
 * that decide what gets sent (workflows, the primary integration) and every deletion of a record.
 */
export const AUDITED_OPERATIONS: Record<string, AuditRule> = {
  // Sign-ins and users
  'POST /v1/dashboard/login': { action: 'auth.login', target: { type: 'user' }, failuresToo: true },
  'POST /v1/dashboard/setup': { action: 'auth.setup', target: { type: 'user' }, failuresToo: true },
  'POST /v1/dashboard/invites/accept': { action: 'user.joined', target: { type: 'user' }, failuresToo: true },
  'POST /v1/dashboard/logout': { action: 'auth.logout' },
  'PATCH /v1/dashboard/users/:userId': { action: 'user.updated', target: { type: 'user', param: 'userId' } },
  'DELETE /v1/dashboard/users/:userId': { action: 'user.deleted', target: { type: 'user', param: 'userId' } },
  'POST /v1/dashboard/invites': { action: 'invite.created', target: { type: 'invite' } },
  'DELETE /v1/dashboard/invites/:inviteId': { action: 'invite.deleted', target: { type: 'invite', param: 'inviteId' } },
  // Keys
  'POST /v1/dashboard/api-keys': { action: 'api_key.created', target: { type: 'api_key' } },
  'DELETE /v1/dashboard/api-keys/:keyId': { action: 'api_key.revoked', target: { type: 'api_key', param: 'keyId' } },
  // Provider credentials: integrations and subscribers' channel credentials
  'POST /v1/integrations': { action: 'integration.created', target: { type: 'integration' } },
  'PUT /v1/integrations/:integrationId': { action: 'integration.updated', target: { type: 'integration', param: 'integrationId' } },
  'POST /v1/integrations/:integrationId/set-primary': { action: 'integration.primary_set', target: { type: 'integration', param: 'integrationId' } },
  'DELETE /v1/integrations/:integrationId': { action: 'integration.deleted', target: { type: 'integration', param: 'integrationId' } },
  'PUT /v1/subscribers/:subscriberId/credentials': { action: 'subscriber.credentials_set', target: { type: 'subscriber', param: 'subscriberId' } },
  'PATCH /v1/subscribers/:subscriberId/credentials': { action: 'subscriber.credentials_updated', target: { type: 'subscriber', param: 'subscriberId' } },
  'DELETE /v1/subscribers/:subscriberId/credentials/:providerId': {
    action: 'subscriber.credentials_deleted',
    target: { type: 'subscriber_credentials', param: ['subscriberId', 'providerId'] },
  },
  // Workflows
  'POST /v2/workflows': { action: 'workflow.created', target: { type: 'workflow' } },
  'PUT /v2/workflows/:workflowId': { action: 'workflow.updated', target: { type: 'workflow', param: 'workflowId' } },
  'PATCH /v2/workflows/:workflowId': { action: 'workflow.updated', target: { type: 'workflow', param: 'workflowId' } },
  'DELETE /v2/workflows/:workflowId': { action: 'workflow.deleted', target: { type: 'workflow', param: 'workflowId' } },
  // Other deletions
  'DELETE /v2/subscribers/:subscriberId': { action: 'subscriber.deleted', target: { type: 'subscriber', param: 'subscriberId' } },
  'DELETE /v1/subscribers/:subscriberId': { action: 'subscriber.deleted', target: { type: 'subscriber', param: 'subscriberId' } },
  'DELETE /v2/topics/:topicKey': { action: 'topic.deleted', target: { type: 'topic', param: 'topicKey' } },
  'DELETE /v1/topics/:topicKey': { action: 'topic.deleted', target: { type: 'topic', param: 'topicKey' } },
  'DELETE /v2/topics/:topicKey/subscriptions': { action: 'topic.subscriptions_deleted', target: { type: 'topic', param: 'topicKey' } },
  'POST /v1/topics/:topicKey/subscribers/removal': { action: 'topic.subscriptions_deleted', target: { type: 'topic', param: 'topicKey' } },
  'DELETE /v1/messages/:messageId': { action: 'message.deleted', target: { type: 'message', param: 'messageId' } },
  'DELETE /v1/messages/transaction/:transactionId': { action: 'message.deleted', target: { type: 'transaction', param: 'transactionId' } },
  // A server (API key) deleting a subscriber's in-app messages: an operator's action, unlike the same in the Inbox.
  'DELETE /v2/subscribers/:subscriberId/notifications/:notificationId': { action: 'message.deleted', target: { type: 'message', param: 'notificationId' } },
  'POST /v2/subscribers/:subscriberId/notifications/delete': { action: 'message.deleted', target: { type: 'subscriber', param: 'subscriberId' } },
  // Outbound webhook endpoints: where events go and the secret that signs them
  'POST /v2/webhooks/endpoints': { action: 'webhook_endpoint.created', target: { type: 'webhook_endpoint' } },
  'PATCH /v2/webhooks/endpoints/:id': { action: 'webhook_endpoint.updated', target: { type: 'webhook_endpoint', param: 'id' } },
  'DELETE /v2/webhooks/endpoints/:id': { action: 'webhook_endpoint.deleted', target: { type: 'webhook_endpoint', param: 'id' } },
  'POST /v2/webhooks/endpoints/:id/rotate-secret': { action: 'webhook_endpoint.secret_rotated', target: { type: 'webhook_endpoint', param: 'id' } },
  // Activity
  'POST /v1/notifications/:notificationId/jobs/:jobId/retry': { action: 'job.retried', target: { type: 'job', param: 'jobId' } },
  'DELETE /v1/events/trigger/:transactionId': { action: 'event.canceled', target: { type: 'transaction', param: 'transactionId' } },
};

/**
 * DELETE routes deliberately left out of the audit log (test/http/audit-coverage.test.ts fails on any other DELETE
 * route missing from AUDITED_OPERATIONS), each with its reason.
 */
export const UNAUDITED_DELETE_ROUTES: Record<string, string> = {
  // A subscriber deleting a message from their own Inbox (a subscriber session, like its bulk form
  // POST /v1/inbox/notifications/delete): an end user's action on their own feed, not an operator's, and as
  // frequent as reading.
  'DELETE /v1/inbox/notifications/:id/delete': 'end-user action in the Inbox',
  // The same end-user deletions from the older widget (/v1/widgets, a subscriber session).
  'DELETE /v1/widgets/messages/:messageId': 'end-user action in the legacy widget',
  'DELETE /v1/widgets/messages': 'end-user action in the legacy widget',
};

/**
 * The audit hook is attached only to the routes of AUDITED_OPERATIONS (decided once per route, in onRoute), so every
 * other request runs no audit code at all. A route's own onSend hooks run after the app-wide ones.
 */
export const auditPlugin = fp(async (app: FastifyInstance, opts: { deps: Deps }) => {
  const recordAnswer: onSendAsyncHookHandler = async (request, reply, payload) => {
    const rule = AUDITED_OPERATIONS[`${request.method} ${request.routeOptions.url}`];
    if (!rule) return payload;
    const succeeded = reply.statusCode >= 200 && reply.statusCode < 300;
    if (!succeeded && !(rule.failuresToo && reply.statusCode < 500)) return payload;
    try {
      await recordAudit(opts.deps, await auditInput(opts.deps, request, rule, succeeded, payload));
    } catch (error) {
      // The operation has happened; losing its audit entry must not turn its answer into an error.
      request.log.error({ err: error }, 'audit log write failed');
    }
    return payload;
  };
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (!methods.some((method) => AUDITED_OPERATIONS[`${method} ${route.url}`])) return;
    route.onSend = [...[route.onSend ?? []].flat(), recordAnswer];
  });
});

async function auditInput(deps: Deps, request: FastifyRequest, rule: AuditRule, succeeded: boolean, payload: unknown): Promise<AuditInput> {
  const data = responseData(payload);
  const responseUser = data?.user as { _id?: string; email?: string; _organizationId?: string } | undefined;
  const params = (request.params ?? {}) as Record<string, string>;
  const param = rule.target?.param;
  const targetId = param
    ? [param].flat().map((name) => params[name]).join('/')
    : ((responseUser?._id ?? data?._id) as string | undefined);
  const base = {
    action: rule.action,
    outcome: succeeded ? ('success' as const) : ('failure' as const),
    ip: request.ip,
    ...(rule.target && targetId ? { target: { type: rule.target.type, id: String(targetId) } } : {}),
  };
  const caller = request.caller;
  if (caller) {
    const actor: AuditEntry['actor'] =
      caller.kind === 'dashboard'
        ? { kind: 'user', id: caller.actorId, ...(request.dashboardSession ? { label: request.dashboardSession.user.email } : {}) }
        : { kind: caller.kind, id: caller.actorId };
    return { ...base, organizationId: caller.organizationId, _environmentId: caller.environmentId, actor };
  }
  // Public operations (sign-in, setup, invite acceptance): the actor is the user signed in, or the email tried.
  if (responseUser?._id) {
    return { ...base, organizationId: responseUser._organizationId, actor: { kind: 'user', id: responseUser._id, label: responseUser.email } };
  }
  const body = request.body as { email?: unknown } | undefined;
  const email = typeof body?.email === 'string' ? normalizeEmail(body.email).slice(0, 254) : undefined;
  const known = email ? await deps.store.dashboard.findUserByEmail(email) : undefined;
  return { ...base, organizationId: known?._organizationId, actor: { kind: 'anonymous', ...(email ? { label: email } : {}) } };
}

function responseData(payload: unknown): Record<string, unknown> | undefined {
  if (typeof payload !== 'string' || payload === '') return undefined;
  try {
    const parsed = JSON.parse(payload) as { data?: unknown };
    return parsed && typeof parsed.data === 'object' && parsed.data !== null ? (parsed.data as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

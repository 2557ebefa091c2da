import { TemplateError } from '../../domain/templates.js';
import type { DeliveryChannel, Integration, Message } from '../../domain/types.js';
import type { SendResult } from '../../providers/ports.js';
import { buildMessage, type RenderedControls } from '../../usecases/engine/build-message.js';
import { manualRetriesOf } from '../../usecases/engine/run-job.js';
import { DeliveryError, type AttemptedDelivery } from '../../usecases/engine/delivery-error.js';
import { buildProviderMessage, type ProviderChannel } from '../../usecases/engine/provider-message.js';
import { chooseIntegration, requestedIntegrationIdentifier, type IntegrationChoice } from '../../usecases/engine/select-integration.js';
import type { StepOutcome, StepRun } from '../../usecases/engine/step-context.js';
import { pruneInvalidDeviceTokens } from '../../usecases/subscriber-credentials/prune-invalid-device-tokens.js';
import { withDomainEvents } from '../../usecases/events/record-domain-events.js';
import { messageEvent } from '../../domain/webhooks.js';

/**
 * The one path of every channel step: render the controls, then store the in-app message, or pick the
 * integration and send through its provider and store the message. A rerun finds the job's message and sends
 * nothing. A failed send is thrown as a DeliveryError (the provider's error plus what was attempted) for the
 * dispatcher to retry or fail.
 */
export async function deliverChannelStep(run: StepRun): Promise<StepOutcome> {
  const channel = run.job.type as DeliveryChannel;
  if (channel === 'in_app') return deliverInApp(run);
  const { store, job } = run;
  const existing = await store.messages.findByJobId(job._environmentId, job._id);
  // A failed step that someone asked to retry sends again; its error message then becomes the sent one.
  const retrying = existing?.status === 'error' && manualRetriesOf(job) > 0;
  if (existing && !retrying) return outcomeOfExisting(existing);

  const rendered = await renderControls(run);
  if (!rendered.ok) return rendered.outcome;
  const { controls } = rendered;

  const choice = await selectIntegration(run, channel);
  if ('reason' in choice) return { status: 'skipped', detailStatus: 'Warning', detail: choice.reason };
  const { integration } = choice;
  const provider = run.deps.providers.get(integration.providerId, channel);
  if (!provider) {
    return { status: 'skipped', detailStatus: 'Warning', providerId: integration.providerId, detail: `provider not supported for delivery: ${integration.providerId}` };
  }
  const built = buildProviderMessage({
    channel,
    controls,
    integration,
    subscriber: run.subscriber,
    payload: run.templateContext.payload,
    overrides: job.overrides ?? {},
    stepId: run.stepId,
  });
  if ('missing' in built) return { status: 'skipped', detailStatus: 'Warning', providerId: integration.providerId, detail: built.missing };

  const attempted: AttemptedDelivery = { providerId: integration.providerId, controls, address: built.address };
  let result: SendResult;
  try {
    result = await sendObserved(run, channel, integration.providerId, () => provider.send(integration.credentials, built.message as never, run.deps.providers.context()));
  } catch (error) {
    throw new DeliveryError(error, attempted);
  }
  if (channel === 'push' && result.tokenResults?.some((token) => !token.ok)) {
    return recordPushTokenFailures(run, integration, attempted, result);
  }
  const sent = buildMessage(run, channel, controls, { status: 'sent', providerId: integration.providerId, address: built.address });
  // The vendor's id: its delivery reports name the message by it (usecases/delivery-reports).
  if (result.id) sent.identifier = result.id;
  const recorded = await withDomainEvents(store, job._environmentId, async (tx, events) => {
    if (existing && retrying) {
      const saved = { ...sent, _id: existing._id, createdAt: existing.createdAt, errorId: undefined, errorText: undefined };
      await tx.messages.save(saved);
      events.push(messageEvent('message.sent', saved));
      return true;
    }
    if (!(await tx.messages.create(sent)).created) return false;
    events.push(messageEvent('message.sent', sent));
    return true;
  });
  // Counted with the message it records: a concurrent run that stored it first counted it.
  if (recorded) run.deps.metrics.delivery(channel, integration.providerId, 'sent');
  return {
    status: 'completed',
    detail: `Message sent via ${integration.providerId}${result.id ? ` (id ${result.id})` : ''}`,
    providerId: integration.providerId,
    raw: rawOf(result),
  };
}

/** The provider call in a span of its own (kind client), timed for `herald_provider_request_duration_seconds`. */
async function sendObserved(run: StepRun, channel: DeliveryChannel, providerId: string, send: () => Promise<SendResult>): Promise<SendResult> {
  const { metrics, tracing } = run.deps;
  const attributes = { 'herald.provider.id': providerId, 'herald.channel': channel, 'herald.workflow.id': run.workflow?.workflowId, 'herald.step.type': run.job.type };
  return tracing.span(`provider ${providerId} send`, { kind: 'client', attributes }, async (span) => {
    const started = performance.now();
    try {
      const result = await send();
      span.setAttributes({ 'herald.outcome': 'sent' });
      return result;
    } catch (error) {
      span.setAttributes({ 'herald.outcome': 'error', 'herald.provider.retryable': (error as { retryable?: unknown }).retryable === true });
      throw error;
    } finally {
      metrics.providerRequest(providerId, (performance.now() - started) / 1000);
    }
  });
}

/** The vendor's answer; for push providers that answer per token (FCM, APNs), the per-token results. */
function rawOf(result: SendResult): string | undefined {
  if (result.raw !== undefined) return result.raw;
  return result.tokenResults ? JSON.stringify({ id: result.id, tokenResults: result.tokenResults }) : undefined;
}

/**
 * In-app delivery is storing the message, so a rerun needs no look-up first: the insert skips a job's second
 * message and answers the first (one statement fewer per delivery). Only a template that no longer renders is
 * checked against an earlier run's message, so a rerun reports what that run did.
 */
async function deliverInApp(run: StepRun): Promise<StepOutcome> {
  const { store, job } = run;
  const rendered = await renderControls(run);
  if (!rendered.ok) {
    const existing = await store.messages.findByJobId(job._environmentId, job._id);
    return existing ? outcomeOfExisting(existing) : rendered.outcome;
  }
  // Novu announces an in-app message twice: sent, then delivered (it is in the Inbox at once).
  const stored = await withDomainEvents(store, job._environmentId, async (tx, events) => {
    const result = await tx.messages.create(buildMessage(run, 'in_app', rendered.controls, { status: 'sent', providerId: 'novu' }));
    if (result.created) events.push(messageEvent('message.sent', result.message), messageEvent('message.delivered', result.message));
    return result;
  });
  if (!stored.created) return outcomeOfExisting(stored.message);
  run.deps.metrics.delivery('in_app', 'novu', 'sent');
  // In-app steps never run inside a transaction (run-job's TRANSACTIONAL_STEPS): the message is durable now, or, when
  // a trigger's first step holds its writes (Store.batch), the notifier given is held with them (held-effects.ts).
  run.deps.realtime.messageDelivered({ environmentId: job._environmentId, subscriberRecordId: stored.message._subscriberId }, stored.message);
  return { status: 'completed', detail: 'Message sent to the subscriber inbox', providerId: 'novu' };
}

/** The step's controls rendered for the subscriber, or the failed outcome of a template that does not render. */
async function renderControls(run: StepRun): Promise<{ ok: true; controls: RenderedControls } | { ok: false; outcome: StepOutcome }> {
  try {
    return { ok: true, controls: await run.renderer.renderControls(run.controls, run.templateContext) };
  } catch (error) {
    if (error instanceof TemplateError) return { ok: false, outcome: { status: 'failed', detail: `Template could not be rendered: ${error.message}` } };
    throw error;
  }
}

function outcomeOfExisting(message: Message): StepOutcome {
  if (message.status === 'error') return { status: 'failed', detail: `Message already recorded as failed: ${message.errorText ?? ''}`.trim() };
  return { status: 'completed', detail: 'Message already created by an earlier run of this step', providerId: message.providerId };
}

/** The integration a channel step uses; see chooseIntegration for the rules. */
export async function selectIntegration(run: StepRun, channel: ProviderChannel): Promise<IntegrationChoice> {
  const active = await run.store.integrations.list(run.job._environmentId, { channel, activeOnly: true });
  const sources = { subscriber: run.templateContext.subscriber, payload: run.templateContext.payload };
  return chooseIntegration(active, channel, sources, requestedIntegrationIdentifier(run.job.overrides, channel));
}

/**
 * Push with per-token failures: tokens the vendor called invalid are removed from the subscriber; the message
 * is `warning` when some tokens got through and `error` when none did.
 */
async function recordPushTokenFailures(run: StepRun, integration: Integration, attempted: AttemptedDelivery, result: SendResult): Promise<StepOutcome> {
  const tokens = result.tokenResults ?? [];
  const failed = tokens.filter((token) => !token.ok);
  const invalid = failed.filter((token) => token.invalid).map((token) => token.token);
  const removed = await pruneInvalidDeviceTokens(run.deps, {
    environmentId: run.job._environmentId,
    subscriberInternalId: run.subscriber._id,
    providerId: integration.providerId,
    tokens: invalid,
  });
  const failures = failed.map((token) => `${token.token}: ${token.error ?? 'failed'}`).join('; ');
  const removedText = removed.length > 0 ? `; invalid tokens removed from the subscriber: ${removed.join(', ')}` : '';
  const allFailed = failed.length === tokens.length;
  const errorText = allFailed
    ? `All ${tokens.length} device tokens failed: ${failures}`
    : `${failed.length} of ${tokens.length} device tokens failed: ${failures}`;
  const message = buildMessage(run, 'push', attempted.controls, {
    status: allFailed ? 'error' : 'warning',
    providerId: integration.providerId,
    address: attempted.address,
    errorId: allFailed ? 'push_tokens_failed' : 'push_tokens_partially_failed',
    errorText,
  });
  const created = await withDomainEvents(run.store, run.job._environmentId, async (tx, events) => {
    if (!(await tx.messages.create(message)).created) return false;
    events.push(allFailed ? messageEvent('message.failed', message, { error: { message: errorText, code: message.errorId } }) : messageEvent('message.sent', message));
    return true;
  });
  if (created) run.deps.metrics.delivery('push', integration.providerId, allFailed ? 'error' : 'warning');
  const base = { providerId: integration.providerId, raw: rawOf(result) };
  if (allFailed) return { status: 'failed', detail: `${errorText}${removedText}`, ...base };
  const sent = tokens.length - failed.length;
  return {
    status: 'completed',
    detailStatus: 'Warning',
    detail: `Message sent via ${integration.providerId} to ${sent} of ${tokens.length} device tokens; ${errorText}${removedText}`,
    ...base,
  };
}

import { evaluateStepFilters } from '../../domain/step-filters.js';
import { TemplateError } from '../../domain/templates.js';
import type { DeliveryChannel, Integration, Message } from '../../domain/types.js';
import type { MessageByChannel } from '../../providers/ports.js';
import { buildMessage, bodyOf, text, type RenderedControls } from '../../usecases/engine/build-message.js';
import type { StepOutcome, StepRun } from '../../usecases/engine/step-context.js';

/**
 * The one path of every channel step: render the controls, then store the in-app message, or pick the
 * integration and send through its provider and store the message. A rerun finds the job's message and sends
 * nothing. Provider errors are thrown for the dispatcher to retry or fail.
 */
export async function deliverChannelStep(run: StepRun): Promise<StepOutcome> {
  const channel = run.job.type as DeliveryChannel;
  const { store, job } = run;
  const existing = await store.messages.findByJobId(job._environmentId, job._id);
  if (existing) return outcomeOfExisting(existing);

  let controls: RenderedControls;
  try {
    controls = await run.renderer.renderControls(run.controls, run.templateContext);
  } catch (error) {
    if (error instanceof TemplateError) return { status: 'failed', detail: `Template could not be rendered: ${error.message}` };
    throw error;
  }

  if (channel === 'in_app') {
    await store.messages.create(buildMessage(run, channel, controls, { status: 'sent', providerId: 'novu' }));
    return { status: 'completed', detail: 'Message sent to the subscriber inbox', providerId: 'novu' };
  }

  const integration = await selectIntegration(run, channel);
  if (!integration) return { status: 'skipped', detailStatus: 'Warning', detail: `no active integration for channel ${channel}` };
  const provider = run.deps.providers.get(integration.providerId, channel);
  if (!provider) {
    return { status: 'skipped', detailStatus: 'Warning', providerId: integration.providerId, detail: `provider not supported for delivery: ${integration.providerId}` };
  }
  const built = providerMessage(run, channel, controls, integration);
  if ('missing' in built) return { status: 'skipped', detailStatus: 'Warning', providerId: integration.providerId, detail: built.missing };

  const result = await provider.send(integration.credentials, built.message as never, run.deps.providers.context());
  await store.messages.create(buildMessage(run, channel, controls, { status: 'sent', providerId: integration.providerId, address: built.address }));
  return {
    status: 'completed',
    detail: `Message sent via ${integration.providerId}${result.id ? ` (id ${result.id})` : ''}`,
    providerId: integration.providerId,
    raw: result.raw,
  };
}

function outcomeOfExisting(message: Message): StepOutcome {
  if (message.status === 'error') return { status: 'failed', detail: `Message already recorded as failed: ${message.errorText ?? ''}`.trim() };
  return { status: 'completed', detail: 'Message already created by an earlier run of this step', providerId: message.providerId };
}

/**
 * The integration a channel step uses: the one named by `overrides.integrationIdentifier` (top level or under the
 * channel), else among the active ones whose conditions pass: the primary first, then by priority.
 */
export async function selectIntegration(run: StepRun, channel: DeliveryChannel): Promise<Integration | undefined> {
  const active = await run.store.integrations.list(run.job._environmentId, { channel, activeOnly: true });
  const overrides = run.job.overrides ?? {};
  const channelOverrides = (overrides[channel] ?? {}) as Record<string, unknown>;
  const wanted = text(channelOverrides.integrationIdentifier) ?? text(overrides.integrationIdentifier);
  const candidates = active.filter(
    (integration) =>
      integration.active &&
      !integration.deleted &&
      (wanted === undefined || integration.identifier === wanted) &&
      evaluateStepFilters(integration.conditions, { subscriber: run.templateContext.subscriber, payload: run.templateContext.payload }).passed,
  );
  return candidates.sort((a, b) => Number(b.primary) - Number(a.primary) || b.priority - a.priority)[0];
}

type BuiltProviderMessage = { message: MessageByChannel[keyof MessageByChannel]; address: Partial<Message> } | { missing: string };

function providerMessage(run: StepRun, channel: Exclude<DeliveryChannel, 'in_app'>, controls: RenderedControls, integration: Integration): BuiltProviderMessage {
  const { subscriber } = run;
  const overrides = { ...((run.job.overrides?.[channel] as Record<string, unknown> | undefined) ?? {}) };
  const body = bodyOf(controls);
  const subscriberChannel = subscriber.channels.find(
    (entry) => entry.providerId === integration.providerId && (!entry.integrationIdentifier || entry.integrationIdentifier === integration.identifier),
  );
  switch (channel) {
    case 'email': {
      if (!subscriber.email) return { missing: 'subscriber has no email address' };
      return {
        message: { to: [subscriber.email], subject: text(controls.subject) ?? '', html: body, overrides },
        address: { email: subscriber.email },
      };
    }
    case 'sms': {
      if (!subscriber.phone) return { missing: 'subscriber has no phone number' };
      return { message: { to: subscriber.phone, content: body, overrides }, address: { phone: subscriber.phone } };
    }
    case 'chat': {
      const webhookUrl = subscriberChannel?.credentials.webhookUrl ?? text(integration.credentials.webhookUrl);
      const chatChannel = subscriberChannel?.credentials.channel ?? text(integration.credentials.channelId);
      if (!webhookUrl && !chatChannel) return { missing: `subscriber has no ${integration.providerId} webhook URL` };
      return {
        message: { webhookUrl, channel: chatChannel, content: body, overrides },
        address: webhookUrl ? { directWebhookUrl: webhookUrl } : {},
      };
    }
    case 'push': {
      const tokens = subscriberChannel?.credentials.deviceTokens ?? [];
      if (tokens.length === 0) return { missing: `subscriber has no ${integration.providerId} device tokens` };
      const title = text(controls.subject) ?? text(controls.title) ?? '';
      return {
        message: { target: tokens, title, content: body, payload: run.templateContext.payload, overrides },
        address: { deviceTokens: tokens },
      };
    }
  }
}

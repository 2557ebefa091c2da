import { isoNow } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import { workflowTemplateOf } from '../../domain/workflow-shape.js';
import type { DeliveryChannel, Message, MessageButton, MessageCta, MessageStatus } from '../../domain/types.js';
import type { StepRun } from './step-context.js';

/** Rendered control values of a channel step, read loosely: they come from user-written workflows. */
export type RenderedControls = Record<string, unknown>;

export function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The message body: `body`, else `content` (Novu v1 templates). */
export function bodyOf(controls: RenderedControls): string {
  return text(controls.body) ?? text(controls.content) ?? '';
}

/** Novu v2's in-app controls (redirect, primaryAction, secondaryAction) or a v1 `cta` object, as the spec's MessageCTA. */
export function ctaOf(controls: RenderedControls): MessageCta {
  if (controls.cta && typeof controls.cta === 'object' && !Array.isArray(controls.cta)) return controls.cta as MessageCta;
  const cta: MessageCta = {};
  const redirectUrl = urlOf(controls.redirect);
  if (redirectUrl) {
    cta.type = 'redirect';
    cta.data = { url: redirectUrl };
    const target = controls.redirect && typeof controls.redirect === 'object' ? text((controls.redirect as Record<string, unknown>).target) : undefined;
    if (target) cta.data.target = target;
  }
  const buttons: MessageButton[] = [];
  for (const [type, action] of [['primary', controls.primaryAction], ['secondary', controls.secondaryAction]] as const) {
    if (!action || typeof action !== 'object') continue;
    const label = text((action as Record<string, unknown>).label);
    if (!label) continue;
    const button: MessageButton = { type, content: label };
    const redirect = (action as Record<string, unknown>).redirect;
    const url = urlOf(redirect);
    if (url) button.url = url;
    const target = redirect && typeof redirect === 'object' ? text((redirect as Record<string, unknown>).target) : undefined;
    if (target) button.target = target;
    buttons.push(button);
  }
  if (buttons.length > 0) cta.action = { status: 'pending', buttons };
  return cta;
}

function urlOf(redirect: unknown): string | undefined {
  if (typeof redirect === 'string') return redirect || undefined;
  if (redirect && typeof redirect === 'object') return text((redirect as Record<string, unknown>).url) || undefined;
  return undefined;
}

/** The message a channel step produces (or its error record), in the spec's shape; one per job. */
export function buildMessage(
  run: StepRun,
  channel: DeliveryChannel,
  controls: RenderedControls,
  outcome: { status: MessageStatus; providerId?: string; errorId?: string; errorText?: string; address?: Partial<Message> },
): Message {
  const { job, event, subscriber, workflow, deps } = run;
  const now = isoNow(deps.clock);
  const message: Message = {
    _id: newId(deps.clock.now()),
    _templateId: workflow?._id ?? job._templateId ?? null,
    _environmentId: job._environmentId,
    _messageTemplateId: run.step._id,
    _organizationId: job._organizationId,
    _notificationId: job._notificationId,
    _subscriberId: subscriber._id,
    _jobId: job._id,
    subscriber,
    createdAt: now,
    updatedAt: now,
    content: bodyOf(controls),
    transactionId: job.transactionId,
    channel,
    read: false,
    seen: false,
    cta: channel === 'in_app' ? ctaOf(controls) : {},
    _feedId: null,
    status: outcome.status,
    payload: event.payload ?? job.payload ?? {},
    overrides: job.overrides ?? {},
    contextKeys: event.contextKeys ?? [],
    ...(outcome.address ?? {}),
  };
  if (workflow) {
    message.template = workflowTemplateOf(workflow);
    message.templateIdentifier = workflow.workflowId;
  }
  if (channel === 'in_app') {
    // What the Inbox shows and filters on: tags and severity of the workflow, data and avatar of the step.
    message.archived = false;
    message.tags = workflow?.tags ?? [];
    message.severity = workflow?.severity ?? 'none';
    if (controls.data && typeof controls.data === 'object' && !Array.isArray(controls.data)) message.data = controls.data as Record<string, unknown>;
    const avatar = text(controls.avatar);
    if (avatar) message.avatar = avatar;
    // The legacy widget's feeds: the step's feed identifier stands in for Novu's feed id (docs/legacy-widget.md).
    const feed = text(controls.feedIdentifier);
    if (feed) message._feedId = feed;
  }
  if (outcome.status === 'sent') message.deliveredAt = [now];
  const subject = text(controls.subject);
  if (subject !== undefined) message.subject = subject;
  const title = text(controls.title) ?? (channel === 'push' ? subject : undefined);
  if (title !== undefined) message.title = title;
  if (outcome.providerId) message.providerId = outcome.providerId;
  if (outcome.errorId) message.errorId = outcome.errorId;
  if (outcome.errorText) message.errorText = outcome.errorText;
  return message;
}

import type { Message } from '../../domain/types.js';
import type { RenderedControls } from './build-message.js';

/** What a channel step tried to send: recorded on the `error` message when the failure is final. */
export interface AttemptedDelivery {
  providerId: string;
  /** The controls as rendered for this subscriber, so the error message shows what would have been sent. */
  controls: RenderedControls;
  /** email / phone / directWebhookUrl / deviceTokens of the attempt. */
  address: Partial<Message>;
}

/**
 * A provider send that threw, with what was attempted. The dispatcher unwraps `failure` (usually a
 * ProviderError) to decide retry or fail, and hands `attempted` to failJob for the error message.
 */
export class DeliveryError extends Error {
  constructor(
    readonly failure: unknown,
    readonly attempted: AttemptedDelivery,
  ) {
    super(failure instanceof Error ? failure.message : String(failure));
    this.name = 'DeliveryError';
  }
}

import type { InboxAudience, InboxEvent, RealtimeNotifier } from './ports.js';
import type { Message } from '../domain/types.js';

/**
 * The embedded fan-out: notifiers and the socket server live in one process, so an event is handed to the
 * listeners (the socket server, tests) in-process. Listener failures are contained: a notifier never throws
 * into the use-case that called it.
 */
export class LocalRealtimeHub implements RealtimeNotifier {
  private readonly listeners = new Set<(event: InboxEvent) => void>();

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: (event: InboxEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  messageDelivered(audience: InboxAudience, message: Message): void {
    this.emit({ kind: 'message-delivered', audience, message });
  }

  messagesChanged(audience: InboxAudience): void {
    this.emit({ kind: 'messages-changed', audience });
  }

  subscriberChanged(audience: InboxAudience): void {
    this.emit({ kind: 'subscriber-changed', audience });
  }

  private emit(event: InboxEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A failing listener must not fail the write that already happened.
      }
    }
  }
}

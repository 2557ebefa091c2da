import type { InboxEvent, RealtimeNotifier } from '../../src/realtime/ports.js';
import type { TestServer } from './test-server.js';

/**
 * Records every realtime call the server's use-cases make, in either storage mode (the embedded hub or the Redis
 * notifier), and still passes each call on. Use-cases read `deps.realtime` per call, so wrapping it here sees them all.
 */
export function recordRealtime(server: TestServer, events: InboxEvent[]): void {
  const inner: RealtimeNotifier = server.deps.realtime;
  server.deps.realtime = {
    messageDelivered(audience, message) {
      events.push({ kind: 'message-delivered', audience, message });
      inner.messageDelivered(audience, message);
    },
    messagesChanged(audience) {
      events.push({ kind: 'messages-changed', audience });
      inner.messagesChanged(audience);
    },
    subscriberChanged(audience) {
      events.push({ kind: 'subscriber-changed', audience });
      inner.subscriberChanged(audience);
    },
  };
}

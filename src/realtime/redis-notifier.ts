import { Emitter } from '@socket.io/redis-emitter';
import type { Redis } from 'ioredis';
import type { Logger } from '../usecases/deps.js';
import type { Message } from '../domain/types.js';
import type { InboxAudience, RealtimeNotifier } from './ports.js';
import { INBOX_CHANGED_EVENT } from './fanout.js';
import { inboxRoom } from './rooms.js';
import { toRealtimeMessage } from './raw-message.js';

/**
 * `deps.realtime` in scale-out, for API and worker processes alike: `notification_received` is emitted to the
 * subscriber's room through the Redis emitter; the counts change is a server-side emit. Publishing is fire and forget:
 * while Redis is unreachable events are dropped (logged), never thrown into the write that made them.
 */
export class RedisRealtimeNotifier implements RealtimeNotifier {
  private readonly emitter: Emitter;

  constructor(redis: Redis, key: string, private readonly logger: Logger) {
    // The emitter only publishes; a rejected publish must not become an unhandled rejection.
    const publisher = {
      publish: (channel: string, message: string | Buffer) =>
        redis.publish(channel, message).catch((error: unknown) => this.logger.warn({ err: error }, 'inbox event not published')),
    };
    this.emitter = new Emitter(publisher, { key });
  }

  messageDelivered(audience: InboxAudience, message: Message): void {
    try {
      this.emitter.to(inboxRoom(audience)).emit('notification_received', { message: toRealtimeMessage(message) });
      this.emitter.serverSideEmit(INBOX_CHANGED_EVENT, { environmentId: audience.environmentId, subscriberRecordId: audience.subscriberRecordId });
    } catch (error) {
      this.logger.warn({ err: error }, 'inbox event not published');
    }
  }

  messagesChanged(audience: InboxAudience): void {
    try {
      this.emitter.serverSideEmit(INBOX_CHANGED_EVENT, { environmentId: audience.environmentId, subscriberRecordId: audience.subscriberRecordId });
    } catch (error) {
      this.logger.warn({ err: error }, 'inbox event not published');
    }
  }

  /** Nothing to send: API processes keep no Inbox answers in scale-out (see http/inbox-read-cache.ts). */
  subscriberChanged(_audience: InboxAudience): void {}
}

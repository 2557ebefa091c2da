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
    // The emitter only publishes; a rejected publish must not become an unhandled rejection. Publishes made in the same
    // turn of the event loop (a delivery's room emit and counts emit, and those of concurrent deliveries) go out in
    // one pipeline: one socket write instead of one each, the largest part of a worker's CPU per round trip.
    const pending: Array<[string, string | Buffer]> = [];
    const flush = () => {
      const batch = pending.splice(0);
      const sent = batch.length === 1 ? redis.publish(batch[0]![0], batch[0]![1]) : batch.reduce((pipeline, [channel, message]) => pipeline.publish(channel, message), redis.pipeline()).exec();
      // One warning per event not published, as when each was published alone.
      sent.then(
        (results) => {
          for (const [error] of Array.isArray(results) ? results : []) if (error) this.logger.warn({ err: error }, 'inbox event not published');
        },
        (error: unknown) => {
          for (let i = 0; i < batch.length; i++) this.logger.warn({ err: error }, 'inbox event not published');
        },
      );
    };
    const publisher = {
      publish: (channel: string, message: string | Buffer) => {
        if (pending.push([channel, message]) === 1) queueMicrotask(flush);
        return Promise.resolve();
      },
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

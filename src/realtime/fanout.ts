import { Emitter } from '@socket.io/redis-emitter';
import type { Redis } from 'ioredis';
import type { Logger } from '../usecases/deps.js';
import type { Message } from '../domain/types.js';
import type { InboxAudience, RealtimeNotifier } from './ports.js';
import type { LocalRealtimeHub } from './local-hub.js';
import { inboxRoom } from './rooms.js';
import { toRealtimeMessage } from './raw-message.js';

/**
 * How Inbox events travel from the process that makes them to the process that holds the subscriber's socket.
 * - `local` (embedded): one process; the socket server listens to the LocalRealtimeHub that `deps.realtime` is.
 * - `redis` (scale-out): every process publishes through the socket.io Redis emitter; API processes run the socket
 *   server on the socket.io Redis adapter under the same key, so a worker's event reaches any API process.
 */
export type RealtimeFanout =
  | { kind: 'local'; hub: LocalRealtimeHub }
  | {
      kind: 'redis';
      /** The socket.io channel prefix, shared by the emitter and the adapter. */
      key: string;
      /** A publishing and a subscribing connection for the adapter of one socket server. */
      openAdapterClients(): { pub: Redis; sub: Redis };
    };

/**
 * The server-side socket.io event (never sent to a client) saying a subscriber's Inbox counts changed: each API
 * process that holds one of the subscriber's sockets reads the counts and sends them.
 */
export const INBOX_CHANGED_EVENT = 'herald:inbox-changed';

/** The socket.io key under a Redis prefix (tests and instances sharing one Redis use their own prefix). */
export function socketIoKey(redisPrefix: string): string {
  return `${redisPrefix}:socket.io`;
}

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

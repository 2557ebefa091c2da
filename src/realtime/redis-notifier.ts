import { Emitter } from '@socket.io/redis-emitter';
import type { Redis } from 'ioredis';
import type { Logger } from '../usecases/deps.js';
import type { Message } from '../domain/types.js';
import type { InboxAudience, RealtimeNotifier } from './ports.js';
import { INBOX_CHANGED_EVENT } from './fanout.js';
import { inboxRoom } from './rooms.js';
import { toRealtimeMessage } from './raw-message.js';

/** PUBLISH of each (channel, message) pair of ARGV, in order; answers how many. */
const PUBLISH_MANY = 'heraldPublishMany';
const PUBLISH_MANY_SCRIPT = "for i = 1, #ARGV, 2 do redis.call('publish', ARGV[i], ARGV[i + 1]) end return #ARGV / 2";
/** At most this many events in one command (a backlog while Redis is slow goes out in several). */
const MAX_PUBLISH_BATCH = 500;
/** Events waiting behind a command in flight, at most. */
const MAX_PENDING = 100_000;
type PublishMany = Record<typeof PUBLISH_MANY, (...channelsAndMessages: Array<string | Buffer>) => Promise<number>>;

/**
 * `deps.realtime` in scale-out, for API and worker processes alike: `notification_received` is emitted to the
 * subscriber's room through the Redis emitter, and the API process whose sockets it reaches reads the counts on it
 * (socket-server.ts); the other counts changes are a server-side emit. Publishing is fire and forget:
 * while Redis is unreachable events are dropped (logged), never thrown into the write that made them.
 */
export class RedisRealtimeNotifier implements RealtimeNotifier {
  private readonly emitter: Emitter;

  constructor(redis: Redis, key: string, private readonly logger: Logger) {
    // The emitter only publishes; a rejected publish must not become an unhandled rejection. Publishes made in the same
    // turn of the event loop (concurrent deliveries' room emits, a retention sweep's counts emits) go out as one
    // command: one socket write instead of one each, the largest part of a worker's CPU per round trip. A script
    // rather than a pipeline: ioredis builds each pipeline by copying every script defined on the connection (BullMQ
    // defines dozens on this one), 3.5 % of the worker's CPU (BENCHMARKS.md, session 14).
    if (!(PUBLISH_MANY in redis)) redis.defineCommand(PUBLISH_MANY, { numberOfKeys: 0, lua: PUBLISH_MANY_SCRIPT });
    //
    // Publishes made while one command is in flight wait for it and go out together after it (as CoalescedBatches):
    // a worker's concurrent deliveries end in different turns, so per turn it was one command per delivery
    // (BENCHMARKS.md, session 18). An event waits for at most the round trip in flight; the order is kept.
    const pending: Array<[string, string | Buffer]> = [];
    let inFlight = false;
    const flush = () => {
      if (inFlight || pending.length === 0) return;
      const batch = pending.splice(0, MAX_PUBLISH_BATCH);
      const sent: Promise<unknown> =
        batch.length === 1 ? redis.publish(batch[0]![0], batch[0]![1]) : (redis as unknown as PublishMany)[PUBLISH_MANY](...batch.flat());
      inFlight = true;
      // One warning per event not published, as when each was published alone.
      sent
        .then(
          () => undefined,
          (error: unknown) => {
            for (let i = 0; i < batch.length; i++) this.logger.warn({ err: error }, 'inbox event not published');
          },
        )
        .finally(() => {
          inFlight = false;
          flush();
        });
    };
    const publisher = {
      publish: (channel: string, message: string | Buffer) => {
        // A command that does not settle (Redis stalled) must not make the backlog grow without bound: dropped, logged.
        if (pending.length >= MAX_PENDING) {
          this.logger.warn({ channel }, 'inbox event not published (backlog full)');
          return Promise.resolve();
        }
        if (pending.push([channel, message]) === 1 && !inFlight) queueMicrotask(flush);
        return Promise.resolve();
      },
    };
    this.emitter = new Emitter(publisher, { key });
  }

  messageDelivered(audience: InboxAudience, message: Message): void {
    try {
      // One publish: its counts need no event of their own (a server-side emit reaches and is decoded by every API
      // process; the room's packet only by those holding the subscriber's sockets).
      this.emitter.to(inboxRoom(audience)).emit('notification_received', { message: toRealtimeMessage(message) });
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

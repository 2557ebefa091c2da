import type { Redis } from 'ioredis';
import type { Logger } from '../../usecases/deps.js';
import type { KeyRevocations } from '../ports.js';
import { openRedis } from './connection.js';

/**
 * Scale-out: revocations go over a Redis pub/sub channel to every process. PUBLISH returns after Redis has handed
 * the message to every subscribed connection, so the revoke's 200 leaves after every process has it on its
 * socket. While a process's subscription is down it reports `listening: false` (callers then skip their cache),
 * and when it is back it tells its listeners to forget everything, since it may have missed announcements.
 */
export class RedisKeyRevocations implements KeyRevocations {
  private subscribed = false;
  private readonly listeners: Array<(keyHash: string | undefined) => void> = [];
  private readonly channel: string;
  private readonly subscriber: Redis;

  private constructor(
    private readonly publisher: Redis,
    redisUrl: string,
    prefix: string,
    private readonly logger: Logger,
    topic: string,
  ) {
    this.channel = `${prefix}:${topic}`;
    // A connection of its own: a subscribed connection can run nothing else. Subscribing manually on every
    // `ready` (not ioredis' auto-resubscribe) tells exactly when announcements are being received again.
    this.subscriber = openRedis(redisUrl, 'worker');
    this.subscriber.options.autoResubscribe = false;
    this.subscriber.on('message', (channel: string, keyHash: string) => {
      if (channel === this.channel) this.emit(keyHash);
    });
    this.subscriber.on('close', () => {
      this.subscribed = false;
    });
    this.subscriber.on('ready', () => void this.subscribe());
  }

  /** `topic`: the channel's name after the prefix; another topic carries other announcements (deleted subscribers). */
  static async open(publisher: Redis, redisUrl: string, prefix: string, logger: Logger, topic = 'api-key-revoked'): Promise<RedisKeyRevocations> {
    const revocations = new RedisKeyRevocations(publisher, redisUrl, prefix, logger, topic);
    await revocations.subscribe();
    return revocations;
  }

  get listening(): boolean {
    return this.subscribed;
  }

  private async subscribe(): Promise<void> {
    if (this.subscribed) return;
    try {
      await this.subscriber.subscribe(this.channel);
      this.subscribed = true;
      this.emit(undefined);
    } catch (error) {
      this.logger.warn({ err: error }, 'key revocation channel: subscribe failed; cached keys are not trusted until it succeeds');
    }
  }

  async publish(keyHash: string): Promise<void> {
    this.emit(keyHash);
    try {
      await this.publisher.publish(this.channel, keyHash);
    } catch (error) {
      // The revocation is stored; a process that cannot hear it cannot reach Redis either, and then skips its cache.
      this.logger.warn({ err: error }, 'key revocation channel: publish failed');
    }
  }

  onRevoked(listener: (keyHash: string | undefined) => void): void {
    this.listeners.push(listener);
  }

  private emit(keyHash: string | undefined): void {
    for (const listener of this.listeners) listener(keyHash);
  }

  async close(): Promise<void> {
    this.subscribed = false;
    this.subscriber.disconnect();
  }
}

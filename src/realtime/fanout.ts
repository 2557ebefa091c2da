import type { Redis } from 'ioredis';
import type { LocalRealtimeHub } from './local-hub.js';

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
 * The server-side socket.io event (never sent to a client) saying a subscriber's Inbox counts changed other than by a
 * delivery (read, seen, archive, delete, snooze...): each API process that holds one of the subscriber's sockets reads
 * the counts and sends them. A delivery needs none: its `notification_received` packet reaches exactly those
 * processes, and they read the counts on it (socket-server.ts).
 */
export const INBOX_CHANGED_EVENT = 'herald:inbox-changed';

/** The socket.io key under a Redis prefix (tests and instances sharing one Redis use their own prefix). */
export function socketIoKey(redisPrefix: string): string {
  return `${redisPrefix}:socket.io`;
}

import { ServerResponse, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { Server, type Socket } from 'socket.io';
import type { Redis } from 'ioredis';
import type { Deps } from '../usecases/deps.js';
import { parseSubscriberRevocation, verifySubscriberToken } from '../usecases/auth/subscriber-tokens.js';
import { countInboxBadges } from '../usecases/inbox/count-inbox-badges.js';
import type { InboxAudience, InboxEvent } from './ports.js';
import type { RealtimeFanout } from './fanout.js';
import { INBOX_CHANGED_EVENT } from './fanout.js';
import { inboxRoom, isInboxAudience } from './rooms.js';
import { toRealtimeMessage } from './raw-message.js';
import { handleEveryCommand } from '../store/redis/handle-every-command.js';

/** The socket.io path of Novu's clients (`socket.io-client`'s default). */
export const SOCKET_PATH = '/socket.io/';

export interface InboxSocketServerOptions {
  deps: Deps;
  fanout: RealtimeFanout;
  /** The Inbox's CORS rule (HERALD_INBOX_ALLOWED_ORIGINS), applied to the handshake's Origin. */
  originAllowed(origin: string | undefined): boolean;
}

export interface InboxSocketServer {
  io: Server;
  /** Sockets this process holds (benchmarks, health). */
  connectionCount(): number;
  /** Disconnects every socket and leaves the Redis channels; the HTTP server itself is closed by its owner. */
  close(): Promise<void>;
}

interface SocketData {
  audience: InboxAudience;
}

/**
 * The Inbox's realtime side on the API's own HTTP server and port (inbox-client-protocol.md §5.2): socket.io v4 at
 * `/socket.io/`, authenticated by the subscriber session token the clients put in the handshake query (`token`), one
 * room per subscriber. Embedded, events come in-process from the LocalRealtimeHub. Scaled out, the socket.io Redis
 * adapter carries `notification_received` from any process (workers publish it with the Redis emitter) to the
 * sockets of every API process; the process whose socket it reaches reads the new counts. Other count changes (read,
 * archive, delete...) come as a server-side event that tells each API process a subscriber's counts changed.
 *
 * Counts are read only by a process that holds one of the subscriber's sockets, and at most one read per
 * subscriber runs at a time (events during it are answered by one more read after it).
 */
export async function attachInboxSockets(httpServer: HttpServer, options: InboxSocketServerOptions): Promise<InboxSocketServer> {
  const { deps, fanout } = options;
  // Loaded only when scaled out: an embedded process never needs the Redis adapter (nor ioredis).
  const createAdapter = fanout.kind === 'redis' ? (await import('@socket.io/redis-adapter')).createAdapter : undefined;
  const logger = deps.logger.child({ component: 'inbox-sockets' });
  const io = new Server<Record<string, never>, Record<string, never>, Record<string, never>, SocketData>(httpServer, {
    path: SOCKET_PATH,
    serveClient: false,
    // The clients send nothing but the handshake; a large frame is not one of theirs.
    maxHttpBufferSize: 16 * 1024,
    allowRequest: (request, callback) => callback(null, options.originAllowed(request.headers.origin)),
    cors: { origin: (origin, callback) => callback(null, options.originAllowed(origin)) },
  });

  // engine.io's stand-in response for an upgrade keeps the upgrade request until the TCP socket closes (its `close`
  // listener on the socket holds it): let go of the request once the middlewares are done with it. Registered
  // after the CORS middleware, the only one that writes response headers here.
  io.engine.use((request: IncomingMessage, response: unknown, next: (error?: Error) => void) => {
    if (!(response instanceof ServerResponse)) (response as { req: unknown }).req = null;
    next();
  });

  io.use((socket, next) => {
    const token = handshakeToken(socket);
    if (!token) return next(unauthorized('a subscriber session token is required (handshake query "token" or auth "token")'));
    verifySubscriberToken(deps, token).then(
      (scope) => {
        socket.data.audience = { environmentId: scope.environmentId, subscriberRecordId: scope.subscriberRecordId };
        next();
      },
      () => next(unauthorized('invalid or expired subscriber session token')),
    );
  });
  io.on('connection', (socket) => {
    void socket.join(inboxRoom(socket.data.audience));
    // The upgrade request (an IncomingMessage and what it references) would be kept for the socket's whole life;
    // nothing needs it after authentication (socket.io's documented memory saving, a few KB per socket).
    (socket.conn as unknown as { request: unknown }).request = null;
    socket.handshake.headers = {};
    // The token (twice: the query and the URL) is not needed either once the socket is authenticated.
    socket.handshake.query = {};
    socket.handshake.url = '';
  });

  /** Scaled out, on each socket: a notification_received sent to it (from the room's broadcast) asks for its counts. */
  function countsFollowDeliveries(this: Socket<Record<string, never>, Record<string, never>, Record<string, never>, SocketData>, event: string): void {
    if (event === 'notification_received') void sendCounts(this.data.audience);
  }

  const holdsSocketsOf = (room: string) => (io.of('/').adapter.rooms.get(room)?.size ?? 0) > 0;

  const refreshing = new Map<string, { again: boolean }>();
  async function sendCounts(audience: InboxAudience): Promise<void> {
    const room = inboxRoom(audience);
    const running = refreshing.get(room);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    refreshing.set(room, state);
    try {
      // Calls made in this same turn are answered by this one read (each round starts by clearing `again`): a
      // broadcast to a room asks once per socket of the room it reaches (countsFollowDeliveries).
      await Promise.resolve();
      do {
        state.again = false;
        if (!holdsSocketsOf(room)) break;
        const badges = await countInboxBadges(deps, audience);
        // One payload for both client generations: @novu/js 3.x reads `counts`, the older widget `unreadCount`.
        io.local.to(room).emit('unread_count_changed', { counts: badges.unreadCount, unreadCount: badges.widgetUnreadCount, hasMore: badges.widgetUnreadHasMore });
        io.local.to(room).emit('unseen_count_changed', { unseenCount: badges.unseenCount, hasMore: badges.unseenHasMore });
      } while (state.again);
    } catch (error) {
      logger.warn({ err: error, room }, 'inbox counts could not be sent');
    } finally {
      refreshing.delete(room);
    }
  }

  let closed = false;
  let stopListening: () => void = () => undefined;
  let redisClients: Redis[] = [];
  if (fanout.kind === 'local') {
    stopListening = fanout.hub.subscribe((event: InboxEvent) => {
      if (event.kind === 'subscriber-changed') return; // no counts change
      const room = inboxRoom(event.audience);
      if (!holdsSocketsOf(room)) return;
      if (event.kind === 'message-delivered') io.to(room).emit('notification_received', { message: toRealtimeMessage(event.message) });
      void sendCounts(event.audience);
    });
  } else {
    const { pub, sub } = fanout.openAdapterClients();
    redisClients = [pub, sub];
    // The adapter awaits none of its commands: those a close flushes (the connections not ready yet, or answers
    // still on their way) fail as expected; any other failure is logged, never an unhandled rejection.
    for (const client of redisClients) {
      handleEveryCommand(client, (error, command) => {
        if (!closed) logger.warn({ err: error, command }, 'inbox sockets: a Redis command of the adapter failed');
      });
    }
    io.adapter(createAdapter!(pub, sub, { key: fanout.key }));
    // The adapter hands the emitter's notification_received packet to the room's local sockets, and only in a process
    // that holds some (it drops other rooms' packets before decoding them). Its counts follow from that same packet
    // (countsFollowDeliveries), so a delivery publishes nothing else: a server-side event per delivery was decoded by
    // every API process, holding sockets of that subscriber or not (BENCHMARKS.md, session 23).
    io.on('connection', (socket) => socket.onAnyOutgoing(countsFollowDeliveries));
    // Every other counts change (read, seen, archive, delete, snooze...) is a server-side event: no packet goes to
    // the room for those.
    io.on(INBOX_CHANGED_EVENT as never, (audience: unknown) => {
      if (isInboxAudience(audience)) void sendCounts(audience);
    });
  }

  // A deleted subscriber's sockets close at once, in every API process (the announcement reaches each of them).
  deps.subscriberRevocations.onRevoked((message) => {
    if (closed) return;
    if (message !== undefined) {
      const deleted = parseSubscriberRevocation(message);
      if (deleted) io.local.in(inboxRoom(deleted)).disconnectSockets(true);
      return;
    }
    // Announcements may have been missed: every subscriber holding a socket here is checked once.
    void disconnectDeletedSubscribers().catch((error: unknown) => logger.warn({ err: error }, 'sockets of deleted subscribers not checked'));
  });
  async function disconnectDeletedSubscribers(): Promise<void> {
    const audiences = new Map<string, InboxAudience>();
    for (const socket of io.of('/').sockets.values()) if (socket.data.audience) audiences.set(inboxRoom(socket.data.audience), socket.data.audience);
    for (const [room, audience] of audiences) {
      if (!(await deps.store.subscribers.get(audience.environmentId, audience.subscriberRecordId))) io.local.in(room).disconnectSockets(true);
    }
  }

  return {
    io,
    connectionCount: () => io.engine.clientsCount,
    async close() {
      closed = true;
      stopListening();
      io.local.disconnectSockets(true);
      await io.of('/').adapter.close();
      io.engine.close();
      for (const client of redisClients) client.disconnect();
    },
  };
}

function handshakeToken(socket: Socket): string | undefined {
  const fromQuery = socket.handshake.query.token;
  if (typeof fromQuery === 'string' && fromQuery !== '') return fromQuery;
  const fromAuth = (socket.handshake.auth as Record<string, unknown> | undefined)?.token;
  return typeof fromAuth === 'string' && fromAuth !== '' ? fromAuth : undefined;
}

/** What the client's `connect_error` receives: the message, and `data` in the API's error shape. */
function unauthorized(message: string): Error & { data: { statusCode: number; message: string; error: string } } {
  return Object.assign(new Error(message), { data: { statusCode: 401, message, error: 'Unauthorized' } });
}

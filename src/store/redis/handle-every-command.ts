import type { Redis } from 'ioredis';

/**
 * For a connection whose user sends commands without awaiting them: the socket.io Redis adapter (its psubscribe and
 * subscribe when made, its publishes, its punsubscribe and unsubscribe when closed), and ioredis itself (it
 * resubscribes after a reconnect). A command still waiting when the connection is disconnected is rejected with
 * "Connection is closed." (ioredis flushes its queues at the close), and with nobody to handle it that would be an
 * unhandled rejection: an error exit of a process in the middle of its shutdown, a failed test run. Every command's
 * promise gets a handler, which passes the failure to `onFailure`; a caller that awaits a command still sees it fail.
 * (No import of ioredis itself: the socket server, which uses this, is loaded by embedded processes too.)
 */
export function handleEveryCommand(client: Redis, onFailure: (error: unknown, command: string) => void): Redis {
  const sendCommand = client.sendCommand.bind(client);
  // A command queued while offline goes through sendCommand again when the connection is ready: one handler each.
  const handled = new WeakSet<object>();
  client.sendCommand = ((command: Parameters<Redis['sendCommand']>[0], stream?: Parameters<Redis['sendCommand']>[1]) => {
    const sent = sendCommand(command, stream);
    if (!handled.has(command) && sent instanceof Promise) {
      handled.add(command);
      sent.catch((error: unknown) => onFailure(error, command.name));
    }
    return sent;
  }) as Redis['sendCommand'];
  return client;
}

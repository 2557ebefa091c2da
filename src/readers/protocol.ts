import type { ListMessagesInput } from '../usecases/messages/list-messages.js';
import type { ListNotificationsInput } from '../usecases/notifications/list-notifications.js';

/** What the main thread asks a reader thread: one list page, its input as the route made it. */
export type PageRequest =
  | { id: number; op: 'messages'; input: ListMessagesInput }
  /** `now`: the main thread's clock at the request (the list's default `before`), so a thread answers as it would. */
  | { id: number; op: 'notifications'; input: ListNotificationsInput; now: number };

/**
 * A reader thread's answer: the page's body as UTF-8 bytes (their buffer transferred, not copied: the body as a string,
 * structured-cloned, cost the main thread more, BENCHMARKS.md session 24), or the messages of
 * the ValidationError the use case threw, or `retry`: anything else it threw (a SQLite error, another domain error),
 * which the main thread then meets itself by reading the page on its own connection.
 */
export type PageAnswer =
  | { id: number; body: Uint8Array }
  | { id: number; validation: string[] }
  | { id: number; retry: string };

export interface ReaderThreadData {
  /** The embedded database file (opened read-only). */
  file: string;
  activityRetentionDays?: number;
}

import type { DomainEvent } from '../../domain/webhooks.js';
import type { Store } from '../../store/ports.js';

/**
 * Runs a change that announces domain events (ARCHITECTURE.md point 13): `change` pushes its events into `events`,
 * and they are recorded in the outbox in the same transaction as the change. When the environment has no enabled
 * webhook endpoint (EventOutbox.wanted, cached), the change runs as it would without events: no transaction is
 * opened and nothing is stored. Use-cases that already run a transaction call `tx.events.record` in it instead.
 */
export async function withDomainEvents<T>(store: Store, environmentId: string, change: (store: Store, events: DomainEvent[]) => Promise<T>): Promise<T> {
  if (!(await store.events.wanted(environmentId))) return change(store, []);
  return store.transaction(async (tx) => {
    const events: DomainEvent[] = [];
    const result = await change(tx, events);
    await tx.events.record(environmentId, events);
    return result;
  });
}

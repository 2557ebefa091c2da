/**
 * Continuations that become ready in one event-loop turn run together after it (issue 24): each is queued, and the
 * first of a turn schedules one `setImmediate` that runs them all, in the order they were queued. Nothing waits
 * longer than the end of the turn it became ready in. Shared by the embedded server's read requests
 * (http/read-gathering.ts) and `herald api`'s PostgreSQL read results (store/postgres/result-gathering.ts): a request
 * that would go on from its own socket callback goes on with the rest of its turn's instead, from one callback.
 * Gathering the Redis rate limit's answers the same way lost in A B B A (BENCHMARKS.md, session 24, so-api2).
 */
export type TurnGathering = (resume: () => void) => void;

export function turnGathering(): TurnGathering {
  let waiting: Array<() => void> = [];
  const release = () => {
    const ready = waiting;
    waiting = [];
    for (const resume of ready) resume();
  };
  return (resume) => {
    if (waiting.push(resume) === 1) setImmediate(release);
  };
}

/** A value handed on after the turn, with the turn's other values (the promise form of `turnGathering`). */
export type ValueGathering = <T>(value: T) => Promise<T>;

export function valueGathering(): ValueGathering {
  const gather = turnGathering();
  return <T>(value: T) => new Promise<T>((resolve) => gather(() => resolve(value)));
}

/**
 * Calls that share their round trips under load: a call made while none is in flight goes out at once, alone (no
 * delay is added); calls made while one is in flight wait for it and then go out together, at most `maxBatch` at a
 * time. `send` gets one batch's inputs in call order and answers one settled result per input, in that order: a
 * rejected one fails only its caller; a thrown error fails every caller of the batch. Nothing in it is Redis's: it
 * coalesces BullMQ adds (one addBulk), Redis rate-limit hits (one script call per counter) and, on PostgreSQL outside
 * a transaction, trigger inserts, trigger reads and subscriber reads by subscriberId (one statement a batch).
 */
export class CoalescedBatches<I, O> {
  private readonly waiting: Array<{ input: I; resolve: (output: O) => void; reject: (error: unknown) => void }> = [];
  private sending = false;

  constructor(
    private readonly send: (inputs: I[]) => Promise<Array<PromiseSettledResult<O>>>,
    private readonly maxBatch: number,
  ) {}

  /** Settles when this input's own result is in. */
  run(input: I): Promise<O> {
    const done = new Promise<O>((resolve, reject) => this.waiting.push({ input, resolve, reject }));
    if (!this.sending) void this.sendWaiting();
    return done;
  }

  private async sendWaiting(): Promise<void> {
    this.sending = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxBatch);
        try {
          const results = await this.send(batch.map((waiting) => waiting.input));
          batch.forEach((waiting, index) => {
            const result = results[index] ?? { status: 'rejected', reason: new Error('no result for this call of the batch') };
            if (result.status === 'fulfilled') waiting.resolve(result.value);
            else waiting.reject(result.reason);
          });
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
        }
      }
    } finally {
      this.sending = false;
    }
  }
}

/** Every input of a batch done: what `send` answers when the batch succeeds or fails as a whole. */
export function allFulfilled<O>(count: number, value: O): Array<PromiseSettledResult<O>> {
  return Array.from({ length: count }, () => ({ status: 'fulfilled', value }));
}

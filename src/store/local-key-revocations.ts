import type { KeyRevocations } from './ports.js';

/** Embedded mode: one process, so announcing a revocation is calling the listeners. */
export class LocalKeyRevocations implements KeyRevocations {
  readonly listening = true;
  private readonly listeners: Array<(keyHash: string | undefined) => void> = [];

  async publish(keyHash: string): Promise<void> {
    for (const listener of this.listeners) listener(keyHash);
  }

  onRevoked(listener: (keyHash: string | undefined) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {}
}

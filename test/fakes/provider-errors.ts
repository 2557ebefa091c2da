import { expect } from 'vitest';
import { ProviderError } from '../../src/providers/ports.js';

/** Awaits a promise that must reject with a ProviderError and returns it. */
export async function providerFailure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

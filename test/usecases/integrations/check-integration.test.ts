import { afterEach, describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../../../src/domain/errors.js';
import { ProviderError, type ChannelProvider, type ProviderContext, type ProviderDirectory } from '../../../src/providers/ports.js';
import type { Deps } from '../../../src/usecases/deps.js';
import { checkIntegration } from '../../../src/usecases/integrations/check-integration.js';

const silentLogger = { info() {}, warn() {}, error() {}, debug() {}, child: () => silentLogger };

/** Deps with only what checkIntegration uses: a stub directory, the check timeout and a logger. */
function depsWith(provider: Partial<ChannelProvider> | undefined, contexts: Array<{ timeoutMs?: number }> = []): Deps {
  const directory: ProviderDirectory = {
    get: () => (provider ? ({ id: 'stub', channel: 'email', send: async () => ({}), ...provider } as ChannelProvider) : undefined),
    context: (options = {}) => {
      contexts.push(options);
      return { fetch, timeoutMs: options.timeoutMs ?? 0 } as ProviderContext;
    },
  };
  return { providers: directory, config: { providerCheckTimeoutMs: 1234 }, logger: silentLogger } as unknown as Deps;
}

const input = { providerId: 'nodemailer', channel: 'email' as const, credentials: { host: 'h', port: '25', from: 'f' } };

describe('checkIntegration', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('passes when the provider check resolves, giving it the credentials and the configured timeout', async () => {
    const contexts: Array<{ timeoutMs?: number }> = [];
    const seen: unknown[] = [];
    const deps = depsWith({ check: async (credentials, ctx) => void seen.push(credentials, ctx.timeoutMs) }, contexts);
    await expect(checkIntegration(deps, input)).resolves.toBeUndefined();
    expect(seen).toEqual([input.credentials, 1234]);
    expect(contexts).toEqual([{ timeoutMs: 1234 }]);
  });

  it('turns a provider failure into a 400 ValidationError carrying the provider reason', async () => {
    const deps = depsWith({ check: async () => { throw new ProviderError('SMTP: Invalid login: 535 no', false); } });
    const error = await checkIntegration(deps, input).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).messages).toEqual(['credentials check failed for provider nodemailer: SMTP: Invalid login: 535 no']);
  });

  it('passes for a provider without a check, one Herald cannot deliver through, and an agent (no channel)', async () => {
    await expect(checkIntegration(depsWith({}), input)).resolves.toBeUndefined();
    await expect(checkIntegration(depsWith(undefined), input)).resolves.toBeUndefined();
    const neverCalled = depsWith({ check: async () => { throw new Error('must not run'); } });
    await expect(checkIntegration(neverCalled, { providerId: 'anthropic', credentials: {} })).resolves.toBeUndefined();
  });

  it('gives up on a check that ignores its timeout', async () => {
    vi.useFakeTimers();
    const deps = depsWith({ check: () => new Promise<void>(() => {}) });
    const outcome = checkIntegration(deps, input).catch((caught: unknown) => caught);
    await vi.advanceTimersByTimeAsync(1234 + 1000);
    const error = await outcome;
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).messages[0]).toBe('credentials check failed for provider nodemailer: check timed out after 1234 ms');
  });
});

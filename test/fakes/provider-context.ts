import { createProviderContext } from '../../src/providers/outbound.js';
import type { ProviderContext } from '../../src/providers/ports.js';

/** The context providers get in production, with 127.0.0.1 allowed the way the tests' configuration does. */
export function testProviderContext(timeoutMs = 2000): ProviderContext {
  return createProviderContext({ timeoutMs, userAgent: 'Herald-Test/1.0', allow: ['127.0.0.1'] });
}

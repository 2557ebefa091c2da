import { createHmac } from 'node:crypto';

/**
 * The `novu-signature` header value a @novu/framework bridge checks: `t=<unix ms>,v1=<hex HMAC-SHA256>` keyed with
 * the environment's secret key over `<t>.<body>`. The framework re-serialises the parsed body with JSON.stringify,
 * so `body` must be exactly the compact JSON that is sent; GET requests sign `{}`.
 */
export function bridgeSignature(secretKey: string, body: string, nowMs: number): string {
  const hmac = createHmac('sha256', secretKey).update(`${nowMs}.${body}`).digest('hex');
  return `t=${nowMs},v1=${hmac}`;
}

import { SignJWT, jwtVerify } from 'jose';
import { NotFoundError, UnauthorizedError, ValidationError } from '../../domain/errors.js';
import type { Deps } from '../deps.js';

/**
 * Session tokens are what a dashboard holds: short-lived HS256 JWTs naming one environment, minted by
 * the CLI. Only session callers see integration credentials.
 */
const ISSUER = 'herald';
const AUDIENCE = 'herald-session';

export interface CreateSessionTokenInput {
  environmentName: string;
  ttlSeconds: number;
  subject?: string;
}

export async function createSessionToken(
  deps: Pick<Deps, 'store' | 'clock' | 'sessionSecret' | 'config'>,
  input: CreateSessionTokenInput,
): Promise<{ token: string; expiresAt: string }> {
  if (!Number.isInteger(input.ttlSeconds) || input.ttlSeconds < 1 || input.ttlSeconds > deps.config.sessionTokenMaxTtlSeconds) {
    throw new ValidationError([`ttl must be between 1 second and ${deps.config.sessionTokenMaxTtlSeconds} seconds`]);
  }
  const environment = await deps.store.tenancy.findEnvironmentByName(input.environmentName);
  if (!environment) throw new NotFoundError(`Environment ${input.environmentName} not found`);
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  const expires = nowSeconds + input.ttlSeconds;
  const token = await new SignJWT({ env: environment._id, org: environment._organizationId })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(input.subject ?? 'cli')
    .setIssuedAt(nowSeconds)
    .setExpirationTime(expires)
    .sign(deps.sessionSecret);
  return { token, expiresAt: new Date(expires * 1000).toISOString() };
}

export async function verifySessionToken(
  deps: Pick<Deps, 'clock' | 'sessionSecret'>,
  token: string,
): Promise<{ environmentId: string; organizationId: string; subject: string }> {
  try {
    const { payload } = await jwtVerify(token, deps.sessionSecret, {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['HS256'],
      currentDate: new Date(deps.clock.now()),
    });
    if (typeof payload.env !== 'string' || typeof payload.org !== 'string') throw new Error('claims');
    return { environmentId: payload.env, organizationId: payload.org, subject: payload.sub ?? 'session' };
  } catch {
    throw new UnauthorizedError('Invalid or expired session token');
  }
}

import { importPKCS8, SignJWT } from 'jose';
import type { Credentials } from '../../domain/types.js';
import { baseUrlOf } from '../credential-values.js';
import { providerErrorFromStatus } from '../outbound.js';
import { ProviderError, type ChannelProvider, type ProviderContext } from '../ports.js';
import { callVendor, jsonHeaders, parseJson } from '../vendor-http.js';
import {
  mapWithConcurrency,
  normalizePem,
  requireTargets,
  settleTokenOutcomes,
  stringValues,
  tokenFailed,
  tokenSucceeded,
  type TokenOutcome,
} from './token-outcomes.js';

/**
 * Firebase Cloud Messaging HTTP v1. The service account (credentials.serviceAccount, JSON text or object)
 * signs an RS256 JWT that is exchanged at its `token_uri` for an OAuth access token (cached until shortly
 * before it expires); then one POST /v1/projects/{project_id}/messages:send per device token.
 */
const ID = 'fcm';
/** Per-token requests in flight at once. */
const PARALLEL_REQUESTS = 10;
const VENDOR = 'FCM';
const DEFAULT_BASE_URL = 'https://fcm.googleapis.com';
const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const EXPIRY_MARGIN_MS = 60_000;

interface ServiceAccount {
  project_id: string;
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
}

const accessTokens = new Map<string, { token: string; expiresAt: number }>();

function serviceAccountOf(credentials: Credentials): ServiceAccount {
  const raw = credentials.serviceAccount;
  const parsed = typeof raw === 'string' ? parseJson<ServiceAccount>(raw) : (raw as ServiceAccount | undefined);
  const missing = ['project_id', 'client_email', 'private_key'].filter(
    (field) => !parsed || typeof parsed[field as keyof ServiceAccount] !== 'string',
  );
  if (!parsed || missing.length > 0) {
    throw new ProviderError(`fcm: serviceAccount is not a service-account JSON (missing ${missing.join(', ')})`, false);
  }
  return { ...parsed, token_uri: parsed.token_uri ?? 'https://oauth2.googleapis.com/token' };
}

function cacheKey(account: ServiceAccount): string {
  return `${account.client_email}|${account.token_uri}`;
}

async function signAssertion(account: ServiceAccount): Promise<string> {
  let key: CryptoKey;
  try {
    key = await importPKCS8(normalizePem(account.private_key), 'RS256');
  } catch {
    throw new ProviderError('fcm: the service account private_key is not a PKCS#8 RSA key', false);
  }
  return new SignJWT({ scope: SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.private_key_id ? { kid: account.private_key_id } : {}) })
    .setIssuer(account.client_email)
    .setAudience(account.token_uri)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(key);
}

async function accessTokenFor(account: ServiceAccount, ctx: ProviderContext): Promise<string> {
  const cached = accessTokens.get(cacheKey(account));
  if (cached && cached.expiresAt > Date.now()) return cached.token;
  const form = new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
    assertion: await signAssertion(account),
  });
  const answer = await callVendor(ctx, 'Google OAuth', account.token_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form.toString(),
  });
  const json = parseJson<{ access_token?: string; expires_in?: number }>(answer.text);
  if (!json?.access_token) throw new ProviderError('Google OAuth answered without an access_token', true, answer.text);
  const lifetimeMs = (json.expires_in ?? 3600) * 1000;
  accessTokens.set(cacheKey(account), { token: json.access_token, expiresAt: Date.now() + lifetimeMs - EXPIRY_MARGIN_MS });
  return json.access_token;
}

interface FcmErrorBody {
  error?: { status?: string; message?: string; details?: { errorCode?: string }[] };
}

/** UNREGISTERED always means the token is gone; INVALID_ARGUMENT only when FCM says the token is the bad part. */
function isInvalidToken(body: FcmErrorBody | undefined): boolean {
  const error = body?.error;
  const codes = [error?.status, ...(error?.details ?? []).map((detail) => detail.errorCode)];
  if (codes.includes('UNREGISTERED')) return true;
  return codes.includes('INVALID_ARGUMENT') && /registration token/i.test(error?.message ?? '');
}

export const fcmProvider: ChannelProvider<'push'> = {
  id: ID,
  channel: 'push',
  async send(credentials, message, ctx) {
    const tokens = requireTargets(message.target, ID);
    const account = serviceAccountOf(credentials);
    const accessToken = await accessTokenFor(account, ctx);
    const url = `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`;
    const sendOne = async (token: string): Promise<TokenOutcome> => {
      const body = {
        message: {
          token,
          notification: { title: message.title, body: message.content },
          data: stringValues(message.payload),
          ...message.overrides,
        },
      };
      try {
        const answer = await callVendor(
          ctx,
          VENDOR,
          url,
          { method: 'POST', headers: jsonHeaders({ authorization: `Bearer ${accessToken}` }), body: JSON.stringify(body) },
          () => true,
        );
        if (answer.status >= 200 && answer.status < 300) {
          return tokenSucceeded(token, parseJson<{ name?: string }>(answer.text)?.name);
        }
        if (answer.status === 401) accessTokens.delete(cacheKey(account));
        const failure = providerErrorFromStatus(answer.status, answer.text, VENDOR);
        return tokenFailed(token, failure, isInvalidToken(parseJson<FcmErrorBody>(answer.text)));
      } catch (error) {
        if (error instanceof ProviderError) return tokenFailed(token, error);
        throw error;
      }
    };
    return settleTokenOutcomes(await mapWithConcurrency(tokens, PARALLEL_REQUESTS, sendOne));
  },
  /** Exchanging the service account's JWT for an access token proves the key and the account. */
  async check(credentials, ctx) {
    const account = serviceAccountOf(credentials);
    accessTokens.delete(cacheKey(account));
    await accessTokenFor(account, ctx);
  },
};

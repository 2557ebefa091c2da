import { connect, constants, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import type { LookupFunction } from 'node:net';
import { importPKCS8, SignJWT } from 'jose';
import type { Credentials } from '../../domain/types.js';
import { booleanCredential, optionalCredential, requiredCredential } from '../credential-values.js';
import { providerErrorFromStatus, toProviderError } from '../outbound.js';
import { ProviderError, type ChannelProvider, type PushMessage } from '../ports.js';
import { parseJson } from '../vendor-http.js';
import {
  mapWithConcurrency,
  normalizePem,
  requireTargets,
  settleTokenOutcomes,
  tokenFailed,
  tokenSucceeded,
  type TokenOutcome,
} from './token-outcomes.js';

/**
 * Apple Push Notification service over HTTP/2: POST /3/device/{token} with an ES256 provider token
 * (`authorization: bearer <JWT>`, kid = apiKey (key id), iss = projectName (team id)) and
 * `apns-topic` = applicationId (bundle id). secretKey is the .p8 key. `production: false` selects the
 * sandbox; `baseUrl` overrides both (tests use cleartext h2c on 127.0.0.1).
 */
const ID = 'apns';
/** Per-token requests in flight at once. */
const PARALLEL_REQUESTS = 10;
const VENDOR = 'APNs';
/** Apple refuses tokens refreshed more than once per 20 minutes and expires them after an hour. */
const TOKEN_REUSE_MS = 50 * 60_000;
const INVALID_TOKEN_REASONS = new Set(['BadDeviceToken', 'Unregistered', 'DeviceTokenNotForTopic']);

const providerTokens = new Map<string, { jwt: string; issuedAt: number }>();

async function providerToken(credentials: Credentials): Promise<string> {
  const keyId = requiredCredential(credentials, 'apiKey', ID);
  const teamId = requiredCredential(credentials, 'projectName', ID);
  const pem = normalizePem(requiredCredential(credentials, 'secretKey', ID));
  const cacheKey = `${teamId}|${keyId}|${pem}`;
  const cached = providerTokens.get(cacheKey);
  if (cached && Date.now() - cached.issuedAt < TOKEN_REUSE_MS) return cached.jwt;
  let key: CryptoKey;
  try {
    key = await importPKCS8(pem, 'ES256');
  } catch {
    throw new ProviderError('apns: secretKey is not a PKCS#8 EC (.p8) key', false);
  }
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: keyId }).setIssuer(teamId).setIssuedAt().sign(key);
  providerTokens.set(cacheKey, { jwt, issuedAt: Date.now() });
  return jwt;
}

function originOf(credentials: Credentials): string {
  const baseUrl = optionalCredential(credentials, 'baseUrl');
  if (baseUrl) return new URL(baseUrl).origin;
  return booleanCredential(credentials, 'production') === false
    ? 'https://api.sandbox.push.apple.com'
    : 'https://api.push.apple.com';
}

function notificationBody(message: PushMessage): string {
  const { aps: apsOverrides, ...otherOverrides } = (message.overrides ?? {}) as { aps?: Record<string, unknown> };
  return JSON.stringify({
    ...message.payload,
    ...otherOverrides,
    aps: { alert: { title: message.title, body: message.content }, ...apsOverrides },
  });
}

interface Http2Answer {
  status: number;
  apnsId?: string;
  text: string;
}

function post(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body: string, timeoutMs: number): Promise<Http2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ...headers });
    let status = 0;
    let apnsId: string | undefined;
    const chunks: Buffer[] = [];
    stream.setTimeout(timeoutMs, () => {
      stream.close(constants.NGHTTP2_CANCEL);
      reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));
    });
    stream.on('response', (responseHeaders) => {
      status = Number(responseHeaders[':status']);
      apnsId = responseHeaders['apns-id'] as string | undefined;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ status, apnsId, text: Buffer.concat(chunks).toString('utf8') }));
    stream.on('error', reject);
    stream.end(body);
  });
}

/**
 * Opens the HTTP/2 session, failing fast (as a retryable error) when the connection cannot be made. `lookup` is the
 * context's guarded lookup: the address connected to is one the outbound guard accepted (no DNS rebinding between
 * the check and the connection); its refusal is the session's error.
 */
function openSession(origin: string, timeoutMs: number, lookup: LookupFunction | undefined): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = lookup ? connect(origin, { lookup }) : connect(origin);
    const timer = setTimeout(() => {
      session.destroy();
      reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));
    }, timeoutMs);
    session.once('connect', () => {
      clearTimeout(timer);
      resolve(session);
    });
    session.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

export const apnsProvider: ChannelProvider<'push'> = {
  id: ID,
  channel: 'push',
  async send(credentials, message, ctx) {
    const tokens = requireTargets(message.target, ID);
    const topic = requiredCredential(credentials, 'applicationId', ID);
    const jwt = await providerToken(credentials);
    const origin = originOf(credentials);
    await ctx.assertAllowed?.(origin);
    let session: ClientHttp2Session;
    try {
      session = await openSession(origin, ctx.timeoutMs, ctx.guardedLookup);
    } catch (error) {
      throw toProviderError(error, origin, ctx.timeoutMs);
    }
    // A late session error after connect must not crash the process; each stream reports its own.
    session.on('error', () => undefined);
    const body = notificationBody(message);
    const sendOne = async (token: string): Promise<TokenOutcome> => {
      const headers = {
        ':path': `/3/device/${encodeURIComponent(token)}`,
        authorization: `bearer ${jwt}`,
        'apns-topic': topic,
        'apns-push-type': 'alert',
        'apns-priority': '10',
        'content-type': 'application/json',
      };
      try {
        const answer = await post(session, headers, body, ctx.timeoutMs);
        if (answer.status === 200) return tokenSucceeded(token, answer.apnsId);
        const reason = parseJson<{ reason?: string }>(answer.text)?.reason ?? '';
        const invalid = answer.status === 410 || INVALID_TOKEN_REASONS.has(reason);
        return tokenFailed(token, providerErrorFromStatus(answer.status, answer.text, VENDOR), invalid);
      } catch (error) {
        return tokenFailed(token, toProviderError(error, `${origin}/3/device`, ctx.timeoutMs));
      }
    };
    try {
      return settleTokenOutcomes(await mapWithConcurrency(tokens, PARALLEL_REQUESTS, sendOne));
    } finally {
      session.close();
    }
  },
  /** APNs has no no-op endpoint: check that the key signs a provider token. */
  async check(credentials) {
    requiredCredential(credentials, 'applicationId', ID);
    await providerToken(credentials);
  },
};

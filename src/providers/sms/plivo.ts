import { baseUrlOf, requiredCredential } from '../credential-values.js';
import type { ChannelProvider } from '../ports.js';
import { basicAuth, callVendor, jsonHeaders, parseJson } from '../vendor-http.js';

/**
 * Plivo Messages: POST /v1/Account/{auth_id}/Message/ with JSON {src, dst, text}, HTTP basic auth
 * auth_id:auth_token (the catalogue calls them accountSid and token). Answers 202 with message_uuid[].
 */
const ID = 'plivo';
const VENDOR = 'Plivo';
const DEFAULT_BASE_URL = 'https://api.plivo.com';

function accountUrl(baseUrl: string, authId: string): string {
  return `${baseUrl}/v1/Account/${encodeURIComponent(authId)}/`;
}

export const plivoProvider: ChannelProvider<'sms'> = {
  id: ID,
  channel: 'sms',
  async send(credentials, message, ctx) {
    const authId = requiredCredential(credentials, 'accountSid', ID);
    const authToken = requiredCredential(credentials, 'token', ID);
    const body = { src: message.from ?? requiredCredential(credentials, 'from', ID), dst: message.to, text: message.content };
    const answer = await callVendor(ctx, VENDOR, `${accountUrl(baseUrlOf(credentials, DEFAULT_BASE_URL), authId)}Message/`, {
      method: 'POST',
      headers: jsonHeaders({ authorization: basicAuth(authId, authToken) }),
      body: JSON.stringify(body),
    });
    const json = parseJson<{ message_uuid?: string[] }>(answer.text);
    return { id: json?.message_uuid?.[0], date: new Date().toISOString(), raw: answer.text };
  },
  /** GET the account details. */
  async check(credentials, ctx) {
    const authId = requiredCredential(credentials, 'accountSid', ID);
    const authToken = requiredCredential(credentials, 'token', ID);
    await callVendor(ctx, VENDOR, accountUrl(baseUrlOf(credentials, DEFAULT_BASE_URL), authId), {
      method: 'GET',
      headers: { authorization: basicAuth(authId, authToken), accept: 'application/json' },
    });
  },
};

import { optionalCredential, requiredCredential } from '../credential-values.js';
import type { ChannelProvider } from '../ports.js';
import { callVendor, jsonHeaders, parseJson, valueAtPath } from '../vendor-http.js';

/**
 * A generic SMS gateway: POST JSON {to, content, from, ...overrides} to `baseUrl`, the API key in the header
 * named by `apiKeyRequestHeader` (default `x-api-key`), optionally a secret in `secretKeyRequestHeader`.
 * The message id and date are read from the answer at `idPath` / `datePath` (dot paths, default `id`/`date`).
 */
const ID = 'generic-sms';
const VENDOR = 'Generic SMS';

export const genericSmsProvider: ChannelProvider<'sms'> = {
  id: ID,
  channel: 'sms',
  async send(credentials, message, ctx) {
    const headers: Record<string, string> = {
      [optionalCredential(credentials, 'apiKeyRequestHeader') ?? 'x-api-key']: requiredCredential(credentials, 'apiKey', ID),
    };
    const secretKey = optionalCredential(credentials, 'secretKey');
    const secretHeader = optionalCredential(credentials, 'secretKeyRequestHeader');
    if (secretKey && secretHeader) headers[secretHeader] = secretKey;
    const body = {
      to: message.to,
      content: message.content,
      from: message.from ?? requiredCredential(credentials, 'from', ID),
      ...message.overrides,
    };
    const answer = await callVendor(ctx, VENDOR, requiredCredential(credentials, 'baseUrl', ID), {
      method: 'POST',
      headers: jsonHeaders(headers),
      body: JSON.stringify(body),
    });
    const json = parseJson<unknown>(answer.text);
    const id = valueAtPath(json, optionalCredential(credentials, 'idPath') ?? 'id');
    const date = valueAtPath(json, optionalCredential(credentials, 'datePath') ?? 'date');
    return {
      id: id === undefined || id === null ? undefined : String(id),
      date: typeof date === 'string' ? date : new Date().toISOString(),
      raw: answer.text,
    };
  },
};

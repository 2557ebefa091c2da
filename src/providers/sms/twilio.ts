import { baseUrlOf, requiredCredential } from '../credential-values.js';
import type { ChannelProvider } from '../ports.js';
import { basicAuth, callVendor, parseJson } from '../vendor-http.js';

/**
 * Twilio Programmable Messaging: POST /2010-04-01/Accounts/{AccountSid}/Messages.json, form-encoded,
 * HTTP basic auth AccountSid:AuthToken. A `from` starting with "MG" is a Messaging Service SID.
 */
const ID = 'twilio';
const VENDOR = 'Twilio';
const DEFAULT_BASE_URL = 'https://api.twilio.com';

export const twilioProvider: ChannelProvider<'sms'> = {
  id: ID,
  channel: 'sms',
  async send(credentials, message, ctx) {
    const accountSid = requiredCredential(credentials, 'accountSid', ID);
    const token = requiredCredential(credentials, 'token', ID);
    const from = message.from ?? requiredCredential(credentials, 'from', ID);
    const form = new URLSearchParams({ To: message.to, Body: message.content });
    form.set(from.startsWith('MG') ? 'MessagingServiceSid' : 'From', from);
    // Where Twilio posts this message's status callbacks (Herald's delivery-report URL, docs/provider-delivery-reports.md).
    const statusCallback = message.overrides?.StatusCallback;
    if (typeof statusCallback === 'string' && statusCallback !== '') form.set('StatusCallback', statusCallback);
    const url = `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
    const answer = await callVendor(ctx, VENDOR, url, {
      method: 'POST',
      headers: { authorization: basicAuth(accountSid, token), 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const json = parseJson<{ sid?: string; date_created?: string }>(answer.text);
    return { id: json?.sid, date: json?.date_created ?? new Date().toISOString(), raw: answer.text };
  },
  /** GET the account resource: authenticated, changes nothing. */
  async check(credentials, ctx) {
    const accountSid = requiredCredential(credentials, 'accountSid', ID);
    const token = requiredCredential(credentials, 'token', ID);
    const url = `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}.json`;
    await callVendor(ctx, VENDOR, url, { method: 'GET', headers: { authorization: basicAuth(accountSid, token) } });
  },
};

import { describe, expect, it } from 'vitest';
import { PROVIDER_CATALOGUE } from '../../src/domain/provider-catalogue.js';
import { getDeliveryProvider } from '../../src/providers/registry.js';

describe('getDeliveryProvider', () => {
  it.each([
    ['nodemailer', 'email'],
    ['sendgrid', 'email'],
    ['mailgun', 'email'],
    ['postmark', 'email'],
    ['resend', 'email'],
    ['ses', 'email'],
    ['email-webhook', 'email'],
    ['twilio', 'sms'],
    ['nexmo', 'sms'],
    ['plivo', 'sms'],
    ['generic-sms', 'sms'],
    ['slack', 'chat'],
    ['discord', 'chat'],
    ['msteams', 'chat'],
    ['mattermost', 'chat'],
    ['chat-webhook', 'chat'],
    ['fcm', 'push'],
    ['apns', 'push'],
    ['expo', 'push'],
    ['one-signal', 'push'],
    ['push-webhook', 'push'],
  ] as const)('delivers %s on %s', (id, channel) => {
    const provider = getDeliveryProvider(id, channel);
    expect(provider).toMatchObject({ id, channel });
  });

  it('answers undefined for catalogue providers without delivery, in-app, and a channel mismatch', () => {
    expect(getDeliveryProvider('mailjet', 'email')).toBeUndefined();
    expect(getDeliveryProvider('clickatell', 'sms')).toBeUndefined();
    expect(getDeliveryProvider('novu', 'in_app')).toBeUndefined();
    expect(getDeliveryProvider('twilio', 'email')).toBeUndefined();
  });

  it('only implements ids from the catalogue, on their catalogue channel', () => {
    for (const entry of PROVIDER_CATALOGUE) {
      if (!entry.channel) continue;
      const provider = getDeliveryProvider(entry.id, entry.channel);
      if (provider) expect(provider.channel).toBe(entry.channel);
    }
    const implemented = PROVIDER_CATALOGUE.filter((e) => e.channel && getDeliveryProvider(e.id, e.channel));
    expect(implemented).toHaveLength(21);
  });
});

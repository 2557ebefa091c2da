import { describe, expect, it } from 'vitest';
import type { ChannelSettings } from '../../../src/domain/types.js';
import {
  CHANNEL_SETTINGS_PROVIDER_IDS,
  assertChannelSettingsProvider,
  cleanCredentials,
  mergeChannelEntry,
  replaceChannelEntry,
  validateChannelCredentials,
  withoutProvider,
} from '../../../src/usecases/subscriber-credentials/channel-settings.js';
import { validationMessages } from '../../helpers/validation-messages.js';

const entry = (providerId: string, integrationId: string, credentials: ChannelSettings['credentials']): ChannelSettings => ({
  providerId, credentials, _integrationId: integrationId,
});

describe('channel settings rules', () => {
  it('accepts exactly the chat and push providers (the SDK enum: 17 chat + 8 push)', () => {
    expect(CHANNEL_SETTINGS_PROVIDER_IDS).toHaveLength(25);
    expect(assertChannelSettingsProvider('slack')).toBe('chat');
    expect(assertChannelSettingsProvider('fcm')).toBe('push');
    for (const providerId of ['sendgrid', 'twilio', 'novu', 'anthropic', 'clickatell', '']) {
      expect(validationMessages(() => assertChannelSettingsProvider(providerId))[0]).toContain('providerId must be one of');
    }
  });

  it('validates webhookUrl as an http(s) URL and device tokens as non-empty strings, naming every bad field', () => {
    expect(() => validateChannelCredentials({ webhookUrl: 'https://hooks.example/1', deviceTokens: ['a'] })).not.toThrow();
    expect(() => validateChannelCredentials({ webhookUrl: 'http://127.0.0.1:8080/x', deviceTokens: [] })).not.toThrow();
    for (const webhookUrl of ['', 'hooks.example/1', 'ftp://hooks.example', 'javascript:alert(1)', 'mailto:a@b.c']) {
      expect(validationMessages(() => validateChannelCredentials({ webhookUrl }))).toEqual(['credentials.webhookUrl must be an http or https URL']);
    }
    expect(validationMessages(() => validateChannelCredentials({ webhookUrl: 'nope', deviceTokens: ['ok', ' '] }))).toEqual([
      'credentials.webhookUrl must be an http or https URL',
      'credentials.deviceTokens must be an array of non-empty strings',
    ]);
  });

  it('cleanCredentials keeps only the spec fields and de-duplicates tokens in order', () => {
    const dirty = { webhookUrl: 'https://x.example', deviceTokens: ['b', 'a', 'b'], title: undefined, apiKey: 'secret' } as never;
    expect(cleanCredentials(dirty)).toEqual({ webhookUrl: 'https://x.example', deviceTokens: ['b', 'a'] });
  });

  it('replace swaps the entry of the same provider and integration in place, or appends', () => {
    const channels = [entry('fcm', 'i1', { deviceTokens: ['a'], title: 't' }), entry('fcm', 'i2', { deviceTokens: ['z'] })];
    expect(replaceChannelEntry(channels, entry('fcm', 'i1', { deviceTokens: ['b', 'b'] }))).toEqual([
      entry('fcm', 'i1', { deviceTokens: ['b'] }),
      entry('fcm', 'i2', { deviceTokens: ['z'] }),
    ]);
    expect(replaceChannelEntry(channels, entry('fcm', 'i3', { deviceTokens: ['c'] }))).toHaveLength(3);
    expect(channels[0]!.credentials).toEqual({ deviceTokens: ['a'], title: 't' });
  });

  it('merge appends tokens without duplicates, overwrites given fields, keeps the rest and the identifier', () => {
    const channels = [{ ...entry('fcm', 'i1', { deviceTokens: ['a', 'b'], title: 'old', state: 's' }), integrationIdentifier: 'fcm-main' }];
    expect(mergeChannelEntry(channels, entry('fcm', 'i1', { deviceTokens: ['b', 'c'], title: 'new' }))).toEqual([
      { ...entry('fcm', 'i1', { deviceTokens: ['a', 'b', 'c'], title: 'new', state: 's' }), integrationIdentifier: 'fcm-main' },
    ]);
    expect(mergeChannelEntry(channels, entry('fcm', 'i1', { title: 'only' }))[0]!.credentials).toEqual({ deviceTokens: ['a', 'b'], title: 'only', state: 's' });
    expect(mergeChannelEntry(channels, entry('fcm', 'other', { deviceTokens: ['x'] }))).toHaveLength(2);
  });

  it('withoutProvider drops every entry of that provider only', () => {
    const channels = [entry('slack', 'i1', {}), entry('fcm', 'i2', {}), entry('slack', '', {})];
    expect(withoutProvider(channels, 'slack')).toEqual([entry('fcm', 'i2', {})]);
  });
});

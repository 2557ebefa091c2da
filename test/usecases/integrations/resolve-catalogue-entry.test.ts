import { describe, expect, it } from 'vitest';
import { resolveCatalogueEntry } from '../../../src/usecases/integrations/resolve-catalogue-entry.js';
import { validationMessages } from '../../helpers/validation-messages.js';

describe('resolveCatalogueEntry', () => {
  it('infers the channel of a single-channel provider and accepts the matching one', () => {
    expect(resolveCatalogueEntry({ providerId: 'twilio' })).toMatchObject({ id: 'twilio', channel: 'sms', kind: 'delivery' });
    expect(resolveCatalogueEntry({ providerId: 'sendgrid', channel: 'email', kind: 'delivery' })).toMatchObject({ channel: 'email' });
    expect(resolveCatalogueEntry({ providerId: 'novu', channel: 'in_app' })).toMatchObject({ channel: 'in_app' });
  });

  it('needs the channel for clickatell and takes either of its two', () => {
    expect(validationMessages(() => resolveCatalogueEntry({ providerId: 'clickatell' }))).toEqual([
      'channel is required for provider clickatell (email or sms)',
    ]);
    expect(resolveCatalogueEntry({ providerId: 'clickatell', channel: 'email' }).channel).toBe('email');
    expect(resolveCatalogueEntry({ providerId: 'clickatell', channel: 'sms' }).channel).toBe('sms');
    expect(validationMessages(() => resolveCatalogueEntry({ providerId: 'clickatell', channel: 'push' }))).toEqual([
      'channel push does not match provider clickatell (email or sms)',
    ]);
  });

  it('agent providers have kind agent and no channel', () => {
    const entry = resolveCatalogueEntry({ providerId: 'anthropic' });
    expect(entry).toMatchObject({ id: 'anthropic', kind: 'agent' });
    expect(entry.channel).toBeUndefined();
    expect(resolveCatalogueEntry({ providerId: 'grafana', kind: 'agent' }).kind).toBe('agent');
    expect(validationMessages(() => resolveCatalogueEntry({ providerId: 'grafana', channel: 'chat', kind: 'delivery' }))).toEqual([
      'channel must be absent for agent provider grafana',
      'kind must be agent for agent provider grafana',
    ]);
  });

  it('rejects kind agent for a delivery provider, and unknown ids naming the value', () => {
    expect(validationMessages(() => resolveCatalogueEntry({ providerId: 'fcm', kind: 'agent' }))).toEqual([
      'kind agent requires an agent provider; fcm is a delivery provider',
    ]);
    expect(validationMessages(() => resolveCatalogueEntry({ providerId: 'SendGrid' }))).toEqual(['providerId "SendGrid" is not a known provider id']);
  });
});

import { describe, expect, it } from 'vitest';
import { ProvidersIdEnum } from '@novu/api/models/components/index.js';
import { FALLBACK_PROVIDER_IDS, fallbackProviderId, presentedProviderId } from '../../src/domain/job-provider.js';
import { PROVIDER_IDS } from '../../src/domain/provider-catalogue.js';
import { STEP_TYPES, type Integration } from '../../src/domain/types.js';
import { plannedProviderId } from '../../src/usecases/engine/select-integration.js';

const SDK_PROVIDER_IDS = new Set<string>(Object.values(ProvidersIdEnum));

describe('job providerId', () => {
  it('every provider id Herald accepts, and every fallback, is a member of @novu/api ProvidersIdEnum', () => {
    expect(PROVIDER_IDS.filter((id) => !SDK_PROVIDER_IDS.has(id))).toEqual([]);
    for (const type of STEP_TYPES) expect(SDK_PROVIDER_IDS.has(fallbackProviderId(type)), type).toBe(true);
    expect(Object.keys(FALLBACK_PROVIDER_IDS).sort()).toEqual([...STEP_TYPES].sort());
  });

  it('presents an empty stored providerId as the step type fallback, and keeps a real one', () => {
    expect(presentedProviderId({ type: 'email', providerId: '' })).toBe('novu-email');
    expect(presentedProviderId({ type: 'sms', providerId: undefined })).toBe('novu-sms');
    expect(presentedProviderId({ type: 'delay', providerId: '' })).toBe('novu');
    expect(presentedProviderId({ type: 'email', providerId: 'sendgrid' })).toBe('sendgrid');
  });

  const integration = (overrides: Partial<Integration>): Integration =>
    ({
      _id: overrides.identifier ?? 'i',
      channel: 'email',
      active: true,
      deleted: false,
      primary: false,
      priority: 0,
      conditions: [],
      createdAt: '2026-01-01T00:00:00.000Z',
      ...overrides,
    }) as Integration;
  const sources = { subscriber: { subscriberId: 's' }, payload: {} };

  it('plans the provider the step would use now, or the fallback', () => {
    const integrations = [
      integration({ identifier: 'sg', providerId: 'sendgrid', primary: true }),
      integration({ identifier: 'pm', providerId: 'postmark' }),
      integration({ identifier: 'tw', providerId: 'twilio', channel: 'sms', active: false }),
    ];
    expect(plannedProviderId('email', integrations, sources, {})).toBe('sendgrid');
    expect(plannedProviderId('email', integrations, sources, { email: { integrationIdentifier: 'pm' } })).toBe('postmark');
    expect(plannedProviderId('email', integrations, sources, { integrationIdentifier: 'gone' })).toBe('novu-email');
    expect(plannedProviderId('sms', integrations, sources, {})).toBe('novu-sms');
    expect(plannedProviderId('push', [], sources, {})).toBe('novu');
    expect(plannedProviderId('in_app', integrations, sources, {})).toBe('novu');
    expect(plannedProviderId('digest', integrations, sources, {})).toBe('novu');
  });
});

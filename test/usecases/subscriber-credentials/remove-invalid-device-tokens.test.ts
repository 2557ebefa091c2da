import { describe, expect, it } from 'vitest';
import type { ChannelSettings, Subscriber } from '../../../src/domain/types.js';
import { removeInvalidDeviceTokens } from '../../../src/usecases/subscriber-credentials/remove-invalid-device-tokens.js';

function subscriber(channels: ChannelSettings[]): Subscriber {
  return {
    _id: '0000000000000000000000aa', _organizationId: 'o', _environmentId: 'e', subscriberId: 'user-1', channels, topics: [],
    __v: 4, deleted: false, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-02T00:00:00.000Z',
  };
}

const fcm = (integrationId: string, deviceTokens: string[]): ChannelSettings => ({ providerId: 'fcm', credentials: { deviceTokens }, _integrationId: integrationId });

describe('removeInvalidDeviceTokens', () => {
  it("removes the tokens from every entry of the provider and reports the ones it held", () => {
    const original = subscriber([
      fcm('i1', ['a', 'b', 'c']),
      { providerId: 'apns', credentials: { deviceTokens: ['b'] }, _integrationId: 'i2' },
      fcm('i3', ['b', 'd']),
      { providerId: 'slack', credentials: { webhookUrl: 'https://hooks.example/x' }, _integrationId: 'i4' },
    ]);
    const { subscriber: pruned, removed } = removeInvalidDeviceTokens(original, 'fcm', ['b', 'zzz', 'b']);
    expect(removed).toEqual(['b']);
    expect(pruned.channels).toEqual([
      fcm('i1', ['a', 'c']),
      // Validity is per vendor: the same string under apns stays.
      { providerId: 'apns', credentials: { deviceTokens: ['b'] }, _integrationId: 'i2' },
      fcm('i3', ['d']),
      { providerId: 'slack', credentials: { webhookUrl: 'https://hooks.example/x' }, _integrationId: 'i4' },
    ]);
    // Pure: the input is untouched, and version/updatedAt are the caller's to bump.
    expect(original.channels[0]!.credentials.deviceTokens).toEqual(['a', 'b', 'c']);
    expect(pruned.__v).toBe(4);
    expect(pruned.updatedAt).toBe(original.updatedAt);
  });

  it('can empty an entry, keeping the entry itself', () => {
    const { subscriber: pruned, removed } = removeInvalidDeviceTokens(subscriber([fcm('i1', ['only'])]), 'fcm', ['only']);
    expect(removed).toEqual(['only']);
    expect(pruned.channels).toEqual([fcm('i1', [])]);
  });

  it('returns the same subscriber and nothing removed when no given token is held by that provider', () => {
    const original = subscriber([fcm('i1', ['a']), { providerId: 'expo', credentials: { deviceTokens: ['x'] }, _integrationId: '' }]);
    for (const tokens of [[], ['x'], ['unknown']]) {
      const result = removeInvalidDeviceTokens(original, 'fcm', tokens);
      expect(result.removed).toEqual([]);
      expect(result.subscriber).toBe(original);
    }
    const noEntry = removeInvalidDeviceTokens(original, 'apns', ['a']);
    expect(noEntry.removed).toEqual([]);
    expect(noEntry.subscriber).toBe(original);
  });
});

import { describe, expect, it } from 'vitest';
import { toRealtimeMessage } from '../../src/realtime/raw-message.js';
import { buildMessage, buildSubscriber } from '../helpers/factories.js';
import { inboxRoom, isInboxAudience } from '../../src/realtime/rooms.js';

const scope = { environmentId: '6650a1b2c3d4e5f6a7b8c9d0', organizationId: '6650a1b2c3d4e5f6a7b8c9d1' };

describe('the raw message of notification_received', () => {
  it('carries what the clients map, with cta always an object and content always a string', () => {
    const subscriber = buildSubscriber(scope, { subscriberId: 'ada', channels: [{ providerId: 'slack', credentials: { webhookUrl: 'https://hooks.example/secret' } }] as never });
    const message = buildMessage(subscriber, { subscriber, content: 'Hello', subject: 'Hi', cta: undefined as never, overrides: { email: { from: 'x' } }, payload: { secret: 1 } });
    const raw = toRealtimeMessage(message);
    expect(raw).toMatchObject({ _id: message._id, content: 'Hello', subject: 'Hi', cta: {}, read: false, seen: false, archived: false, channel: 'in_app', severity: 'none', tags: [] });
    expect(raw.subscriber).toEqual({
      _id: subscriber._id,
      subscriberId: 'ada',
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: subscriber.email,
      phone: subscriber.phone,
      avatar: null,
      locale: 'en-GB',
      timezone: 'Europe/London',
      data: null,
    });
    // Server-side material never reaches a browser: channel credentials, overrides, the trigger payload.
    expect(JSON.stringify(raw)).not.toContain('hooks.example');
    expect(raw).not.toHaveProperty('overrides');
    expect(raw).not.toHaveProperty('payload');
    expect(Object.values(raw)).not.toContain(undefined);
  });

  it('keeps the Inbox state and a non-string content becomes an empty body', () => {
    const subscriber = buildSubscriber(scope);
    const message = {
      ...buildMessage(subscriber, { content: [{ type: 'text', content: 'block' }] as never, snoozedUntil: '2026-01-01T00:00:00.000Z' }),
      archived: true,
      archivedAt: '2025-12-31T00:00:00.000Z',
      severity: 'high',
      tags: ['billing'],
      data: { invoice: 7 },
    };
    const raw = toRealtimeMessage(message as never);
    expect(raw).toMatchObject({ content: '', archived: true, archivedAt: '2025-12-31T00:00:00.000Z', snoozedUntil: '2026-01-01T00:00:00.000Z', severity: 'high', tags: ['billing'], data: { invoice: 7 } });
  });
});

describe('inbox rooms', () => {
  it('one room per environment and subscriber record', () => {
    expect(inboxRoom({ environmentId: 'e1', subscriberRecordId: 's1' })).toBe('inbox:e1:s1');
    expect(inboxRoom({ environmentId: 'e1', subscriberRecordId: 's1' })).not.toBe(inboxRoom({ environmentId: 'e2', subscriberRecordId: 's1' }));
    expect(isInboxAudience({ environmentId: 'e1', subscriberRecordId: 's1' })).toBe(true);
    for (const bad of [null, 'inbox:e1:s1', { environmentId: 'e1' }, { environmentId: '', subscriberRecordId: 's' }, { environmentId: 1, subscriberRecordId: 's' }]) {
      expect(isInboxAudience(bad)).toBe(false);
    }
  });
});

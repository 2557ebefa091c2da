import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/** HERALD_RETENTION_DAYS, HERALD_MESSAGE_RETENTION_DAYS and the sweep's settings (docs/operations-data.md). */
describe('retention configuration', () => {
  it('defaults to 30 days of events and 90 days of messages, swept hourly in batches of 500', () => {
    expect(loadConfig({}).retention).toEqual({ eventDays: 30, messageDays: 90, sweepIntervalMs: 3_600_000, batchSize: 500, pauseMs: 50 });
  });

  it('takes days, and 0 or off (any case) to keep everything', () => {
    expect(loadConfig({ HERALD_RETENTION_DAYS: '7', HERALD_MESSAGE_RETENTION_DAYS: '365' }).retention).toMatchObject({ eventDays: 7, messageDays: 365 });
    expect(loadConfig({ HERALD_RETENTION_DAYS: '0', HERALD_MESSAGE_RETENTION_DAYS: 'OFF' }).retention).toMatchObject({ eventDays: undefined, messageDays: undefined });
    expect(loadConfig({ HERALD_RETENTION_DAYS: ' off ', HERALD_MESSAGE_RETENTION_DAYS: '' }).retention).toMatchObject({ eventDays: undefined, messageDays: 90 });
    expect(
      loadConfig({ HERALD_RETENTION_SWEEP_INTERVAL_SECONDS: '60', HERALD_RETENTION_BATCH_SIZE: '100', HERALD_RETENTION_PAUSE_MS: '0' }).retention,
    ).toMatchObject({ sweepIntervalMs: 60_000, batchSize: 100, pauseMs: 0 });
  });

  it.each([
    ['HERALD_RETENTION_DAYS', '-1'],
    ['HERALD_RETENTION_DAYS', '1.5'],
    ['HERALD_RETENTION_DAYS', '30d'],
    ['HERALD_RETENTION_DAYS', 'never'],
    ['HERALD_MESSAGE_RETENTION_DAYS', '36501'],
    ['HERALD_RETENTION_BATCH_SIZE', '0'],
    ['HERALD_RETENTION_SWEEP_INTERVAL_SECONDS', '0'],
  ])('refuses %s=%s at start, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});

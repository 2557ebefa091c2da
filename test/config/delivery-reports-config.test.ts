import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('delivery report settings in config', () => {
  it('HERALD_PUBLIC_URL: absent by default, trailing slashes dropped, anything but an http(s) URL refused at start', () => {
    expect(loadConfig({}).publicUrl).toBeUndefined();
    expect(loadConfig({ HERALD_PUBLIC_URL: 'https://notify.example.com/' }).publicUrl).toBe('https://notify.example.com');
    expect(() => loadConfig({ HERALD_PUBLIC_URL: 'notify.example.com' })).toThrow(/HERALD_PUBLIC_URL/);
    expect(() => loadConfig({ HERALD_PUBLIC_URL: 'ftp://notify.example.com' })).toThrow(/HERALD_PUBLIC_URL/);
  });

  it('HERALD_RATE_LIMIT_PROVIDER_REPORTS: 1000 per integration per window by default', () => {
    expect(loadConfig({}).deliveryReports.rateLimitPerIntegration).toBe(1000);
    expect(loadConfig({ HERALD_RATE_LIMIT_PROVIDER_REPORTS: '50' }).deliveryReports.rateLimitPerIntegration).toBe(50);
    expect(() => loadConfig({ HERALD_RATE_LIMIT_PROVIDER_REPORTS: '0' })).toThrow(/HERALD_RATE_LIMIT_PROVIDER_REPORTS/);
  });
});

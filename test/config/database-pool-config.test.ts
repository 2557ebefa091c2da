import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/** HERALD_DATABASE_POOL_SIZE and HERALD_API_DATABASE_POOL_SIZE (docs/configuration.md). */
describe('PostgreSQL pool sizes', () => {
  it('gives a worker or `herald start` 10 connections and an API process 5 by default', () => {
    expect(loadConfig({})).toMatchObject({ databasePoolSize: 10, apiDatabasePoolSize: 5 });
  });

  it('applies an explicit HERALD_DATABASE_POOL_SIZE to API processes too', () => {
    expect(loadConfig({ HERALD_DATABASE_POOL_SIZE: '12' })).toMatchObject({ databasePoolSize: 12, apiDatabasePoolSize: 12 });
  });

  it('takes HERALD_API_DATABASE_POOL_SIZE for API processes alone', () => {
    expect(loadConfig({ HERALD_API_DATABASE_POOL_SIZE: '8' })).toMatchObject({ databasePoolSize: 10, apiDatabasePoolSize: 8 });
    expect(loadConfig({ HERALD_DATABASE_POOL_SIZE: '20', HERALD_API_DATABASE_POOL_SIZE: '3' })).toMatchObject({ databasePoolSize: 20, apiDatabasePoolSize: 3 });
  });

  it.each(['0', '1001', 'five'])('refuses HERALD_API_DATABASE_POOL_SIZE=%s at start, naming the variable', (value) => {
    expect(() => loadConfig({ HERALD_API_DATABASE_POOL_SIZE: value })).toThrow(ConfigError);
    expect(() => loadConfig({ HERALD_API_DATABASE_POOL_SIZE: value })).toThrow('HERALD_API_DATABASE_POOL_SIZE');
  });
});

import { describe, expect, it } from 'vitest';
import type { Caller, Integration } from '../../../src/domain/types.js';
import { presentIntegration } from '../../../src/usecases/integrations/integration-view.js';
import { credentialProblems } from '../../../src/usecases/integrations/validate-integration-credentials.js';
import { findCatalogueEntry } from '../../../src/domain/provider-catalogue.js';

const stored: Integration = {
  _id: 'a'.repeat(24), _environmentId: 'b'.repeat(24), _organizationId: 'c'.repeat(24), name: 'n', identifier: 'i',
  providerId: 'sendgrid', channel: 'email', kind: 'delivery', credentials: { apiKey: 'SG.secret', from: 'a@b.c' },
  configurations: {}, active: true, deleted: false, primary: true, priority: 3, conditions: [],
  createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
};
const caller = (kind: 'apiKey' | 'session'): Caller => ({ kind, environmentId: stored._environmentId, organizationId: stored._organizationId, actorId: 'x' });

describe('presentIntegration', () => {
  it('gives credentials to session callers only and never the internal priority', () => {
    const forSession = presentIntegration(stored, caller('session'));
    expect(forSession.credentials).toEqual({ apiKey: 'SG.secret', from: 'a@b.c' });
    expect(forSession).not.toHaveProperty('priority');
    const forApiKey = presentIntegration(stored, caller('apiKey'));
    expect(forApiKey).not.toHaveProperty('credentials');
    expect(forApiKey).not.toHaveProperty('priority');
    expect(JSON.stringify(forApiKey)).not.toContain('SG.secret');
    expect(forApiKey).toMatchObject({ _id: stored._id, providerId: 'sendgrid', primary: true, active: true });
  });
});

describe('credentialProblems', () => {
  it('names each missing field; empty strings and null count as missing', () => {
    const entry = findCatalogueEntry('mailgun')!;
    expect(credentialProblems(entry, { apiKey: 'k', domain: '', from: null })).toEqual([
      'credentials.domain is required for provider mailgun',
      'credentials.from is required for provider mailgun',
    ]);
    expect(credentialProblems(entry, { apiKey: 'k', domain: 'd', from: 'f' })).toEqual([]);
    expect(credentialProblems(findCatalogueEntry('novu')!, {})).toEqual([]);
  });
});

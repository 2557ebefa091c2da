import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { ConflictError } from '../../src/domain/errors.js';
import { newId } from '../../src/domain/ids.js';
import type { Integration } from '../../src/domain/types.js';
import type { IntegrationRepository } from '../../src/store/ports.js';

const ENV_A = newId();
const ENV_B = newId();
const ORG = newId();
let clockMs = Date.parse('2026-03-01T10:00:00.000Z');

function integration(overrides: Partial<Integration> = {}): Integration {
  clockMs += 1000;
  const at = new Date(clockMs).toISOString();
  return {
    _id: newId(clockMs), _environmentId: ENV_A, _organizationId: ORG, name: 'Twilio', identifier: `twilio-${clockMs}`,
    providerId: 'twilio', channel: 'sms', kind: 'delivery', credentials: { accountSid: 'AC1', token: 'tok-secret', from: '+1' },
    configurations: {}, active: true, deleted: false, primary: false, priority: 1, conditions: [], createdAt: at, updatedAt: at,
    ...overrides,
  };
}

describe('SqlIntegrationRepository (SQLite)', () => {
  let dataDir: string;
  let container: Container;
  let repo: IntegrationRepository;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'herald-integrations-'));
    container = await createContainer(loadConfig({ HERALD_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
    repo = container.deps.store.integrations;
  });
  afterAll(async () => {
    await container.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('round-trips every field, with credentials stored only as ciphertext', async () => {
    const full = integration({
      conditions: [{ isNegated: true, type: 'TEXT', value: 'OR', children: [{ field: 'a', value: 'b', operator: 'LIKE', on: 'subscriber' }] }],
      configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: 'k' },
      credentials: { accountSid: 'AC1', token: 'tok-PLAINTEXT', from: '+1', secure: true, tlsOptions: { rejectUnauthorized: false } },
      primary: true,
      priority: 7,
    });
    await repo.create(full);
    expect(await repo.get(ENV_A, full._id)).toEqual(full);

    const row = await container.db.selectFrom('integrations').selectAll().where('id', '=', full._id).executeTakeFirstOrThrow();
    expect(row.credentials_enc).toMatch(/^v1:/);
    expect(row.credentials_enc).not.toContain('PLAINTEXT');
    expect(container.secretBox.decryptJson(row.credentials_enc)).toEqual(full.credentials);
  });

  it('keeps channel, deletedAt and deletedBy absent when unset (agent integrations)', async () => {
    const agent = integration({ providerId: 'anthropic', kind: 'agent', channel: undefined, credentials: { apiKey: 'x' } });
    delete agent.channel;
    await repo.create(agent);
    const read = await repo.get(ENV_A, agent._id);
    expect(read).toEqual(agent);
    expect(read).not.toHaveProperty('channel');
    expect(read).not.toHaveProperty('deletedAt');
  });

  it('scopes every read and write to the environment', async () => {
    const mine = integration({ name: 'mine' });
    await repo.create(mine);
    expect(await repo.get(ENV_B, mine._id)).toBeUndefined();
    expect(await repo.findByIdentifier(ENV_B, mine.identifier)).toBeUndefined();
    expect((await repo.list(ENV_B)).map((i) => i._id)).not.toContain(mine._id);
    await repo.save({ ...mine, _environmentId: ENV_B, name: 'hijacked' });
    expect((await repo.get(ENV_A, mine._id))?.name).toBe('mine');
  });

  it('lists live integrations oldest first, by channel and active flag; get still sees a deleted one', async () => {
    const env = newId();
    const sms = [integration({ _environmentId: env }), integration({ _environmentId: env, active: false })];
    const email = integration({ _environmentId: env, providerId: 'sendgrid', channel: 'email' });
    const gone = integration({ _environmentId: env, deleted: true, deletedAt: '2026-03-02T00:00:00.000Z', deletedBy: 'actor' });
    for (const item of [...sms, email, gone]) await repo.create(item);

    expect((await repo.list(env)).map((i) => i._id)).toEqual([sms[0]._id, sms[1]._id, email._id]);
    expect((await repo.list(env, { channel: 'sms' })).map((i) => i._id)).toEqual([sms[0]._id, sms[1]._id]);
    expect((await repo.list(env, { activeOnly: true })).map((i) => i._id)).toEqual([sms[0]._id, email._id]);
    expect(await repo.findByIdentifier(env, gone.identifier)).toBeUndefined();
    expect(await repo.get(env, gone._id)).toMatchObject({ deleted: true, deletedAt: '2026-03-02T00:00:00.000Z', deletedBy: 'actor' });
  });

  it('save replaces every mutable field and re-encrypts the credentials', async () => {
    const original = integration();
    await repo.create(original);
    const changed: Integration = {
      ...original, name: 'New', identifier: `${original.identifier}-x`, active: false, primary: true, priority: 42,
      credentials: { accountSid: 'AC2', token: 'tok-2', from: '+2' }, conditions: [], configurations: { inboundWebhookEnabled: false },
      deleted: true, deletedAt: '2026-03-03T00:00:00.000Z', deletedBy: 'someone', updatedAt: '2026-03-03T00:00:00.000Z',
    };
    await repo.save(changed);
    expect(await repo.get(ENV_A, original._id)).toEqual(changed);
  });

  it('identifiers are unique among live integrations of an environment (ConflictError), reusable after delete', async () => {
    const first = integration({ identifier: 'shared-identifier' });
    await repo.create(first);
    await expect(repo.create(integration({ identifier: 'shared-identifier' }))).rejects.toBeInstanceOf(ConflictError);
    await repo.create(integration({ identifier: 'shared-identifier', _environmentId: ENV_B }));

    const other = integration({ identifier: 'other-identifier' });
    await repo.create(other);
    await expect(repo.save({ ...other, identifier: 'shared-identifier' })).rejects.toBeInstanceOf(ConflictError);

    await repo.save({ ...first, deleted: true, deletedAt: first.createdAt, deletedBy: 'x' });
    await repo.create(integration({ identifier: 'shared-identifier' }));
    expect((await repo.findByIdentifier(ENV_A, 'shared-identifier'))?._id).not.toBe(first._id);
  });
});

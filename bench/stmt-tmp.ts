import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../src/domain/ids.js';
import { SecretBox } from '../src/store/secret-box.js';
import { SqlStore } from '../src/store/sql/sql-store.js';
import { openSqlite } from '../src/store/sqlite/connection.js';
import { migrateToLatest } from '../src/store/sql/migrate.js';

const doc = JSON.stringify({ payload: { text: 'x'.repeat(200) }, subscriber: { subscriberId: 's', email: 'a@b.c' }, channels: ['in_app'] });
for (const perSecond of (process.env.RATES ?? "2700,270,10").split(",").map(Number)) {
  const db = openSqlite(mkdtempSync(join(tmpdir(), 'stmt-')));
  await migrateToLatest(db);
  const env = newId();
  const total = 27000;
  const start = Date.UTC(2026, 10, 26, 6);
  const rows = Array.from({ length: total }, (_, k) => {
    const at = new Date(start + Math.floor((k * 1000) / perSecond)).toISOString();
    return { id: newId(), environment_id: env, organization_id: 'o', subscriber_id: 's', external_subscriber_id: 'x', subscriber_email: null, template_id: null, transaction_id: 't' + k, digested_notification_id: null, channels_mask: 1, severity: null, context_keys_norm: '', document: doc, created_at: at, updated_at: at };
  });
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('notifications').values(rows.slice(i, i + 500)).execute();
  const options = { dialect: 'sqlite', secretBox: new SecretBox(randomBytes(32)) } as const;
  const stores = { walk: new SqlStore(db, { ...options, seekFromOffset: Number.MAX_SAFE_INTEGER }), seek: new SqlStore(db, { ...options, seekFromOffset: 0 }) };
  const before = new Date(start + 3600_000).toISOString();
  for (const pages of (process.env.PAGES === "none" ? [] : (process.env.PAGES ? JSON.parse(process.env.PAGES) : [[0], [10], [50], [100], [1000], "all"])) as any[]) {
    const list = pages === 'all' ? Array.from({ length: 400 }, (_, i) => (i * 7919) % 2700) : Array.from({ length: 400 }, () => pages[0]);
    const t = { walk: 0, seek: 0 };
    for (let round = 0; round < 2; round++) {
      for (const page of list) {
        for (const name of (page % 2 ? ['walk', 'seek'] : ['seek', 'walk']) as Array<'walk' | 'seek'>) {
          const t0 = process.cpuUsage();
          await stores[name].notifications.list(env, { before, page, limit: 10 });
          if (round === 1) { const d = process.cpuUsage(t0); t[name] += (d.user + d.system) / 1000; }
        }
      }
    }
    console.log(`${perSecond}/s page ${pages === 'all' ? '0-2699' : pages[0]}: walk ${((t.walk * 1000) / list.length).toFixed(0)} µs, seek ${((t.seek * 1000) / list.length).toFixed(0)} µs`);
  }
  await db.destroy(); if (process.env.PAGES === "none") continue;
}

import BetterSqlite3 from 'better-sqlite3';
for (const dir of process.argv.slice(2)) {
  const s = new BetterSqlite3(dir + '/herald.sqlite', { readonly: true });
  const env = (s.prepare('select environment_id from notification_buckets limit 1').get() as any).environment_id;
  const top = (s.prepare('select max(bucket) b from notification_buckets').get() as any).b;
  const q1 = 'select count(*) as n from notifications where environment_id = ? and created_at >= ? and created_at < ?';
  const q3 = 'select "notifications".* from (select "notifications"."id" from "notifications" where "notifications"."environment_id" = ? and "notifications"."created_at" < ? order by "notifications"."created_at" desc, "notifications"."id" desc limit ? offset ?) as "page" inner join "notifications" on "notifications"."id" = "page"."id" order by "notifications"."created_at" desc, "notifications"."id" desc';
  console.log(s.prepare('explain query plan ' + q1).all(env, top + '.5', top + '\x7f').map((r: any) => r.detail));
  console.log(s.prepare('explain query plan ' + q3).all(env, top + '\x7f', 11, 5).map((r: any) => r.detail));
  const time = (f: () => void, n = 300) => { f(); const t = performance.now(); for (let i = 0; i < n; i++) f(); return ((performance.now() - t) * 1000) / n; };
  const a = s.prepare(q1), c = s.prepare(q3);
  console.log('count', time(() => a.get(env, top + '.999Z', top + '\x7f')).toFixed(1), 'page 0', time(() => c.all(env, top + '\x7f', 11, 0)).toFixed(1), 'page 0 before', time(() => c.all(env, top + '.999Z', 11, 0)).toFixed(1));
}

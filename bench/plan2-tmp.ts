import BetterSqlite3 from 'better-sqlite3';
for (const dir of process.argv.slice(2)) {
  const s = new BetterSqlite3(dir + '/herald.sqlite', { readonly: true });
  const env = (s.prepare('select environment_id from notification_buckets limit 1').get() as any).environment_id;
  const nb = (s.prepare('select count(*) as c from notification_buckets').get() as any).c;
  if (nb < 1000) continue;
  const time = (f: () => void, n = 300) => { f(); const t = performance.now(); for (let i = 0; i < n; i++) f(); return ((performance.now() - t) * 1000) / n; };
  const plain = s.prepare('select sum(n) from notification_buckets where environment_id = ? and bucket < ?');
  const ordered = s.prepare('select count(*), sum(n), min(bucket) from (select bucket, n from notification_buckets where environment_id = ? and bucket < ? order by bucket desc limit ?)');
  const walk = s.prepare('select id from notifications where environment_id = ? and created_at < ? order by created_at desc, id desc limit 11 offset ?');
  for (let r = 0; r < 3; r++) console.log(nb, 'sum all', time(() => plain.get(env, 'z')).toFixed(1), 'ordered 2700', time(() => ordered.get(env, 'z', 2700)).toFixed(1), 'walk 27000', time(() => walk.all(env, 'z', 27000)).toFixed(1));
  console.log(s.prepare('explain query plan select count(*), sum(n), min(bucket) from (select bucket, n from notification_buckets where environment_id = ? and bucket < ? order by bucket desc limit ?)').all(env, 'z', 5));
}

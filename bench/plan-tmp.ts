import BetterSqlite3 from 'better-sqlite3';
const dirs = process.argv.slice(2);
for (const dir of dirs) {
  const s = new BetterSqlite3(dir + '/herald.sqlite', { readonly: true });
  const env = (s.prepare('select environment_id from notification_buckets limit 1').get() as any).environment_id;
  const nb = (s.prepare('select count(*) as c from notification_buckets').get() as any).c;
  const q = 'select bucket, n from notification_buckets where environment_id = ? and bucket < ? order by bucket desc limit ?';
  const st = s.prepare(q);
  const agg = s.prepare('select count(*) as k, sum(n) as total, min(bucket) as last from (' + q + ')');
  const walk = s.prepare('select id from notifications where environment_id = ? and created_at < ? order by created_at desc, id desc limit 11 offset ?');
  const time = (f: () => void, n = 200) => { f(); const t = performance.now(); for (let i = 0; i < n; i++) f(); return ((performance.now() - t) * 1000) / n; };
  console.log(nb, 'buckets: rows 64 objects', time(() => st.all(env, 'z', 64)).toFixed(1), 'µs; raw', time(() => st.raw(true).all(env, 'z', 64)).toFixed(1), 'rows 1', time(() => st.raw(true).all(env, 'z', 1)).toFixed(1));
  st.raw(false);
  console.log('agg 64', time(() => agg.get(env, 'z', 64)).toFixed(1), 'agg 1024', time(() => agg.get(env, 'z', 1024)).toFixed(1));
  console.log('walk 0', time(() => walk.all(env, 'z', 0)).toFixed(1), 'walk 1000', time(() => walk.all(env, 'z', 1000)).toFixed(1), 'walk 10000', time(() => walk.all(env, 'z', 10000)).toFixed(1));
  s.close();
}

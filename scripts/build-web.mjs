#!/usr/bin/env node
// Builds the dashboard (web/ → web/dist) with Vite. `--if-stale` (npm start, the test setup) skips the build
// when web/dist is newer than every source file, so a restart costs a directory walk, not a build.
import { readdirSync, statSync, existsSync, writeFileSync, readFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'web');
const stamp = join(web, 'dist', '.build-stamp');

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

export function dashboardIsStale() {
  if (!existsSync(stamp)) return true;
  const sources = [join(web, 'src'), join(web, 'public'), join(web, 'index.html'), join(web, 'vite.config.ts'), join(root, 'package-lock.json')];
  const newestSource = Math.max(...sources.filter(existsSync).map(newestMtime));
  return newestSource > statSync(stamp).mtimeMs;
}

export async function buildDashboard({ ifStale = false } = {}) {
  if (ifStale && !dashboardIsStale()) return false;
  const { build } = await import('vite');
  const started = Date.now();
  await build({ configFile: join(web, 'vite.config.ts'), logLevel: 'warn' });
  const sizes = compressAssets(join(web, 'dist'));
  writeFileSync(stamp, new Date().toISOString());
  console.log(`dashboard built into web/dist in ${Date.now() - started} ms`);
  for (const size of sizes) console.log(`  ${size.file}: ${size.bytes} bytes, ${size.gzip} gzip, ${size.brotli} brotli`);
  return true;
}

/**
 * Writes .br and .gz next to each asset, served by @fastify/static (preCompressed) to browsers that accept them:
 * the dashboard is often opened over a plain, slow link to a server's IP. Returns the shipped sizes.
 */
function compressAssets(dist) {
  const sizes = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(js|css|html|svg)$/.test(entry.name)) {
        const content = readFileSync(path);
        const gzip = gzipSync(content, { level: 9 });
        const brotli = brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
        writeFileSync(`${path}.gz`, gzip);
        writeFileSync(`${path}.br`, brotli);
        sizes.push({ file: path.slice(dist.length + 1), bytes: content.length, gzip: gzip.length, brotli: brotli.length });
      }
    }
  };
  walk(dist);
  return sizes;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildDashboard({ ifStale: process.argv.includes('--if-stale') });
}

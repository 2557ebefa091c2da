#!/usr/bin/env node
// Compiles the server with esbuild (src/ → dist/server/cli.js, an ES module, and the chunks it loads with import();
// packages stay in node_modules) and records a fingerprint of the sources it was built from. bin/herald.js runs that
// build only while the fingerprint still matches the sources, and the TypeScript sources through tsx otherwise:
// compiled code is never stale code.
// Why compile at all: through tsx an idle `herald start` holds ~40 MB more (tsx's loader thread with a heap of its own,
// the transpiled sources kept as text) and starts in twice the time (docs/benchmarks-history.md, "The Inbox").
//
//   node scripts/build-server.mjs             build
//   node scripts/build-server.mjs --if-stale  build only when the sources changed since the last build (npm start)
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the build goes, relative to the repository root. Two levels deep, like src/http/: see src/http/dashboard.ts. */
export const SERVER_BUILD_DIR = join('dist', 'server');
export const SERVER_ENTRY = 'cli.js';
/** Written last by a build: the fingerprint (listing) of the sources the entry was built from. */
export const BUILD_INFO = 'build-info.json';

/**
 * What the build is made of (paths relative to the root, with /): every file under src/, plus the files that change its output without being sources
 * (the dependency versions, esbuild's among them; the TypeScript settings esbuild reads; this script's options).
 */
function fingerprintInputs(root) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  walk('src');
  files.push('package.json', 'package-lock.json', 'tsconfig.json', 'scripts/build-server.mjs');
  return files.sort();
}

/**
 * One line per input: its path, size and modification time. The build records the listing and each start compares it
 * whole: 5–10 ms for the ~300 files in a fresh process (reading and hashing their contents took about twice as long). Any change to a file (an edit, a
 * checkout, a new or deleted file) changes it; a touch without a change does too, which only costs a rebuild (or a
 * start from source until then).
 */
export function sourceFingerprint(root = ROOT) {
  return fingerprintInputs(root).map((path) => {
    const stat = statSync(join(root, path), { throwIfNoEntry: false });
    return stat ? `${path} ${stat.size} ${stat.mtimeMs}` : `${path} missing`;
  });
}

function readBuildInfo(root) {
  try {
    return JSON.parse(readFileSync(join(root, SERVER_BUILD_DIR, BUILD_INFO), 'utf8'));
  } catch {
    return undefined;
  }
}

/** The compiled entry when a build of exactly the current sources exists, else undefined. */
export function freshServerBuild(root = ROOT) {
  const info = readBuildInfo(root);
  const entry = join(root, SERVER_BUILD_DIR, SERVER_ENTRY);
  if (!info || !Array.isArray(info.sources) || !existsSync(entry)) return undefined;
  return info.sources.join('\n') === sourceFingerprint(root).join('\n') ? entry : undefined;
}

export function serverBuildIsStale(root = ROOT) {
  return freshServerBuild(root) === undefined;
}

/**
 * Builds dist/server (or skips when `ifStale` and the build is current). The fingerprint is taken before compiling,
 * so a source changed during the build leaves the build stale rather than passing for current. The old build info
 * goes first and the new one is written last, each file by a rename: a process starting meanwhile runs from source.
 */
export async function buildServer({ ifStale = false, root = ROOT, quiet = false } = {}) {
  if (ifStale && !serverBuildIsStale(root)) return false;
  const started = Date.now();
  const fingerprint = sourceFingerprint(root);
  const { build } = await import('esbuild');
  const outDir = join(root, SERVER_BUILD_DIR);
  const result = await build({
    absWorkingDir: root,
    // The reader threads' entry (src/readers/reader-pool.ts starts dist/server/reader-thread.js beside the entry).
    entryPoints: { cli: join(root, 'src', 'cli.ts'), 'reader-thread': join(root, 'src', 'readers', 'reader-thread.ts') },
    outdir: outDir,
    bundle: true,
    // What src/ imports with import() (the scale-out implementations) goes into chunks loaded only then; they sit
    // beside the entry, so paths relative to a module (src/http/dashboard.ts) keep their depth.
    splitting: true,
    chunkNames: '[name]-[hash]',
    // node_modules are loaded from node_modules, as from source: only Herald's own code is compiled.
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Written, not enabled: `NODE_OPTIONS=--enable-source-maps` maps stack traces to src/ (it costs ~18 MB).
    sourcemap: 'linked',
    write: false,
    logLevel: 'warning',
  });
  mkdirSync(outDir, { recursive: true });
  rmSync(join(outDir, BUILD_INFO), { force: true });
  let bytes = 0;
  const written = new Set([BUILD_INFO]);
  for (const file of result.outputFiles) {
    writeFileSync(`${file.path}.tmp`, file.contents);
    renameSync(`${file.path}.tmp`, file.path);
    written.add(file.path.slice(outDir.length + 1));
    if (file.path.endsWith('.js')) bytes += file.contents.length;
  }
  // Chunks of earlier builds (their names carry a content hash). A server loads its chunks while it starts.
  for (const name of readdirSync(outDir)) if (!written.has(name)) rmSync(join(outDir, name), { force: true });
  const info = join(outDir, BUILD_INFO);
  writeFileSync(`${info}.tmp`, JSON.stringify({ builtAt: new Date().toISOString(), sources: fingerprint }, null, 1) + '\n');
  renameSync(`${info}.tmp`, info);
  if (!quiet) console.log(`server built into ${SERVER_BUILD_DIR}/${SERVER_ENTRY} in ${Date.now() - started} ms (${Math.round(bytes / 1024)} KB)`);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildServer({ ifStale: process.argv.includes('--if-stale') });
}

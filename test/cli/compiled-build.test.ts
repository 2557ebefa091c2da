import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILD_INFO, buildServer, freshServerBuild, SERVER_BUILD_DIR, SERVER_ENTRY, serverBuildIsStale } from '../../scripts/build-server.mjs';
import { startHerald } from '../helpers/herald-process.js';

/**
 * bin/herald.js runs dist/server only when it was built from exactly the current sources (scripts/build-server.mjs),
 * else the sources through tsx: tests and edits must never meet a stale build.
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const roots: string[] = [];

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A repository-shaped folder whose src/cli.ts prints the URL of the module that runs. */
function fixtureRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'herald-build-'));
  roots.push(root);
  mkdirSync(join(root, 'src', 'nested'), { recursive: true });
  writeFileSync(join(root, 'src', 'cli.ts'), "import { where } from './nested/where.js';\nconsole.log(`running ${where(import.meta.url)}`);\n");
  writeFileSync(join(root, 'src', 'nested', 'where.ts'), 'export const where = (url: string): string => url;\n');
  writeFileSync(join(root, 'src', 'nested', 'unused.ts'), 'export const unused = 1;\n');
  // The build's second entry (the embedded reader threads' module, src/readers/reader-thread.ts).
  mkdirSync(join(root, 'src', 'readers'));
  writeFileSync(join(root, 'src', 'readers', 'reader-thread.ts'), "import { where } from '../nested/where.js';\nexport const thread = where(import.meta.url);\n");
  writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(root, 'package-lock.json'), '{}\n');
  writeFileSync(join(root, 'tsconfig.json'), '{}\n');
  return root;
}

/** Moves a file's modification time without changing its content (what a checkout or a touch does). */
function touch(path: string): void {
  const later = new Date(Date.now() + 5000);
  utimesSync(path, later, later);
}

describe('the compiled build is used only while it matches the sources', () => {
  it('is fresh right after a build, and --if-stale then does not build again', async () => {
    const root = fixtureRoot();
    expect(freshServerBuild(root)).toBeUndefined();
    expect(await buildServer({ root, quiet: true })).toBe(true);
    expect(freshServerBuild(root)).toBe(join(root, SERVER_BUILD_DIR, SERVER_ENTRY));
    expect(await buildServer({ root, ifStale: true, quiet: true })).toBe(false);
  });

  it.each([
    ['an edited source', (root: string) => appendFileSync(join(root, 'src', 'nested', 'where.ts'), '// edited\n')],
    ['a source with only a new modification time', (root: string) => touch(join(root, 'src', 'cli.ts'))],
    ['a new source file', (root: string) => writeFileSync(join(root, 'src', 'nested', 'added.ts'), 'export {};\n')],
    ['a deleted source file', (root: string) => unlinkSync(join(root, 'src', 'nested', 'unused.ts'))],
    ['a changed package-lock.json', (root: string) => writeFileSync(join(root, 'package-lock.json'), '{ "lockfileVersion": 3 }\n')],
    ['a changed tsconfig.json', (root: string) => touch(join(root, 'tsconfig.json'))],
    ['a missing compiled entry', (root: string) => unlinkSync(join(root, SERVER_BUILD_DIR, SERVER_ENTRY))],
    ['missing build info', (root: string) => unlinkSync(join(root, SERVER_BUILD_DIR, BUILD_INFO))],
  ])('is stale after %s, and --if-stale builds it again', async (_change, change) => {
    const root = fixtureRoot();
    await buildServer({ root, quiet: true });
    change(root);
    expect(freshServerBuild(root)).toBeUndefined();
    expect(serverBuildIsStale(root)).toBe(true);
    expect(await buildServer({ root, ifStale: true, quiet: true })).toBe(true);
    expect(freshServerBuild(root)).toBe(join(root, SERVER_BUILD_DIR, SERVER_ENTRY));
  });
});

describe('the build', () => {
  it('puts what src/ loads with import() in chunks beside the entry, and a rebuild removes the chunks it replaced', async () => {
    const root = fixtureRoot();
    writeFileSync(join(root, 'src', 'cli.ts'), "const { lazy } = await import('./nested/lazy.js');\nconsole.log(lazy);\n");
    writeFileSync(join(root, 'src', 'nested', 'lazy.ts'), "export const lazy = 'first';\n");
    const lazyChunks = () => readdirSync(join(root, SERVER_BUILD_DIR)).filter((name) => /^lazy-.*\.js$/.test(name));
    const run = () => spawnSync(process.execPath, [join(root, SERVER_BUILD_DIR, SERVER_ENTRY)], { encoding: 'utf8' }).stdout.trim();

    await buildServer({ root, quiet: true });
    const first = lazyChunks();
    expect(first).toHaveLength(1);
    expect(run()).toBe('first');

    writeFileSync(join(root, 'src', 'nested', 'lazy.ts'), "export const lazy = 'second';\n");
    await buildServer({ root, ifStale: true, quiet: true });
    expect(lazyChunks()).toHaveLength(1);
    expect(lazyChunks()).not.toEqual(first);
    expect(run()).toBe('second');
  });
});

describe('bin/herald.js', () => {
  /** The fixture with the real launcher and build script, and the repository's node_modules (tsx). */
  function launcherRoot(): string {
    const root = fixtureRoot();
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'scripts'));
    copyFileSync(join(REPO, 'bin', 'herald.js'), join(root, 'bin', 'herald.js'));
    copyFileSync(join(REPO, 'scripts', 'build-server.mjs'), join(root, 'scripts', 'build-server.mjs'));
    symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
    return root;
  }

  function launch(root: string, env: Record<string, string> = {}): string {
    const result = spawnSync(process.execPath, [join(root, 'bin', 'herald.js')], { env: { ...process.env, HERALD_FROM_SOURCE: '', ...env }, encoding: 'utf8', timeout: 30_000 });
    expect(result.stderr).toBe('');
    return result.stdout.trim();
  }

  it('runs the sources through tsx without a build, the build when it is current, and the sources again once one changes', async () => {
    const root = launcherRoot();
    expect(launch(root)).toMatch(/^running file:.*\/src\/cli\.ts$/);
    await buildServer({ root, quiet: true });
    expect(launch(root)).toMatch(/^running file:.*\/dist\/server\/cli\.js$/);
    // A forced source run, for a build that is current.
    expect(launch(root, { HERALD_FROM_SOURCE: '1' })).toMatch(/^running file:.*\/src\/cli\.ts$/);
    appendFileSync(join(root, 'src', 'nested', 'where.ts'), '// edited\n');
    expect(launch(root)).toMatch(/^running file:.*\/src\/cli\.ts$/);
  });

  it('serves the API and the dashboard from a compiled build of the real sources (paths relative to the build)', async () => {
    // A copy of the repository's layout: the real sources, dashboard build and node_modules, a build of its own.
    const root = mkdtempSync(join(tmpdir(), 'herald-compiled-'));
    roots.push(root);
    for (const entry of ['src', 'web', 'node_modules', 'package.json', 'package-lock.json', 'tsconfig.json']) symlinkSync(join(REPO, entry), join(root, entry));
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'scripts'));
    copyFileSync(join(REPO, 'bin', 'herald.js'), join(root, 'bin', 'herald.js'));
    copyFileSync(join(REPO, 'scripts', 'build-server.mjs'), join(root, 'scripts', 'build-server.mjs'));
    await buildServer({ root, quiet: true });
    expect(freshServerBuild(root)).toBeDefined();

    const dataDir = mkdtempSync(join(tmpdir(), 'herald-compiled-data-'));
    roots.push(dataDir);
    const secretKey = 'compiled-build-development-key';
    const herald = await startHerald({ HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: secretKey, HERALD_FROM_SOURCE: '' }, ['start'], { bin: join(root, 'bin', 'herald.js') });
    try {
      const integrations = await fetch(`${herald.url}/v1/integrations`, { headers: { authorization: `ApiKey ${secretKey}` } });
      expect(integrations.status).toBe(200);
      // web/dist is found from dist/server as from src/http (the test set-up builds it).
      const dashboard = await fetch(`${herald.url}/dashboard`);
      expect(dashboard.status).toBe(200);
      expect(await dashboard.text()).toContain('<div id="root">');
    } finally {
      expect(await herald.stop()).toBe(0);
    }
  }, 120_000);
});

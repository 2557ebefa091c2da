import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCollected } from './run-collected.js';

/**
 * The real @novu/framework serving a bridge (test/helpers/framework-bridge-app.mjs) in a child process with
 * NODE_ENV=production, so the framework enforces Herald's HMAC signature; NODE_ENV stays out of the test process.
 */
const APP = fileURLToPath(new URL('./framework-bridge-app.mjs', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface FrameworkBridge {
  /** The bridge endpoint, `http://127.0.0.1:<port>/api/novu`. */
  url: string;
  port: number;
  /** Every request the bridge received, oldest first. */
  calls(): Promise<Array<{ method: string; action?: string; workflowId?: string; stepId?: string; signed: boolean }>>;
  output(): string;
  stop(): Promise<void>;
}

export async function startFrameworkBridge(options: { secretKey: string; port?: number; without?: string[] }): Promise<FrameworkBridge> {
  const child: ChildProcess = spawn(process.execPath, [APP], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      NOVU_SECRET_KEY: options.secretKey,
      PORT: String(options.port ?? 0),
      BRIDGE_WITHOUT: (options.without ?? []).join(','),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  let port = 0;
  for (;;) {
    const match = /bridge listening on (\d+)/.exec(output);
    if (match) {
      port = Number(match[1]);
      break;
    }
    if (child.exitCode !== null) throw new Error(`bridge exited early (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`bridge did not start in 30 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/api/novu`,
    port,
    calls: async () => (await fetch(`${base}/calls`)).json() as never,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The real `novu` CLI 2.20.1, installed on demand into `.cache/novu-cli` (git-ignored, outside node_modules: it is
 * heavy and only these tests use it), without install scripts (nothing downloads a browser or binary), from the
 * configured npm registry only. Reused when present. A failed install throws: the tests fail, never skip (CI=true
 * included).
 */
const CLI_VERSION = '2.20.1';
const CLI_PREFIX = join(REPO, '.cache', 'novu-cli');
const CLI_ENTRY = join(CLI_PREFIX, 'node_modules', 'novu', 'dist', 'src', 'index.js');

export async function novuCliEntry(): Promise<string> {
  if (existsSync(CLI_ENTRY)) return CLI_ENTRY;
  const installed = await runCollected('npm', ['install', '--prefix', CLI_PREFIX, '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', `novu@${CLI_VERSION}`], {
    env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: '1', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
    timeoutMs: 300_000,
    stdout: 'ignore',
  }).catch((error: unknown) => ({ status: null, stderr: error instanceof Error ? error.message : String(error) }));
  if (installed.status === 0 && existsSync(CLI_ENTRY)) return CLI_ENTRY;
  throw new Error(`novu@${CLI_VERSION} could not be installed into ${CLI_PREFIX} (CI=${process.env.CI ?? ''}): ${installed.stderr}`);
}

/**
 * `novu sync -b <bridge> -s <key> -a <herald>`, as a user runs it (no analytics, a private config dir). Asynchronous:
 * an embedded Herald answers from this very process.
 */
export async function runNovuSync(entry: string, input: { bridgeUrl: string; secretKey: string; apiUrl: string }): Promise<{ status: number | null; output: string }> {
  const child = spawn(process.execPath, [entry, 'sync', '-b', input.bridgeUrl, '-s', input.secretKey, '-a', input.apiUrl], {
    env: { PATH: process.env.PATH ?? '', HOME: tmpdirFor('home'), XDG_CONFIG_HOME: tmpdirFor('config'), ANALYTICS_ENABLED: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  clearTimeout(timer);
  return { status, output };
}

function tmpdirFor(name: string): string {
  return mkdtempSync(join(tmpdir(), `novu-cli-${name}-`));
}

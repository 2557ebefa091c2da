import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { runCollected, type CollectedRun } from './run-collected.js';

/**
 * Runs the real `bin/herald.js` as a child process, the way a user starts Herald: the compiled build when it is
 * current (`npm run build`), else the sources through tsx (bin/herald.js).
 */
export const HERALD_BIN = fileURLToPath(new URL('../../bin/herald.js', import.meta.url));

/**
 * A port for a process a test starts, free when asked. Taken below the kernel's ephemeral range
 * (/proc/sys/net/ipv4/ip_local_port_range), at random: the fakes and servers of other test files listen on port 0,
 * which the kernel serves from that range, so between this probe's close and the child's bind none of them can take
 * the port (a clean-clone CI once had a Herald readiness poll land on an Expo fake that had just been given the port
 * freed by a `listen(0)` probe). Two of these picks meeting is left to chance (1 in ~12,000) and startHerald's retry.
 */
export async function freePort(): Promise<number> {
  const ephemeralStart = ephemeralPortStart();
  const low = Math.max(1024, ephemeralStart - 12_000);
  for (let attempt = 0; ; attempt++) {
    const port = low + Math.floor(Math.random() * (ephemeralStart - low));
    if (await canListen(port)) return port;
    if (attempt >= 50) throw new Error(`no free port found in ${low}-${ephemeralStart - 1}`);
  }
}

function ephemeralPortStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > 2048 ? start : 32768;
  } catch {
    return 32768; // not Linux: its usual range still starts higher than the picks
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface HeraldProcess {
  child: ChildProcess;
  url: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** SIGTERM and wait for exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startHerald(
  env: Record<string, string>,
  args: string[] = ['start'],
  options: { bin?: string } = {},
): Promise<HeraldProcess> {
  // freePort() closes its probe before the child binds the port; another pick of the same port may take it in
  // between. The child then exits with EADDRINUSE; with a port of our own choosing, try another one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startHeraldOnce(env, args, options);
    } catch (error) {
      const portWasOurs = !env.PORT;
      if (!(error instanceof PortTakenError) || !portWasOurs || attempt >= 5) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function startHeraldOnce(env: Record<string, string>, args: string[], options: { bin?: string }): Promise<HeraldProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, [options.bin ?? HERALD_BIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      if (/EADDRINUSE/.test(output)) throw new PortTakenError(`port ${port} was taken:\n${output}`);
      throw new Error(`herald exited early (${child.exitCode}):\n${output}`);
    }
    if (await answersReady(url)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`herald did not become healthy in 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Herald's own readiness answer (200 with `status: ready`), not any 2xx: a fake server of another test that took the
 * port would otherwise pass for Herald (a clean-clone CI once saw `POST /v1/integrations` answered 204 that way).
 * Ready, not only listening: the start-up lines (keys, setup link) are written by then.
 */
async function answersReady(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health/ready`);
    if (response.status !== 200) {
      await response.body?.cancel();
      return false;
    }
    const body = (await response.json().catch(() => undefined)) as { status?: unknown } | undefined;
    return body?.status === 'ready';
  } catch {
    return false; // not listening yet
  }
}

/** Runs a one-shot CLI command (keys create, token create, migrate) and returns its output (asynchronous: runCollected). */
export function runHeraldCommand(args: string[], env: Record<string, string>): Promise<CollectedRun> {
  return runCollected(process.execPath, [HERALD_BIN, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, timeoutMs: 30_000 });
}

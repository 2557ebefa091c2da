import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { promisify } from 'node:util';
import { freePort } from './herald-process.js';

/**
 * Private PostgreSQL and Redis instances for fault tests: each on a free port, in a temp directory, owned
 * by the test, so it can be killed, frozen and restarted on the same port without touching the machine's
 * shared 5432 and 6379 that the rest of the suite uses in parallel.
 *
 * Missing binaries: under CI=true `privateServicesAvailable` throws; elsewhere it prints why and returns false.
 */
const inCi = process.env.CI === 'true';
const execFileAsync = promisify(execFile);
const REDIS_BIN = 'redis-server';
const POSTGRES_USER = 'postgres';

function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((version) => join(root, version, 'bin')).find((dir) => existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'initdb')));
}

function commandExists(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).status === 0;
}

function missingPrerequisites(): string[] {
  const missing: string[] = [];
  if (!commandExists(REDIS_BIN)) missing.push('redis-server');
  if (!postgresBinDir()) missing.push('PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb, pg_ctl)');
  if (!commandExists('runuser')) missing.push('runuser');
  if (spawnSync('id', ['-u', POSTGRES_USER]).status !== 0) missing.push(`the "${POSTGRES_USER}" system user`);
  return missing;
}

/** True when private instances can be started; under CI=true a missing prerequisite throws. */
export function privateServicesAvailable(): boolean {
  const missing = missingPrerequisites();
  if (missing.length === 0) return true;
  const message = `private PostgreSQL/Redis need ${missing.join(', ')}`;
  if (inCi) throw new Error(`${message}: CI=true requires them`);
  console.warn(`[herald tests] ${message}: skipping the fault tests`);
  return false;
}

async function waitFor(what: string, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// ---- Redis ---------------------------------------------------------------------------------------------

export interface PrivateRedis {
  port: number;
  url: string;
  /** Running (possibly frozen) right now. */
  running(): boolean;
  /** SIGKILL and wait for the exit. Without `persistent` every key is gone on the next start. */
  kill(): Promise<void>;
  /** Starts again on the same port (and the same append-only file when persistent). */
  start(): Promise<void>;
  /** SIGSTOP: connections stay open but nothing answers, like a hung server. */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
  close(): Promise<void>;
}

export interface PrivateRedisOptions {
  /**
   * Append-only file fsynced on every write, as a production Redis for BullMQ should run: a SIGKILL then
   * loses no acknowledged write. Default false (`--appendonly no`, an in-memory Redis).
   */
  persistent?: boolean;
}

export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'herald-redis-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, '--daemonize', 'no',
    ...(options.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
  ];
  const isRunning = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const redis: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    running: isRunning,
    async start() {
      if (isRunning()) return;
      const started = spawn(REDIS_BIN, args, { stdio: 'ignore' });
      child = started;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      await waitFor(`redis on ${port}`, async () => {
        if (started.exitCode !== null) throw new Error(`redis-server exited with ${started.exitCode}`);
        return portAccepts(port);
      }, 10_000);
    },
    async kill() {
      if (!isRunning()) return;
      child!.kill('SIGCONT');
      child!.kill('SIGKILL');
      await exited;
    },
    freeze() {
      if (isRunning()) child!.kill('SIGSTOP');
    },
    thaw() {
      if (isRunning()) child!.kill('SIGCONT');
    },
    async close() {
      await redis.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await redis.start();
  return redis;
}

// ---- PostgreSQL ----------------------------------------------------------------------------------------

export interface PrivatePostgres {
  port: number;
  /** Trust auth as user postgres, database postgres. */
  url: string;
  /** pg_ctl stop: `fast` disconnects clients and shuts down cleanly, `immediate` is a crash (recovery on start). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts again on the same port and data directory; resolves when it accepts connections. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Runs a PostgreSQL binary as the postgres user, asynchronously (the test's load keeps running meanwhile). */
async function asPostgres(binDir: string, args: string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await execFileAsync('runuser', ['-u', POSTGRES_USER, '--', join(binDir, args[0]), ...args.slice(1)], {
      encoding: 'utf8',
      timeout: timeoutMs,
    });
    return stdout;
  } catch (error) {
    const failure = error as { code?: unknown; stderr?: string; stdout?: string; message: string };
    throw new Error(`${args[0]} failed (${String(failure.code)}): ${failure.stderr || failure.stdout || failure.message}`);
  }
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const binDir = postgresBinDir();
  if (!binDir) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql');
  const port = await freePort();
  const root = mkdtempSync(join(tmpdir(), 'herald-pg-'));
  const data = join(root, 'data');
  const sockets = join(root, 'sockets');
  mkdirSync(sockets);
  // postgres refuses to run as root: the whole tree belongs to the postgres user.
  const { uid, gid } = postgresIds();
  for (const path of [root, sockets]) chownSync(path, uid, gid);
  await asPostgres(binDir, ['initdb', '-D', data, '-U', POSTGRES_USER, '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const serverOptions = [
    `-p ${port}`, `-k ${sockets}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', '-c synchronous_commit=off',
    '-c full_page_writes=off', '-c max_connections=200',
  ].join(' ');
  const logFile = join(root, 'postgres.log');

  const postgres: PrivatePostgres = {
    port,
    url: `postgresql://${POSTGRES_USER}@127.0.0.1:${port}/postgres`,
    async start() {
      await asPostgres(binDir, ['pg_ctl', '-D', data, '-o', serverOptions, '-l', logFile, '-w', '-t', '60', 'start']);
      await waitFor(`postgres on ${port}`, () => portAccepts(port), 10_000);
    },
    async stop(mode = 'fast') {
      if (!existsSync(join(data, 'postmaster.pid'))) return;
      await asPostgres(binDir, ['pg_ctl', '-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    async close() {
      try {
        await postgres.stop('immediate');
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
  // A test process that dies without afterAll must not leave a postmaster behind (pg_ctl daemonizes it).
  const stopOnExit = () => {
    if (existsSync(join(data, 'postmaster.pid'))) {
      spawnSync('runuser', ['-u', POSTGRES_USER, '--', join(binDir, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'], { timeout: 10_000 });
    }
  };
  process.once('exit', stopOnExit);
  const close = postgres.close;
  postgres.close = async () => {
    process.off('exit', stopOnExit);
    await close();
  };
  try {
    await postgres.start();
  } catch (error) {
    const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    rmSync(root, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}\n${log}`);
  }
  return postgres;
}

function postgresIds(): { uid: number; gid: number } {
  const uid = Number(spawnSync('id', ['-u', POSTGRES_USER], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', POSTGRES_USER], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid };
}

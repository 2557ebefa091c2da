import { Writable } from 'node:stream';
import pino from 'pino';

/**
 * Log output for people. JSON lines stay the format for machines (and the default without a terminal); with a
 * terminal, or HERALD_LOG_FORMAT=pretty, each pino line is rewritten as one readable line. A hand-written formatter
 * rather than pino-pretty: Herald's lines are few and flat (a request line is method, path, status, time), so forty
 * lines do it without a dependency tree, a worker thread (pino transports) or a second process, and nothing is
 * loaded in JSON mode.
 */
export function usePrettyLogs(format: 'auto' | 'pretty' | 'json', stdoutIsTty = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTty);
}

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: 'TRACE', color: '90' },
  20: { name: 'DEBUG', color: '90' },
  30: { name: 'INFO ', color: '32' },
  40: { name: 'WARN ', color: '33' },
  50: { name: 'ERROR', color: '31' },
  60: { name: 'FATAL', color: '35' },
};
/** pino's own fields, and what the line already shows. */
const HIDDEN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId', 'v']);

/** One pino JSON line → one readable line (an error's stack follows, indented). */
export function formatLogLine(json: string, options: { color?: boolean } = {}): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const paint = (code: string, text: string) => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const level = LEVELS[Number(entry.level)] ?? { name: String(entry.level).padEnd(5), color: '0' };
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  let text: string;
  if (entry.msg === 'request' && typeof entry.method === 'string') {
    const status = Number(entry.statusCode);
    const statusText = paint(status >= 500 ? '31' : status >= 400 ? '33' : '32', String(entry.statusCode));
    text = `${entry.method} ${String(entry.url)} ${statusText} ${String(entry.ms)} ms`;
  } else {
    const fields = Object.entries(entry)
      .filter(([key, value]) => !HIDDEN.has(key) && key !== 'err' && value !== undefined)
      .map(([key, value]) => `${paint('90', `${key}=`)}${typeof value === 'string' ? value : JSON.stringify(value)}`);
    text = [String(entry.msg ?? ''), ...fields].filter(Boolean).join('  ');
  }
  let line = `${paint('90', time)} ${paint(level.color, level.name)} ${text}\n`;
  const err = entry.err as { message?: string; stack?: string } | undefined;
  if (err) line += `${(err.stack ?? err.message ?? JSON.stringify(err)).replace(/^/gm, '    ')}\n`;
  return line;
}

/** A destination for pino that writes readable lines to `out` (stdout). */
export function prettyDestination(out: NodeJS.WritableStream = process.stdout, color = process.stdout.isTTY === true): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      pending += chunk.toString();
      let newline: number;
      while ((newline = pending.indexOf('\n')) !== -1) {
        out.write(formatLogLine(pending.slice(0, newline), { color }));
        pending = pending.slice(newline + 1);
      }
      callback();
    },
  });
}

/**
 * JSON lines to stdout, gathered: pino's own destination (sonic-boom) with `minLength`, so lines go out together once
 * 8 KB are pending or every `periodicFlush` ms, instead of one write(2) per line (3.5-4 % of a busy scaled-out API
 * process's CPU at LOG_LEVEL=info, measured on 2026-11-26). Synchronous writes, as pino's default: no write is in
 * flight when the process exits, so the 'exit' hook writes what is pending, also after an uncaught error; only a
 * SIGKILL can lose the last 50 ms of lines. One destination per process, shared by its loggers (several containers
 * in one process write to one stdout).
 */
let gatheredStdout: GatheredLines | undefined;
export function gatheredStdoutLines(): pino.DestinationStream {
  if (!gatheredStdout) {
    const destination = new GatheredLines(pino.destination({ dest: 1, sync: true, minLength: 0 }), 8_192, 50);
    process.once('exit', () => destination.flushSync());
    gatheredStdout = destination;
  }
  return gatheredStdout;
}

/**
 * Lines kept in an array until `minLength` characters are pending (or `periodMs` passed), then handed to `out` (pino's
 * sonic-boom, which writes them and retries a busy descriptor) as one string. sonic-boom's own `minLength` gathers
 * them too, but counts the UTF-8 bytes of all it holds at every line (`Buffer.byteLength` of its growing pending
 * string: ~2 % of an embedded list request's CPU, BENCHMARKS.md session 29); here a line costs an array push.
 */
export class GatheredLines implements pino.DestinationStream {
  private pending: string[] = [];
  private length = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly out: pino.DestinationStream & { flush(callback?: (error?: Error) => void): void; flushSync(): void },
    private readonly minLength: number,
    periodMs: number,
  ) {
    this.timer = setInterval(() => this.handOn(), periodMs);
    // Never keeps the process alive.
    this.timer.unref();
  }

  write(line: string): boolean {
    this.pending.push(line);
    this.length += line.length;
    if (this.length >= this.minLength) this.handOn();
    return true;
  }

  /** pino's `logger.flush()`. */
  flush(callback?: (error?: Error) => void): void {
    this.handOn();
    this.out.flush(callback);
  }

  flushSync(): void {
    this.handOn();
    this.out.flushSync();
  }

  private handOn(): void {
    if (this.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    this.length = 0;
    this.out.write(text);
  }
}

/** Writes the gathered JSON lines pending in this process now (none pending, or pretty logs: nothing to do). */
export function flushLogLines(): void {
  gatheredStdout?.flushSync();
}

export interface BannerInput {
  url: string;
  setupUrl?: string;
  keys: Array<{ environment: string; secretKey: string; applicationIdentifier?: string }>;
  /** The data directory (embedded), or undefined when the data lives in PostgreSQL. */
  dataDir?: string;
  databaseUrl?: string;
}

/** The first start's short summary, for a person at a terminal. Keys are shown once: they are stored hashed. */
export function formatBanner(input: BannerInput): string {
  const rows: Array<[string, string]> = [
    ['API', input.url],
    ['Dashboard', `${input.url}/dashboard`],
  ];
  if (input.setupUrl) rows.push(['First admin', `${input.setupUrl}  (one-time link)`]);
  for (const key of input.keys) {
    rows.push([`${key.environment} key`, key.secretKey]);
    if (key.applicationIdentifier) rows.push([`${key.environment} app id`, key.applicationIdentifier]);
  }
  rows.push(['Data', input.dataDir ?? `PostgreSQL ${redactedUrl(input.databaseUrl)}`]);
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = ['', 'Herald is running', ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`)];
  if (input.keys.length > 0) lines.push('', '  The secret keys are shown only this once: store them now.');
  if (input.dataDir) lines.push('  Back up the data dir, encryption.key included (it decrypts the stored credentials).');
  return `${lines.join('\n')}\n\n`;
}

function redactedUrl(url: string | undefined): string {
  if (!url) return '';
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return `${parsed.host}${parsed.pathname}`;
  } catch {
    return '';
  }
}

import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startHerald } from '../helpers/herald-process.js';
import { scaleoutModeRequested } from '../helpers/databases.js';

/**
 * OpenTelemetry's SDK is loaded only when tracing is configured, prom-client only when metrics are on; and nothing
 * outside src/observability/ imports either (use-cases and the worker reach them through observability/ports.ts).
 */
const PROBE = fileURLToPath(new URL('../helpers/loaded-packages-probe.mjs', import.meta.url));
const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'herald-obs-loading-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function loadedPackages(name: string, env: Record<string, string>): Promise<string[]> {
  const output = join(dir, `${name}.json`);
  const herald = await startHerald({ HERALD_DATA_DIR: join(dir, name), NODE_OPTIONS: `--import=${PROBE}`, HERALD_PROBE_OUTPUT: output, ...env });
  try {
    herald.child.kill('SIGUSR2');
    for (let waited = 0; !existsSync(output) && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    return JSON.parse(readFileSync(output, 'utf8')) as string[];
  } finally {
    await herald.stop();
  }
}

const SDK = ['@opentelemetry/sdk-trace-base', '@opentelemetry/sdk-trace', '@opentelemetry/context-async-hooks', '@opentelemetry/resources', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/exporter-trace-otlp-proto'];

describe.skipIf(scaleoutModeRequested())('what an idle herald start loads', () => {
  it('without an OTLP endpoint: prom-client, no OpenTelemetry SDK', async () => {
    const loaded = await loadedPackages('default', {});
    expect(loaded).toContain('prom-client');
    for (const name of SDK) expect(loaded, name).not.toContain(name);
  }, 120_000);

  it('with HERALD_METRICS=off: not prom-client either', async () => {
    const loaded = await loadedPackages('off', { HERALD_METRICS: 'off' });
    expect(loaded).toContain('fastify');
    expect(loaded).not.toContain('prom-client');
  }, 120_000);

  it('with an OTLP endpoint: the SDK and the configured exporter only', async () => {
    const loaded = await loadedPackages('traced', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    for (const name of ['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http']) expect(loaded, name).toContain(name);
    expect(loaded).not.toContain('@opentelemetry/exporter-trace-otlp-proto');
  }, 120_000);
});

describe('imports', () => {
  it('of prom-client and @opentelemetry/* are in src/observability/ only', () => {
    const offenders: string[] = [];
    const walk = (path: string) => {
      for (const entry of readdirSync(path)) {
        const file = join(path, entry);
        if (statSync(file).isDirectory()) walk(file);
        else if (file.endsWith('.ts') && !file.startsWith(join(SRC, 'observability'))) {
          if (/from '(prom-client|@opentelemetry\/[^']+)'|import\('(prom-client|@opentelemetry\/[^']+)'\)/.test(readFileSync(file, 'utf8'))) offenders.push(file);
        }
      }
    };
    walk(SRC);
    expect(offenders).toEqual([]);
  });
});

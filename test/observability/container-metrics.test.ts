import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { noopMetrics } from '../../src/observability/noop.js';
import type { Metrics } from '../../src/observability/ports.js';

/** ContainerOptions.metrics: a test's or benchmark's own recorder (bench:metrics --toggle), used only with metrics on. */
const dir = mkdtempSync(join(tmpdir(), 'herald-container-metrics-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const own: Metrics = { ...noopMetrics };

describe('the metrics a container records into', () => {
  it('are the given ones when metrics are on', async () => {
    const container = await createContainer(loadConfig({ HERALD_DATA_DIR: join(dir, 'on'), LOG_LEVEL: 'silent' }), { metrics: own });
    try {
      expect(container.deps.metrics).toBe(own);
    } finally {
      await container.close();
    }
  });

  it('are the no-op ones when metrics are off, whatever is given', async () => {
    const container = await createContainer(loadConfig({ HERALD_DATA_DIR: join(dir, 'off'), LOG_LEVEL: 'silent', HERALD_METRICS: 'off' }), { metrics: own });
    try {
      expect(container.deps.metrics).toBe(noopMetrics);
    } finally {
      await container.close();
    }
  });
});

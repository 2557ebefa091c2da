// Preloaded into a Herald process under test (NODE_OPTIONS=--import=<this file>): on SIGUSR2 it writes the names of
// the packages the process has loaded from node_modules (CommonJS cache, where ES modules' CommonJS imports land too)
// to the file named by HERALD_PROBE_OUTPUT.
import { renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
process.on('SIGUSR2', () => {
  const packages = new Set();
  for (const file of Object.keys(require.cache)) {
    const name = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];
    if (name) packages.add(name);
  }
  // Whole or not at all: the test reads the file as soon as it exists.
  writeFileSync(`${process.env.HERALD_PROBE_OUTPUT}.tmp`, JSON.stringify([...packages].sort()));
  renameSync(`${process.env.HERALD_PROBE_OUTPUT}.tmp`, process.env.HERALD_PROBE_OUTPUT);
});

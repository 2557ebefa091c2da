#!/usr/bin/env node
// Runs the compiled server (dist/server, built by `npm start` and `npm run build`) when it was built from exactly the
// current sources, and the TypeScript sources through tsx otherwise, so a clone runs without a build step and an
// edited source is never shadowed by an older build. The check hashes the path, size and mtime of every source file
// (scripts/build-server.mjs, 5–10 ms). HERALD_FROM_SOURCE=1 runs the sources even when the build is current.
import { pathToFileURL } from 'node:url';
import { freshServerBuild } from '../scripts/build-server.mjs';

// The launcher's own switch, read before anything of Herald loads (src/config.ts reads the server's settings).
const compiled = process.env.HERALD_FROM_SOURCE === '1' ? undefined : freshServerBuild();
if (compiled) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}

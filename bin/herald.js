#!/usr/bin/env node
// Runs the TypeScript sources through tsx: no build step between a clone and a running server.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');

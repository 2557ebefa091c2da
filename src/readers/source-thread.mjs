// A reader thread run from the TypeScript sources (tsx, vitest): registers tsx's loader in the thread, then loads the
// thread's module. `--import tsx` in a worker's execArgv is not applied to its entry on Node 20; the compiled build
// starts dist/server/reader-thread.js directly (reader-pool.ts).
import { register } from 'tsx/esm/api';

register();
await import('./reader-thread.ts');

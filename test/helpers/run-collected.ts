import { spawn } from 'node:child_process';

export interface CollectedRun {
  /** The exit code; null when a signal ended it (the timeout's included). */
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end and collects its output. Asynchronous, never spawnSync: a test file blocked in spawnSync
 * cannot answer vitest's worker RPC, which gives up after 60 s (a few commands in a row on a loaded machine, or one
 * npm install) and fails the run even when every test passed. `timeoutMs` ends the child with SIGTERM (status null).
 * Rejects only when the command could not be started.
 */
export function runCollected(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; timeoutMs: number; stdout?: 'collect' | 'ignore' },
): Promise<CollectedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      stdio: ['ignore', options.stdout === 'ignore' ? 'ignore' : 'pipe', 'pipe'],
      timeout: options.timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

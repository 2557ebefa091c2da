import { Pool } from 'undici';

/**
 * Load in waves: `size` requests at once on `size` keep-alive connections, the next wave only when all have answered.
 *
 * Why not a closed loop (each client sending its next request as soon as its answer arrives, as autocannon does): the
 * embedded server gathers the read requests of one event-loop turn (src/http/read-gathering.ts) and commits the writes
 * of one turn together, so its CPU per request depends on how many requests share a turn. Under a closed loop that
 * number is set by the server's own answer timing and settles differently per process and per run (one pair of
 * processes gave on/off ratios of 0.80-1.60 between one-second slices). Waves fix the arrival pattern from outside,
 * so two processes given the same waves do the same batching.
 */
export interface WaveRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

export interface WaveRun {
  /** The n-th request of this run (0-based). */
  request: (n: number) => WaveRequest;
  /** Stop after this many waves, or … */
  waves?: number;
  /** … after the first wave that ends past this many seconds. */
  seconds?: number;
}

export interface WaveLoadResult {
  ok: number;
  notOk: number;
  statusCounts: Record<string, number>;
  waves: number;
  elapsedMs: number;
  requestsPerSecond: number;
}

export interface WaveClient {
  run(run: WaveRun): Promise<WaveLoadResult>;
  close(): Promise<void>;
}

/**
 * A client of `size` keep-alive connections to `origin`, kept open across runs (connecting is not part of any
 * measured run once the first has warmed it up).
 */
export function waveClient(origin: string, headers: Record<string, string>, size: number): WaveClient {
  const pool = new Pool(origin, { connections: size, pipelining: 1 });
  return {
    async run(run) {
      if (run.waves === undefined && run.seconds === undefined) throw new Error('waveClient.run: waves or seconds');
      const statusCounts: Record<string, number> = {};
      let ok = 0;
      let notOk = 0;
      let sent = 0;
      let waves = 0;
      const one = async (n: number) => {
        const { method, path, body } = run.request(n);
        const response = await pool.request({ method, path, body, headers });
        await response.body.arrayBuffer();
        statusCounts[response.statusCode] = (statusCounts[response.statusCode] ?? 0) + 1;
        if (response.statusCode >= 200 && response.statusCode < 300) ok++;
        else notOk++;
      };
      const started = performance.now();
      for (;;) {
        if (run.waves !== undefined && waves >= run.waves) break;
        if (run.seconds !== undefined && performance.now() - started >= run.seconds * 1000) break;
        const wave: Array<Promise<void>> = [];
        for (let i = 0; i < size; i++) wave.push(one(sent++));
        await Promise.all(wave);
        waves++;
      }
      const elapsedMs = performance.now() - started;
      return { ok, notOk, statusCounts, waves, elapsedMs, requestsPerSecond: (ok * 1000) / elapsedMs };
    },
    close: () => pool.close(),
  };
}

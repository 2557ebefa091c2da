import { isRetryableStatus } from '../providers/outbound.js';
import { ProviderError } from '../providers/ports.js';
import type { BridgeCallSummary, BridgeClient, BridgeExecuteResult, BridgeTarget, DiscoverResult } from './ports.js';
import { BridgeError } from './ports.js';
import { bridgeSignature } from './signing.js';

export interface BridgeClientOptions {
  /** The outbound-safe fetch (private-address guard, timeout, User-Agent): providers' context().fetch. */
  fetch: typeof fetch;
  now?: () => number;
}

const MAX_ERROR_TEXT = 2_000;

/** The bridge client over the guarded fetch. Every failure is a BridgeError saying what went wrong and whether to retry. */
export function createBridgeClient(options: BridgeClientOptions): BridgeClient {
  const now = options.now ?? Date.now;

  async function call(target: BridgeTarget, method: 'GET' | 'POST', query: Record<string, string>, body?: unknown): Promise<{ json: unknown; call: BridgeCallSummary }> {
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      throw new BridgeError(`Bridge URL is not a valid URL: ${target.url}`, false, { method, url: target.url, action: query.action ?? '', durationMs: 0 });
    }
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    // Exactly the bytes that are signed are sent: the framework signs its JSON.stringify of what it parsed.
    const text = method === 'POST' ? JSON.stringify(body ?? {}) : '{}';
    const signature = bridgeSignature(target.secretKey, text, now());
    const summary: BridgeCallSummary = { method, url: url.toString(), action: query.action ?? '', durationMs: 0 };
    const started = performance.now();
    let response: Response;
    let answer: string;
    try {
      response = await options.fetch(url, {
        method,
        headers: {
          'content-type': 'application/json',
          'novu-signature': signature,
          // The header older framework versions read.
          'x-novu-signature': signature,
          'bypass-tunnel-reminder': 'true',
        },
        body: method === 'POST' ? text : undefined,
      });
      answer = await response.text();
    } catch (error) {
      summary.durationMs = Math.round(performance.now() - started);
      const retryable = error instanceof ProviderError ? error.retryable : true;
      const message = error instanceof Error ? error.message : String(error);
      throw new BridgeError(`Bridge ${describe(summary)} could not be reached: ${message}`, retryable, summary);
    }
    summary.durationMs = Math.round(performance.now() - started);
    summary.status = response.status;
    const parsed = parseJson(answer);
    if (!response.ok) {
      const error = parsed && typeof parsed === 'object' ? (parsed as { message?: unknown; code?: unknown; data?: unknown }) : undefined;
      const code = typeof error?.code === 'string' ? error.code : undefined;
      const reason = typeof error?.message === 'string' ? error.message : answer.slice(0, 300) || response.statusText;
      throw new BridgeError(
        `Bridge answered ${response.status}${code ? ` ${code}` : ''}: ${reason}`,
        isRetryableStatus(response.status),
        summary,
        code,
        parsed ?? answer.slice(0, MAX_ERROR_TEXT),
      );
    }
    if (parsed === undefined || parsed === null || typeof parsed !== 'object') {
      throw new BridgeError(
        `Bridge ${describe(summary)} answered ${response.status} with a body that is not a JSON object (is the URL the app's bridge endpoint, e.g. /api/novu?)`,
        false,
        summary,
        undefined,
        answer.slice(0, 300),
      );
    }
    return { json: parsed, call: summary };
  }

  return {
    async discover(target) {
      const { json, call: summary } = await call(target, 'GET', { action: 'discover' });
      const workflows = (json as { workflows?: unknown }).workflows;
      if (!Array.isArray(workflows)) {
        throw new BridgeError(`Bridge ${describe(summary)} answered without a workflows list: not a @novu/framework bridge`, false, summary, undefined, json);
      }
      for (const [index, workflow] of workflows.entries()) {
        const problem = discoveredWorkflowProblem(workflow);
        if (problem) throw new BridgeError(`Bridge discover answer: workflows[${index}] ${problem}`, false, summary, undefined, undefined);
      }
      return { result: json as DiscoverResult, call: summary };
    },
    async healthCheck(target) {
      const { json, call: summary } = await call(target, 'GET', { action: 'health-check' });
      return { result: json as Record<string, unknown>, call: summary };
    },
    async execute(target, input) {
      const query = { action: input.action, workflowId: input.workflowId, stepId: input.stepId };
      const { json, call: summary } = await call(target, 'POST', query, input.body);
      const result = json as Partial<BridgeExecuteResult>;
      return {
        result: {
          outputs: record(result.outputs),
          providers: record(result.providers) as BridgeExecuteResult['providers'],
          options: record(result.options),
          ...(result.metadata ? { metadata: record(result.metadata) } : {}),
        },
        call: summary,
      };
    },
  };
}

function describe(summary: BridgeCallSummary): string {
  return `${summary.method} ${summary.url}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function discoveredWorkflowProblem(workflow: unknown): string | undefined {
  if (!workflow || typeof workflow !== 'object') return 'is not an object';
  const { workflowId, steps } = workflow as { workflowId?: unknown; steps?: unknown };
  if (typeof workflowId !== 'string' || workflowId.trim() === '') return 'has no workflowId';
  if (!Array.isArray(steps)) return `(${workflowId}) has no steps list`;
  for (const step of steps) {
    if (!step || typeof step !== 'object') return `(${workflowId}) has a step that is not an object`;
    const { stepId, type } = step as { stepId?: unknown; type?: unknown };
    if (typeof stepId !== 'string' || stepId === '' || typeof type !== 'string') return `(${workflowId}) has a step without stepId or type`;
  }
  return undefined;
}

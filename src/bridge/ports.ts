import { ProviderError } from '../providers/ports.js';

/**
 * The @novu/framework bridge as Herald calls it (outbound, signed): discover during a sync, execute for each step of
 * an external workflow, preview for the dashboard, health-check for the status route. One URL; `action` picks the
 * operation. Every call goes through the private-address guard and has a timeout.
 */
export interface BridgeTarget {
  url: string;
  /** The environment's secret key the bridge app was configured with; signs every call. */
  secretKey: string;
}

export interface JsonSchemaHolder {
  schema?: Record<string, unknown>;
  unknownSchema?: unknown;
}

export interface DiscoveredStep {
  stepId: string;
  type: string;
  controls?: JsonSchemaHolder;
  outputs?: JsonSchemaHolder;
  results?: JsonSchemaHolder;
  options?: Record<string, unknown>;
  providers?: Array<{ type: string; outputs?: JsonSchemaHolder }>;
  code?: string;
}

export interface DiscoveredWorkflow {
  workflowId: string;
  name?: string;
  description?: string;
  tags?: string[];
  severity?: string;
  preferences?: { all?: { enabled?: boolean; readOnly?: boolean }; channels?: Record<string, { enabled?: boolean }> };
  payload?: JsonSchemaHolder;
  controls?: JsonSchemaHolder;
  steps: DiscoveredStep[];
}

export interface DiscoverResult {
  workflows: DiscoveredWorkflow[];
  agents?: Array<{ agentId: string }>;
}

/** One earlier step as the framework hydrates it: `outputs` must fit the step type's result schema. */
export interface BridgeStepState {
  stepId: string;
  outputs: Record<string, unknown>;
  state: { status: string; error?: string };
}

export interface BridgeExecuteBody {
  payload: Record<string, unknown>;
  controls: Record<string, unknown>;
  state: BridgeStepState[];
  subscriber: Record<string, unknown>;
  context: Record<string, unknown>;
  env: Record<string, unknown>;
}

export interface BridgeExecuteResult {
  outputs: Record<string, unknown>;
  providers: Record<string, Record<string, unknown>>;
  options: { skip?: boolean };
  metadata?: Record<string, unknown>;
}

/** What a call was, for execution details and errors: never the signature or the secret. */
export interface BridgeCallSummary {
  method: 'GET' | 'POST';
  /** The bridge URL with the action's query (no credentials are ever put in the query). */
  url: string;
  action: string;
  status?: number;
  durationMs: number;
}

export interface BridgeClient {
  discover(target: BridgeTarget): Promise<{ result: DiscoverResult; call: BridgeCallSummary }>;
  healthCheck(target: BridgeTarget): Promise<{ result: Record<string, unknown>; call: BridgeCallSummary }>;
  execute(
    target: BridgeTarget,
    input: { action: 'execute' | 'preview'; workflowId: string; stepId: string; body: BridgeExecuteBody },
  ): Promise<{ result: BridgeExecuteResult; call: BridgeCallSummary }>;
}

/**
 * A failed bridge call. A ProviderError, so the worker's one retry rule applies: the bridge's 4xx answers (a payload
 * that fails its schema, a refused signature, an unknown workflow) are final; 5xx, 408, 429, timeouts and connection
 * errors are retried. `code` is the framework's error code (`ExecutionEventPayloadInvalidError`, ...); `raw` the
 * call summary with the bridge's answer, for the timeline.
 */
export class BridgeError extends ProviderError {
  constructor(
    message: string,
    retryable: boolean,
    readonly call: BridgeCallSummary,
    readonly code?: string,
    readonly answer?: unknown,
  ) {
    super(message, retryable, JSON.stringify({ request: call, error: { code, message, answer } }), call.status);
    this.name = 'BridgeError';
  }
}

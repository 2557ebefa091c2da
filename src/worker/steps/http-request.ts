import { TemplateError } from '../../domain/templates.js';
import { isRetryableStatus } from '../../providers/outbound.js';
import { ProviderError } from '../../providers/ports.js';
import type { StepOutcome, StepRun } from '../../usecases/engine/step-context.js';

const MAX_RECORDED_BODY = 10_000;

/**
 * HTTP request: method, URL, headers and body rendered from the controls, sent through the outbound-safe fetch.
 * The response status and body are recorded on the execution detail. Connection errors, timeouts, 5xx and 429
 * are retried with backoff like a provider's (HERALD_JOB_ATTEMPTS); a failure for good stops the workflow when
 * the step has shouldStopOnFail.
 */
export async function httpRequestStep(run: StepRun): Promise<StepOutcome> {
  let controls: Record<string, unknown>;
  try {
    controls = await run.renderer.renderControls(run.controls, run.templateContext);
  } catch (error) {
    if (error instanceof TemplateError) return { status: 'failed', detail: `Template could not be rendered: ${error.message}` };
    throw error;
  }
  const method = (typeof controls.method === 'string' ? controls.method : 'GET').toUpperCase();
  const url = typeof controls.url === 'string' ? controls.url : '';
  if (!url) return { status: 'failed', detail: 'HTTP request has no url' };
  const headers = headersOf(controls.headers);
  let body: string | undefined;
  if (method !== 'GET' && method !== 'HEAD' && controls.body !== undefined && controls.body !== null) {
    body = typeof controls.body === 'string' ? controls.body : JSON.stringify(controls.body);
    if (typeof controls.body !== 'string' && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
  }
  let response: Response;
  let text: string;
  try {
    response = await run.deps.providers.context().fetch(url, { method, headers, body });
    text = (await response.text()).slice(0, MAX_RECORDED_BODY);
  } catch (error) {
    // Connection errors and timeouts are retryable (the queue retries with backoff, then fails the step); a
    // refused target (an internal address) is not.
    if (error instanceof ProviderError && error.retryable) throw error;
    return { status: 'failed', detail: `HTTP ${method} ${url} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  const raw = JSON.stringify({ status: response.status, body: text });
  const detail = `HTTP ${method} ${url} answered ${response.status}`;
  if (response.ok) return { status: 'completed', detail, raw };
  // 5xx and 429 are worth another attempt, as for providers; other answers are the endpoint's final word.
  if (isRetryableStatus(response.status)) throw new ProviderError(detail, true, raw, response.status);
  return { status: 'failed', detail, raw };
}

/** Headers as an object, or Novu's `[{ key, value }]` list. */
function headersOf(value: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  if (Array.isArray(value)) {
    for (const entry of value) {
      if (entry && typeof entry === 'object' && typeof entry.key === 'string') headers[entry.key] = String(entry.value ?? '');
    }
  } else if (value && typeof value === 'object') {
    for (const [name, headerValue] of Object.entries(value)) headers[name] = String(headerValue);
  }
  return headers;
}

import { TemplateError } from '../../domain/templates.js';
import type { StepOutcome, StepRun } from '../../usecases/engine/step-context.js';

const MAX_RECORDED_BODY = 10_000;

/**
 * HTTP request: method, URL, headers and body rendered from the controls, sent through the outbound-safe fetch.
 * The response status and body are recorded on the execution detail; a failure stops the workflow when the
 * step has shouldStopOnFail.
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
  try {
    const response = await run.deps.providers.context().fetch(url, { method, headers, body });
    const text = (await response.text()).slice(0, MAX_RECORDED_BODY);
    const raw = JSON.stringify({ status: response.status, body: text });
    if (!response.ok) return { status: 'failed', detail: `HTTP ${method} ${url} answered ${response.status}`, raw };
    return { status: 'completed', detail: `HTTP ${method} ${url} answered ${response.status}`, raw };
  } catch (error) {
    return { status: 'failed', detail: `HTTP ${method} ${url} failed: ${error instanceof Error ? error.message : String(error)}` };
  }
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

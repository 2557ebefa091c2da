import { BridgeError, type BridgeTarget } from '../../bridge/ports.js';
import { ValidationError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';

/** A bridge URL the caller gave: http(s) only, no credentials in it. Throws ValidationError. */
export function checkBridgeUrl(url: unknown): string {
  if (typeof url !== 'string' || url.trim() === '') throw new ValidationError(['bridgeUrl must be a non-empty URL']);
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new ValidationError([`bridgeUrl is not a valid URL: ${url}`]);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ValidationError(['bridgeUrl must be an http or https URL']);
  if (parsed.username || parsed.password) throw new ValidationError(['bridgeUrl must not carry credentials']);
  return parsed.toString();
}

/** The API key the caller authenticated with, when it is one: the key the bridge app was configured with. */
export function callerApiKeyId(caller: Caller): string | undefined {
  return caller.kind === 'apiKey' ? caller.actorId : undefined;
}

/** The signing key for the environment (the key of the last sync while unrevoked, else the newest). */
export async function signingKeyFor(deps: Deps, environmentId: string, apiKeyId?: string): Promise<string> {
  const key = await deps.store.bridge.signingKey(environmentId, apiKeyId);
  if (!key) {
    throw new ValidationError([
      'This environment has no API key Herald can sign bridge calls with (keys made before version 0.1 are stored hashed only): create a new key and sync again',
    ]);
  }
  return key;
}

/**
 * Where an external workflow's steps run: its own bridge (a workflow discovered from a trigger's bridgeUrl) or the
 * environment's synced bridge. Failures are BridgeErrors (not retryable): the job fails saying why.
 */
export async function bridgeTargetForWorkflow(deps: Deps, workflow: Workflow): Promise<BridgeTarget> {
  const endpoint = await deps.store.bridge.getEndpoint(workflow._environmentId);
  const url = workflow.bridgeUrl ?? endpoint?.url;
  const call = { method: 'POST' as const, url: url ?? '', action: 'execute', durationMs: 0 };
  if (!url) throw new BridgeError(`Workflow ${workflow.workflowId} is external but the environment has no synced bridge`, false, call);
  const secretKey = await deps.store.bridge.signingKey(workflow._environmentId, endpoint?.apiKeyId);
  if (!secretKey) throw new BridgeError('No API key of this environment can sign bridge calls', false, call);
  return { url, secretKey };
}

/** A bridge call that failed while serving a request: a 400 saying why, in the caller's terms. */
export function bridgeRefusal(error: unknown, url: string): never {
  if (error instanceof BridgeError) {
    const hint = error.code?.startsWith('Signature') || error.code === 'SigningKeyNotFoundError'
      ? ' (the bridge refused Herald\'s signature: configure the app with the same secret key as the one used to sync, NOVU_SECRET_KEY)'
      : '';
    throw new ValidationError([`Bridge ${url} cannot be used: ${error.message}${hint}`]);
  }
  throw error;
}

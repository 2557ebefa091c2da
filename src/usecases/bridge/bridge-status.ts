import type { Caller } from '../../domain/types.js';
import { BridgeError } from '../../bridge/ports.js';
import type { Deps } from '../deps.js';
import { callerApiKeyId, checkBridgeUrl, signingKeyFor } from './bridge-target.js';

export interface BridgeHealth {
  bridgeUrl: string | null;
  status: 'ok' | 'unreachable' | 'not_synced';
  /** The framework's health-check answer (sdkVersion, frameworkVersion, discovered counts). */
  health?: Record<string, unknown>;
  error?: string;
  syncedAt?: string;
}

async function check(deps: Deps, environmentId: string, url: string, apiKeyId?: string): Promise<{ ok: true; health: Record<string, unknown> } | { ok: false; error: string }> {
  const secretKey = await signingKeyFor(deps, environmentId, apiKeyId);
  try {
    const { result } = await deps.bridge.healthCheck({ url, secretKey });
    if (result.status !== 'ok') return { ok: false, error: `health-check answered status ${JSON.stringify(result.status)}` };
    return { ok: true, health: result };
  } catch (error) {
    if (error instanceof BridgeError) return { ok: false, error: error.message };
    throw error;
  }
}

/** GET /v1/bridge/status: the environment's synced bridge and its health-check answer. */
export async function bridgeStatus(deps: Deps, caller: Caller): Promise<BridgeHealth> {
  const endpoint = await deps.store.bridge.getEndpoint(caller.environmentId);
  if (!endpoint) return { bridgeUrl: null, status: 'not_synced' };
  const result = await check(deps, caller.environmentId, endpoint.url, endpoint.apiKeyId);
  const base = { bridgeUrl: endpoint.url, syncedAt: endpoint.syncedAt };
  return result.ok ? { ...base, status: 'ok', health: result.health } : { ...base, status: 'unreachable', error: result.error };
}

/** POST /v1/bridge/validate: whether a URL answers as a @novu/framework bridge (its health-check). */
export async function validateBridge(deps: Deps, input: { caller: Caller; bridgeUrl: unknown }): Promise<{ isValid: boolean; error?: string }> {
  const url = checkBridgeUrl(input.bridgeUrl);
  const result = await check(deps, input.caller.environmentId, url, callerApiKeyId(input.caller));
  return result.ok ? { isValid: true } : { isValid: false, error: result.error };
}

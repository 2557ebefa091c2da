import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller, Integration } from '../../domain/types.js';
import type { Store } from '../../store/ports.js';

/**
 * The caller's live integration by id. A malformed id, another environment's record and a soft-deleted
 * one are all the same 404, so a caller learns nothing about records outside its environment.
 */
export async function loadIntegration(store: Store, caller: Caller, integrationId: string): Promise<Integration> {
  const integration = isRecordId(integrationId) ? await store.integrations.get(caller.environmentId, integrationId) : undefined;
  if (!integration || integration.deleted) throw NotFoundError.entity('Integration', integrationId);
  return integration;
}

/** Novu clients may send `_environmentId`; Herald only ever writes to the caller's environment. */
export function assertCallerEnvironment(caller: Caller, environmentId: string | undefined): void {
  if (environmentId !== undefined && environmentId !== caller.environmentId) {
    throw new ValidationError(['_environmentId must be the environment of the caller']);
  }
}

/** 409 when another live integration of the environment already uses `identifier`. */
export async function assertIdentifierFree(store: Store, caller: Caller, identifier: string, exceptId?: string): Promise<void> {
  const holder = await store.integrations.findByIdentifier(caller.environmentId, identifier);
  if (holder && holder._id !== exceptId) {
    throw new ConflictError(`Integration with identifier ${identifier} already exists`);
  }
}

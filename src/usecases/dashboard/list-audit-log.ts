import type { AuditEntry } from '../../domain/dashboard.js';
import type { Caller, Page } from '../../domain/types.js';
import type { Deps } from '../deps.js';

/** The caller organization's audit log, newest first. */
export async function listAuditLog(deps: Pick<Deps, 'store'>, input: { caller: Caller; page: number; limit: number }): Promise<Page<AuditEntry>> {
  return deps.store.dashboard.listAudit(input.caller.organizationId, input.page, input.limit);
}

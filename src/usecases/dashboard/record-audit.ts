import { isoNow } from '../../domain/clock.js';
import type { AuditEntry } from '../../domain/dashboard.js';
import { newId } from '../../domain/ids.js';
import type { Deps } from '../deps.js';

export type AuditInput = Omit<AuditEntry, '_id' | 'createdAt' | '_organizationId'> & {
  /** Default: the organization made on the first start (sign-in attempts with an unknown email). */
  organizationId?: string;
};

/** Appends one entry to the audit log. Called from one place only: http/audit.ts. */
export async function recordAudit(deps: Pick<Deps, 'store' | 'clock'>, input: AuditInput): Promise<void> {
  const { organizationId: given, ...entry } = input;
  const organizationId = given ?? (await deps.store.dashboard.firstOrganization())?._id;
  if (!organizationId) return;
  await deps.store.dashboard.appendAudit({ ...entry, _id: newId(deps.clock.now()), _organizationId: organizationId, createdAt: isoNow(deps.clock) });
}

import type { Integration } from '../../domain/types.js';

/**
 * Pure rules for ordering the integrations of one channel. Priority is an integer per integration;
 * higher wins. Ties go to the newer integration.
 */
export function sameChannel(a: Pick<Integration, 'channel' | 'kind'>, b: Pick<Integration, 'channel' | 'kind'>): boolean {
  return a.kind === b.kind && a.channel === b.channel;
}

/** The priority for an integration joining `siblings` (the live integrations of its channel): max + 1. */
export function nextPriority(siblings: Integration[]): number {
  return siblings.reduce((max, sibling) => Math.max(max, sibling.priority), 0) + 1;
}

/** The highest-priority active integration among `candidates`, the one to become primary. */
export function highestPriorityActive(candidates: Integration[]): Integration | undefined {
  return candidates
    .filter((candidate) => candidate.active && !candidate.deleted)
    .sort((a, b) => b.priority - a.priority || b.createdAt.localeCompare(a.createdAt) || b._id.localeCompare(a._id))[0];
}

/** Only delivery integrations have a channel, and only they take part in primary selection. */
export function canBePrimary(integration: Pick<Integration, 'kind' | 'channel'>): boolean {
  return integration.kind === 'delivery' && integration.channel !== undefined;
}

import { ValidationError } from '../../domain/errors.js';
import { CHAT_PROVIDER_IDS, PUSH_PROVIDER_IDS } from '../../domain/provider-catalogue.js';
import type { ChannelCredentials, ChannelSettings } from '../../domain/types.js';

/**
 * Pure rules for a subscriber's `channels` (the spec's ChannelSettings[]). An entry is identified by its
 * provider and the integration it was resolved to, so one subscriber can hold credentials for two
 * integrations of the same provider.
 */

/** The ids ChannelSettings accepts: the chat and push providers (the SDK's ChatOrPushProviderEnum). */
export const CHANNEL_SETTINGS_PROVIDER_IDS: readonly string[] = [...CHAT_PROVIDER_IDS, ...PUSH_PROVIDER_IDS];

const CREDENTIAL_FIELDS = ['webhookUrl', 'channel', 'deviceTokens', 'alertUid', 'title', 'imageUrl', 'state', 'externalUrl'] as const;

export function channelOfSettingsProvider(providerId: string): 'chat' | 'push' | undefined {
  if (CHAT_PROVIDER_IDS.includes(providerId)) return 'chat';
  if (PUSH_PROVIDER_IDS.includes(providerId)) return 'push';
  return undefined;
}

/** 400 unless the provider is a chat or push provider. */
export function assertChannelSettingsProvider(providerId: string): 'chat' | 'push' {
  const channel = channelOfSettingsProvider(providerId);
  if (!channel) {
    throw new ValidationError([`providerId must be one of the following values: ${CHANNEL_SETTINGS_PROVIDER_IDS.join(', ')}`]);
  }
  return channel;
}

/** 400 naming each bad field: webhookUrl must be an http(s) URL, deviceTokens non-empty strings. */
export function validateChannelCredentials(credentials: ChannelCredentials): void {
  const problems: string[] = [];
  if (credentials.webhookUrl !== undefined && !isHttpUrl(credentials.webhookUrl)) {
    problems.push('credentials.webhookUrl must be an http or https URL');
  }
  const tokens: unknown = credentials.deviceTokens;
  if (tokens !== undefined) {
    const valid = Array.isArray(tokens) && tokens.every((token) => typeof token === 'string' && token.trim() !== '');
    if (!valid) problems.push('credentials.deviceTokens must be an array of non-empty strings');
  }
  if (problems.length > 0) throw new ValidationError(problems);
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Only the spec's credential fields, without undefined ones; device tokens de-duplicated in order. */
export function cleanCredentials(credentials: ChannelCredentials): ChannelCredentials {
  const clean: Record<string, unknown> = {};
  for (const field of CREDENTIAL_FIELDS) {
    const value = credentials[field];
    if (value !== undefined) clean[field] = field === 'deviceTokens' ? uniqueTokens(value as string[]) : value;
  }
  return clean as ChannelCredentials;
}

export function uniqueTokens(tokens: readonly string[]): string[] {
  return [...new Set(tokens)];
}

function sameEntry(a: Pick<ChannelSettings, 'providerId' | '_integrationId'>, b: Pick<ChannelSettings, 'providerId' | '_integrationId'>): boolean {
  return a.providerId === b.providerId && a._integrationId === b._integrationId;
}

/** Replaces the entry of the same provider and integration (keeping its position), or appends `next`. */
export function replaceChannelEntry(channels: readonly ChannelSettings[], next: ChannelSettings): ChannelSettings[] {
  const entry: ChannelSettings = { ...next, credentials: cleanCredentials(next.credentials) };
  const index = channels.findIndex((existing) => sameEntry(existing, entry));
  if (index === -1) return [...channels, entry];
  return channels.map((existing, i) => (i === index ? entry : existing));
}

/**
 * Merges `next` into the entry of the same provider and integration: device tokens are appended and
 * de-duplicated, every other given field overwrites, fields not given stay. No such entry: `next` is appended.
 */
export function mergeChannelEntry(channels: readonly ChannelSettings[], next: ChannelSettings): ChannelSettings[] {
  const index = channels.findIndex((existing) => sameEntry(existing, next));
  if (index === -1) return replaceChannelEntry(channels, next);
  const existing = channels[index]!;
  const given = cleanCredentials(next.credentials);
  const credentials: ChannelCredentials = { ...existing.credentials, ...given };
  if (given.deviceTokens !== undefined || existing.credentials.deviceTokens !== undefined) {
    credentials.deviceTokens = uniqueTokens([...(existing.credentials.deviceTokens ?? []), ...(given.deviceTokens ?? [])]);
  }
  const merged: ChannelSettings = {
    ...existing,
    ...(next.integrationIdentifier !== undefined ? { integrationIdentifier: next.integrationIdentifier } : {}),
    credentials,
  };
  return channels.map((entry, i) => (i === index ? merged : entry));
}

/** Every entry except those of `providerId`. */
export function withoutProvider(channels: readonly ChannelSettings[], providerId: string): ChannelSettings[] {
  return channels.filter((entry) => entry.providerId !== providerId);
}

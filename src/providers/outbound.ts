import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Dispatcher } from 'undici';
import { ProviderError, type ProviderContext } from './ports.js';

/**
 * Outbound safety for every request a provider makes: a timeout, a User-Agent, and a guard that refuses
 * targets resolving to private, loopback, link-local (cloud metadata) or otherwise internal addresses
 * unless the operator allowed them (`HERALD_OUTBOUND_ALLOW`).
 */

export type AddressLookup = (hostname: string) => Promise<string[]>;

export interface OutboundOptions {
  timeoutMs: number;
  userAgent: string;
  /** Hosts, IPs, CIDRs or `host:port` entries that may be reached even though they are internal. */
  allow: string[];
  /** Resolves a host name to all its addresses; defaults to node:dns lookup. */
  lookup?: AddressLookup;
  /** The fetch that actually sends; defaults to the global fetch. */
  fetchImpl?: typeof fetch;
  /**
   * The connection pool, from createGuardedDispatcher with the same `allow`; one is created when absent. Share one
   * per process: each dispatcher keeps its own keep-alive connections.
   */
  dispatcher?: GuardedDispatcher;
}

interface BlockedRange {
  cidr: string;
  reason: string;
}

const BLOCKED_V4: BlockedRange[] = [
  { cidr: '0.0.0.0/8', reason: 'unspecified address' },
  { cidr: '10.0.0.0/8', reason: 'private address' },
  { cidr: '100.64.0.0/10', reason: 'shared (CGNAT) address' },
  { cidr: '127.0.0.0/8', reason: 'loopback address' },
  { cidr: '169.254.0.0/16', reason: 'link-local address' },
  { cidr: '172.16.0.0/12', reason: 'private address' },
  { cidr: '192.168.0.0/16', reason: 'private address' },
  { cidr: '224.0.0.0/4', reason: 'multicast address' },
  { cidr: '240.0.0.0/4', reason: 'reserved address' },
];

const BLOCKED_V6: BlockedRange[] = [
  { cidr: '::/128', reason: 'unspecified address' },
  { cidr: '::1/128', reason: 'loopback address' },
  { cidr: 'fe80::/10', reason: 'link-local address' },
  { cidr: 'fc00::/7', reason: 'unique-local address' },
  { cidr: 'ff00::/8', reason: 'multicast address' },
];

const blockedRanges = BLOCKED_V4.map((range) => ({ ...range, list: subnetList(range.cidr, 'ipv4') })).concat(
  BLOCKED_V6.map((range) => ({ ...range, list: subnetList(range.cidr, 'ipv6') })),
);

function subnetList(cidr: string, family: 'ipv4' | 'ipv6'): BlockList {
  const [address, prefix] = cidr.split('/');
  const list = new BlockList();
  list.addSubnet(address, Number(prefix), family);
  return list;
}

/** `::ffff:10.0.0.1` is 10.0.0.1 as far as routing goes. */
function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1] : address;
}

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

/** Why an address may not be reached, or undefined when it is a public address. */
export function blockedAddressReason(address: string): string | undefined {
  const normalized = normalizeAddress(address);
  const family = familyOf(normalized);
  return blockedRanges.find((range) => range.list.check(normalized, family))?.reason;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function defaultPort(protocol: string): string {
  const ports: Record<string, string> = { 'http:': '80', 'https:': '443', 'smtp:': '25', 'smtps:': '465' };
  return ports[protocol] ?? '';
}

function hostMatchesEntry(entry: string, host: string, port: string): boolean {
  const wanted = entry.trim().toLowerCase();
  if (!wanted) return false;
  const candidates = [host, `${host}:${port}`, `[${host}]:${port}`];
  return candidates.includes(wanted);
}

function addressMatchesEntry(entry: string, address: string, port: string): boolean {
  const wanted = entry.trim().toLowerCase();
  if (wanted.includes('/')) {
    const [base, prefix] = wanted.split('/');
    if (!isIP(base) || isIP(base) !== isIP(address)) return false;
    const list = new BlockList();
    list.addSubnet(base, Number(prefix), familyOf(base));
    return list.check(address, familyOf(address));
  }
  return hostMatchesEntry(wanted, address, port);
}

const defaultLookup: AddressLookup = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
};

/**
 * Refuses (ProviderError, not retryable) a target that resolves to an internal address not named in `allow`.
 * Takes a URL (`https://host/...`, or `smtp://host:port` for non-fetch transports). A DNS failure is a
 * retryable ProviderError, since name resolution often recovers.
 */
export async function assertOutboundAllowed(
  target: string | URL,
  allow: string[],
  lookup: AddressLookup = defaultLookup,
): Promise<void> {
  const url = typeof target === 'string' ? new URL(target) : target;
  const host = stripBrackets(url.hostname).toLowerCase();
  const port = url.port || defaultPort(url.protocol);
  if (allow.some((entry) => hostMatchesEntry(entry, host, port))) return;

  const addresses = isIP(host) ? [host] : await resolveAll(host, lookup);
  for (const raw of addresses) {
    const address = normalizeAddress(raw);
    const reason = blockedAddressReason(address);
    if (!reason) continue;
    if (allow.some((entry) => addressMatchesEntry(entry, address, port))) continue;
    const shown = address === host ? address : `${host} (${address})`;
    throw new ProviderError(`Outbound request to ${shown} refused: ${reason}`, false);
  }
}

async function resolveAll(host: string, lookup: AddressLookup): Promise<string[]> {
  try {
    const addresses = await lookup(host);
    if (addresses.length === 0) throw new Error('no addresses');
    return addresses;
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    throw new ProviderError(`Outbound request to ${host} failed: DNS lookup failed (${code})`, true);
  }
}

/** TLS problems will not fix themselves on a retry; other network failures usually do. */
const PERMANENT_NETWORK_CODES = /^(CERT_|ERR_TLS_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT|UNABLE_TO_VERIFY|ERR_INVALID_URL)/;

function networkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Any failure of a request (before or while reading the answer) as a ProviderError: timeouts and
 * connection errors are retryable. A ProviderError passes through unchanged.
 */
export function toProviderError(error: unknown, target: string, timeoutMs: number): ProviderError {
  if (error instanceof ProviderError) return error;
  // fetch wraps what the connection raised (the guarded lookup's refusal included) as the cause of a TypeError.
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof ProviderError) return cause;
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError') {
    return new ProviderError(`Request to ${target} timed out after ${timeoutMs} ms`, true);
  }
  if (name === 'AbortError') return new ProviderError(`Request to ${target} was aborted`, true);
  const code = networkErrorCode(error);
  const detail = code ?? (error as Error).message ?? String(error);
  const retryable = !(code && PERMANENT_NETWORK_CODES.test(code));
  return new ProviderError(`Request to ${target} failed: ${detail}`, retryable);
}

function requestUrl(input: Parameters<typeof fetch>[0]): URL {
  if (input instanceof URL) return input;
  if (typeof input === 'string') return new URL(input);
  return new URL(input.url);
}

/** Origin and path only: query strings may carry credentials (Vonage, some webhooks). */
function describeTarget(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * The connection-time half of the guard, as a `lookup` for net/tls connect (and undici's `connect.lookup`).
 * `assertOutboundAllowed` checks the addresses a name resolves to before the request, but the connection resolves
 * the name again: a name answering a public address for the check and an internal one a moment later (DNS
 * rebinding) would get through. This lookup refuses internal addresses (a non-retryable ProviderError passed to the
 * callback), so the address connected to is always one that passed. Port-specific allow entries (`host:port`) are
 * checked before the request; here a host or address allowed for any port passes. Honours `options.family` and
 * `options.all`.
 */
export function createGuardedLookup(allow: string[], lookup: AddressLookup = defaultLookup): GuardedLookup {
  const guardedLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    const host = stripBrackets(hostname).toLowerCase();
    const hostAllowed = allow.some((entry) => withoutPort(entry) === host);
    resolveAll(host, lookup)
      .then((raw) => {
        const addresses = raw.map(normalizeAddress);
        if (!hostAllowed) {
          for (const address of addresses) {
            const reason = blockedAddressReason(address);
            if (reason && !allow.some((entry) => addressMatchesEntry(withoutPort(entry), address, ''))) {
              throw new ProviderError(`Outbound request to ${host} (${address}) refused: ${reason}`, false);
            }
          }
        }
        const family = options.family === 6 || options.family === 'IPv6' ? 6 : options.family === 4 || options.family === 'IPv4' ? 4 : 0;
        const usable = addresses.filter((address) => family === 0 || isIP(address) === family);
        if (usable.length === 0) throw Object.assign(new Error(`no IPv${family} address for ${host}`), { code: 'ENOTFOUND' });
        if (options.all) callback(null, usable.map((address) => ({ address, family: isIP(address) })));
        else callback(null, usable[0], isIP(usable[0]));
      })
      .catch((error: unknown) => callback(error as Error, '', 0));
  };
  return guardedLookup;
}

/** The connection pool for fetch, made on the first request that needs it. */
export type GuardedDispatcher = () => Promise<Dispatcher>;

/**
 * The connection pool for fetch, connecting only through `createGuardedLookup`. It is made, and undici loaded, on the
 * first outbound request: a process that never calls a vendor does not hold undici (~5 MB of an idle process).
 */
export function createGuardedDispatcher(allow: string[], lookup: AddressLookup = defaultLookup): GuardedDispatcher {
  let agent: Promise<Dispatcher> | undefined;
  return () => (agent ??= import('undici').then(({ Agent }) => new Agent({ connect: { lookup: createGuardedLookup(allow, lookup) as never } })));
}

/** A `lookup` as net.connect, tls.connect and http2.connect take it. */
export type GuardedLookup = LookupFunction;
type LookupOptions = { family?: number | string; all?: boolean };
type LookupCallback = (error: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;

/** `relay.internal:2525` → `relay.internal`; `[::1]:25` → `::1`; CIDRs and bare hosts unchanged. */
function withoutPort(entry: string): string {
  const wanted = entry.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(wanted);
  if (bracketed) return bracketed[1];
  if (isIP(wanted) === 6 || wanted.includes('/')) return wanted;
  return wanted.replace(/:\d+$/, '');
}

/**
 * A fetch with the outbound guard, a per-request timeout (covering the body too) and a User-Agent.
 * Every failure it raises is a ProviderError.
 */
export function createOutboundFetch(options: OutboundOptions): typeof fetch {
  const send = options.fetchImpl ?? fetch;
  const lookup = options.lookup ?? defaultLookup;
  const dispatcher = options.dispatcher ?? createGuardedDispatcher(options.allow, lookup);
  const outboundFetch = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const url = requestUrl(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ProviderError(`Outbound request to ${url.protocol} URL refused: only http and https`, false);
    }
    await assertOutboundAllowed(url, options.allow, lookup);
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    if (!headers.has('user-agent')) headers.set('user-agent', options.userAgent);
    try {
      return await send(input, { ...init, headers, signal, redirect: init?.redirect ?? 'manual', dispatcher: await dispatcher() } as RequestInit);
    } catch (error) {
      throw toProviderError(error, describeTarget(url), options.timeoutMs);
    }
  };
  return outboundFetch as typeof fetch;
}

/**
 * Everything a provider needs from the outside world, built once from configuration: the guarded fetch,
 * the timeout, and the guard itself (before and at connection time) for transports that do not go through fetch
 * (SMTP, HTTP/2).
 */
export function createProviderContext(options: OutboundOptions): ProviderContext {
  const lookup = options.lookup ?? defaultLookup;
  return {
    fetch: createOutboundFetch(options),
    timeoutMs: options.timeoutMs,
    assertAllowed: (target) => assertOutboundAllowed(target, options.allow, lookup),
    guardedLookup: createGuardedLookup(options.allow, lookup),
  };
}

/** 5xx and 429 are worth retrying; any other non-2xx answer will fail the same way again. */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

/** A vendor's non-2xx answer as a ProviderError; `raw` is the body text. */
export function providerErrorFromStatus(status: number, body: string, vendor: string): ProviderError {
  const summary = body.length > 300 ? `${body.slice(0, 300)}…` : body;
  return new ProviderError(`${vendor} answered ${status}: ${summary}`, isRetryableStatus(status), body, status);
}

/** Reads a failed Response's body and maps it to a ProviderError (5xx/429 retryable, other 4xx not). */
export async function providerErrorFromResponse(response: Response, vendor: string): Promise<ProviderError> {
  const body = await response.text().catch(() => '');
  return providerErrorFromStatus(response.status, body, vendor);
}

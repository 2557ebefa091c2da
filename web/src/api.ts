/**
 * The dashboard is a client of Herald's own REST API. The session is the HttpOnly `herald_session` cookie
 * (sent by the browser on same-origin requests); every state-changing request carries the CSRF token that
 * sign-in and /v1/dashboard/me return, and every request names the environment the user has selected.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

interface ApiState {
  csrfToken?: string;
  environmentId?: string;
  onUnauthorized?: () => void;
}

const state: ApiState = {};

export function configureApi(next: Partial<ApiState>): void {
  Object.assign(state, next);
}

export function currentEnvironmentId(): string | undefined {
  return state.environmentId;
}

function messageOf(status: number, body: unknown): string {
  if (body && typeof body === 'object' && 'message' in body) {
    const message = (body as { message: unknown }).message;
    if (Array.isArray(message)) return message.join('; ');
    if (typeof message === 'string') return message;
  }
  return `Request failed (${status})`;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined | Array<string>>;
  /** Do not send the environment header (sign-in, setup, invites). */
  noEnvironment?: boolean;
  signal?: AbortSignal;
}

export function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === '') continue;
    if (Array.isArray(value)) for (const item of value) params.append(key, item);
    else params.append(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export async function api<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && state.csrfToken) headers['x-csrf-token'] = state.csrfToken;
  if (!options.noEnvironment && state.environmentId) headers['novu-environment-id'] = state.environmentId;
  const response = await fetch(withQuery(path, options.query), {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: 'same-origin',
    signal: options.signal,
  });
  const text = await response.text();
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (!response.ok) {
    if (response.status === 401 && !path.startsWith('/v1/dashboard/login') && !path.startsWith('/v1/dashboard/setup')) state.onUnauthorized?.();
    throw new ApiError(response.status, messageOf(response.status, body), body);
  }
  return body as T;
}

export const get = <T = any>(path: string, options?: RequestOptions) => api<T>('GET', path, options);
export const post = <T = any>(path: string, body?: unknown, options?: RequestOptions) => api<T>('POST', path, { ...options, body: body ?? {} });
export const put = <T = any>(path: string, body?: unknown) => api<T>('PUT', path, { body });
export const patch = <T = any>(path: string, body?: unknown) => api<T>('PATCH', path, { body });
export const del = <T = any>(path: string) => api<T>('DELETE', path);

/** Path segment encoding for ids typed by users (subscriber ids, topic keys). */
export const seg = (value: string) => encodeURIComponent(value);

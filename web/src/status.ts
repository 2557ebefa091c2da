/** Job statuses (API-CONVENTIONS: pending, queued, running, completed, failed, delayed, canceled, merged, skipped). */
export interface JobLike {
  status: string;
}

const PENDING = new Set(['pending', 'queued', 'running', 'delayed']);

/** One word for an event from its steps: failed wins, then anything still to run, then done (the rule of the server's `status` filter, src/domain/event-status.ts). */
export function eventStatus(jobs: JobLike[] | undefined): 'failed' | 'pending' | 'completed' | 'canceled' | 'none' {
  if (!jobs || jobs.length === 0) return 'none';
  if (jobs.some((job) => job.status === 'failed')) return 'failed';
  if (jobs.some((job) => PENDING.has(job.status))) return 'pending';
  if (jobs.every((job) => job.status === 'canceled')) return 'canceled';
  return 'completed';
}

export function isPending(status: string): boolean {
  return PENDING.has(status);
}

export const CHANNELS = ['in_app', 'email', 'sms', 'chat', 'push'] as const;
export const STEP_TYPES = ['in_app', 'email', 'sms', 'chat', 'push', 'digest', 'delay', 'throttle', 'custom', 'http_request'] as const;
export const SEVERITIES = ['high', 'medium', 'low', 'none'] as const;

export const CHANNEL_LABEL: Record<string, string> = {
  in_app: 'In-app',
  email: 'Email',
  sms: 'SMS',
  chat: 'Chat',
  push: 'Push',
  digest: 'Digest',
  delay: 'Delay',
  throttle: 'Throttle',
  custom: 'Custom',
  http_request: 'HTTP request',
  trigger: 'Trigger',
};

/** `<input type=datetime-local>` value → ISO 8601 in UTC (the list's after/before). */
export function localInputToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

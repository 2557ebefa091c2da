import { useCallback, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { ApiError } from './api';

/** Loads data for a page; `reload` refetches; `every` polls (new activity appears without a reload). */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], options: { every?: number } = {}) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((value) => value + 1), []);
  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    load(controller.signal)
      .then((value) => {
        if (controller.signal.aborted) return;
        setData(value);
        setError(undefined);
      })
      .catch((cause: unknown) => {
        if (controller.signal.aborted) return;
        setError(cause instanceof Error ? cause.message : String(cause));
      })
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false);
      });
    return () => controller.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  useEffect(() => {
    if (!options.every) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reload();
    }, options.every);
    return () => clearInterval(timer);
  }, [options.every, reload]);
  return { data, error, loading, reload, setData };
}

/** Runs an action, keeping its pending state and error for the button that started it. */
export function useAction() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const run = useCallback(async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setPending(true);
    setError(undefined);
    try {
      return await action();
    } catch (cause) {
      setError(cause instanceof ApiError ? cause.message : cause instanceof Error ? cause.message : String(cause));
      return undefined;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, run, setError };
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Herald`;
  }, [title]);
  return (
    <div className="page-header">
      <h1 ref={ref}>{title}</h1>
      {children && <div className="page-actions">{children}</div>}
    </div>
  );
}

export function ErrorNote({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return <p className="muted" aria-live="polite">Loading {what}…</p>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

interface FieldProps {
  label: string;
  value: string;
  onChange(value: string): void;
  type?: string;
  required?: boolean;
  placeholder?: string;
  hint?: string;
  autoComplete?: string;
  disabled?: boolean;
  multiline?: boolean;
  rows?: number;
  name?: string;
}

export function Field({ label, value, onChange, type = 'text', hint, multiline, rows = 4, ...rest }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {multiline ? (
        <textarea id={id} value={value} rows={rows} aria-describedby={hintId} onChange={(event) => onChange(event.target.value)} {...rest} />
      ) : (
        <input id={id} type={type} value={value} aria-describedby={hintId} onChange={(event) => onChange(event.target.value)} {...rest} />
      )}
      {hint && (
        <small id={hintId} className="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

export function Select({
  label,
  value,
  onChange,
  options,
  disabled,
}: {
  label: string;
  value: string;
  onChange(value: string): void;
  options: Array<[value: string, label: string]>;
  disabled?: boolean;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} disabled={disabled} onChange={(event) => onChange(event.target.value)}>
        {options.map(([optionValue, optionLabel]) => (
          <option key={optionValue} value={optionValue}>
            {optionLabel}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Checkbox({ label, checked, onChange, disabled }: { label: string; checked: boolean; onChange(value: boolean): void; disabled?: boolean }) {
  const id = useId();
  return (
    <div className="checkbox">
      <input id={id} type="checkbox" checked={checked} disabled={disabled} onChange={(event) => onChange(event.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

const STATUS_TONE: Record<string, string> = {
  completed: 'ok',
  sent: 'ok',
  success: 'ok',
  active: 'ok',
  delivered: 'ok',
  // Provider-reported states (execution details with source Webhook, a message's providerStatus).
  readconfirmation: 'ok',
  opened: 'ok',
  clicked: 'ok',
  bounced: 'bad',
  complained: 'warn',
  failed: 'bad',
  error: 'bad',
  warning: 'warn',
  canceled: 'muted',
  skipped: 'muted',
  merged: 'muted',
  inactive: 'muted',
  pending: 'wait',
  queued: 'wait',
  running: 'wait',
  delayed: 'wait',
};

export function Badge({ value, label }: { value: string; label?: string }) {
  return <span className={`badge badge-${STATUS_TONE[value.toLowerCase()] ?? 'plain'}`}>{label ?? value}</span>;
}

export function Time({ iso }: { iso?: string }) {
  if (!iso) return <span className="muted">—</span>;
  const date = new Date(iso);
  return (
    <time dateTime={iso} title={iso}>
      {date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })}
    </time>
  );
}

/** Copy with a fallback: the Clipboard API exists only in secure contexts, and the dashboard runs over plain HTTP. */
export function CopyField({ label, value }: { label: string; value: string }) {
  const id = useId();
  const ref = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    ref.current?.select();
    let done = false;
    if (window.isSecureContext && navigator.clipboard) {
      done = await navigator.clipboard.writeText(value).then(
        () => true,
        () => false,
      );
    }
    if (!done) done = document.execCommand?.('copy') ?? false;
    setCopied(done);
  };
  return (
    <div className="field copy-field">
      <label htmlFor={id}>{label}</label>
      <div className="inline">
        <input id={id} ref={ref} readOnly value={value} onFocus={(event) => event.target.select()} />
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </div>
  );
}

export function Pager({ page, hasMore, onPage }: { page: number; hasMore: boolean; onPage(page: number): void }) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>Page {page + 1}</span>
      <button type="button" disabled={!hasMore} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

export function Json({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre className="json" aria-label={label} tabIndex={0}>
      {typeof value === 'string' ? value : JSON.stringify(value, null, 2)}
    </pre>
  );
}

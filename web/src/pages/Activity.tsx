import { useState, type FormEvent, type MouseEvent } from 'react';
import { get } from '../api';
import { Link, navigate } from '../router';
import { CHANNELS, CHANNEL_LABEL, SEVERITIES, eventStatus, localInputToIso } from '../status';
import { Badge, Empty, ErrorNote, Field, Loading, PageHeader, Pager, Select, Time, useLoad } from '../ui';

export interface NotificationEvent {
  _id: string;
  transactionId: string;
  createdAt?: string;
  channels?: string[];
  severity?: string;
  critical?: boolean;
  subscriber?: { subscriberId: string; email?: string; firstName?: string; lastName?: string };
  template?: { _id?: string; name: string; triggers: Array<{ identifier: string }> };
  _templateId?: string;
  jobs?: Array<{ _id: string; type: string; status: string }>;
  payload?: Record<string, unknown>;
}

interface Filters {
  workflow: string;
  subscriber: string;
  channel: string;
  transactionId: string;
  severity: string;
  after: string;
  before: string;
  status: string;
}

const PAGE_SIZE = 20;
const POLL_MS = 3000;

function filtersFrom(query: URLSearchParams): Filters {
  return {
    workflow: query.get('workflow') ?? '',
    subscriber: query.get('subscriber') ?? '',
    channel: query.get('channel') ?? '',
    transactionId: query.get('transactionId') ?? '',
    severity: query.get('severity') ?? '',
    after: query.get('after') ?? '',
    before: query.get('before') ?? '',
    status: query.get('status') ?? '',
  };
}

/**
 * A click anywhere on a row opens its event, as the time link does (the link stays: keyboard and screen readers use
 * it). Clicks on another control, with a modifier, or that end a text selection are left alone.
 */
function openRow(click: MouseEvent<HTMLTableRowElement>, to: string) {
  if (click.button !== 0 || click.metaKey || click.ctrlKey || click.shiftKey || click.altKey) return;
  if ((click.target as HTMLElement).closest('a, button, input, select, textarea, summary')) return;
  if (window.getSelection()?.toString()) return;
  navigate(to);
}

export function ActivityPage({ query }: { query: URLSearchParams }) {
  const applied = filtersFrom(query);
  const [draft, setDraft] = useState<Filters>(applied);
  const [page, setPage] = useState(0);
  // Open on wide screens; on a phone the list comes first and the filters fold away.
  const [filtersOpen, setFiltersOpen] = useState(() => window.matchMedia('(min-width: 641px)').matches);
  const activeFilters = Object.values(applied).filter(Boolean).length;
  const workflows = useLoad((signal) => get('/v2/workflows', { query: { limit: 100 }, signal }), []);
  const key = JSON.stringify(applied);
  // The first page follows new events by polling; older pages stay still while read.
  const events = useLoad(
    (signal) =>
      get<{ data: NotificationEvent[]; hasMore: boolean }>('/v1/notifications', {
        signal,
        query: {
          page,
          limit: PAGE_SIZE,
          templates: applied.workflow ? [applied.workflow] : undefined,
          subscriberIds: applied.subscriber ? [applied.subscriber] : undefined,
          channels: applied.channel ? [applied.channel] : undefined,
          severity: applied.severity ? [applied.severity] : undefined,
          transactionId: applied.transactionId || undefined,
          after: localInputToIso(applied.after),
          before: localInputToIso(applied.before),
          status: applied.status || undefined,
        },
      }),
    [key, page],
    { every: page === 0 ? POLL_MS : undefined },
  );

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(draft)) if (value) params.set(name, value);
    setPage(0);
    navigate(`/activity${params.size ? `?${params}` : ''}`, { replace: true });
  };
  const clear = () => {
    setDraft(filtersFrom(new URLSearchParams()));
    setPage(0);
    navigate('/activity', { replace: true });
  };
  const set = (name: keyof Filters) => (value: string) => setDraft((current) => ({ ...current, [name]: value }));
  const workflowOptions: Array<[string, string]> = [
    ['', 'Any workflow'],
    ...((workflows.data?.data?.workflows ?? []) as Array<{ _id: string; name: string }>).map((workflow): [string, string] => [workflow._id, workflow.name]),
  ];
  const rows = events.data?.data ?? [];

  return (
    <>
      <PageHeader title="Activity">
        <span className="muted live" aria-live="off">
          {page === 0 ? 'Live: new events appear automatically' : 'Paused on an older page'}
        </span>
      </PageHeader>
      <details className="filters-box" open={filtersOpen} onToggle={(event) => setFiltersOpen((event.target as HTMLDetailsElement).open)}>
      <summary>Filters{activeFilters > 0 ? ` (${activeFilters} applied)` : ''}</summary>
      <form className="filters" onSubmit={apply} aria-label="Filter events">
        <Select label="Workflow" value={draft.workflow} onChange={set('workflow')} options={workflowOptions} />
        <Field label="Subscriber ID" value={draft.subscriber} onChange={set('subscriber')} />
        <Select label="Channel" value={draft.channel} onChange={set('channel')} options={[['', 'Any channel'], ...CHANNELS.map((channel): [string, string] => [channel, CHANNEL_LABEL[channel]])]} />
        <Field label="Transaction ID" value={draft.transactionId} onChange={set('transactionId')} />
        <Select label="Severity" value={draft.severity} onChange={set('severity')} options={[['', 'Any severity'], ...SEVERITIES.map((severity): [string, string] => [severity, severity])]} />
        <Select
          label="Status"
          value={draft.status}
          onChange={set('status')}
          options={[
            ['', 'Any status'],
            ['completed', 'Completed'],
            ['pending', 'In progress'],
            ['failed', 'Failed'],
            ['canceled', 'Canceled'],
          ]}
        />
        <Field label="From" type="datetime-local" value={draft.after} onChange={set('after')} />
        <Field label="To" type="datetime-local" value={draft.before} onChange={set('before')} />
        <div className="filter-buttons">
          <button type="submit" className="primary">
            Apply filters
          </button>
          <button type="button" onClick={clear}>
            Clear
          </button>
        </div>
      </form>
      </details>
      <ErrorNote error={events.error} />
      {!events.data && events.loading && <Loading what="events" />}
      {events.data && rows.length === 0 && <Empty>No notification events match. Trigger a workflow and it appears here within seconds.</Empty>}
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table className="events cards">
            <caption className="visually-hidden">Notification events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Workflow</th>
                <th scope="col">Subscriber</th>
                <th scope="col">Steps</th>
                <th scope="col">Status</th>
                <th scope="col">Transaction</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((event) => {
                const status = eventStatus(event.jobs);
                return (
                  <tr key={event._id} className="row-clickable" onClick={(click) => openRow(click, `/activity/${event._id}`)}>
                    <td data-label="Time">
                      <Link to={`/activity/${event._id}`} className="row-link">
                        <Time iso={event.createdAt} />
                      </Link>
                    </td>
                    <td data-label="Workflow">
                      {event.template?.name ?? <span className="muted">deleted workflow</span>}
                      {event.critical && <Badge value="critical" />}
                      {event.severity && event.severity !== 'none' && <Badge value={event.severity} label={`severity ${event.severity}`} />}
                    </td>
                    <td data-label="Subscriber">
                      <span className="mono">{event.subscriber?.subscriberId ?? '—'}</span>
                      {event.subscriber?.email && <div className="muted small">{event.subscriber.email}</div>}
                    </td>
                    <td data-label="Steps">
                      <ul className="step-chips" aria-label="Steps">
                        {(event.jobs ?? [])
                          .filter((job) => job.type !== 'trigger')
                          .map((job) => (
                            <li key={job._id}>
                              <Badge value={job.status} label={`${CHANNEL_LABEL[job.type] ?? job.type}: ${job.status}`} />
                            </li>
                          ))}
                      </ul>
                    </td>
                    <td data-label="Status">
                      <Badge value={status} />
                    </td>
                    <td data-label="Transaction" className="mono small">{event.transactionId}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {events.data && <Pager page={page} hasMore={events.data.hasMore} onPage={setPage} />}
    </>
  );
}

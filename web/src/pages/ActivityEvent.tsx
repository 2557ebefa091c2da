import { del, get, post, seg } from '../api';
import { Link } from '../router';
import { useSession } from '../session';
import { CHANNEL_LABEL, eventStatus, isPending } from '../status';
import { Badge, ErrorNote, Json, Loading, Notice, PageHeader, Time, useAction, useLoad } from '../ui';

interface ExecutionDetail {
  _id: string;
  createdAt?: string;
  status: string;
  detail: string;
  source: string;
  providerId?: string;
  raw?: string | null;
  isRetry: boolean;
}

interface Job {
  _id: string;
  type: string;
  status: string;
  providerId: string;
  updatedAt?: string;
  step: { name?: string; _templateId: string };
  digest?: { events?: Array<Record<string, unknown>>; amount?: number; unit?: string; type?: string };
  executionDetails: ExecutionDetail[];
}

interface Message {
  _id: string;
  channel: string;
  _notificationId: string;
  createdAt: string;
  subject?: string;
  title?: string;
  content?: string | unknown[];
  status: string;
  email?: string;
  phone?: string;
  providerId?: string;
  errorText?: string;
  deliveredAt?: string[];
  /** The last state the provider reported (delivery reports). */
  providerStatus?: string;
}

/** Execution details written from a provider's delivery report (source Webhook) read as such in the timeline. */
export function detailSourceLabel(source: string): string {
  return source === 'Webhook' ? 'Provider report' : source;
}

const DETAIL_STATUS_LABEL: Record<string, string> = { ReadConfirmation: 'Read confirmation' };

/** "Delayed until …" / "Digesting events until …": the due time a waiting step recorded. */
export function dueTimeOf(job: Job): string | undefined {
  for (let i = job.executionDetails.length - 1; i >= 0; i--) {
    const found = /until (\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(job.executionDetails[i].detail);
    if (found) return found[1];
  }
  return undefined;
}

const POLL_MS = 2000;

export function ActivityEventPage({ id }: { id: string }) {
  const { isAdmin } = useSession();
  const event = useLoad((signal) => get(`/v1/notifications/${seg(id)}`, { signal }), [id], { every: POLL_MS });
  const data = event.data?.data as
    | { _id: string; transactionId: string; createdAt?: string; jobs?: Job[]; template?: { name: string }; subscriber?: { subscriberId: string; email?: string }; payload?: unknown; severity?: string; critical?: boolean }
    | undefined;
  const messages = useLoad(
    (signal) =>
      data
        ? get<{ data: Message[] }>('/v1/messages', { signal, query: { transactionId: [data.transactionId], limit: 100 } })
        : Promise.resolve({ data: [] as Message[] }),
    [data?.transactionId, data && eventStatus(data.jobs)],
  );
  const cancel = useAction();

  if (event.error && !data) {
    return (
      <>
        <PageHeader title="Notification event" />
        <ErrorNote error={event.error} />
        <Link to="/activity">Back to activity</Link>
      </>
    );
  }
  if (!data) return <Loading what="the event" />;
  const jobs = (data.jobs ?? []).filter((job) => job.type !== 'trigger');
  const ownMessages = (messages.data?.data ?? []).filter((message) => message._notificationId === data._id);
  const anyPending = jobs.some((job) => isPending(job.status));
  const status = eventStatus(data.jobs);

  return (
    <>
      <p className="crumbs">
        <Link to="/activity">Activity</Link> / event
      </p>
      <PageHeader title={data.template?.name ?? 'Notification event'}>
        {anyPending && isAdmin && (
          <button
            type="button"
            className="danger"
            disabled={cancel.pending}
            onClick={() => cancel.run(async () => { await del(`/v1/events/trigger/${seg(data.transactionId)}`); event.reload(); })}
          >
            Cancel pending steps
          </button>
        )}
      </PageHeader>
      <ErrorNote error={cancel.error} />
      <dl className="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <Badge value={status} />
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <Time iso={data.createdAt} />
          </dd>
        </div>
        <div>
          <dt>Subscriber</dt>
          <dd>
            {data.subscriber ? <Link to={`/subscribers/${seg(data.subscriber.subscriberId)}`}>{data.subscriber.subscriberId}</Link> : '—'}
          </dd>
        </div>
        <div>
          <dt>Transaction ID</dt>
          <dd className="mono">{data.transactionId}</dd>
        </div>
        <div>
          <dt>Severity</dt>
          <dd>
            {data.severity ?? 'none'}
            {data.critical ? ' · critical' : ''}
          </dd>
        </div>
      </dl>
      <details className="payload">
        <summary>Trigger payload</summary>
        <Json value={data.payload ?? {}} label="Trigger payload" />
      </details>
      <h2>Timeline</h2>
      {jobs.length === 0 && <Notice>This event has no steps yet.</Notice>}
      <ol className="timeline">
        {jobs.map((job, index) => (
          <JobCard
            key={job._id}
            job={job}
            index={index}
            notificationId={data._id}
            canRetry={isAdmin}
            messages={ownMessages.filter((message) => message.channel === job.type)}
            onChanged={event.reload}
          />
        ))}
      </ol>
    </>
  );
}

function JobCard({
  job,
  index,
  notificationId,
  canRetry,
  messages,
  onChanged,
}: {
  job: Job;
  index: number;
  notificationId: string;
  canRetry: boolean;
  messages: Message[];
  onChanged(): void;
}) {
  const retry = useAction();
  const due = dueTimeOf(job);
  const headingId = `step-${job._id}`;
  return (
    <li className={`job job-${job.status}`} aria-labelledby={headingId}>
      <div className="job-head">
        <h3 id={headingId}>
          {index + 1}. {job.step.name ?? CHANNEL_LABEL[job.type] ?? job.type} <span className="muted">({CHANNEL_LABEL[job.type] ?? job.type})</span>
        </h3>
        <Badge value={job.status} />
        {job.providerId && <span className="muted small">provider {job.providerId}</span>}
        {job.status === 'failed' && canRetry && (
          <button
            type="button"
            className="primary"
            disabled={retry.pending}
            onClick={() => retry.run(async () => { await post(`/v1/notifications/${seg(notificationId)}/jobs/${seg(job._id)}/retry`, {}); onChanged(); })}
          >
            {retry.pending ? 'Retrying…' : 'Retry step'}
          </button>
        )}
      </div>
      <ErrorNote error={retry.error} />
      {due && isPending(job.status) && (
        <p>
          Due at <Time iso={due} />
        </p>
      )}
      {job.digest?.events && job.digest.events.length > 0 && (
        <details>
          <summary>Digest members ({job.digest.events.length})</summary>
          <Json value={job.digest.events} label="Digest members" />
        </details>
      )}
      <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
      <table className="details cards">
        <caption className="visually-hidden">Execution details of step {index + 1}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Status</th>
            <th scope="col">Detail</th>
            <th scope="col">Source</th>
            <th scope="col">Provider answer</th>
          </tr>
        </thead>
        <tbody>
          {job.executionDetails.map((detail) => (
            <tr key={detail._id} className={detail.source === 'Webhook' ? 'provider-report' : undefined}>
              <td data-label="Time">
                <Time iso={detail.createdAt} />
              </td>
              <td data-label="Status">
                <Badge value={detail.status} label={DETAIL_STATUS_LABEL[detail.status]} />
                {detail.isRetry && <Badge value="retry" />}
              </td>
              <td data-label="Detail">{detail.detail}</td>
              <td data-label="Source">{detailSourceLabel(detail.source)}</td>
              <td data-label="Provider answer">
                {detail.raw ? <Json value={prettyRaw(detail.raw)} label={detail.source === 'Webhook' ? 'Provider report' : 'Provider answer'} /> : <span className="muted">—</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      </div>
      {messages.map((message) => (
        <MessageView key={message._id} message={message} />
      ))}
    </li>
  );
}

function prettyRaw(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function MessageView({ message }: { message: Message }) {
  const text = typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '');
  return (
    <section className="message" aria-label={`${CHANNEL_LABEL[message.channel]} message`}>
      <h4>
        Message <Badge value={message.status} /> <span className="muted small">to {message.email ?? message.phone ?? 'subscriber'}</span>
      </h4>
      {message.providerStatus && (
        <p className="provider-status">
          Provider reported: <Badge value={message.providerStatus} />
          {message.deliveredAt && message.deliveredAt.length > 1 && (
            <span className="muted small">
              {' '}delivered <Time iso={message.deliveredAt[message.deliveredAt.length - 1]} />
            </span>
          )}
        </p>
      )}
      {message.errorText && <p className="error">{message.errorText}</p>}
      {message.channel === 'email' ? (
        <>
          <p>
            <strong>Subject:</strong> {message.subject ?? '—'}
          </p>
          {/* The rendered email in a frame without scripts, forms or same-origin access. */}
          <iframe title={`Email: ${message.subject ?? 'message'}`} sandbox="" srcDoc={text} className="email-frame" />
        </>
      ) : (
        <>
          {(message.subject || message.title) && (
            <p>
              <strong>{message.subject ?? message.title}</strong>
            </p>
          )}
          <p className="message-text">{text}</p>
        </>
      )}
    </section>
  );
}

import { useState } from 'react';
import { get, patch, seg } from '../api';
import { Link } from '../router';
import { useSession } from '../session';
import { CHANNEL_LABEL } from '../status';
import { Badge, Empty, ErrorNote, Field, Loading, PageHeader, useAction, useLoad } from '../ui';

interface WorkflowListItem {
  _id: string;
  workflowId: string;
  name: string;
  active: boolean;
  origin?: string;
  severity: string;
  tags: string[];
  steps: Array<{ slug: string; type: string }>;
  updatedAt: string;
}

export function WorkflowsPage() {
  const { isAdmin } = useSession();
  const [search, setSearch] = useState('');
  const list = useLoad(
    (signal) => get<{ data: { workflows: WorkflowListItem[]; totalCount: number } }>('/v2/workflows', { signal, query: { limit: 100, query: search || undefined } }),
    [search],
  );
  const toggle = useAction();
  const workflows = list.data?.data.workflows ?? [];
  return (
    <>
      <PageHeader title="Workflows">
        {isAdmin && (
          <Link to="/workflows/new" className="button primary">
            New workflow
          </Link>
        )}
      </PageHeader>
      <div className="toolbar">
        <Field label="Search workflows" type="search" value={search} onChange={setSearch} />
      </div>
      <ErrorNote error={list.error ?? toggle.error} />
      {!list.data && list.loading && <Loading what="workflows" />}
      {list.data && workflows.length === 0 && <Empty>No workflows yet{isAdmin ? ': create one with "New workflow".' : '.'}</Empty>}
      {workflows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Workflows</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Identifier</th>
                <th scope="col">Steps</th>
                <th scope="col">Severity</th>
                <th scope="col">State</th>
                {isAdmin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {workflows.map((workflow) => (
                <tr key={workflow._id}>
                  <td>
                    <Link to={`/workflows/${seg(workflow._id)}`}>{workflow.name}</Link>
                  </td>
                  <td className="mono">
                    {workflow.workflowId}
                    {workflow.origin === 'external' && <span className="muted"> (code)</span>}
                  </td>
                  <td>{workflow.steps.map((step) => CHANNEL_LABEL[step.type] ?? step.type).join(' → ') || '—'}</td>
                  <td>{workflow.severity}</td>
                  <td>
                    <Badge value={workflow.active ? 'active' : 'inactive'} />
                  </td>
                  {isAdmin && (
                    <td>
                      <button
                        type="button"
                        disabled={toggle.pending}
                        onClick={() => toggle.run(async () => { await patch(`/v2/workflows/${seg(workflow._id)}`, { active: !workflow.active }); list.reload(); })}
                      >
                        {workflow.active ? 'Deactivate' : 'Activate'} <span className="visually-hidden">{workflow.name}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

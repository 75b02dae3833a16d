import { Alert, Anchor, Badge, Button, Card, Code, FileButton, Group, JsonInput, SimpleGrid, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { gql, useLiveList, useQuery } from '../api';
import {
  DashboardActivateWorkflowDocument,
  DashboardDeactivateWorkflowDocument,
  DashboardExecutionsUpdatedDocument,
  DashboardImportWorkflowDocument,
  DashboardRunWorkflowDocument,
  DashboardWorkflowDocument,
  DashboardWorkflowExecutionsDocument,
  DashboardWorkflowsDocument,
} from '../generated';
import { StatusBadge, when } from './common';
import { stickiesOf, WorkflowGraph, type Connections, type GraphNode } from './graph';

export function Workflows({ route }: { route: string[] }) {
  return route[0] ? <Detail id={route[0]} /> : <List />;
}

function List() {
  const list = useQuery(DashboardWorkflowsDocument, {});
  if (list.error) return <Alert color="red">{list.error.message}</Alert>;
  return (
    <Stack>
      <Title order={3}>Workflows</Title>
      {list.data?.workflows.workflows.length === 0 && <Text c="dimmed">No workflow yet.</Text>}
      <Table striped highlightOnHover data-testid="workflows-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Workflow</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th>Nodes</Table.Th>
            <Table.Th>Executions</Table.Th>
            <Table.Th>Last run</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(list.data?.workflows.workflows ?? []).map((w) => (
            <Table.Tr key={w.workflowId} data-testid={`workflow-row-${w.workflowId}`}>
              <Table.Td>
                <Anchor component={Link} to={`/workflows/${w.workflowId}`}>
                  {w.name}
                </Anchor>
                {w.tags.map((t) => (
                  <Badge key={t} ml={6} size="xs" variant="outline">
                    {t}
                  </Badge>
                ))}
              </Table.Td>
              <Table.Td>
                <Badge color={w.active ? 'green' : 'gray'} variant="light">
                  {w.active ? 'active' : 'inactive'}
                </Badge>
              </Table.Td>
              <Table.Td>{w.nodeCount}</Table.Td>
              <Table.Td>{w.statistics.executions}</Table.Td>
              <Table.Td>{w.lastExecuted ? when(w.lastExecuted) : 'never'}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Import />
    </Stack>
  );
}

/** An n8n export (or our format) from a file or pasted: previewed as a graph, then imported (inactive). */
function Import() {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const navigate = useNavigate();
  const client = useQueryClient();
  const parsed = useMemo(() => {
    try {
      return text.trim() ? (JSON.parse(text) as { nodes?: GraphNode[]; connections?: Connections; name?: string }) : null;
    } catch {
      return null;
    }
  }, [text]);
  const runnable = parsed?.nodes?.filter((n) => n.type !== 'n8n-nodes-base.stickyNote') ?? [];
  const submit = async () => {
    setError(null);
    try {
      const d = await gql(DashboardImportWorkflowDocument, { workflow: parsed ?? text });
      await client.invalidateQueries({ queryKey: [DashboardWorkflowsDocument.toString()] });
      navigate(`/workflows/${d.importWorkflow.workflowId}`);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Card withBorder data-testid="workflow-import">
      <Stack>
        <Title order={4}>Import a workflow</Title>
        <Text size="sm" c="dimmed">
          An n8n export (Download in n8n's editor, a .json file) or this platform's format, as a file or pasted. The copy starts inactive. Sticky notes are shown here; the platform keeps only the nodes that run.
        </Text>
        <Group>
          <FileButton onChange={(f) => void f?.text().then(setText)} accept="application/json,.json,.yaml,.yml">
            {(props) => (
              <Button variant="light" {...props} data-testid="workflow-import-file">
                Choose a file…
              </Button>
            )}
          </FileButton>
          <Text size="xs" c="dimmed">
            or paste below
          </Text>
        </Group>
        <Textarea autosize minRows={4} maxRows={12} value={text} onChange={(e) => setText(e.currentTarget.value)} placeholder='{"name": "…", "nodes": […], "connections": {…}}' ff="monospace" data-testid="workflow-import-text" />
        {parsed && runnable.length > 0 && (
          <Stack gap={4} data-testid="workflow-import-preview">
            <Text size="sm" fw={500}>
              Preview: {parsed.name ?? 'unnamed'} · {runnable.length} nodes
            </Text>
            <WorkflowGraph nodes={runnable} connections={parsed.connections ?? {}} stickies={stickiesOf(parsed)} height={300} />
          </Stack>
        )}
        {error && (
          <Alert color="red" data-testid="workflow-import-error">
            {error}
          </Alert>
        )}
        <Group>
          <Button onClick={() => void submit()} disabled={!text.trim()} data-testid="workflow-import-submit">
            Import
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

/** A workflow: its graph, state, triggers (webhook URLs, schedules), a run with JSON input, its executions. */
function Detail({ id }: { id: string }) {
  const q = useQuery(DashboardWorkflowDocument, { id });
  const [input, setInput] = useState('{}');
  const [error, setError] = useState<string | null>(null);
  const navigate = useNavigate();
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  const w = q.data?.workflow;
  if (!q.data || !w) return <Text c="dimmed">Loading…</Text>;
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      q.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const run = async () => {
    setError(null);
    try {
      const data = JSON.parse(input || '{}') as Record<string, unknown>;
      const d = await gql(DashboardRunWorkflowDocument, { id, data });
      navigate(`/executions/${d.executeWorkflow.executionId}`);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Stack data-testid="workflow-detail" data-active={w.active}>
      <Group justify="space-between">
        <Group>
          <Title order={3}>{w.name}</Title>
          <Badge color={w.active ? 'green' : 'gray'} variant="light" data-testid="workflow-active">
            {w.active ? 'active' : 'inactive'}
          </Badge>
          <Text size="sm" c="dimmed">
            version {w.version} · changed {when(w.updatedAt)}
          </Text>
        </Group>
        {w.active ? (
          <Button variant="light" color="gray" onClick={() => void act(() => gql(DashboardDeactivateWorkflowDocument, { id }))} data-testid="workflow-deactivate">
            Deactivate
          </Button>
        ) : (
          <Button variant="light" color="green" onClick={() => void act(() => gql(DashboardActivateWorkflowDocument, { id }))} data-testid="workflow-activate">
            Activate
          </Button>
        )}
      </Group>
      {w.description && <Text size="sm">{w.description}</Text>}
      {error && (
        <Alert color="red" data-testid="workflow-error">
          {error}
        </Alert>
      )}
      <WorkflowGraph nodes={w.nodes} connections={w.connections as Connections} stickies={w.stickyNotes} />
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Card withBorder>
          <Stack>
            <Title order={5}>Run</Title>
            <JsonInput label="Input (what the start node emits)" autosize minRows={3} value={input} onChange={setInput} validationError="Not JSON" data-testid="workflow-run-input" />
            <Group>
              <Button onClick={() => void run()} data-testid="workflow-run">
                Run
              </Button>
            </Group>
          </Stack>
        </Card>
        <Card withBorder data-testid="workflow-triggers">
          <Stack gap="xs">
            <Title order={5}>Triggers</Title>
            {q.data.workflowWebhooks.webhooks.map((h) => (
              <Text size="sm" key={h.webhookId}>
                Webhook {h.method} <Code>{h.url}</Code> · {h.authentication.type} · {h.active ? 'active' : 'inactive'}
              </Text>
            ))}
            {q.data.workflowSchedules.map((s) => (
              <Text size="sm" key={s.scheduleId}>
                Schedule <Code>{s.cron}</Code> ({s.timezone}){s.nodeName ? ` · node ${s.nodeName}` : ''} · next {s.enabled && s.nextRunAt ? s.nextRunAt : '— (disabled or inactive)'}
              </Text>
            ))}
            {q.data.workflowWebhooks.webhooks.length === 0 && q.data.workflowSchedules.length === 0 && (
              <Text size="sm" c="dimmed">
                No webhook or schedule: runs start from here or the API.
              </Text>
            )}
            {!w.active && (q.data.workflowWebhooks.webhooks.length > 0 || q.data.workflowSchedules.length > 0) && (
              <Text size="xs" c="orange">
                Webhooks and schedules start only an active workflow.
              </Text>
            )}
          </Stack>
        </Card>
      </SimpleGrid>
      <WorkflowExecutions id={id} />
    </Stack>
  );
}

/** A workflow's latest executions, kept live by executionsUpdated(workflowId). */
function WorkflowExecutions({ id }: { id: string }) {
  const q = useLiveList(DashboardWorkflowExecutionsDocument, { id }, DashboardExecutionsUpdatedDocument, { workflowId: id, limit: 20 }, {
    item: (e) => e.executionsUpdated,
    items: (d) => d.executions.executions,
    withItems: (d, executions) => ({ executions: { ...d.executions, executions } }),
    id: (e) => e.executionId,
    limit: 20,
  });
  const executions = q.data?.executions.executions ?? [];
  return (
    <>
      <Title order={5}>Executions</Title>
      {q.error && <Alert color="red">{q.error.message}</Alert>}
      {q.data && executions.length === 0 && (
        <Text size="sm" c="dimmed">
          Never run.
        </Text>
      )}
      <Table data-testid="workflow-executions">
        <Table.Tbody>
          {executions.map((e) => (
            <Table.Tr key={e.executionId} data-testid={`workflow-execution-${e.executionId}`} data-status={e.status}>
              <Table.Td>
                <Anchor component={Link} to={`/executions/${e.executionId}`} size="sm">
                  {when(e.startedAt)}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={e.status} />
              </Table.Td>
              <Table.Td>{e.mode}</Table.Td>
              <Table.Td>{e.duration === null ? '—' : `${e.duration} ms`}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </>
  );
}

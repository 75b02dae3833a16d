import { Alert, Anchor, Button, Card, Code, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { gql, useLiveQuery, useQuery } from '../api';
import {
  DashboardExecutionDocument,
  DashboardExecutionsDocument,
  DashboardExecutionUpdatedDocument,
  DashboardRetryExecutionDocument,
  type DashboardExecutionFieldsFragment,
} from '../generated';
import { Percent, StatusBadge, when } from './common';

export function Executions({ route }: { route: string[] }) {
  return route[0] ? <Detail id={route[0]} /> : <List />;
}

function List() {
  const list = useQuery(DashboardExecutionsDocument, {});
  if (list.error) return <Alert color="red">{list.error.message}</Alert>;
  return (
    <Stack>
      <Title order={3}>Workflow executions</Title>
      <Table striped highlightOnHover>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Workflow</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Mode</Table.Th>
            <Table.Th>Started</Table.Th>
            <Table.Th>Duration</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(list.data?.executions.executions ?? []).map((e) => (
            <Table.Tr key={e.executionId} data-testid={`execution-row-${e.executionId}`}>
              <Table.Td>
                <Anchor component={Link} to={`/executions/${e.executionId}`}>{e.workflowName}</Anchor>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={e.status} />
              </Table.Td>
              <Table.Td>{e.mode}</Table.Td>
              <Table.Td>{when(e.startedAt)}</Table.Td>
              <Table.Td>{e.duration === null ? '—' : `${e.duration} ms`}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

/** A node run, or the node running now (its name and status only). */
type NodeRow = Partial<NonNullable<DashboardExecutionFieldsFragment['nodeData']>[number]> & { nodeName: string; status: string };

/** Per-node status and output, live through executionUpdated; retry from any node. */
function Detail({ id }: { id: string }) {
  const q = useLiveQuery(DashboardExecutionDocument, { id }, DashboardExecutionUpdatedDocument, { id }, (d) => ({ execution: d.executionUpdated }));
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const e = q.data?.execution;
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  if (!e) return <Text c="dimmed">Loading…</Text>;
  const retry = async (fromNode?: string) => {
    setError(null);
    try {
      const d = await gql(DashboardRetryExecutionDocument, { id, from: fromNode ?? null });
      navigate(`/executions/${d.retryExecution.executionId}`);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const nodes: NodeRow[] = e.nodeData ?? [];
  const running: NodeRow[] = e.progress.currentNode && !nodes.some((n) => n.nodeName === e.progress.currentNode) ? [{ nodeName: e.progress.currentNode, status: 'running' }] : [];
  return (
    <Stack data-testid="execution-detail" data-status={e.status}>
      <Group justify="space-between">
        <Group>
          <Title order={3}>{e.workflowName}</Title>
          <StatusBadge status={e.status} testId="execution-status" />
        </Group>
        <Button variant="light" onClick={() => void retry()} disabled={['running', 'waiting'].includes(e.status)} data-testid="execution-retry">
          Retry
        </Button>
      </Group>
      {error && <Alert color="red">{error}</Alert>}
      <Percent value={e.progress.nodesTotal ? (e.progress.nodesCompleted / e.progress.nodesTotal) * 100 : 0} />
      {e.error && <Alert color="red">{e.error.code}: {e.error.message}</Alert>}
      {[...nodes, ...running].map((n) => (
        <Card key={n.nodeName} withBorder padding="xs" data-testid={`execution-node-${n.nodeName}`} data-status={n.status}>
          <Group justify="space-between">
            <Group>
              <Text fw={500}>{n.nodeName}</Text>
              <Text size="xs" c="dimmed">{n.nodeType}</Text>
              <StatusBadge status={n.status} />
              {n.duration !== undefined && <Text size="xs" c="dimmed">{n.duration} ms</Text>}
            </Group>
            {n.nodeType && (
              <Button size="compact-xs" variant="subtle" onClick={() => void retry(n.nodeName)} disabled={['running', 'waiting'].includes(e.status)} data-testid={`execution-retry-${n.nodeName}`}>
                retry from here
              </Button>
            )}
          </Group>
          {n.output !== undefined && n.output !== null && <Code block mah={160} style={{ overflow: 'auto' }}>{JSON.stringify(n.output, null, 2)}</Code>}
          {n.error && <Text size="xs" c="red">{JSON.stringify(n.error)}</Text>}
        </Card>
      ))}
    </Stack>
  );
}

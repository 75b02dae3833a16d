import { Alert, Anchor, Button, Card, Code, Group, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { gql, useLiveList, useLiveQuery, useQuery } from '../api';
import {
  DashboardExecutionDocument,
  DashboardExecutionsDocument,
  DashboardExecutionsUpdatedDocument,
  DashboardExecutionUpdatedDocument,
  DashboardExecutionWorkflowDocument,
  DashboardRetryExecutionDocument,
  type DashboardExecutionFieldsFragment,
} from '../generated';
import { Percent, StatusBadge, when } from './common';
import { isTrigger, WorkflowGraph, type Connections } from './graph';
import { TraceLink } from './trace';

export function Executions({ route }: { route: string[] }) {
  return route[0] ? <Detail id={route[0]} /> : <List />;
}

function List() {
  const list = useLiveList(DashboardExecutionsDocument, {}, DashboardExecutionsUpdatedDocument, { limit: 50 }, {
    item: (e) => e.executionsUpdated,
    items: (d) => d.executions.executions,
    withItems: (d, executions) => ({ executions: { ...d.executions, executions } }),
    id: (e) => e.executionId,
    limit: 50,
  });
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
            <Table.Tr key={e.executionId} data-testid={`execution-row-${e.executionId}`} data-status={e.status}>
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
type Items = { json?: unknown }[];

const ACTIVE = ['running', 'waiting'];

/** The items of each output of a node run: {main: [[{json}], …]}. */
const outputsOf = (n: NodeRow | undefined): Items[] => ((n?.output as { main?: (Items | null)[] } | null)?.main ?? []).map((o) => o ?? []);

/** The graph with each node's status, live through executionUpdated; per-node input and output; retry from the failed node. */
function Detail({ id }: { id: string }) {
  const q = useLiveQuery(DashboardExecutionDocument, { id }, DashboardExecutionUpdatedDocument, { id }, (d) => ({ execution: d.executionUpdated }), (d) => d.execution?.version);
  const e = q.data?.execution;
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  if (!e) return <Text c="dimmed">Loading…</Text>;
  return <Execution e={e} />;
}

function Execution({ e }: { e: DashboardExecutionFieldsFragment }) {
  const id = e.executionId;
  const graph = useQuery(DashboardExecutionWorkflowDocument, { id: e.workflowId });
  const w = graph.data?.workflow;
  const connections = w?.connections as Connections | undefined;
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const retry = async (fromNode?: string) => {
    setError(null);
    try {
      const d = await gql(DashboardRetryExecutionDocument, { id, from: fromNode ?? null });
      navigate(`/executions/${d.retryExecution.executionId}`);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  // The last run of each node stands for it (loops and branches run a node more than once).
  const last = new Map<string, NodeRow>();
  for (const n of e.nodeData ?? []) last.set(n.nodeName, n);
  if (e.progress.currentNode && !last.has(e.progress.currentNode)) last.set(e.progress.currentNode, { nodeName: e.progress.currentNode, status: ACTIVE.includes(e.status) ? e.status : 'running' });
  const failed = e.error?.node ?? [...last.values()].find((n) => n.status === 'error')?.nodeName;
  const statuses = Object.fromEntries([...last.values()].map((n) => [n.nodeName, n.status]));
  const finishedBadly = ['error', 'canceled'].includes(e.status);
  return (
    <Stack data-testid="execution-detail" data-status={e.status}>
      <Group justify="space-between">
        <Group>
          <Anchor component={Link} to={`/workflows/${e.workflowId}`}>
            <Title order={3}>{e.workflowName}</Title>
          </Anchor>
          <StatusBadge status={e.status} testId="execution-status" />
          <Text size="sm" c="dimmed">
            {e.mode} · started {when(e.startedAt)} · {e.duration === null ? 'running' : `${e.duration} ms`}
          </Text>
          {e.originalExecutionId && (
            <Anchor component={Link} to={`/executions/${e.originalExecutionId}`} size="sm">
              retry of an earlier execution
            </Anchor>
          )}
          <TraceLink traceId={e.traceId} />
        </Group>
        <Button variant="light" onClick={() => void retry()} disabled={!finishedBadly} data-testid="execution-retry">
          Retry{failed ? ` from ${failed}` : ''}
        </Button>
      </Group>
      {error && <Alert color="red">{error}</Alert>}
      <Percent value={e.status === 'success' ? 100 : e.progress.nodesTotal ? (e.progress.nodesCompleted / e.progress.nodesTotal) * 100 : 0} />
      {e.error && (
        <Alert color="red" title={`${e.error.code}${e.error.node ? ` in ${e.error.node}` : ''}`} data-testid="execution-error">
          {e.error.message}
        </Alert>
      )}
      {graph.error && <Alert color="yellow">The workflow could not be read: {graph.error.message}</Alert>}
      {w && <WorkflowGraph nodes={w.nodes} connections={connections!} stickies={w.stickyNotes} statuses={statuses} selected={selected} onSelect={setSelected} />}
      {[...last.values()].map((n) => (
        <NodeCard
          key={n.nodeName}
          node={n}
          failed={n.nodeName === failed}
          open={selected === null ? n.nodeName === failed : selected === n.nodeName}
          input={inputOf(n.nodeName, last, connections)}
          onRetry={finishedBadly && n.nodeName === failed && n.nodeType && !isTrigger(n.nodeType) ? () => void retry(n.nodeName) : undefined}
        />
      ))}
      {e.logs.length > 0 && (
        <Card withBorder padding="xs">
          <Text fw={500} size="sm">
            Log
          </Text>
          {e.logs.map((l, i) => (
            <Text key={i} size="xs" ff="monospace" c={l.level === 'error' ? 'red' : undefined}>
              {new Date(l.timestamp).toLocaleTimeString()} {l.level} {l.node ? `[${l.node}] ` : ''}
              {l.message}
            </Text>
          ))}
        </Card>
      )}
    </Stack>
  );
}

/** What a node received: the items its upstream nodes' outputs sent to it. */
function inputOf(name: string, last: Map<string, NodeRow>, connections: Connections | undefined): Items | undefined {
  if (!connections) return undefined;
  const items: Items = [];
  for (const [from, c] of Object.entries(connections))
    (c?.main ?? []).forEach((out, i) => {
      if ((out ?? []).some((t) => t.node === name)) items.push(...(outputsOf(last.get(from))[i] ?? []));
    });
  return items;
}

function NodeCard({ node: n, failed, open, input, onRetry }: { node: NodeRow; failed: boolean; open: boolean; input: Items | undefined; onRetry?: () => void }) {
  const [show, setShow] = useState<boolean | null>(null);
  const expanded = show ?? open;
  const outputs = outputsOf(n);
  return (
    <Card
      withBorder
      padding="xs"
      data-testid={`execution-node-${n.nodeName}`}
      data-status={n.status}
      style={failed ? { borderColor: 'var(--mantine-color-red-6)', borderWidth: 2, background: 'var(--mantine-color-red-0)' } : undefined}
    >
      <Group justify="space-between">
        <Group>
          <Text fw={500}>{n.nodeName}</Text>
          <Text size="xs" c="dimmed">
            {n.nodeType}
          </Text>
          <StatusBadge status={n.status} />
          {n.duration !== undefined && (
            <Text size="xs" c="dimmed">
              {n.duration} ms{n.tries && n.tries > 1 ? ` · ${n.tries} tries` : ''}
              {n.reused ? ' · reused from the original' : ''}
            </Text>
          )}
        </Group>
        <Group gap={4}>
          {onRetry && (
            <Button size="compact-xs" color="red" variant="light" onClick={onRetry} data-testid={`execution-retry-${n.nodeName}`}>
              retry from this node
            </Button>
          )}
          {n.nodeType && (
            <Button size="compact-xs" variant="subtle" onClick={() => setShow(!expanded)} data-testid={`execution-io-${n.nodeName}`}>
              {expanded ? 'hide' : 'input and output'}
            </Button>
          )}
        </Group>
      </Group>
      {n.error && (
        <Alert color="red" p={6} mt={6} data-testid={`execution-node-error-${n.nodeName}`}>
          <Text size="xs">{String((n.error as { message?: unknown }).message ?? JSON.stringify(n.error))}</Text>
        </Alert>
      )}
      {!expanded && outputs[0]?.[0] !== undefined && (
        <Text size="xs" c="dimmed" lineClamp={1} ff="monospace">
          {JSON.stringify(outputs[0][0]?.json)}
        </Text>
      )}
      {expanded && (
        <SimpleGrid cols={2} mt={6}>
          <Stack gap={2}>
            <Text size="xs" fw={600}>
              Input
            </Text>
            {input === undefined ? <Text size="xs">—</Text> : <ItemsView items={input} />}
          </Stack>
          <Stack gap={2}>
            <Text size="xs" fw={600}>
              Output
            </Text>
            {outputs.length === 0 ? <Text size="xs">—</Text> : outputs.map((items, i) => <ItemsView key={i} items={items} label={outputs.length > 1 ? `output ${i}` : undefined} />)}
          </Stack>
        </SimpleGrid>
      )}
    </Card>
  );
}

/** Items as a table (a column per field of their json) or as JSON. */
function ItemsView({ items, label }: { items: Items; label?: string }) {
  const [view, setView] = useState<'table' | 'json'>('table');
  const columns = [...new Set(items.flatMap((it) => (it.json && typeof it.json === 'object' ? Object.keys(it.json) : [])))];
  return (
    <Stack gap={2}>
      <Group gap={6}>
        {label && <Text size="xs">{label}</Text>}
        <Text size="xs" c="dimmed">
          {items.length} item{items.length === 1 ? '' : 's'}
        </Text>
        <SegmentedControl size="xs" value={view} onChange={(v) => setView(v as 'table' | 'json')} data={[{ value: 'table', label: 'Table' }, { value: 'json', label: 'JSON' }]} />
      </Group>
      {view === 'json' ? (
        <Code block mah={240} style={{ overflow: 'auto' }}>
          {JSON.stringify(items.map((it) => it.json), null, 2)}
        </Code>
      ) : (
        <Table withTableBorder fz="xs">
          <Table.Thead>
            <Table.Tr>
              {columns.map((c) => (
                <Table.Th key={c}>{c}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {items.map((it, i) => (
              <Table.Tr key={i}>
                {columns.map((c) => {
                  const v = (it.json as Record<string, unknown> | undefined)?.[c];
                  return <Table.Td key={c}>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</Table.Td>;
                })}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

import { Alert, Anchor, Badge, Button, Card, Code, Group, Stack, Table, Tabs, Text, Title, TypographyStylesProvider } from '@mantine/core';
import { useState } from 'react';
import Markdown from 'react-markdown';
import { Link } from 'react-router-dom';
import { gql, useLiveQuery } from '../api';
import { DashboardCancelTaskDocument, DashboardTaskDocument, DashboardTaskUpdatedDocument, type DashboardTaskFieldsFragment } from '../generated';
import { humanize, Percent, seconds, StatusBadge, when } from './common';
import { TraceLink } from './trace';

const FINISHED = ['completed', 'failed', 'cancelled'];

/** One task, live through taskUpdated: status, progress, output, the files it wrote; cancel while it runs. */
export function Task({ route }: { route: string[] }) {
  const id = route[0]!;
  const q = useLiveQuery(DashboardTaskDocument, { id }, DashboardTaskUpdatedDocument, { id }, (d) => ({ task: d.taskUpdated }), (d) => d.task?.version);
  const [error, setError] = useState<string | null>(null);
  const t = q.data?.task;
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  if (!t) return <Text c="dimmed">Loading…</Text>;
  const cancel = async () => {
    setError(null);
    try {
      await gql(DashboardCancelTaskDocument, { id });
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const percent = t.status === 'completed' ? 100 : (t.progress?.percentage ?? 0);
  return (
    <Stack data-testid="task-detail" data-status={t.status}>
      <Group justify="space-between">
        <Group>
          <Title order={3}>
            {t.agentId} · {t.taskType}
          </Title>
          <StatusBadge status={t.status} testId="task-status" />
        </Group>
        {!FINISHED.includes(t.status) && (
          <Button color="orange" variant="light" onClick={() => void cancel()} data-testid="task-cancel">
            Cancel
          </Button>
        )}
      </Group>
      {error && <Alert color="red">{error}</Alert>}
      <Group gap="xl">
        <Text size="sm">Task {t.taskId}</Text>
        <Text size="sm">Created {when(t.createdAt)}</Text>
        <Text size="sm" data-testid="task-duration">
          Duration {FINISHED.includes(t.status) ? seconds(t.duration) : `— (estimate ${seconds(t.estimatedDuration)})`}
        </Text>
        <Text size="sm">Priority {t.priority}</Text>
        {t.orchestrationId && (
          <Anchor component={Link} to={`/orchestrations/${t.orchestrationId}`} size="sm">
            Orchestration ({t.stage})
          </Anchor>
        )}
        <TraceLink traceId={t.traceId} />
      </Group>
      <Stack gap={4} data-testid="task-progress" data-value={percent}>
        <Percent value={percent} />
        <Text size="xs" c="dimmed">
          {percent.toFixed(0)} %{t.progress ? ` · step ${t.progress.stepsCompleted} of ${t.progress.stepsTotal}: ${t.progress.currentStep}` : ''}
        </Text>
      </Stack>
      {t.error && (
        <Alert color="red" title={t.error.code} data-testid="task-error">
          {t.error.message}
        </Alert>
      )}
      {t.cancelReason && <Alert color="orange">Cancelled: {t.cancelReason}</Alert>}
      <Tabs defaultValue="output">
        <Tabs.List>
          <Tabs.Tab value="output">Output</Tabs.Tab>
          <Tabs.Tab value="files" data-testid="task-tab-files">
            Files ({t.artifacts.length})
          </Tabs.Tab>
          <Tabs.Tab value="input">Input</Tabs.Tab>
          <Tabs.Tab value="log" data-testid="task-tab-log">
            Log
          </Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="output" pt="sm">
          <Output task={t} />
        </Tabs.Panel>
        <Tabs.Panel value="files" pt="sm">
          <Files task={t} />
        </Tabs.Panel>
        <Tabs.Panel value="input" pt="sm">
          <Code block>{JSON.stringify(t.context, null, 2)}</Code>
        </Tabs.Panel>
        <Tabs.Panel value="log" pt="sm">
          <Log task={t} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

function Output({ task }: { task: DashboardTaskFieldsFragment }) {
  const r = task.result;
  if (!r) return <Text c="dimmed">{FINISHED.includes(task.status) ? 'No output.' : 'The output appears when the task completes.'}</Text>;
  const { summary, ...rest } = r.output as { summary?: unknown } & Record<string, unknown>;
  return (
    <Stack data-testid="task-output">
      {typeof summary === 'string' && (
        <TypographyStylesProvider>
          <Markdown>{summary}</Markdown>
        </TypographyStylesProvider>
      )}
      <Table withTableBorder>
        <Table.Tbody>
          {Object.entries(rest).map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Th w={200}>{humanize(k)}</Table.Th>
              <Table.Td>{typeof v === 'string' ? v : <Code block>{JSON.stringify(v, null, 2)}</Code>}</Table.Td>
            </Table.Tr>
          ))}
          <Table.Tr>
            <Table.Th>Model</Table.Th>
            <Table.Td>
              {r.model} · {r.tokensUsed} tokens · prompt {r.promptId} v{r.promptVersion}
            </Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Files</Table.Th>
            <Table.Td>
              {r.filesCreated.length} created, {r.filesModified.length} modified · {r.linesWritten} lines
            </Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

const LEVEL_COLOR = { info: 'gray', warning: 'orange', error: 'red' } as Record<string, string>;

function Log({ task }: { task: DashboardTaskFieldsFragment }) {
  return (
    <Table withTableBorder data-testid="task-log">
      <Table.Tbody>
        {task.logs.map((l, i) => (
          <Table.Tr key={i}>
            <Table.Td w={200} ff="monospace">
              {when(l.at)}
            </Table.Td>
            <Table.Td w={90}>
              <Badge variant="light" color={LEVEL_COLOR[l.level] ?? 'gray'}>
                {l.level}
              </Badge>
            </Table.Td>
            <Table.Td>{l.message}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function Files({ task }: { task: DashboardTaskFieldsFragment }) {
  if (!task.artifacts.length) return <Text c="dimmed">No file written.</Text>;
  return (
    <Stack>
      {task.artifacts.map((a) => (
        <Card key={a.path} withBorder data-testid={`task-file-${a.path}`}>
          <Group mb="xs">
            <Text fw={600} ff="monospace">{a.path}</Text>
            <Badge variant="light">{a.kind}</Badge>
            <Text size="xs" c="dimmed">
              {a.lines} lines · {a.bytes} bytes
            </Text>
          </Group>
          {/\.(md|markdown)$/i.test(a.path) ? (
            <TypographyStylesProvider>
              <Markdown>{a.content}</Markdown>
            </TypographyStylesProvider>
          ) : (
            <Code block>{a.content}</Code>
          )}
        </Card>
      ))}
    </Stack>
  );
}

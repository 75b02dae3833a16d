import { Alert, Anchor, Badge, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'react-router-dom';
import { useQuery } from '../api';
import { DashboardPromptDocument, DashboardPromptsDocument } from '../generated';
import { StatusBadge, when } from './common';

export function Prompts({ route }: { route: string[] }) {
  return route[0] ? <Detail id={decodeURIComponent(route[0])} /> : <List />;
}

function List() {
  const list = useQuery(DashboardPromptsDocument, {});
  if (list.error) return <Alert color="red">{list.error.message}</Alert>;
  return (
    <Stack>
      <Title order={3}>Prompts</Title>
      <Table striped highlightOnHover>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Prompt</Table.Th>
            <Table.Th>Version</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Tests</Table.Th>
            <Table.Th>Success rate</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(list.data?.prompts.prompts ?? []).map((p) => (
            <Table.Tr key={p.promptId} data-testid={`prompt-row-${p.promptId}`}>
              <Table.Td>
                <Anchor component={Link} to={`/prompts/${encodeURIComponent(p.promptId)}`}>{p.name}</Anchor>
              </Table.Td>
              <Table.Td>v{p.version}</Table.Td>
              <Table.Td>
                <StatusBadge status={p.status} />
              </Table.Td>
              <Table.Td>{p.testsRun}</Table.Td>
              <Table.Td>{p.successRate.toFixed(1)}%</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

function Detail({ id }: { id: string }) {
  const q = useQuery(DashboardPromptDocument, { id });
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  const p = q.data?.prompt;
  if (!q.data || !p) return <Text c="dimmed">Loading…</Text>;
  return (
    <Stack>
      <Group>
        <Title order={3}>{p.name}</Title>
        <StatusBadge status={p.status} />
        <Badge variant="outline">v{p.version} of {p.latestVersion}</Badge>
      </Group>
      <Text size="sm" c="dimmed">{p.description}</Text>
      <Title order={5}>Versions and their test statistics</Title>
      <Table data-testid="prompt-versions">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Version</Table.Th>
            <Table.Th>Tests</Table.Th>
            <Table.Th>Success rate</Table.Th>
            <Table.Th>Average tokens</Table.Th>
            <Table.Th>Average latency</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {p.performance.byVersion.map((v) => (
            <Table.Tr key={v.version}>
              <Table.Td>v{v.version}</Table.Td>
              <Table.Td>{v.totalTests}</Table.Td>
              <Table.Td>{v.successRate.toFixed(1)}%</Table.Td>
              <Table.Td>{v.averageTokens.toFixed(0)}</Table.Td>
              <Table.Td>{v.averageLatency.toFixed(0)} ms</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Title order={5}>A/B tests</Title>
      {q.data.promptAbTests.length === 0 && <Text size="sm" c="dimmed">None yet.</Text>}
      {q.data.promptAbTests.map((t) => (
        <Card key={t.testId} withBorder data-testid={`ab-test-${t.testId}`}>
          <Group justify="space-between">
            <Text size="sm">
              v{t.promptA.version ?? 'inline'} vs v{t.promptB.version ?? 'inline'} · {t.model} · {when(t.createdAt)}
            </Text>
            <Badge color="grape">{t.results.recommendation}</Badge>
          </Group>
          <Text size="xs" c="dimmed">{t.results.reason}</Text>
          <Text size="xs">
            A: {t.results.promptA.successRate}% · {t.results.promptA.averageTokens} tokens · {t.results.promptA.averageLatency} ms — B: {t.results.promptB.successRate}% · {t.results.promptB.averageTokens} tokens ·{' '}
            {t.results.promptB.averageLatency} ms
          </Text>
        </Card>
      ))}
    </Stack>
  );
}

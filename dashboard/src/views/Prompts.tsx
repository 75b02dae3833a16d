import { Alert, Anchor, Badge, Button, Card, Code, Group, JsonInput, Select, Stack, Table, Text, Title } from '@mantine/core';
import { diffLines } from 'diff';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { gql, useQuery } from '../api';
import { DashboardPromptDocument, DashboardPromptsDocument, DashboardPromptVersionDocument, DashboardTestPromptDocument, type DashboardPromptsQuery, type DashboardTestPromptMutation } from '../generated';
import { StatusBadge, when } from './common';

type Item = DashboardPromptsQuery['prompts']['prompts'][number];

export function Prompts({ route }: { route: string[] }) {
  return route[0] ? <Detail id={route[0]} /> : <List />;
}

/** The user's prompts first; the prompts the platform seeds for its agents (one per agent task type) apart. */
function List() {
  const list = useQuery(DashboardPromptsDocument, {});
  if (list.error) return <Alert color="red">{list.error.message}</Alert>;
  const all = list.data?.prompts.prompts ?? [];
  const agents = all.filter((p) => p.agentId);
  const own = all.filter((p) => !p.agentId);
  return (
    <Stack>
      <Title order={3}>Prompts</Title>
      <Title order={5}>Your prompts</Title>
      {list.data && own.length === 0 ? (
        <Text size="sm" c="dimmed">
          None yet: create one with createPrompt (GraphQL) or POST /v1/promptlib/prompts.
        </Text>
      ) : (
        <PromptTable prompts={own} testId="prompts-own" />
      )}
      <Title order={5}>Agent prompts (seeded by the platform)</Title>
      <PromptTable prompts={agents} testId="prompts-agents" />
    </Stack>
  );
}

function PromptTable({ prompts, testId }: { prompts: Item[]; testId: string }) {
  return (
    <Table striped highlightOnHover data-testid={testId}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Prompt</Table.Th>
          <Table.Th>Agent</Table.Th>
          <Table.Th>Latest version</Table.Th>
          <Table.Th>Status</Table.Th>
          <Table.Th>Tests (count)</Table.Th>
          <Table.Th>Success rate</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {prompts.map((p) => (
          <Table.Tr key={p.promptId} data-testid={`prompt-row-${p.promptId}`}>
            <Table.Td>
              <Anchor component={Link} to={`/prompts/${encodeURIComponent(p.promptId)}`}>
                {p.name}
              </Anchor>
            </Table.Td>
            <Table.Td>{p.agentId ?? '—'}</Table.Td>
            <Table.Td>v{p.version}</Table.Td>
            <Table.Td>
              <StatusBadge status={p.status} />
            </Table.Td>
            <Table.Td>{p.testsRun}</Table.Td>
            <Table.Td>{p.testsRun ? `${p.successRate.toFixed(1)} %` : '—'}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function Detail({ id }: { id: string }) {
  const q = useQuery(DashboardPromptDocument, { id });
  const [a, setA] = useState<number | null>(null);
  const [b, setB] = useState<number | null>(null);
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  const p = q.data?.prompt;
  if (!q.data || !p) return <Text c="dimmed">Loading…</Text>;
  const versions = [...p.versions].sort((x, y) => y - x);
  const left = a ?? versions[1] ?? versions[0]!;
  const right = b ?? versions[0]!;
  const options = versions.map((v) => ({ value: String(v), label: `v${v}` }));
  return (
    <Stack>
      <Group>
        <Title order={3}>{p.name}</Title>
        <StatusBadge status={p.status} />
        <Badge variant="outline">latest v{p.latestVersion}</Badge>
        {p.environments.map((e) => (
          <Badge key={e.environment} color="grape" variant="light">
            {e.environment}: v{e.version}
          </Badge>
        ))}
      </Group>
      <Text size="sm" c="dimmed">
        {p.description}
      </Text>
      <Title order={5}>Versions and their test statistics</Title>
      <Table data-testid="prompt-versions">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Version</Table.Th>
            <Table.Th>Tests (count)</Table.Th>
            <Table.Th>Success rate</Table.Th>
            <Table.Th>Average tokens (count)</Table.Th>
            <Table.Th>Average latency</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {versions.map((v) => {
            const s = p.performance.byVersion.find((x) => x.version === v);
            return (
              <Table.Tr key={v}>
                <Table.Td>v{v}</Table.Td>
                <Table.Td>{s?.totalTests ?? 0}</Table.Td>
                <Table.Td>{s?.totalTests ? `${s.successRate.toFixed(1)} %` : '—'}</Table.Td>
                <Table.Td>{s?.totalTests ? s.averageTokens.toFixed(0) : '—'}</Table.Td>
                <Table.Td>{s?.totalTests ? `${s.averageLatency.toFixed(0)} ms` : '—'}</Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
      <Title order={5}>Every version</Title>
      {versions.map((v) => (
        <VersionCard key={v} id={id} version={v} />
      ))}
      <Card withBorder data-testid="prompt-diff">
        <Stack>
          <Group>
            <Title order={5}>Diff</Title>
            <Select w={100} data={options} value={String(left)} onChange={(v) => v && setA(Number(v))} data-testid="prompt-diff-a" allowDeselect={false} />
            <Text>→</Text>
            <Select w={100} data={options} value={String(right)} onChange={(v) => v && setB(Number(v))} data-testid="prompt-diff-b" allowDeselect={false} />
          </Group>
          <Diff id={id} a={left} b={right} />
        </Stack>
      </Card>
      <TestRun id={id} variables={p.variables} versions={versions} onTested={q.reload} />
      <Title order={5}>A/B tests</Title>
      {q.data.promptAbTests.length === 0 && (
        <Text size="sm" c="dimmed">
          None yet.
        </Text>
      )}
      {q.data.promptAbTests.map((t) => (
        <Card key={t.testId} withBorder data-testid={`ab-test-${t.testId}`}>
          <Group justify="space-between">
            <Text size="sm">
              {t.promptA.version ? `v${t.promptA.version}` : 'inline'} vs {t.promptB.version ? `v${t.promptB.version}` : 'inline'} · {t.model} · {when(t.createdAt)}
            </Text>
            <Badge color="grape">{t.results.recommendation}</Badge>
          </Group>
          <Text size="xs" c="dimmed">
            {t.results.reason}
          </Text>
          <Table mt={6} fz="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Arm</Table.Th>
                <Table.Th>Success rate</Table.Th>
                <Table.Th>Average tokens (count)</Table.Th>
                <Table.Th>Average latency</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(['promptA', 'promptB'] as const).map((arm) => (
                <Table.Tr key={arm}>
                  <Table.Td>{arm === 'promptA' ? 'A' : 'B'}</Table.Td>
                  <Table.Td>{t.results[arm].successRate} %</Table.Td>
                  <Table.Td>{t.results[arm].averageTokens}</Table.Td>
                  <Table.Td>{t.results[arm].averageLatency} ms</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      ))}
    </Stack>
  );
}

function VersionCard({ id, version }: { id: string; version: number }) {
  const q = useQuery(DashboardPromptVersionDocument, { id, version });
  const v = q.data?.prompt;
  return (
    <Card withBorder padding="xs" data-testid={`prompt-version-${version}`}>
      <Group mb={4}>
        <Text fw={600}>v{version}</Text>
        {v && <StatusBadge status={v.status} />}
        {v && (
          <Text size="xs" c="dimmed">
            changed {when(v.updatedAt)}
          </Text>
        )}
      </Group>
      {q.error && <Alert color="red">{q.error.message}</Alert>}
      {v && (
        <Code block mah={220} style={{ overflow: 'auto', whiteSpace: 'pre-wrap' }}>
          {v.template}
        </Code>
      )}
    </Card>
  );
}

/** Line by line, with the `diff` package: removed lines red, added green. */
function Diff({ id, a, b }: { id: string; a: number; b: number }) {
  const left = useQuery(DashboardPromptVersionDocument, { id, version: a });
  const right = useQuery(DashboardPromptVersionDocument, { id, version: b });
  const x = left.data?.prompt.template;
  const y = right.data?.prompt.template;
  if (x === undefined || y === undefined) return <Text c="dimmed">Loading…</Text>;
  const parts = diffLines(x, y);
  if (parts.every((d) => !d.added && !d.removed))
    return (
      <Text size="sm" c="dimmed" data-testid="prompt-diff-same">
        The templates of v{a} and v{b} are the same.
      </Text>
    );
  return (
    <Code block style={{ whiteSpace: 'pre-wrap' }} data-testid="prompt-diff-lines">
      {parts.map((d, i) => (
        <span key={i} data-change={d.added ? 'added' : d.removed ? 'removed' : 'same'} style={{ display: 'block', background: d.added ? '#d3f9d8' : d.removed ? '#ffe3e3' : undefined, textDecoration: d.removed ? 'line-through' : undefined }}>
          {d.value
            .replace(/\n$/, '')
            .split('\n')
            .map((line) => `${d.added ? '+ ' : d.removed ? '- ' : '  '}${line}`)
            .join('\n')}
        </span>
      ))}
    </Code>
  );
}

/** A test run of a version with variables: the model's output, stored against the version. */
function TestRun({ id, variables, versions, onTested }: { id: string; variables: string[]; versions: number[]; onTested: () => void }) {
  const [input, setInput] = useState(JSON.stringify(Object.fromEntries(variables.map((v) => [v, ''])), null, 2));
  const [version, setVersion] = useState(String(versions[0]));
  const [run, setRun] = useState<DashboardTestPromptMutation['testPrompt'] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const test = async () => {
    setError(null);
    setBusy(true);
    try {
      const d = await gql(DashboardTestPromptDocument, { id, input: { variables: JSON.parse(input) as Record<string, unknown>, version: Number(version) } });
      setRun(d.testPrompt);
      onTested();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card withBorder data-testid="prompt-test">
      <Stack>
        <Group>
          <Title order={5}>Test a version</Title>
          <Select w={100} data={versions.map((v) => ({ value: String(v), label: `v${v}` }))} value={version} onChange={(v) => v && setVersion(v)} allowDeselect={false} />
        </Group>
        <JsonInput label="Variables" autosize minRows={2} value={input} onChange={setInput} validationError="Not JSON" />
        {error && <Alert color="red">{error}</Alert>}
        <Group>
          <Button onClick={() => void test()} loading={busy} data-testid="prompt-test-run">
            Run the test
          </Button>
        </Group>
        {run && (
          <Stack gap={4} data-testid="prompt-test-output">
            <Text size="xs" c="dimmed">
              v{run.version} · {run.metadata.model} · {run.metadata.tokensUsed} tokens · {(run.metadata.latency * 1000).toFixed(0)} ms
            </Text>
            <Code block style={{ whiteSpace: 'pre-wrap' }}>
              {run.output}
            </Code>
          </Stack>
        )}
      </Stack>
    </Card>
  );
}

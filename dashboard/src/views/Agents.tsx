import { Alert, Anchor, Button, Card, Group, Select, SimpleGrid, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { gql, useLiveList, useQuery } from '../api';
import { DashboardAgentsDocument, DashboardAgentTasksDocument, DashboardAgentTasksUpdatedDocument, DashboardStartTaskDocument, type DashboardAgentsQuery } from '../generated';
import { humanize, seconds, StatusBadge, when } from './common';

type Agent = DashboardAgentsQuery['agents'][number];

export function Agents(_: { route: string[] }) {
  const agents = useQuery(DashboardAgentsDocument, {});
  const [selected, setSelected] = useState<string | null>(null);
  const agent = agents.data?.agents.find((a) => a.agentId === selected);
  if (agents.error) return <Alert color="red">{agents.error.message}</Alert>;
  return (
    <Stack>
      <Title order={3}>Agents</Title>
      <Text size="sm" c="dimmed">
        Pick an agent to start a task on it.
      </Text>
      <Table striped highlightOnHover data-testid="agents-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Agent</Table.Th>
            <Table.Th>Stage</Table.Th>
            <Table.Th>Success rate</Table.Th>
            <Table.Th>Average duration</Table.Th>
            <Table.Th>Finished tasks</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(agents.data?.agents ?? []).map((a) => (
            <Table.Tr key={a.agentId} onClick={() => setSelected(a.agentId)} style={{ cursor: 'pointer' }} bg={a.agentId === selected ? 'blue.0' : undefined} data-testid={`agent-row-${a.agentId}`}>
              <Table.Td>
                <Text fw={500}>{a.name}</Text>
                <Text size="xs" c="dimmed">{a.agentId}</Text>
              </Table.Td>
              <Table.Td>{a.forgeStage}</Table.Td>
              {/* The figures are 0 until the agent has finished a task: no runs is not a 0 % agent. */}
              <Table.Td data-testid={`agent-success-${a.agentId}`}>{a.totalExecutions ? `${a.successRate.toFixed(1)} %` : '—'}</Table.Td>
              <Table.Td>{a.totalExecutions ? seconds(a.averageDuration) : '—'}</Table.Td>
              <Table.Td>{a.totalExecutions}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {agent && (
        <SimpleGrid cols={{ base: 1, lg: 2 }}>
          <StartTask key={agent.agentId} agent={agent} />
          <RecentTasks agentId={agent.agentId} />
        </SimpleGrid>
      )}
    </Stack>
  );
}

/** The form is built from the task type's declared inputs, labelled for a person. */
function StartTask({ agent }: { agent: Agent }) {
  const [taskType, setTaskType] = useState<string | undefined>(agent.taskTypes[0]?.taskType);
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const navigate = useNavigate();
  const type = agent.taskTypes.find((t) => t.taskType === taskType) ?? agent.taskTypes[0]!;
  const start = async () => {
    setError(null);
    const context = Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== ''));
    try {
      const d = await gql(DashboardStartTaskDocument, { input: { agentId: agent.agentId, taskType: type.taskType, context } });
      navigate(`/tasks/${d.executeTask.taskId}`);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const fields = [...type.inputs.required.map((n) => [n, true] as const), ...type.inputs.optional.map((n) => [n, false] as const)];
  return (
    <Card withBorder data-testid="start-task">
      <Stack>
        <Title order={4}>Start a task on {agent.name}</Title>
        <Text size="sm" c="dimmed">{agent.description}</Text>
        <Select
          label="Task type"
          data={agent.taskTypes.map((t) => ({ value: t.taskType, label: t.title }))}
          value={type.taskType}
          onChange={(v) => v && setTaskType(v)}
          allowDeselect={false}
          data-testid="task-type"
        />
        <Text size="sm" data-testid="task-type-help">
          {type.description} It writes a {type.artifactFormat} file and usually takes about {seconds(type.typicalDuration)}.
        </Text>
        {fields.map(([name, required]) => (
          <Textarea
            key={`${type.taskType}-${name}`}
            autosize
            minRows={1}
            label={humanize(name)}
            description={`${required ? 'Required' : 'Optional'} input of "${type.title}" (sent as ${name}).`}
            withAsterisk={required}
            value={values[name] ?? ''}
            onChange={(e) => setValues({ ...values, [name]: e.currentTarget.value })}
            data-testid={`task-input-${name}`}
          />
        ))}
        {error && <Alert color="red" data-testid="task-start-error">{error}</Alert>}
        <Group>
          <Button onClick={() => void start()} data-testid="task-start" disabled={type.inputs.required.some((n) => !values[n]?.trim())}>
            Start
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

function RecentTasks({ agentId }: { agentId: string }) {
  const q = useLiveList(DashboardAgentTasksDocument, { agentId }, DashboardAgentTasksUpdatedDocument, { agentId }, {
    item: (e) => e.tasksUpdated,
    items: (d) => d.tasks.tasks,
    withItems: (d, tasks) => ({ tasks: { ...d.tasks, tasks } }),
    id: (t) => t.taskId,
    limit: 10,
  });
  return (
    <Card withBorder data-testid="agent-tasks">
      <Title order={4}>Latest tasks</Title>
      {q.error && <Alert color="red">{q.error.message}</Alert>}
      {q.data?.tasks.tasks.length === 0 && <Text size="sm" c="dimmed">No task yet.</Text>}
      <Table>
        <Table.Tbody>
          {(q.data?.tasks.tasks ?? []).map((t) => (
            <Table.Tr key={t.taskId} data-testid={`agent-task-${t.taskId}`} data-status={t.status}>
              <Table.Td>
                <Anchor component={Link} to={`/tasks/${t.taskId}`} size="sm">
                  {t.taskType}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={t.status} />
              </Table.Td>
              <Table.Td>{seconds(t.duration)}</Table.Td>
              <Table.Td>
                <Text size="xs" c="dimmed">{when(t.createdAt)}</Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}

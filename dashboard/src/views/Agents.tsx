import { Alert, Button, Card, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { gql, useQuery, useSubscription } from '../api';
import {
  DashboardAgentsDocument,
  DashboardCancelTaskDocument,
  DashboardStartTaskDocument,
  DashboardTaskUpdatedDocument,
  type DashboardAgentsQuery,
  type DashboardTaskFieldsFragment,
} from '../generated';
import { Percent, seconds, StatusBadge } from './common';

type Agent = DashboardAgentsQuery['agents'][number];

export function Agents(_: { route: string[] }) {
  const agents = useQuery(DashboardAgentsDocument, {});
  const [selected, setSelected] = useState<string | null>(null);
  const agent = agents.data?.agents.find((a) => a.agentId === selected);
  if (agents.error) return <Alert color="red">{agents.error.message}</Alert>;
  return (
    <Stack>
      <Title order={3}>Agents</Title>
      <Table striped highlightOnHover data-testid="agents-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Agent</Table.Th>
            <Table.Th>Stage</Table.Th>
            <Table.Th>Success rate</Table.Th>
            <Table.Th>Average duration</Table.Th>
            <Table.Th>Runs</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(agents.data?.agents ?? []).map((a) => (
            <Table.Tr key={a.agentId} onClick={() => setSelected(a.agentId)} style={{ cursor: 'pointer' }} data-testid={`agent-row-${a.agentId}`}>
              <Table.Td>
                <Text fw={500}>{a.name}</Text>
                <Text size="xs" c="dimmed">{a.agentId}</Text>
              </Table.Td>
              <Table.Td>{a.forgeStage}</Table.Td>
              <Table.Td>{a.successRate.toFixed(1)}%</Table.Td>
              <Table.Td>{seconds(a.averageDuration)}</Table.Td>
              <Table.Td>{a.totalExecutions}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {agent && <StartTask agent={agent} onFinished={agents.reload} />}
    </Stack>
  );
}

/** The form is built from the task type's declared inputs. */
function StartTask({ agent, onFinished }: { agent: Agent; onFinished: () => void }) {
  const [taskType, setTaskType] = useState<string | undefined>(agent.taskTypes[0]?.taskType);
  const [values, setValues] = useState<Record<string, string>>({});
  const [task, setTask] = useState<DashboardTaskFieldsFragment | null>(null);
  const [error, setError] = useState<string | null>(null);
  const type = agent.taskTypes.find((t) => t.taskType === taskType) ?? agent.taskTypes[0]!;
  useSubscription(DashboardTaskUpdatedDocument, task ? { id: task.taskId } : null, (d) => {
    setTask(d.taskUpdated);
    if (['completed', 'failed', 'cancelled'].includes(d.taskUpdated.status)) onFinished();
  });
  const start = async () => {
    setError(null);
    const context = Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== ''));
    try {
      const d = await gql(DashboardStartTaskDocument, { input: { agentId: agent.agentId, taskType: type.taskType, context } });
      setTask(d.executeTask);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Card withBorder data-testid="start-task">
      <Stack>
        <Title order={4}>Start a task on {agent.name}</Title>
        <Select label="Task type" data={agent.taskTypes.map((t) => ({ value: t.taskType, label: t.title }))} value={type.taskType} onChange={(v) => v && setTaskType(v)} data-testid="task-type" />
        {[...type.inputs.required.map((n: string) => [n, true] as const), ...type.inputs.optional.map((n: string) => [n, false] as const)].map(([name, required]) => (
          <TextInput
            key={name}
            label={name}
            withAsterisk={required}
            value={values[name] ?? ''}
            onChange={(e) => setValues({ ...values, [name]: e.currentTarget.value })}
            data-testid={`task-input-${name}`}
          />
        ))}
        {error && <Alert color="red">{error}</Alert>}
        <Group>
          <Button onClick={() => void start()} data-testid="task-start">
            Start
          </Button>
          {task && ['queued', 'running'].includes(task.status) && (
            <Button color="orange" variant="light" onClick={() => void gql(DashboardCancelTaskDocument, { id: task.taskId })} data-testid="task-cancel">
              Cancel
            </Button>
          )}
        </Group>
        {task && (
          <Stack gap={4} data-testid="task-live">
            <Group>
              <Text size="sm">{task.taskId}</Text>
              <StatusBadge status={task.status} testId="task-status" />
              <Text size="sm" c="dimmed">{task.progress?.currentStep ?? ''}</Text>
            </Group>
            <Percent value={task.status === 'completed' ? 100 : task.progress?.percentage ?? 0} />
            {task.error && <Text c="red" size="sm">{task.error.code}: {task.error.message}</Text>}
          </Stack>
        )}
      </Stack>
    </Card>
  );
}

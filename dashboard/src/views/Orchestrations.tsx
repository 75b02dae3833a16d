import { Alert, Anchor, Badge, Button, Card, Group, JsonInput, ScrollArea, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { gql, useLiveList, useLiveQuery, useSubscription } from '../api';
import {
  DashboardCancelOrchestrationDocument,
  DashboardCancelTaskDocument,
  DashboardCreateOrchestrationDocument,
  DashboardOrchestrationDocument,
  DashboardOrchestrationsDocument,
  DashboardOrchestrationsUpdatedDocument,
  DashboardOrchestrationUpdatedDocument,
  DashboardPauseOrchestrationDocument,
  DashboardResumeOrchestrationDocument,
  DashboardTaskProgressDocument,
  type DashboardOrchestrationFieldsFragment,
  type DashboardTaskProgressSubscription,
  type TypedDocumentString,
} from '../generated';
import { Percent, seconds, StatusBadge, when } from './common';
import { TraceLink } from './trace';

const STAGES = ['RESEARCH', 'DESIGN', 'IMPLEMENT', 'VERIFY', 'DEPLOY', 'MONITOR'];
type StageTask = NonNullable<DashboardOrchestrationFieldsFragment['stages'][number]['tasks']>[number];
// A sample that creates as it is: each task's context has its task type's required inputs.
const EXAMPLE = JSON.stringify(
  {
    name: 'Checkout redesign',
    stages: [
      { stage: 'RESEARCH', tasks: [{ id: 'plan', agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: 'Redesign checkout' } }] },
      {
        stage: 'DESIGN',
        tasks: [{ id: 'flow', agentId: 'workflow-architect', taskType: 'design-workflow', context: { goal: 'Checkout flow: cart, payment, confirmation', trigger: 'webhook' } }],
      },
    ],
  },
  null,
  2,
);

export function Orchestrations({ route }: { route: string[] }) {
  return route[0] ? <Detail id={route[0]} /> : <List />;
}

function List() {
  const list = useLiveList(DashboardOrchestrationsDocument, {}, DashboardOrchestrationsUpdatedDocument, {}, {
    item: (e) => e.orchestrationsUpdated,
    items: (d) => d.orchestrations.orchestrations,
    withItems: (d, orchestrations) => ({ orchestrations: { ...d.orchestrations, orchestrations } }),
    id: (o) => o.orchestrationId,
    limit: 50,
  });
  const [draft, setDraft] = useState(EXAMPLE);
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  const create = async () => {
    setError(null);
    try {
      const d = await gql(DashboardCreateOrchestrationDocument, { input: JSON.parse(draft) });
      navigate(`/orchestrations/${d.createOrchestration.orchestrationId}`);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  if (list.error) return <Alert color="red">{list.error.message}</Alert>;
  return (
    <Stack>
      <Title order={3}>Orchestrations</Title>
      <Table striped highlightOnHover>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Stage</Table.Th>
            <Table.Th w={200}>Progress</Table.Th>
            <Table.Th>Created</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(list.data?.orchestrations.orchestrations ?? []).map((o) => (
            <Table.Tr key={o.orchestrationId} data-testid={`orchestration-row-${o.orchestrationId}`}>
              <Table.Td>
                <Anchor component={Link} to={`/orchestrations/${o.orchestrationId}`}>{o.name}</Anchor>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={o.status} />
              </Table.Td>
              <Table.Td>{o.currentStage ?? '—'}</Table.Td>
              <Table.Td>
                <Percent value={o.progress.overallPercentage} />
              </Table.Td>
              <Table.Td>{when(o.createdAt)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Card withBorder>
        <Stack>
          <Title order={4}>Start an orchestration</Title>
          <JsonInput autosize minRows={8} value={draft} onChange={setDraft} validationError="Not JSON" data-testid="orchestration-input" />
          {error && <Alert color="red" data-testid="orchestration-error">{error}</Alert>}
          <Button onClick={() => void create()} data-testid="orchestration-create">
            Create
          </Button>
        </Stack>
      </Card>
    </Stack>
  );
}

/** Six stage lanes, live: every orchestrationUpdated event replaces the view (no polling). */
function Detail({ id }: { id: string }) {
  const q = useLiveQuery(DashboardOrchestrationDocument, { id }, DashboardOrchestrationUpdatedDocument, { id }, (d) => ({ orchestration: d.orchestrationUpdated }), (d) => d.orchestration?.version);
  const [error, setError] = useState<string | null>(null);
  const o = q.data?.orchestration;
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  if (!o) return <Text c="dimmed">Loading…</Text>;
  const act = async (mutation: TypedDocumentString<unknown, { id: string }>) => {
    setError(null);
    try {
      await gql(mutation, { id });
      q.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Stack data-testid="orchestration-detail" data-status={o.status}>
      <Group justify="space-between">
        <Group>
          <Title order={3}>{o.name}</Title>
          <StatusBadge status={o.status} testId="orchestration-status" />
          <TraceLink traceId={o.traceId} />
        </Group>
        <Group>
          <Button variant="light" disabled={o.status !== 'running'} onClick={() => void act(DashboardPauseOrchestrationDocument)} data-testid="orch-pause">
            Pause
          </Button>
          <Button variant="light" disabled={o.status !== 'paused'} onClick={() => void act(DashboardResumeOrchestrationDocument)} data-testid="orch-resume">
            Resume
          </Button>
          <Button color="red" variant="light" disabled={!['running', 'paused'].includes(o.status)} onClick={() => void act(DashboardCancelOrchestrationDocument)} data-testid="orch-cancel">
            Cancel
          </Button>
        </Group>
      </Group>
      {error && <Alert color="red">{error}</Alert>}
      <Group>
        <Text size="sm">
          Stages {o.progress.stagesCompleted}/{o.progress.stagesTotal} · tasks {o.progress.tasksCompleted}/{o.progress.tasksTotal}
        </Text>
        <div style={{ flex: 1 }} data-testid="orchestration-progress" data-value={o.progress.overallPercentage}>
          <Percent value={o.progress.overallPercentage} />
        </div>
      </Group>
      {o.error && <Alert color="red">{o.error.code}: {o.error.message}</Alert>}
      <ScrollArea>
        <SimpleGrid cols={6} miw={1100}>
          {STAGES.map((name, i) => {
            const s = o.stages.find((x) => x.stage === name);
            const before = o.stages.find((x) => x.stage === STAGES[i - 1]);
            return (
              <Card key={name} withBorder padding="xs" data-testid={`stage-lane-${name}`} data-status={s?.status ?? 'absent'} opacity={s ? 1 : 0.45}>
                <Stack gap={6}>
                  <Group justify="space-between">
                    <Text fw={600} size="sm">{name}</Text>
                    {s && <StatusBadge status={s.status} />}
                  </Group>
                  {s ? (
                    <Badge variant="outline" color={before ? (before.gateValidation.exitGatePassed === false ? 'red' : before.status === 'completed' ? 'green' : 'gray') : 'green'} size="xs" data-testid={`entry-gate-${name}`}>
                      entry gate {before ? (before.status === 'completed' ? 'open' : 'closed') : 'open'}
                    </Badge>
                  ) : (
                    <Text size="xs" c="dimmed">not in this orchestration</Text>
                  )}
                  {s?.tasks?.map((t) => <TaskCard key={t.key} task={t} />)}
                  {s && (
                    <Badge
                      variant="outline"
                      size="xs"
                      color={s.gateValidation.exitGatePassed === true ? 'green' : s.gateValidation.exitGatePassed === false ? 'red' : 'gray'}
                      data-testid={`exit-gate-${name}`}
                    >
                      exit gate {s.gateValidation.enabled ? (s.gateValidation.exitGatePassed === null ? 'pending' : s.gateValidation.exitGatePassed ? 'passed' : 'failed') : 'off'}
                    </Badge>
                  )}
                  {s?.gateValidation.validation?.missingCriteria?.length ? <Text size="xs" c="red">missing: {s.gateValidation.validation.missingCriteria.join(', ')}</Text> : null}
                  {s && <Text size="xs" c="dimmed">{s.tasksCompleted}/{s.tasksTotal} tasks · {seconds(s.duration)}</Text>}
                </Stack>
              </Card>
            );
          })}
        </SimpleGrid>
      </ScrollArea>
    </Stack>
  );
}

/** A task of a lane, with its own live progress (taskUpdated) while it runs. */
function TaskCard({ task }: { task: StageTask }) {
  const [live, setLive] = useState<DashboardTaskProgressSubscription['taskUpdated'] | null>(null);
  const { taskId } = task;
  const running = taskId && ['running', 'queued'].includes(task.status);
  useSubscription(DashboardTaskProgressDocument, taskId && running ? { id: taskId } : null, (d) => setLive(d.taskUpdated));
  const status = live && running ? live.status : task.status;
  const percent = status === 'completed' ? 100 : live?.progress?.percentage ?? task.progress;
  return (
    <Card withBorder padding={6} data-testid={`task-card-${task.key}`} data-status={status}>
      <Stack gap={4}>
        {taskId ? (
          <Anchor component={Link} to={`/tasks/${taskId}`} size="xs" fw={500} data-testid={`task-link-${task.key}`}>
            {task.agentId}
          </Anchor>
        ) : (
          <Text size="xs" fw={500}>
            {task.agentId}
          </Text>
        )}
        <Text size="xs" c="dimmed">{task.taskType}</Text>
        <Group gap={4}>
          <StatusBadge status={status} />
          {taskId && ['running', 'queued'].includes(status) && (
            <Button size="compact-xs" color="orange" variant="subtle" onClick={() => void gql(DashboardCancelTaskDocument, { id: taskId })} data-testid={`task-cancel-${task.key}`}>
              cancel
            </Button>
          )}
        </Group>
        <Percent value={percent} />
        {live?.progress?.currentStep && running && <Text size="xs" c="dimmed">{live.progress.currentStep}</Text>}
      </Stack>
    </Card>
  );
}

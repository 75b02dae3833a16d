import { Alert, Anchor, Badge, Button, Card, Code, Group, NumberInput, ScrollArea, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import { apiKey, gql, merged, queryKey, useLiveList, useQuery } from '../api';
import {
  DashboardDeployInfraServiceDocument,
  DashboardInfraDeploymentsDocument,
  DashboardInfraDeploymentsUpdatedDocument,
  DashboardInfraProjectsDocument,
  DashboardInfraServiceDocument,
  DashboardInfraServicesDocument,
  type DashboardInfraDeploymentFieldsFragment,
} from '../generated';
import { Percent, StatusBadge, when } from './common';

type Deployment = DashboardInfraDeploymentFieldsFragment;

const STATUS_COLORS: Record<string, string> = { running: 'green', deploying: 'blue', stopped: 'gray', failed: 'red', success: 'green', 'in-progress': 'blue', superseded: 'orange' };

/** /infra: a project's services; /infra/services/<id>: one service, its rollouts live, deploy, its logs followed. */
export function Infra({ route }: { route: string[] }) {
  return route[0] === 'services' && route[1] ? <Service id={route[1]} /> : <Services />;
}

function Services() {
  const projects = useQuery(DashboardInfraProjectsDocument, {});
  const [chosen, setChosen] = useState<string | null>(null);
  const list = projects.data?.infraProjects.data ?? [];
  const project = chosen ?? list[0]?.id ?? null;
  if (projects.error) return <Alert color="red">{projects.error.message}</Alert>;
  return (
    <Stack>
      <Title order={3}>Infrastructure</Title>
      {projects.data && list.length === 0 && <Text c="dimmed">No project yet: create one with the infrastructure API (POST /infra/api/v1/projects).</Text>}
      {list.length > 0 && (
        <Select
          label="Project"
          maw={360}
          data={list.map((p) => ({ value: p.id, label: `${p.name} (${p.slug})${p.status === 'archived' ? ' · archived' : ''}` }))}
          value={project}
          onChange={(v) => v && setChosen(v)}
          allowDeselect={false}
          data-testid="infra-project"
        />
      )}
      {project && <ServiceTable project={project} />}
    </Stack>
  );
}

function ServiceTable({ project }: { project: string }) {
  const q = useQuery(DashboardInfraServicesDocument, { project });
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  const services = q.data?.infraServices.data ?? [];
  return (
    <Table striped highlightOnHover data-testid="infra-services">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Service</Table.Th>
          <Table.Th>Status</Table.Th>
          <Table.Th>Image</Table.Th>
          <Table.Th>Replicas ready (count)</Table.Th>
          <Table.Th>Health</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {q.data && services.length === 0 && (
          <Table.Tr>
            <Table.Td colSpan={5}>
              <Text size="sm" c="dimmed">
                No service in this project.
              </Text>
            </Table.Td>
          </Table.Tr>
        )}
        {services.map((s) => (
          <Table.Tr key={s.id} data-testid={`infra-service-row-${s.name}`}>
            <Table.Td>
              <Anchor component={Link} to={`/infra/services/${s.id}`}>
                {s.name}
              </Anchor>
              <Text size="xs" c="dimmed">
                {s.type}
              </Text>
            </Table.Td>
            <Table.Td>
              <Badge color={STATUS_COLORS[s.status] ?? 'gray'} variant="light">
                {s.status}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Code>{s.image}</Code>
            </Table.Td>
            <Table.Td>
              {s.replicas.ready} / {s.replicas.desired}
            </Table.Td>
            <Table.Td>
              <StatusBadge status={s.health.status} />
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** One service: its figures, a deploy form, its rollouts moving live (deploymentsUpdated), its logs followed. */
function Service({ id }: { id: string }) {
  const service = useQuery(DashboardInfraServiceDocument, { id });
  const client = useQueryClient();
  const deployments = useLiveList(DashboardInfraDeploymentsDocument, { serviceId: id }, DashboardInfraDeploymentsUpdatedDocument, { serviceId: id }, {
    item: (e) => {
      // The service's own figures (status, ready replicas) move with its rollouts: read again.
      void client.invalidateQueries({ queryKey: queryKey(DashboardInfraServiceDocument, { id }) });
      return e.deploymentsUpdated;
    },
    items: (d) => d.infraDeployments.data,
    withItems: (d, data) => ({ infraDeployments: { ...d.infraDeployments, data } }),
    id: (d) => d.deploymentId,
    limit: 20,
  });
  if (service.error) return <Alert color="red">{service.error.message}</Alert>;
  const s = service.data?.infraService;
  if (!s) return <Text c="dimmed">Loading…</Text>;
  const rollouts = deployments.data?.infraDeployments.data ?? [];
  return (
    <Stack data-testid="infra-service" data-status={s.status}>
      <Group justify="space-between">
        <Group>
          <Anchor component={Link} to="/infra" size="sm">
            Infrastructure
          </Anchor>
          <Title order={3}>{s.name}</Title>
          <Badge color={STATUS_COLORS[s.status] ?? 'gray'} variant="light" data-testid="infra-service-status">
            {s.status}
          </Badge>
          <StatusBadge status={s.health.status} />
        </Group>
        <Text size="sm" c="dimmed">
          {s.type} · {s.strategy} · created {when(s.createdAt)}
        </Text>
      </Group>
      <SimpleGrid cols={{ base: 2, md: 4 }}>
        <Figure label="Image" value={s.image} />
        <Figure label="Replicas desired" value={String(s.replicas.desired)} />
        <Figure label="Replicas ready" value={String(s.replicas.ready)} testId="infra-ready" />
        <Figure label="Endpoints" value={s.endpoints.join(', ') || '—'} />
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Deploy id={id} image={s.image} replicas={s.replicas.desired} onDeployed={(d) => {
            if (deployments.data) deployments.setData({ infraDeployments: { ...deployments.data.infraDeployments, data: merged(rollouts, d, (x) => x.deploymentId, 20) } });
            service.reload();
          }} />
        <Logs id={id} />
      </SimpleGrid>
      <Title order={5}>Rollouts</Title>
      {deployments.error && <Alert color="red">{deployments.error.message}</Alert>}
      <Stack gap="xs" data-testid="infra-deployments">
        {rollouts.map((d) => (
          <Rollout key={d.deploymentId} d={d} />
        ))}
        {deployments.data && rollouts.length === 0 && (
          <Text size="sm" c="dimmed">
            No rollout yet.
          </Text>
        )}
      </Stack>
    </Stack>
  );
}

function Figure({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <Card withBorder padding="xs">
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={600} size="sm" style={{ wordBreak: 'break-all' }} data-testid={testId}>
        {value}
      </Text>
    </Card>
  );
}

/** A rollout with its replicas moving: updated, ready and available against desired. */
function Rollout({ d }: { d: Deployment }) {
  const { updated, ready, available, desired } = d.progress;
  const percent = d.status === 'success' ? 100 : desired ? (Math.min(updated, ready, available) / desired) * 100 : 0;
  return (
    <Card withBorder padding="xs" data-testid={`infra-deployment-${d.deploymentId}`} data-status={d.status} data-ready={ready}>
      <Group justify="space-between">
        <Group gap="xs">
          <Badge color={STATUS_COLORS[d.status] ?? 'gray'} variant="light">
            {d.status}
          </Badge>
          <Text size="sm" fw={500}>
            {d.kind} <Code>{d.targetImage}</Code>
          </Text>
          {d.previousImage && d.previousImage !== d.targetImage && (
            <Text size="xs" c="dimmed">
              from {d.previousImage}
            </Text>
          )}
          {d.revision && (
            <Text size="xs" c="dimmed">
              revision {d.revision}
            </Text>
          )}
        </Group>
        <Text size="xs" c="dimmed">
          {d.strategy} · {when(d.createdAt)}
          {d.finishedAt ? ` → ${when(d.finishedAt)}` : ''}
        </Text>
      </Group>
      <Group gap="xs" mt={6}>
        <div style={{ flex: 1 }} data-testid={`infra-deployment-progress-${d.deploymentId}`} data-value={Math.round(percent)}>
          <Percent value={percent} />
        </div>
        <Text size="xs" ff="monospace">
          updated {updated}/{desired} · ready {ready}/{desired} · available {available}/{desired}
        </Text>
      </Group>
      {d.message && (
        <Text size="xs" c={d.status === 'failed' ? 'red' : 'dimmed'} mt={4}>
          {d.message}
        </Text>
      )}
    </Card>
  );
}

function Deploy({ id, image, replicas, onDeployed }: { id: string; image: string; replicas: number; onDeployed: (d: Deployment) => void }) {
  const [next, setNext] = useState(image);
  const [count, setCount] = useState<number | string>(replicas);
  const [strategy, setStrategy] = useState<string>('rolling-update');
  const [error, setError] = useState<string | null>(null);
  const deploy = async () => {
    setError(null);
    try {
      const d = await gql(DashboardDeployInfraServiceDocument, { id, input: { image: next.trim(), replicas: typeof count === 'number' ? count : Number(count), strategy } });
      onDeployed(d.deployInfraService);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <Card withBorder data-testid="infra-deploy">
      <Stack gap="xs">
        <Title order={5}>Deploy an image</Title>
        <TextInput label="Image" description="registry/name:tag" value={next} onChange={(e) => setNext(e.currentTarget.value)} data-testid="infra-deploy-image" />
        <Group grow>
          <NumberInput label="Replicas" min={0} max={100} value={count} onChange={setCount} data-testid="infra-deploy-replicas" />
          <Select label="Strategy" data={['rolling-update', 'recreate']} value={strategy} onChange={(v) => v && setStrategy(v)} allowDeselect={false} />
        </Group>
        {error && (
          <Alert color="red" data-testid="infra-deploy-error">
            {error}
          </Alert>
        )}
        <Group>
          <Button onClick={() => void deploy()} disabled={!next.trim()} data-testid="infra-deploy-submit">
            Deploy
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  pod: string;
}

/**
 * The service's logs, followed: the infrastructure service streams them as NDJSON
 * (GET /infra/api/v1/services/<id>/logs?follow=true), one line object per line, until the page
 * leaves; a refusal arrives as the stream's last line, in the surface's error shape.
 */
function Logs({ id }: { id: string }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [state, setState] = useState<'connecting' | 'following' | 'ended'>('connecting');
  const [error, setError] = useState<string | null>(null);
  const viewport = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const abort = new AbortController();
    setLines([]);
    void (async () => {
      try {
        const res = await fetch(`/infra/api/v1/services/${encodeURIComponent(id)}/logs?follow=true&lines=200`, { headers: { authorization: `Bearer ${apiKey()}` }, signal: abort.signal });
        if (!res.ok || !res.body) {
          const body = (await res.json().catch(() => null)) as { message?: string } | null;
          setError(body?.message ?? `HTTP ${res.status}`);
          setState('ended');
          return;
        }
        setState('following');
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let rest = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          rest += value;
          const complete = rest.split('\n');
          rest = complete.pop() ?? '';
          const parsed = complete.filter(Boolean).map((l) => JSON.parse(l) as LogLine & { error?: string; message?: string });
          const refusal = parsed.find((l) => l.error);
          if (refusal) setError(refusal.message ?? refusal.error ?? 'refused');
          const got = parsed.filter((l) => !l.error);
          if (got.length) setLines((old) => [...old, ...got].slice(-500));
        }
        setState('ended');
      } catch (e) {
        if (!abort.signal.aborted) {
          setError((e as Error).message);
          setState('ended');
        }
      }
    })();
    return () => abort.abort();
  }, [id]);
  // The newest line in view, inside the log's own box (the page does not move).
  // (Braces: scrollTo may answer a promise, and an effect may return only its cleanup.)
  useEffect(() => {
    viewport.current?.scrollTo({ top: viewport.current.scrollHeight });
  }, [lines.length]);
  return (
    <Card withBorder data-testid="infra-logs" data-state={state}>
      <Group justify="space-between" mb={6}>
        <Title order={5}>Logs</Title>
        <Badge variant="dot" color={state === 'following' ? 'green' : 'gray'}>
          {state === 'following' ? 'following' : state}
        </Badge>
      </Group>
      {error && (
        <Alert color="red" p={6} mb={6}>
          <Text size="xs">{error}</Text>
        </Alert>
      )}
      <ScrollArea h={220} viewportRef={viewport}>
        {lines.length === 0 && (
          <Text size="xs" c="dimmed">
            No log line yet.
          </Text>
        )}
        {lines.map((l, i) => (
          <Text key={i} size="xs" ff="monospace" c={l.level === 'error' ? 'red' : l.level === 'warn' ? 'orange' : undefined} data-testid="infra-log-line">
            {new Date(l.timestamp).toLocaleTimeString()} {l.level} [{l.pod}] {l.message}
          </Text>
        ))}
      </ScrollArea>
    </Card>
  );
}

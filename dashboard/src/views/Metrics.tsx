import { Alert, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { BarElement, CategoryScale, Chart as ChartJS, Legend, LinearScale, LineElement, PointElement, Tooltip } from 'chart.js';
import { Bar, Line } from 'react-chartjs-2';
import { useQuery } from '../api';
import { DashboardHealthDocument, DashboardMetricsDocument } from '../generated';
import { humanize, seconds, StatusBadge } from './common';

ChartJS.register(CategoryScale, LinearScale, PointElement, LineElement, BarElement, Tooltip, Legend);
// Figures, not a show: every refresh draws the final state at once.
ChartJS.defaults.animation = false;

const day = 86_400_000;

/** Charts of the metrics queries over the last 14 days, and the health of each part now. */
export function Metrics(_: { route: string[] }) {
  const end = new Date(Math.ceil(Date.now() / day) * day).toISOString();
  const start = new Date(Math.ceil(Date.now() / day) * day - 14 * day).toISOString();
  const q = useQuery(DashboardMetricsDocument, { s: start, e: end });
  // An unhealthy platform answers 503 with the report in the error's details; shown as an error here.
  const health = useQuery(DashboardHealthDocument, {});
  if (q.error) return <Alert color="red">{q.error.message}</Alert>;
  const a = q.data?.agentMetrics;
  const c = q.data?.costMetrics;
  const o = q.data?.orchestrationMetrics;
  const labels = (a?.timeseries ?? []).map((b) => b.timestamp.slice(5, 10));
  const money = (v: number) => `${c?.summary.currency === 'USD' || !c ? '$' : `${c.summary.currency} `}${v.toFixed(2)}`;
  return (
    <Stack>
      <Title order={3}>Metrics — last 14 days</Title>
      <SimpleGrid cols={{ base: 2, md: 4 }} data-testid="metrics-figures">
        <Figure label="Agent tasks" value={a ? `${a.summary.totalExecutions}` : '—'} unit="count" />
        <Figure label="Tasks successful" value={a?.summary.totalExecutions ? `${a.summary.successRate.toFixed(1)} %` : '—'} unit="%" />
        <Figure label="Task duration p50 / p95" value={a?.summary.totalExecutions ? `${seconds(a.summary.p50Duration)} / ${seconds(a.summary.p95Duration)}` : '—'} unit="ms or s" />
        <Figure label="Cost, estimate (price table)" value={c ? money(c.summary.totalCost) : '—'} unit="$" testId="metrics-cost" />
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Card withBorder data-testid="chart-agent-executions">
          <Text fw={500}>Agent tasks per day (count)</Text>
          <div style={{ height: 240 }}>
          <Line
            options={{ maintainAspectRatio: false, scales: { y: { beginAtZero: true, title: { display: true, text: 'tasks (count)' } } } }}
            data={{
              labels,
              datasets: [
                { label: 'successful', data: (a?.timeseries ?? []).map((b) => b.successful), borderColor: '#2f9e44' },
                { label: 'failed', data: (a?.timeseries ?? []).map((b) => b.failed), borderColor: '#e03131' },
              ],
            }}
          />
          </div>
          {a && (
            <Text size="xs" c="dimmed">
              {a.summary.totalExecutions} tasks · {a.summary.totalExecutions ? `${a.summary.successRate} % successful · p50 ${seconds(a.summary.p50Duration)} · p95 ${seconds(a.summary.p95Duration)} · p99 ${seconds(a.summary.p99Duration)}` : 'none finished yet'}
            </Text>
          )}
        </Card>
        <Card withBorder data-testid="chart-costs">
          <Text fw={500}>Costs by service — estimate (price table), {c?.summary.currency ?? 'USD'}</Text>
          <div style={{ height: 240 }}>
          <Bar
            options={{ maintainAspectRatio: false, scales: { y: { beginAtZero: true, title: { display: true, text: `cost (${c?.summary.currency ?? 'USD'}, estimate)` } } } }}
            data={{ labels: (c?.breakdown ?? []).map((b) => b.category), datasets: [{ label: `${c?.summary.currency ?? 'USD'} (estimate)`, data: (c?.breakdown ?? []).map((b) => b.cost), backgroundColor: '#4c6ef5' }] }}
          />
          </div>
          {c && (
            <Text size="xs" c="dimmed">
              Estimate (price table), {c.summary.tier} tier: {money(c.summary.totalCost)} (base {money(c.summary.baseFee)}, usage {money(c.summary.usageFee)}) · month forecast {money(c.forecast.projectedMonthlyTotal)} ({c.forecast.confidenceLevel}{' '}
              confidence)
            </Text>
          )}
        </Card>
        <Card withBorder data-testid="chart-stages">
          <Text fw={500}>Stage completion rate (%)</Text>
          <div style={{ height: 240 }}>
          <Bar
            options={{ maintainAspectRatio: false, scales: { y: { beginAtZero: true, max: 100, title: { display: true, text: 'completed (%)' } } } }}
            data={{ labels: (o?.stagePerformance ?? []).map((s) => s.stage), datasets: [{ label: '%', data: (o?.stagePerformance ?? []).map((s) => s.completionRate), backgroundColor: '#f59f00' }] }}
          />
          </div>
          {o && (
            <Text size="xs" c="dimmed">
              {o.summary.totalOrchestrations} orchestrations · {o.summary.totalOrchestrations ? `${o.summary.successRate} % completed` : 'none yet'}
            </Text>
          )}
        </Card>
        <Card withBorder data-testid="system-health">
          <Group justify="space-between">
            <Text fw={500}>System health</Text>
            {health.data && <StatusBadge status={health.data.systemHealth.status} />}
          </Group>
          {health.error && <Alert color="red">{health.error.message}</Alert>}
          {health.data && (
            <Table>
              <Table.Tbody>
                {Object.entries(health.data.systemHealth.services).map(([part, v]) => (
                  <Table.Tr key={part}>
                    <Table.Td>{part}</Table.Td>
                    <Table.Td>{v.status}</Table.Td>
                    <Table.Td>
                      <Text size="xs" c="dimmed">
                        {Object.entries(v)
                          .filter(([k, x]) => k !== 'status' && x !== null)
                          .map(([k, x]) => `${humanize(k).toLowerCase()} ${x}${UNITS[k] ?? ''}`)
                          .join(' · ')}
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
                <Table.Tr>
                  <Table.Td>host</Table.Td>
                  <Table.Td colSpan={2}>
                    CPU {health.data.systemHealth.resources.cpu.usage} % · memory {health.data.systemHealth.resources.memory.usage} % · storage {health.data.systemHealth.resources.storage.usage} %
                  </Table.Td>
                </Table.Tr>
              </Table.Tbody>
            </Table>
          )}
        </Card>
      </SimpleGrid>
    </Stack>
  );
}

/** The unit each health figure is in. */
const UNITS: Record<string, string> = { connections: ' (count)', queryLatencyP95: ' ms', depth: ' (count)', activeExecutions: ' (count)', queuedTasks: ' (count)' };

function Figure({ label, value, unit, testId }: { label: string; value: string; unit: string; testId?: string }) {
  return (
    <Card withBorder padding="sm" data-testid={testId}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="xl" fw={600}>
        {value}
      </Text>
      <Text size="10px" c="dimmed">
        unit: {unit}
      </Text>
    </Card>
  );
}

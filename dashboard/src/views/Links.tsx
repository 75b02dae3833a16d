import { Alert, Anchor, Badge, Button, Card, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQuery as useReactQuery } from '@tanstack/react-query';
import { BarElement, CategoryScale, Chart as ChartJS, LinearScale, Tooltip } from 'chart.js';
import { useState } from 'react';
import { Bar } from 'react-chartjs-2';
import { gql, useQuery, type GraphQLFailure } from '../api';
import { DashboardCreateLinkDocument, DashboardLinkVisitsDocument, DashboardLinksDocument } from '../generated';
import { when } from './common';

ChartJS.register(CategoryScale, LinearScale, BarElement, Tooltip);

const DAY = 86_400_000;
const DAYS = 30;
/** Visits read for the chart at most (newest first, 100 a page). */
const MAX_VISITS = 2000;

/** Short links of this key: the list with visits, and a form for a new one. */
export function Links(_: { route: string[] }) {
  const list = useQuery(DashboardLinksDocument, {});
  const [url, setUrl] = useState('');
  const [slug, setSlug] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  const create = async () => {
    setError(null);
    try {
      await gql(DashboardCreateLinkDocument, { input: { url: url.trim(), ...(slug.trim() ? { customSlug: slug.trim() } : {}) } });
      setUrl('');
      setSlug('');
      list.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  if (list.error) return <Alert color="red">{list.error.message}</Alert>;
  const links = list.data?.links.links ?? [];
  // The chart shows the chosen link, else the most visited one.
  const charted = links.find((l) => l.id === chosen) ?? [...links].sort((a, b) => b.visits - a.visits)[0];
  return (
    <Stack>
      <Title order={3}>Short links</Title>
      <Table striped data-testid="links-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Short link</Table.Th>
            <Table.Th>Destination</Table.Th>
            <Table.Th>Protection</Table.Th>
            <Table.Th>Visits (count)</Table.Th>
            <Table.Th>Expires</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {links.map((l) => (
            <Table.Tr key={l.id} data-testid={`link-row-${l.slug}`} onClick={() => setChosen(l.id)} style={{ cursor: 'pointer' }} bg={l.id === charted?.id ? 'blue.0' : undefined}>
              <Table.Td>
                <Anchor href={`/links/${l.slug}`} target="_blank" ff="monospace">
                  /links/{l.slug}
                </Anchor>
                {!l.isActive && (
                  <Badge ml={6} size="xs" color="gray">
                    inactive
                  </Badge>
                )}
              </Table.Td>
              <Table.Td>
                <Text size="sm" truncate maw={420}>
                  {l.url}
                </Text>
              </Table.Td>
              <Table.Td>{l.protectionType}</Table.Td>
              <Table.Td>{l.visits}</Table.Td>
              <Table.Td>{l.expiresAt ? when(l.expiresAt) : 'never'}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {charted && <VisitsChart key={charted.id} id={charted.id} slug={charted.slug} visits={charted.visits} />}
      <Card withBorder data-testid="link-create">
        <Stack>
          <Title order={4}>New short link</Title>
          <TextInput label="Destination" description="An http or https address." value={url} onChange={(e) => setUrl(e.currentTarget.value)} data-testid="link-url" />
          <TextInput label="Slug" description={'Optional: 3 to 64 letters, digits, "-" or "_"; random when left empty.'} value={slug} onChange={(e) => setSlug(e.currentTarget.value)} data-testid="link-slug" />
          {error && <Alert color="red">{error}</Alert>}
          <Group>
            <Button onClick={() => void create()} disabled={!url.trim()} data-testid="link-submit">
              Create
            </Button>
          </Group>
        </Stack>
      </Card>
    </Stack>
  );
}

/** A link's visits per day over the last 30 days, counted from its visits (newest first, page by page). */
function VisitsChart({ id, slug, visits }: { id: string; slug: string; visits: number }) {
  const q = useReactQuery<string[], GraphQLFailure>({
    queryKey: ['link-visits', id, visits],
    queryFn: async () => {
      const since = Date.now() - DAYS * DAY;
      const at: string[] = [];
      for (let offset = 0; offset < MAX_VISITS; offset += 100) {
        const page = (await gql(DashboardLinkVisitsDocument, { id, offset })).linkVisits;
        at.push(...page.visits.map((v) => v.at));
        // Newest first: once a page reaches before the window, the rest is older still.
        if (!page.pagination.hasMore || page.visits.some((v) => Date.parse(v.at) < since)) break;
      }
      return at;
    },
  });
  const today = Math.floor(Date.now() / DAY) * DAY;
  const days = Array.from({ length: DAYS }, (_, i) => today - (DAYS - 1 - i) * DAY);
  const counts = days.map(() => 0);
  for (const at of q.data ?? []) {
    const i = DAYS - 1 - Math.floor((today - Math.floor(Date.parse(at) / DAY) * DAY) / DAY);
    if (i >= 0 && i < DAYS) counts[i]! += 1;
  }
  const inWindow = counts.reduce((a, b) => a + b, 0);
  return (
    <Card withBorder data-testid="link-visits-chart" data-slug={slug} data-total={q.data ? inWindow : undefined}>
      <Group justify="space-between">
        <Text fw={500}>
          Visits per day of /links/{slug} (count, last {DAYS} days, UTC)
        </Text>
        <Text size="xs" c="dimmed">
          {q.data ? `${inWindow} in the last ${DAYS} days · ${visits} in all` : 'Loading…'}
          {q.data && q.data.length >= MAX_VISITS ? ` · from the latest ${MAX_VISITS}` : ''}
        </Text>
      </Group>
      {q.error && <Alert color="red">{q.error.message}</Alert>}
      <div style={{ height: 200 }}>
        <Bar
          data={{ labels: days.map((d) => new Date(d).toISOString().slice(5, 10)), datasets: [{ label: 'Visits', data: counts, backgroundColor: '#228be6' }] }}
          options={{ maintainAspectRatio: false, animation: false, plugins: { legend: { display: false } }, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } }}
        />
      </div>
    </Card>
  );
}

import { Alert, Anchor, Badge, Button, Card, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { gql, useQuery } from '../api';
import { DashboardCreateLinkDocument, DashboardLinksDocument } from '../generated';
import { when } from './common';

/** Short links of this key: the list with visits, and a form for a new one. */
export function Links(_: { route: string[] }) {
  const list = useQuery(DashboardLinksDocument, {});
  const [url, setUrl] = useState('');
  const [slug, setSlug] = useState('');
  const [error, setError] = useState<string | null>(null);
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
          {(list.data?.links.links ?? []).map((l) => (
            <Table.Tr key={l.id} data-testid={`link-row-${l.slug}`}>
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

import { Alert, Badge, Button, Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState, type ChangeEvent } from 'react';
import { useQuery } from '../api';
import { DashboardAuditDocument } from '../generated';
import { when } from './common';

const PAGE = 50;

/** The audit trail: every change made through any surface, newest first, filtered by actor, operation and resource type. */
export function Audit(_: { route: string[] }) {
  const [actor, setActor] = useState('');
  const [operation, setOperation] = useState('');
  const [resourceType, setResourceType] = useState('');
  const [offset, setOffset] = useState(0);
  const given = (v: string) => (v.trim() ? v.trim() : null);
  const list = useQuery(DashboardAuditDocument, {
    actor: given(actor),
    operation: given(operation),
    resourceType: given(resourceType),
    limit: PAGE,
    offset,
  });
  const filter = (set: (v: string) => void) => (e: ChangeEvent<HTMLInputElement>) => {
    set(e.currentTarget.value);
    setOffset(0);
  };
  const page = list.data?.auditEntries;
  return (
    <Stack>
      <Title order={3}>Audit trail</Title>
      <Group align="end">
        <TextInput label="Actor" description="A key's or person's id, or a key's name." value={actor} onChange={filter(setActor)} data-testid="audit-actor" />
        <TextInput label="Operation" description="createApiKey, updateWorkflow …" value={operation} onChange={filter(setOperation)} data-testid="audit-operation" />
        <TextInput label="Resource type" description="ApiKey, Workflow, Link …" value={resourceType} onChange={filter(setResourceType)} data-testid="audit-resource-type" />
      </Group>
      {list.error && <Alert color="red">{list.error.message}</Alert>}
      <Table striped data-testid="audit-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>When</Table.Th>
            <Table.Th>Who</Table.Th>
            <Table.Th>From</Table.Th>
            <Table.Th>Operation</Table.Th>
            <Table.Th>Resource</Table.Th>
            <Table.Th>Fields</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(page?.entries ?? []).map((e) => (
            <Table.Tr key={e.id} data-testid={`audit-row-${e.id}`}>
              <Table.Td>{when(e.at)}</Table.Td>
              <Table.Td>
                <Badge size="xs" color="gray" mr={6}>
                  {e.actor.kind}
                </Badge>
                {e.actor.name ?? e.actor.id ?? '—'}
              </Table.Td>
              <Table.Td>
                <Text size="sm">{e.ip ?? '—'}</Text>
                <Text size="xs" c="dimmed" truncate maw={220}>
                  {e.userAgent ?? ''}
                </Text>
              </Table.Td>
              <Table.Td>
                <Code>{e.operation}</Code>
              </Table.Td>
              <Table.Td>
                {e.resourceType}
                {e.resourceId && (
                  <Text size="xs" c="dimmed" ff="monospace">
                    {e.resourceId}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>
                <Text size="sm">{e.changedFields.join(', ') || '—'}</Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {page && (
        <Group>
          <Text size="sm" c="dimmed">
            {page.pagination.total === 0 ? 'No entries' : `${offset + 1}–${offset + page.entries.length} of ${page.pagination.total}`}
          </Text>
          <Button size="xs" variant="default" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))} data-testid="audit-newer">
            Newer
          </Button>
          <Button size="xs" variant="default" disabled={!page.pagination.hasMore} onClick={() => setOffset(offset + PAGE)} data-testid="audit-older">
            Older
          </Button>
        </Group>
      )}
    </Stack>
  );
}

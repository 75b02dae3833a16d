import { Alert, Anchor, Badge, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'react-router-dom';
import { useQuery } from '../api';
import { DashboardWorkflowsDocument } from '../generated';
import { when } from './common';

export function Workflows(_: { route: string[] }) {
  const list = useQuery(DashboardWorkflowsDocument, {});
  if (list.error) return <Alert color="red">{list.error.message}</Alert>;
  return (
    <Stack>
      <Title order={3}>Workflows</Title>
      {list.data?.workflows.workflows.length === 0 && <Text c="dimmed">No workflow yet.</Text>}
      <Table striped highlightOnHover data-testid="workflows-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Workflow</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th>Nodes</Table.Th>
            <Table.Th>Last run</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {(list.data?.workflows.workflows ?? []).map((w) => (
            <Table.Tr key={w.workflowId} data-testid={`workflow-row-${w.workflowId}`}>
              <Table.Td>
                <Anchor component={Link} to={`/workflows/${w.workflowId}`}>
                  {w.name}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <Badge color={w.active ? 'green' : 'gray'} variant="light">
                  {w.active ? 'active' : 'inactive'}
                </Badge>
              </Table.Td>
              <Table.Td>{w.nodeCount}</Table.Td>
              <Table.Td>{w.lastExecuted ? when(w.lastExecuted) : 'never'}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

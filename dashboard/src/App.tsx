import { Title } from '@mantine/core';

export function App() {
  return <Title order={2}>Automation platform</Title>;
}

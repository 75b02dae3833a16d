import { Badge, Progress } from '@mantine/core';

const COLORS: Record<string, string> = {
  completed: 'green',
  healthy: 'green',
  degraded: 'yellow',
  unhealthy: 'red',
  success: 'green',
  running: 'blue',
  queued: 'gray',
  pending: 'gray',
  waiting: 'yellow',
  paused: 'yellow',
  failed: 'red',
  error: 'red',
  cancelled: 'orange',
  canceled: 'orange',
};

export function StatusBadge({ status, testId }: { status: string; testId?: string }) {
  return (
    <Badge color={COLORS[status] ?? 'gray'} variant="light" data-testid={testId} data-status={status}>
      {status}
    </Badge>
  );
}

export function Percent({ value }: { value: number }) {
  return <Progress value={Math.max(0, Math.min(100, value))} size="sm" animated={value > 0 && value < 100} />;
}

export const seconds = (s: number | null | undefined) => (s === null || s === undefined ? '—' : s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(1)} s`);
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** A field name as a person reads it: sourceFiles, source_files → "Source files". */
export const humanize = (name: string) => {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

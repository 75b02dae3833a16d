import { Anchor } from '@mantine/core';
import { useEffect, useState } from 'react';

/*
 * Links to a trace viewer (TRACES_UI_URL, e.g. Jaeger's http://localhost:16686/trace/{traceId}) from
 * the pages of what keeps a trace id: a task, an execution, an orchestration. The platform says
 * whether one is set at /dashboard/config.json; without one, no link is drawn.
 */

let config: Promise<string | null> | undefined;

/** TRACES_UI_URL as the platform serves it (read once per page load); null when it is not set. */
function tracesUiUrl(): Promise<string | null> {
  config ??= fetch('/dashboard/config.json')
    .then(async (r) => (r.ok ? ((await r.json()) as { tracesUiUrl?: string | null }) : {}))
    .then((c: { tracesUiUrl?: string | null }) => c.tracesUiUrl || null)
    .catch(() => null);
  return config;
}

/** "Trace": the trace viewer's page of this trace, in a new tab; nothing when the row has no trace or no viewer is set. */
export function TraceLink({ traceId }: { traceId: string | null | undefined }) {
  const [template, setTemplate] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void tracesUiUrl().then((t) => live && setTemplate(t));
    return () => {
      live = false;
    };
  }, []);
  if (!traceId || !template) return null;
  return (
    <Anchor href={template.replaceAll('{traceId}', encodeURIComponent(traceId))} target="_blank" rel="noreferrer" size="sm" data-testid="trace-link">
      Trace
    </Anchor>
  );
}

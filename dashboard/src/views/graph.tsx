import '@xyflow/react/dist/style.css';
import { Badge, Text } from '@mantine/core';
import { Background, Controls, Handle, Position, ReactFlow, type Edge, type Node, type NodeProps } from '@xyflow/react';
import { useMemo } from 'react';
import Markdown from 'react-markdown';

/** A node of a workflow as the API and n8n's exports give it. */
export interface GraphNode {
  name: string;
  type: string;
  position?: number[] | null;
  notes?: string | null;
  disabled?: boolean | null;
  parameters?: Record<string, unknown> | null;
}

/** n8n's connections: source node → {main: [[{node, index}], …]} (one list per output). */
export type Connections = Record<string, { main?: ({ node: string; index?: number }[] | null)[] } | undefined>;

/** A sticky note of an n8n export: drawn behind the nodes, at its place and size. */
export interface Sticky {
  name: string;
  position: number[];
  content: string;
  width: number;
  height: number;
  /** n8n's note color, 1 (yellow) to 7. */
  color?: number | null;
}

/** n8n's sticky note colors (background, border) by number. */
const NOTE_COLORS: Record<number, [string, string]> = {
  1: ['#fff9db', '#ffe066'],
  2: ['#fff4e6', '#ffc078'],
  3: ['#fff5f5', '#ffa8a8'],
  4: ['#ebfbee', '#8ce99a'],
  5: ['#e7f5ff', '#74c0fc'],
  6: ['#f3f0ff', '#b197fc'],
  7: ['#f8f9fa', '#ced4da'],
};

export const isTrigger = (type: string) => /trigger|webhook|cron|schedule/i.test(type);

const STATUS_COLORS: Record<string, string> = { success: '#2f9e44', error: '#e03131', running: '#1c7ed6', waiting: '#f08c00', skipped: '#adb5bd' };

type StepData = { node: GraphNode; status?: string; selected?: boolean };

function Step({ data }: NodeProps<Node<StepData>>) {
  const { node, status } = data;
  const color = status ? (STATUS_COLORS[status] ?? '#868e96') : '#ced4da';
  return (
    <div
      data-testid={`graph-node-${node.name}`}
      data-status={status ?? 'none'}
      style={{
        border: `2px solid ${color}`,
        background: status === 'error' ? '#fff5f5' : status === 'success' ? '#ebfbee' : '#fff',
        borderRadius: isTrigger(node.type) ? '18px 6px 6px 18px' : 6,
        padding: '6px 10px',
        minWidth: 150,
        boxShadow: data.selected ? '0 0 0 3px #74c0fc' : undefined,
        opacity: node.disabled ? 0.5 : 1,
      }}
      title={node.notes ?? undefined}
    >
      <Handle type="target" position={Position.Left} />
      <Text size="sm" fw={600}>
        {node.name}
      </Text>
      <Text size="10px" c="dimmed">
        {node.type.replace(/^n8n-nodes-base\./, 'n8n: ')}
      </Text>
      {status && (
        <Badge size="xs" color={status === 'success' ? 'green' : status === 'error' ? 'red' : 'blue'} variant="light">
          {status}
        </Badge>
      )}
      {node.notes && (
        <Text size="10px" c="dimmed" fs="italic" maw={200}>
          {node.notes}
        </Text>
      )}
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

function Note({ data }: NodeProps<Node<{ sticky: Sticky }>>) {
  const s = data.sticky;
  const [background, border] = NOTE_COLORS[s.color ?? 1] ?? NOTE_COLORS[1]!;
  return (
    <div
      data-testid={`graph-note-${s.name}`}
      data-color={s.color ?? 1}
      style={{ width: s.width, height: s.height, background, border: `1px solid ${border}`, borderRadius: 4, padding: 8, overflow: 'hidden', fontSize: 12 }}
    >
      <Markdown>{s.content}</Markdown>
    </div>
  );
}

const nodeTypes = { step: Step, note: Note };

/** Positions at n8n's coordinates; a workflow without them (all at one place) is laid out by depth from its triggers. */
function place(nodes: GraphNode[], connections: Connections): Map<string, { x: number; y: number }> {
  const at = new Map<string, { x: number; y: number }>();
  const distinct = new Set(nodes.map((n) => String(n.position ?? ''))).size === nodes.length;
  if (distinct && nodes.every((n) => n.position?.length === 2)) {
    for (const n of nodes) at.set(n.name, { x: n.position![0]!, y: n.position![1]! });
    return at;
  }
  const depth = new Map<string, number>();
  const targets = new Set(Object.values(connections).flatMap((c) => (c?.main ?? []).flatMap((o) => (o ?? []).map((t) => t.node))));
  const queue = nodes.filter((n) => !targets.has(n.name)).map((n) => n.name);
  for (const name of queue) depth.set(name, 0);
  while (queue.length) {
    const name = queue.shift()!;
    for (const out of connections[name]?.main ?? [])
      for (const t of out ?? [])
        if (!depth.has(t.node)) {
          depth.set(t.node, depth.get(name)! + 1);
          queue.push(t.node);
        }
  }
  const rows = new Map<number, number>();
  for (const n of nodes) {
    const d = depth.get(n.name) ?? 0;
    const row = rows.get(d) ?? 0;
    rows.set(d, row + 1);
    at.set(n.name, { x: d * 240, y: row * 110 });
  }
  return at;
}

/** A workflow's graph: its nodes (with a run's status each when given), connections and sticky notes. */
export function WorkflowGraph({
  nodes,
  connections,
  stickies = [],
  statuses = {},
  selected,
  onSelect,
  height = 380,
}: {
  nodes: GraphNode[];
  connections: Connections;
  stickies?: Sticky[];
  statuses?: Record<string, string>;
  selected?: string | null;
  onSelect?: (name: string) => void;
  height?: number;
}) {
  const flow = useMemo(() => {
    const at = place(nodes, connections);
    const steps: Node[] = nodes.map((n) => ({ id: `node:${n.name}`, type: 'step', position: at.get(n.name)!, data: { node: n, status: statuses[n.name], selected: selected === n.name }, connectable: false }));
    const notes: Node[] = stickies.map((s) => ({ id: `note:${s.name}`, type: 'note', position: { x: s.position[0]!, y: s.position[1]! }, data: { sticky: s }, zIndex: -1, selectable: false, connectable: false }));
    const edges: Edge[] = Object.entries(connections).flatMap(([from, c]) =>
      (c?.main ?? []).flatMap((out, i) =>
        (out ?? []).map((t) => ({
          id: `${from}:${i}->${t.node}`,
          source: `node:${from}`,
          target: `node:${t.node}`,
          label: (c?.main?.length ?? 0) > 1 ? `output ${i}` : undefined,
          animated: statuses[from] === 'success' && !statuses[t.node],
        })),
      ),
    );
    return { nodes: [...notes, ...steps], edges };
  }, [nodes, connections, stickies, statuses, selected]);
  return (
    <div style={{ height, border: '1px solid #dee2e6', borderRadius: 6 }} data-testid="workflow-graph">
      <ReactFlow
        nodes={flow.nodes}
        edges={flow.edges}
        nodeTypes={nodeTypes}
        fitView
        fitViewOptions={{ maxZoom: 1 }}
        nodesDraggable={false}
        nodesConnectable={false}
        proOptions={{ hideAttribution: true }}
        onNodeClick={(_, n) => n.id.startsWith('node:') && onSelect?.(n.id.slice(5))}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}

/** The sticky notes of an n8n export, before it is imported (the import keeps them beside the nodes). */
export function stickiesOf(raw: unknown): Sticky[] {
  const nodes = (raw as { nodes?: unknown })?.nodes;
  if (!Array.isArray(nodes)) return [];
  return nodes
    .filter((n) => n?.type === 'n8n-nodes-base.stickyNote' && Array.isArray(n.position))
    .map((n) => ({
      name: String(n.name),
      position: n.position,
      content: String(n.parameters?.content ?? ''),
      width: Number(n.parameters?.width ?? 240),
      height: Number(n.parameters?.height ?? 160),
      color: Number(n.parameters?.color ?? 1),
    }));
}

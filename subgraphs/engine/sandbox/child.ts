import { Sandbox, SandboxError, type SandboxRun } from './isolate';

/**
 * A sandbox process (process.ts): runs one evaluation at a time in isolated-vm, and
 * answers over IPC. Whatever the code does — exhaust the heap past the isolate's limit, crash V8 —
 * it takes down this process only; the platform replaces it. It ends with its parent.
 */

export interface ChildRequest extends Omit<SandboxRun, 'signal' | 'body'> {
  id: number;
  /** The body, sent whole the first time (with its id, when it has one); then named by bodyId alone. */
  body?: string;
  bodyId?: number;
  memoryMb: number;
  timeoutMs: number;
}

export type ChildReply = { id: number; ok: true; result: string } | { id: number; ok: false; reason: SandboxError['reason']; message: string };

const sandboxes = new Map<number, Sandbox>();
const bodies = new Map<number, string>();

process.on('message', (req: ChildRequest) => {
  if (req.body !== undefined && req.bodyId !== undefined) bodies.set(req.bodyId, req.body);
  const body = req.body ?? (req.bodyId === undefined ? undefined : bodies.get(req.bodyId));
  if (body === undefined) {
    process.send!({ id: req.id, ok: false, reason: 'script', message: `The sandbox process has no body ${req.bodyId}` } satisfies ChildReply);
    return;
  }
  let sandbox = sandboxes.get(req.memoryMb);
  if (!sandbox) sandboxes.set(req.memoryMb, (sandbox = new Sandbox({ memoryMb: req.memoryMb, timeoutMs: req.timeoutMs, poolSize: 1 })));
  sandbox.run({ body, input: req.input, timeoutMs: req.timeoutMs, prelude: req.prelude, warmup: req.warmup }).then(
    (result) => process.send!({ id: req.id, ok: true, result } satisfies ChildReply),
    (err: unknown) =>
      process.send!({
        id: req.id,
        ok: false,
        reason: err instanceof SandboxError ? err.reason : 'script',
        message: err instanceof Error ? err.message : String(err),
      } satisfies ChildReply),
  );
});
process.on('disconnect', () => process.exit(0));

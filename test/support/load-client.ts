import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { JsonAnswer } from './platform';

/**
 * Clients in a process of their own: requests of megabytes sent in rounds of concurrent ones.
 * The platform's event loop (in the test's process) is then measured without the test encoding
 * those bodies and reading their answers on it.
 *
 * Run as a script (what `runLoadClient` does): the plan is JSON on stdin, the outcome JSON on stdout.
 */

export interface LoadPlan {
  url: string;
  key: string;
  /** The path every request posts to, with its body: a file of JSON text, sent as is (so the plan
   * itself stays small and writing it costs the measured process nothing). */
  path: string;
  bodyFile: string;
  rounds: number;
  concurrency: number;
}

export interface LoadOutcome {
  answers: JsonAnswer[];
}

export function runLoadClient(plan: LoadPlan): Promise<LoadOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [__filename], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(Buffer.concat(out).toString()) as LoadOutcome);
      else reject(new Error(`the load client failed (${code}): ${Buffer.concat(err).toString().slice(0, 2000)}`));
    });
    child.stdin.end(JSON.stringify(plan));
  });
}

async function main(plan: LoadPlan): Promise<LoadOutcome> {
  const body = readFileSync(plan.bodyFile);
  const answers: LoadOutcome['answers'] = [];
  for (let round = 0; round < plan.rounds; round++) {
    const sent = Array.from({ length: plan.concurrency }, async () => {
      const res = await fetch(plan.url + plan.path, {
        method: 'POST',
        headers: { authorization: `Bearer ${plan.key}`, 'content-type': 'application/json' },
        body,
      });
      return { status: res.status, body: await res.json() };
    });
    answers.push(...(await Promise.all(sent)));
  }
  return { answers };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

if (require.main === module) {
  readStdin()
    .then((plan) => main(JSON.parse(plan) as LoadPlan))
    .then(
      (outcome) => process.stdout.write(JSON.stringify(outcome)),
      (err: unknown) => {
        process.stderr.write(String((err as Error)?.stack ?? err));
        process.exit(1);
      },
    );
}

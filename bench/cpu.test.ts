import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '../test/support/database';
import { sleep } from '../test/support/until';
import { CpuMeter } from './cpu';

/** Keeps this process on the CPU until it has used `ms` more of it (however busy the machine). */
const spin = (ms: number) => {
  const used = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const until = used() + ms;
  let x = 0;
  while (used() < until) for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + i);
  return x;
};

describe.runIf(process.platform === 'linux')('CpuMeter (bench/cpu.ts)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it("charges each phase's CPU to the process that spent it, per item", async () => {
    // The platform's stand-in: once started, and told to, it spends 200 ms of CPU, says so and waits to be stopped.
    const child = spawn(
      process.execPath,
      ['-e', `process.stdout.write('ready\\n'); process.stdin.once('data', () => { (${spin})(200); process.stdout.write('done\\n'); })`],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    try {
      await once(child.stdout!, 'data');
      const meter = new CpuMeter(child.pid!);
      await meter.measure(10, async () => {
        child.stdin!.write('go\n');
        await once(child.stdout!, 'data');
      });
      spin(100); // between phases: not counted
      await meter.measure(10, async () => spin(200));
      // /proc counts whole 10 ms ticks: each reading may lose one.
      const per = meter.perItem()!;
      expect(per.platformMs).toBeGreaterThanOrEqual(9); // its 200 ms over 20 items
      expect(per.platformMs).toBeLessThan(16);
      expect(per.driverMs).toBeGreaterThanOrEqual(9); // 200 ms over 20 items, not 300
      expect(per.driverMs).toBeLessThan(14);
      expect(per.totalMs).toBeCloseTo(per.platformMs + per.driverMs + per.postgresMs, 2);
    } finally {
      child.kill();
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }
  });

  it("counts the PostgreSQL server's work", async () => {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const meter = new CpuMeter(process.pid);
      await meter.measure(1, () => client.query(`SELECT count(*) FROM generate_series(1, 3000000)`));
      const per = meter.perItem()!;
      expect(per.postgresMs).toBeGreaterThanOrEqual(100);
      expect(per.driverMs).toBeLessThan(per.postgresMs / 2);
    } finally {
      await client.end();
    }
  });

  it('a backend that ends during a phase takes its CPU with it, not away from the others', async () => {
    const [busy, ending] = [new Client({ connectionString: db.url }), new Client({ connectionString: db.url })];
    await Promise.all([busy.connect(), ending.connect()]);
    try {
      await ending.query(`SELECT count(*) FROM generate_series(1, 6000000)`); // spent before the phase
      const meter = new CpuMeter(process.pid);
      await meter.measure(1, async () => {
        await ending.end(); // as another test's connection may, in a parallel run
        await busy.query(`SELECT count(*) FROM generate_series(1, 3000000)`);
      });
      expect(meter.perItem()!.postgresMs).toBeGreaterThanOrEqual(100);
    } finally {
      await busy.end();
    }
  });

  it('has nothing to report before a phase', () => {
    expect(new CpuMeter(process.pid).perItem()).toBeUndefined();
  });
});

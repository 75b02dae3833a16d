import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The resource sampler's rows (one per process and interval): host CPU, memory, storage and
 * network, and the process's HTTP answers since the previous sample. Pruned after
 * METRICS_RETENTION_DAYS.
 */
export class ResourceSamples1763769601600 implements MigrationInterface {
  name = 'ResourceSamples1763769601600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.resource_samples (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        process text NOT NULL,
        cpu_percent real NOT NULL CHECK (cpu_percent >= 0),
        memory_percent real NOT NULL CHECK (memory_percent BETWEEN 0 AND 100),
        memory_used bigint NOT NULL CHECK (memory_used >= 0),
        storage_used bigint NOT NULL CHECK (storage_used >= 0),
        storage_total bigint NOT NULL CHECK (storage_total >= 0),
        network_in bigint NOT NULL CHECK (network_in >= 0),
        network_out bigint NOT NULL CHECK (network_out >= 0),
        requests_total integer NOT NULL CHECK (requests_total >= 0),
        requests_successful integer NOT NULL CHECK (requests_successful >= 0),
        requests_failed integer NOT NULL CHECK (requests_failed >= 0)
      )`);
    await q.query(`CREATE INDEX resource_samples_at_idx ON control_plane.resource_samples (at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE control_plane.resource_samples`);
  }
}

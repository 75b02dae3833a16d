import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { sha256Hex, signV4 } from '../../../kernel/aws-sigv4';
import type { BinaryDataConfig } from '../../../kernel/config';
import { exec, rows, type Queryable } from '../../../kernel/db/rows';

/**
 * Where the bytes of n8n binary data are kept once run data is stored (BINARY_DATA_MODE):
 * `database`, in engine.execution_binaries with the row that says which execution refers to the
 * file; `filesystem`, a file per binary under BINARY_DATA_DIR; `s3`, an object per binary in a
 * bucket several machines share. Every mode has the row (what a download is authorised by and
 * what deletes the file with its execution); the other modes keep the bytes before the row is
 * written, and delete them once no row refers to them (binary_trash, drained by maintenance).
 */

export type BinaryMode = BinaryDataConfig['mode'];

/** A file kept elsewhere than in the database. */
export interface ObjectBackend {
  put(id: string, bytes: Buffer): Promise<void>;
  get(id: string): Promise<Buffer | null>;
  /** The file as a stream that reads it as it is consumed (null when it is gone). */
  stream(id: string): Promise<Readable | null>;
  delete(id: string): Promise<void>;
}

/** A binary as its statement records it: `data` only in database mode. */
export interface BinaryRow {
  executionId: string;
  id: string;
  mode: BinaryMode;
  bytes: number;
  mimeType: string;
  fileName: string | null;
  data: Buffer | null;
}

/** A file as its download answers it. */
export interface StoredBinary {
  data: Buffer;
  mimeType: string;
  fileName: string | null;
}

/** A file to send: its metadata and length, its bytes read from the store as the stream is consumed. */
export interface BinaryStream {
  mimeType: string;
  fileName: string | null;
  bytes: number;
  body: Readable;
}

/** How much of a file kept in the database one read takes. */
const DATABASE_CHUNK = 1024 * 1024;

export class FilesystemBackend implements ObjectBackend {
  constructor(private readonly dir: string) {}

  private file(id: string): string {
    // Ids are uuids; two levels of folders keep directories small.
    return path.join(this.dir, id.slice(0, 2), id);
  }

  async put(id: string, bytes: Buffer): Promise<void> {
    const file = this.file(id);
    await mkdir(path.dirname(file), { recursive: true });
    // Written aside then renamed: a reader never sees half a file.
    const part = `${file}.${process.pid}.part`;
    await writeFile(part, bytes);
    await rename(part, file);
  }

  async get(id: string): Promise<Buffer | null> {
    return readFile(this.file(id)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
  }

  async stream(id: string): Promise<Readable | null> {
    // Opened first: a file gone is known before anything is answered.
    const handle = await open(this.file(id), 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    return handle ? handle.createReadStream() : null;
  }

  async delete(id: string): Promise<void> {
    await rm(this.file(id), { force: true });
  }
}

/** An S3-compatible bucket over plain HTTP, path-style (`<endpoint>/<bucket>/<key>`), signed with SigV4. */
export class S3Backend implements ObjectBackend {
  constructor(
    private readonly s3: NonNullable<BinaryDataConfig['s3']>,
    private readonly fetcher: typeof fetch = fetch,
  ) {}

  private url(id: string): URL {
    return new URL(`${this.s3.endpoint}/${encodeURIComponent(this.s3.bucket)}/binary-data/${id}`);
  }

  private async send(method: 'PUT' | 'GET' | 'DELETE', id: string, body?: Buffer): Promise<Response> {
    const url = this.url(id);
    const headers = signV4(
      { method, url, payloadHash: sha256Hex(body ?? '') },
      { accessKeyId: this.s3.accessKeyId, secretAccessKey: this.s3.secretAccessKey, region: this.s3.region, service: 's3' },
    );
    delete headers.host;
    const request = () => this.fetcher(url, { method, headers, ...(body ? { body: new Uint8Array(body) } : {}) });
    // A kept-alive connection the server closed as it was reused fails before any answer: these
    // three requests are idempotent, so one more try on a fresh connection.
    return request().catch((err: unknown) => {
      if (!isConnectionLost(err)) throw err;
      return request();
    });
  }

  private async failed(res: Response, what: string): Promise<Error> {
    const text = await res.text().catch(() => '');
    const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
    return new Error(`S3 ${what} answered ${res.status}${code ? ` (${code})` : ''}`);
  }

  async put(id: string, bytes: Buffer): Promise<void> {
    const res = await this.send('PUT', id, bytes);
    if (!res.ok) throw await this.failed(res, 'PUT');
    await res.arrayBuffer();
  }

  async get(id: string): Promise<Buffer | null> {
    const res = await this.send('GET', id);
    if (res.status === 404) return (await res.arrayBuffer(), null);
    if (!res.ok) throw await this.failed(res, 'GET');
    return Buffer.from(await res.arrayBuffer());
  }

  async stream(id: string): Promise<Readable | null> {
    const res = await this.send('GET', id);
    if (res.status === 404) return (await res.arrayBuffer(), null);
    if (!res.ok) throw await this.failed(res, 'GET');
    // The object's body as it arrives, never whole in memory.
    return res.body ? Readable.fromWeb(res.body as WebReadableStream<Uint8Array>) : Readable.from([]);
  }

  async delete(id: string): Promise<void> {
    const res = await this.send('DELETE', id);
    if (!res.ok && res.status !== 404) throw await this.failed(res, 'DELETE');
    await res.arrayBuffer();
  }
}

/** fetch's failure when the connection ended before an answer (undici: `fetch failed`, caused by a socket error or reset). */
function isConnectionLost(err: unknown): boolean {
  const cause = err instanceof TypeError ? (err.cause as { code?: string } | undefined) : undefined;
  return cause?.code === 'UND_ERR_SOCKET' || cause?.code === 'ECONNRESET' || cause?.code === 'EPIPE';
}

/** The bytes kept for binaries: written in the configured mode, read and deleted in the mode each was written in. */
export class BinaryStore {
  private readonly backends = new Map<string, ObjectBackend>();

  constructor(
    private readonly db: Queryable,
    private readonly config: () => BinaryDataConfig,
  ) {}

  get mode(): BinaryMode {
    return this.config().mode;
  }

  private backend(mode: BinaryMode): ObjectBackend {
    const config = this.config();
    const key = mode === 's3' ? `s3:${config.s3?.endpoint}/${config.s3?.bucket}` : `fs:${config.dir}`;
    let backend = this.backends.get(key);
    if (!backend) {
      if (mode === 's3' && !config.s3) throw new Error('Binary data was stored in S3, which is not configured (BINARY_DATA_S3_*)');
      backend = mode === 's3' ? new S3Backend(config.s3!) : new FilesystemBackend(config.dir);
      this.backends.set(key, backend);
    }
    return backend;
  }

  /** Keeps a binary's bytes: elsewhere now, or in the row its statement writes (database mode). */
  async keep(executionId: string, id: string, bytes: Buffer, meta: { mimeType: string; fileName?: string }): Promise<BinaryRow> {
    const mode = this.mode;
    const row = { executionId, id, mode, bytes: bytes.length, mimeType: meta.mimeType, fileName: meta.fileName ?? null };
    if (mode === 'database') return { ...row, data: bytes };
    await this.backend(mode).put(id, bytes);
    return { ...row, data: null };
  }

  /** The bytes of binaries `ids` an execution refers to (absent: not its binary, or its file is gone). */
  async read(executionId: string, ids: readonly string[]): Promise<Map<string, StoredBinary>> {
    const found = new Map<string, StoredBinary>();
    if (!ids.length) return found;
    const stored = await rows<{ id: string; mode: BinaryMode; data: Buffer | null; mime_type: string; file_name: string | null }>(
      this.db,
      `SELECT id, mode, data, mime_type, file_name FROM engine.execution_binaries WHERE execution_id = $1 AND id = ANY($2::uuid[])`,
      [executionId, [...new Set(ids)]],
    );
    await Promise.all(
      stored.map(async (r) => {
        const bytes = r.data ?? (await this.backend(r.mode).get(r.id));
        if (bytes) found.set(r.id, { data: bytes, mimeType: r.mime_type, fileName: r.file_name });
      }),
    );
    return found;
  }

  /**
   * One binary an execution refers to, to send as it is read (null: not its binary, or its file
   * is gone). In the database the bytes are read a chunk at a time as the stream is consumed; a
   * row deleted meanwhile ends the stream with an error.
   */
  async open(executionId: string, id: string): Promise<BinaryStream | null> {
    const [row] = await rows<{ mode: BinaryMode; bytes: string; mime_type: string; file_name: string | null; stored: boolean }>(
      this.db,
      `SELECT mode, bytes::text AS bytes, mime_type, file_name, data IS NOT NULL AS stored FROM engine.execution_binaries WHERE execution_id = $1 AND id = $2`,
      [executionId, id],
    );
    if (!row) return null;
    const meta = { mimeType: row.mime_type, fileName: row.file_name, bytes: Number(row.bytes) };
    if (row.stored) return { ...meta, body: this.databaseStream(executionId, id, meta.bytes) };
    const body = await this.backend(row.mode).stream(id);
    return body ? { ...meta, body } : null;
  }

  /** A file this process kept and whose row may not be written yet: from the bytes the row carries (database mode) or its backend. */
  async openRow(row: BinaryRow): Promise<Readable | null> {
    if (row.data) return Readable.from([row.data]);
    return this.backend(row.mode).stream(row.id);
  }

  private databaseStream(executionId: string, id: string, total: number): Readable {
    let offset = 0;
    const db = this.db;
    const next = async (): Promise<Buffer | null> => {
      if (offset >= total) return null;
      const [chunk] = await rows<{ part: Buffer | null }>(
        db,
        `SELECT substring(data FROM $3 FOR $4) AS part FROM engine.execution_binaries WHERE execution_id = $1 AND id = $2`,
        [executionId, id, offset + 1, DATABASE_CHUNK],
      );
      if (!chunk?.part?.length) throw new Error(`Binary ${id} was deleted while it was read`);
      offset += chunk.part.length;
      return chunk.part;
    };
    return new Readable({
      highWaterMark: DATABASE_CHUNK,
      read() {
        next().then(
          (part) => this.push(part),
          (err: Error) => this.destroy(err),
        );
      },
    });
  }

  /**
   * Deletes the files of rows that were never written: the write that was to record them lost a
   * race (a second resume call, a cancel or a delete that landed first), so nothing refers to
   * them. A file that cannot be deleted now is queued for maintenance (binary_trash), which
   * deletes it once it finds no row refers to it. Never throws (it runs on a failure's path);
   * answers how many files are left to maintenance.
   */
  async discard(list: readonly BinaryRow[]): Promise<number> {
    const elsewhere = list.filter((b) => b.mode !== 'database');
    if (!elsewhere.length) return 0;
    const left: BinaryRow[] = [];
    await Promise.all(
      elsewhere.map(async (b) => {
        try {
          await this.backend(b.mode).delete(b.id);
        } catch {
          left.push(b);
        }
      }),
    );
    if (left.length) {
      await exec(this.db, `INSERT INTO engine.binary_trash (id, mode) SELECT * FROM unnest($1::uuid[], $2::text[]) ON CONFLICT DO NOTHING`, [
        left.map((b) => b.id),
        left.map((b) => b.mode),
      ]).catch(() => undefined);
    }
    return left.length;
  }

  /** Bytes of binary data an execution has stored so far (what its budget counts). */
  async total(executionId: string): Promise<number> {
    const [row] = await rows<{ total: string }>(
      this.db,
      `SELECT coalesce(sum(bytes), 0)::text AS total FROM engine.execution_binaries WHERE execution_id = $1`,
      [executionId],
    );
    return Number(row?.total ?? 0);
  }

  /** Deletes the files no execution refers to any more; answers how many. */
  async drain(): Promise<number> {
    const trash = await rows<{ id: string; mode: BinaryMode }>(this.db, `SELECT id, mode FROM engine.binary_trash ORDER BY at LIMIT 1000`);
    if (!trash.length) return 0;
    const referred = new Set(
      (await rows<{ id: string }>(this.db, `SELECT DISTINCT id FROM engine.execution_binaries WHERE id = ANY($1::uuid[])`, [trash.map((t) => t.id)])).map(
        (r) => r.id,
      ),
    );
    let deleted = 0;
    const done: string[] = [];
    for (const t of trash) {
      if (!referred.has(t.id)) {
        await this.backend(t.mode).delete(t.id);
        deleted++;
      }
      done.push(t.id);
    }
    await exec(this.db, `DELETE FROM engine.binary_trash WHERE id = ANY($1::uuid[])`, [done]);
    return deleted;
  }
}

/** The binary rows of a statement as its parameters: executions, ids, modes, sizes and bytes, as parallel arrays (unnest). */
export function binaryParams(list: readonly BinaryRow[]): unknown[] {
  const column = <K extends keyof BinaryRow>(k: K) => list.map((b) => b[k]);
  return [column('executionId'), column('id'), column('mode'), column('bytes'), column('mimeType'), column('fileName'), column('data')];
}

/** How many parameters binaryParams gives. */
export const BINARY_PARAMS = 7;

/**
 * Inserts binary rows (binaryParams, from parameter $p on) of the executions the statement's CTE
 * `e` wrote: a row whose execution was not written (a cancel won) is not inserted.
 */
export const BINARIES_INSERT = (p: number) => `
      INSERT INTO engine.execution_binaries (execution_id, id, mode, bytes, mime_type, file_name, data)
      SELECT b.execution_id, b.id, b.mode, b.bytes, b.mime_type, b.file_name, b.data
      FROM unnest($${p}::uuid[], $${p + 1}::uuid[], $${p + 2}::text[], $${p + 3}::bigint[], $${p + 4}::text[], $${p + 5}::text[], $${p + 6}::bytea[])
        AS b(execution_id, id, mode, bytes, mime_type, file_name, data)
      JOIN e ON e.id = b.execution_id
      ON CONFLICT DO NOTHING`;

/** Inserts binary rows of an execution the statement does not write (a resume URL's files). */
export function insertBinaries(q: Queryable, list: readonly BinaryRow[]): Promise<void> {
  return exec(q, `WITH e AS (SELECT DISTINCT id FROM engine.executions WHERE id = ANY($1::uuid[]))${BINARIES_INSERT(1)}`, binaryParams(list));
}

/** A retry's copies of the original's binary rows: its reused outputs refer to them. */
export function copyBinaries(q: Queryable, executionId: string, fromExecutionId: string): Promise<void> {
  return exec(
    q,
    `INSERT INTO engine.execution_binaries (execution_id, id, mode, bytes, mime_type, file_name, data)
     SELECT $1, id, mode, bytes, mime_type, file_name, data FROM engine.execution_binaries WHERE execution_id = $2 ON CONFLICT DO NOTHING`,
    [executionId, fromExecutionId],
  );
}

import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { NodeError } from '../../../nodes';

/**
 * The one folder n8n's Read/Write Files from Disk may touch (FILES_DIR, kernel/config.ts): every
 * path is taken relative to it (an absolute path must lie inside it), and is refused when it
 * leaves it by `..`, by being absolute elsewhere, or through a symbolic link that points out.
 * The folder comes with the run's services (`filesDir`).
 */

/** The largest file a read loads into an item, in bytes. */
export const MAX_READ_BYTES = 256 * 1024 * 1024;

async function root(folder: string | undefined): Promise<{ given: string; real: string }> {
  if (!folder) throw new NodeError('No files folder is configured (FILES_DIR)');
  const given = path.resolve(folder);
  await mkdir(given, { recursive: true });
  return { given, real: await realpath(given) };
}

function outside(input: string): NodeError {
  return new NodeError(`The path "${input}" is outside the files folder (FILES_DIR): only files inside it can be read or written`, {
    reason: 'outside_files_folder',
    path: input,
  });
}

function inside(rootDir: string, target: string): boolean {
  const rel = path.relative(rootDir, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The real path under the folder's real path that `rel` names, with every existing symlink on the way followed and checked. */
async function realInside(real: string, rel: string, input: string): Promise<string> {
  const parts = rel === '' ? [] : rel.split(path.sep);
  let current = real;
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(current, parts[i]!);
    let resolved: string;
    try {
      resolved = await realpath(next);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return path.join(next, ...parts.slice(i + 1));
      // The error names the path as the workflow gave it, never by the server's path.
      throw new NodeError(
        code === 'ENOTDIR' ? `"${input}" goes through a file as if it were a folder` : `"${input}" could not be resolved (${code ?? 'error'})`,
      );
    }
    if (!inside(real, resolved)) throw outside(input);
    current = resolved;
  }
  return current;
}

/** Where `input` (relative to the folder, or absolute inside it) really is; a NodeError when that is outside. */
export async function resolveInFolder(folder: string | undefined, input: string): Promise<{ real: string; relative: string }> {
  if (typeof input !== 'string' || input.trim() === '') throw new NodeError('No file path was given');
  if (input.includes('\0')) throw outside(input);
  const { given, real } = await root(folder);
  const abs = path.isAbsolute(input) ? path.resolve(input) : path.resolve(given, input);
  // An absolute path may name the folder by its configured path or by its real one.
  const base = inside(given, abs) ? given : inside(real, abs) ? real : undefined;
  if (base === undefined) throw outside(input);
  const rel = path.relative(base, abs);
  const resolved = await realInside(real, rel, input);
  return { real: resolved, relative: path.relative(real, resolved) };
}

const WILDCARD = /[*?[]/;

function patternRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 1);
      if (close === -1) out += '\\[';
      else {
        const set = pattern.slice(i + 1, close).replace(/\\/g, '\\\\');
        out += `[${set.startsWith('!') ? `^${set.slice(1)}` : set}]`;
        i = close;
      }
    } else out += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

export interface FoundFile {
  real: string;
  /** Relative to the folder. */
  relative: string;
}

/**
 * The files `selector` names: a path, or a pattern whose last part (the file name) may hold `*`,
 * `?` and `[…]` (a leading dot is matched only by a pattern starting with one). Folders and
 * anything a link takes outside are left out.
 */
export async function findFiles(folder: string | undefined, selector: string): Promise<FoundFile[]> {
  const name = path.basename(selector);
  const dirPart = selector.slice(0, selector.length - name.length) || '.';
  if (WILDCARD.test(dirPart)) {
    throw new NodeError(`Patterns are supported in the file name only, not in its folders: "${selector}"`, { reason: 'pattern_in_folder' });
  }
  if (!WILDCARD.test(name)) {
    const file = await resolveInFolder(folder, selector);
    const stat = await lstat(file.real).catch(() => undefined);
    if (stat && !stat.isFile()) throw new NodeError(`"${selector}" is not a file`);
    return stat ? [file] : [];
  }
  const dir = await resolveInFolder(folder, dirPart);
  const matcher = patternRegExp(name);
  const entries = await readdir(dir.real).catch(() => [] as string[]);
  const found: FoundFile[] = [];
  for (const entry of entries.sort()) {
    if (entry.startsWith('.') && !name.startsWith('.')) continue;
    if (!matcher.test(entry)) continue;
    let file: { real: string; relative: string };
    try {
      file = await resolveInFolder(folder, path.join(dir.relative, entry) || entry);
    } catch {
      continue; // a link out of the folder is not part of it
    }
    const stat = await lstat(file.real).catch(() => undefined);
    if (stat?.isFile()) found.push(file);
  }
  return found;
}

/** Reads a file found inside the folder (a link swapped in since is not followed). */
export async function readInFolder(file: FoundFile): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file.real, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw outside(file.relative);
    // The error names the file as the workflow does, never by the server's path.
    throw new NodeError(`The file "${file.relative}" could not be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    // Checked before reading: a file too large for an item is not loaded into memory first.
    const { size } = await handle.stat();
    if (size > MAX_READ_BYTES)
      throw new NodeError(`The file "${file.relative}" is larger than ${MAX_READ_BYTES / 1024 / 1024} MB, more than one item may hold`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Writes (or appends) `bytes` to `input` inside the folder, its missing folders made. */
export async function writeInFolder(folder: string | undefined, input: string, bytes: Buffer, append: boolean): Promise<string> {
  const file = await resolveInFolder(folder, input);
  try {
    await mkdir(path.dirname(file.real), { recursive: true });
  } catch (err) {
    throw new NodeError(`The folder of "${input}" could not be made (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  // Made folders cannot have moved the target out; the file itself is never followed if it is a link.
  const again = await resolveInFolder(folder, input);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (append ? constants.O_APPEND : constants.O_TRUNC);
  let handle;
  try {
    handle = await open(again.real, flags, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw outside(input);
    throw new NodeError(`The file "${input}" could not be written (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
  return again.relative;
}

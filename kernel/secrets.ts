import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A secret from the environment, else one generated once and kept in DATA_DIR/secrets/<name>
 * (mode 0600), so every process sharing DATA_DIR, and every restart, agrees on it.
 */
export function loadSecret(dataDir: string, name: string, fromEnv?: string): string {
  if (fromEnv) return fromEnv;
  const dir = path.join(dataDir, 'secrets');
  const file = path.join(dir, name);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const value = randomBytes(32).toString('base64url');
    try {
      writeFileSync(file, value + '\n', { mode: 0o600, flag: 'wx' });
      return value;
    } catch {
      return readFileSync(file, 'utf8').trim(); // another process wrote it first
    }
  }
}

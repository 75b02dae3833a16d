import { createHash } from 'node:crypto';
import { SecretCipher } from '../../../kernel/crypto';

/**
 * The keys credentials are encrypted under: AES-256-GCM (kernel/crypto.ts) with a key derived
 * from CREDENTIALS_KEY (else DATA_DIR/secrets/credentials-key), the credential's id as associated
 * data. Every row records the id of its key (`key_id`, a digest of the key, never the key), so a
 * row under an older key is still read while CREDENTIALS_KEY_PREVIOUS names that key, and is
 * re-encrypted under the current key when the engine starts (rotation: docs/n8n.md).
 */

const PURPOSE = 'automation-platform/engine-credentials/v1';

/** The public id of a key: 16 hex digits of a digest that cannot be turned back into the key. */
export function keyIdOf(key: string): string {
  return createHash('sha256').update(`credentials-key-id:${key}`).digest('hex').slice(0, 16);
}

export class CredentialKeyRing {
  readonly currentId: string;
  private readonly ciphers = new Map<string, SecretCipher>();

  constructor(current: string, previous: readonly string[] = []) {
    this.currentId = keyIdOf(current);
    for (const key of [current, ...previous]) {
      const id = keyIdOf(key);
      if (!this.ciphers.has(id)) this.ciphers.set(id, new SecretCipher(createHash('sha256').update(key).digest(), PURPOSE));
    }
  }

  /** The credential's data as ciphertext under the current key, with that key's id. */
  seal(data: Record<string, unknown>, credentialId: string): { ciphertext: Buffer; keyId: string } {
    return { ciphertext: this.ciphers.get(this.currentId)!.encrypt(JSON.stringify(data), credentialId), keyId: this.currentId };
  }

  /** The data back, or undefined when the row's key is neither the current nor a previous key. */
  open(ciphertext: Buffer, keyId: string, credentialId: string): Record<string, unknown> | undefined {
    const cipher = this.ciphers.get(keyId);
    if (!cipher) return undefined;
    return JSON.parse(cipher.decrypt(ciphertext, credentialId)) as Record<string, unknown>;
  }

  knows(keyId: string): boolean {
    return this.ciphers.has(keyId);
  }
}

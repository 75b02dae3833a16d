import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets at rest: AES-256-GCM under a key derived (HKDF-SHA256) from a platform key, one
 * derived key per purpose (`info`), so the platform key is never used directly. The id of the
 * row that holds the ciphertext is the additional authenticated data: a ciphertext copied onto
 * another row does not decrypt. Format: version byte, 12-byte IV, 16-byte tag, ciphertext.
 */

const CIPHER_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretCipher {
  private readonly key: Buffer;

  /** `platformKey`: 32 bytes; `info`: the purpose, e.g. 'automation-platform/webhook-secret/v1'. */
  constructor(platformKey: Buffer, info: string) {
    if (!Buffer.isBuffer(platformKey) || platformKey.length !== 32) {
      throw new TypeError('SecretCipher: the platform key must be a 32-byte Buffer');
    }
    this.key = Buffer.from(hkdfSync('sha256', platformKey, Buffer.alloc(0), info, 32));
  }

  encrypt(plain: string, id: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(id));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([CIPHER_VERSION]), iv, cipher.getAuthTag(), ciphertext]);
  }

  decrypt(blob: Buffer, id: string): string {
    if (blob[0] !== CIPHER_VERSION) throw new Error(`Unknown secret format ${blob[0]}`);
    const iv = blob.subarray(1, 1 + IV_BYTES);
    const tag = blob.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(id));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(blob.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/** A 32-byte platform key for SecretCipher from a platform secret string and a label. */
export function platformKey(secret: string, label: string): Buffer {
  return createHash('sha256').update(`${label}:${secret}`).digest();
}

export function sha256(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Constant-time equality of two byte strings (false, not an exception, when the lengths differ). */
export function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

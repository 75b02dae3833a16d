import { Algorithm, hash, verify } from '@node-rs/argon2';

/**
 * Secrets people choose (link passwords and PINs, infrastructure passwords) are kept only as
 * argon2id hashes with OWASP's parameters: 19 MiB, 2 iterations, 1 lane.
 */
const ARGON2 = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const hashSecret = (plain: string): Promise<string> => hash(plain, ARGON2);

/** Constant time in the secret (argon2's own comparison); false for a malformed hash. */
export async function verifySecret(hashed: string, plain: string): Promise<boolean> {
  try {
    return await verify(hashed, plain);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;
/** Hashes against a throw-away hash, so an unknown account costs what a known one does. */
export async function burnVerification(plain: string): Promise<void> {
  await verifySecret(await (dummy ??= hashSecret('not-a-password-of-anyone')), plain);
}

import { ownEntry } from '../../../../../kernel/names';
import { createHash, createHmac, createSign, randomBytes, randomUUID, type BinaryToTextEncoding } from 'node:crypto';
import { binaryBuffer, NodeError, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { eachItem, withField } from '../date-crypto.items';

/**
 * n8n's Crypto node, typeVersion 1: hash (MD5, SHA256, SHA384, SHA512, SHA3-256/384/512, or any
 * digest node:crypto knows), hmac with a secret, sign with a PEM private key (any signature
 * algorithm node:crypto knows, e.g. RSA-SHA256), each as hex or base64; generate a uuid or a
 * random ascii/hex/base64 string of `stringLength`. The result goes to `dataPropertyName` of a
 * copy of the item. Version 2 takes the HMAC secret and the private key from a stored `crypto`
 * credential (`hmacSecret`, `signPrivateKey`; credentials/) instead of the parameters, read when
 * the node runs and never written into an item. With `binaryData` on, hash and hmac digest the
 * item's file in `binaryPropertyName` (default `data`) instead of `value`.
 */

type Params = Record<string, unknown>;

/** n8n's parameter defaults (an export leaves out parameters at their default). */
const DEFAULTS: Params = {
  action: 'hash',
  type: 'MD5',
  encoding: 'hex',
  value: '',
  dataPropertyName: 'data',
  binaryData: false,
  binaryPropertyName: 'data',
  secret: '',
  algorithm: '',
  privateKey: '',
  encodingType: 'uuid',
  stringLength: 32,
};

function param(p: Params, name: string): unknown {
  return name in p ? p[name] : DEFAULTS[name];
}

function generate(p: Params): string {
  const type = param(p, 'encodingType');
  if (type === 'uuid') return randomUUID();
  const length = param(p, 'stringLength') as number;
  const text = randomBytes(length).toString(type as BufferEncoding);
  // base64 keeps only word characters, as n8n does (no +, / or =).
  return (type === 'base64' ? text.replace(/\W/g, '') : text).slice(0, length);
}

function digest(p: Params, action: 'hash' | 'hmac', item: Item, itemIndex: number): string {
  const type = param(p, 'type') as string;
  const fn = action === 'hash' ? createHash(type) : createHmac(type, param(p, 'secret') as string);
  // binaryData: the bytes of the item's file in binaryPropertyName, not a text value.
  if (param(p, 'binaryData') === true) fn.update(binaryBuffer(item, String(param(p, 'binaryPropertyName')), itemIndex));
  else fn.update(param(p, 'value') as string);
  return fn.digest(param(p, 'encoding') as BinaryToTextEncoding);
}

function sign(p: Params): string {
  const signer = createSign(param(p, 'algorithm') as string);
  signer.write(param(p, 'value'));
  signer.end();
  return signer.sign(param(p, 'privateKey') as string, param(p, 'encoding') as BinaryToTextEncoding);
}

const ACTIONS: Record<string, (p: Params, item: Item, itemIndex: number) => string> = {
  generate,
  hash: (p, item, i) => digest(p, 'hash', item, i),
  hmac: (p, item, i) => digest(p, 'hmac', item, i),
  sign,
};

/** Version 2: the secret (hmac) or private key (sign) of the node's `crypto` credential, as the parameter version 1 took it in. */
async function credentialSecrets(ctx: NodeContext, action: 'hmac' | 'sign'): Promise<Params> {
  const ref = ctx.node.credentials?.crypto;
  if (!ref)
    throw new NodeError(
      `Crypto version 2 takes the ${action === 'hmac' ? 'secret' : 'private key'} from a crypto credential, and the node names none (credentials.crypto)`,
    );
  if (!ctx.services.credentials) throw new NodeError('Credentials are not available in this process');
  const data = await ctx.services.credentials.data('crypto', ref);
  const value = action === 'hmac' ? data.hmacSecret : data.signPrivateKey;
  if (!value) throw new NodeError(`The crypto credential "${ref.name}" has no ${action === 'hmac' ? 'hmacSecret' : 'signPrivateKey'}`);
  return action === 'hmac' ? { secret: value } : { privateKey: value };
}

export const crypto: NodeDefinition = {
  name: 'crypto',
  description: "n8n's Crypto: hashes, HMACs or signs a value, or generates a random string, into a field of each item.",
  n8n: { versions: [1, 2] },
  inProcess: true,
  async execute(ctx) {
    const params = await ctx.parameters();
    // n8n reads the action once, from the first item.
    const name = param(params[0]!, 'action');
    const action = ownEntry(ACTIONS, name);
    const secrets = (ctx.node.typeVersion ?? 1) >= 2 && (name === 'hmac' || name === 'sign') ? await credentialSecrets(ctx, name) : undefined;
    if (secrets) for (let i = 0; i < params.length; i++) params[i] = { ...params[i], ...secrets };
    const items = eachItem(ctx, (i) => {
      const p = params[i]!;
      // An unknown action writes nothing but still sets the field (to undefined), as n8n does.
      const item = ctx.items[i]!;
      const json = withField(item.json, param(p, 'dataPropertyName'), action?.(p, item, i));
      // The item's files go on with it, as n8n passes them.
      return item.binary ? { json, binary: item.binary, pairedItem: { item: i } } : { json, pairedItem: { item: i } };
    });
    return { outputs: [items] };
  },
};

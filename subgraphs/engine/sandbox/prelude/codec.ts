/**
 * UTF-8, base64 and the digests of n8n's `hash()` for the prelude (no `crypto` or `btoa` in an isolate).
 * Its source text is evaluated in every sandbox context, so it must stay self-contained; hash constants
 * are derived on first use, so a context that never hashes pays nothing.
 */
export interface Codec {
  utf8(text: string): number[];
  fromUtf8(bytes: number[]): string;
  base64(bytes: number[]): string;
  fromBase64(text: string): number[];
  digest(algorithm: 'md5' | 'sha1' | 'sha224' | 'sha256' | 'sha384' | 'sha512' | 'sha3', bytes: number[]): string;
}

export function codec(): Codec {
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

  function utf8(text: string): number[] {
    const out: number[] = [];
    // Lone surrogates become U+FFFD, as a TextEncoder does.
    const wellFormed = text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
    for (const ch of wellFormed) {
      const c = ch.codePointAt(0)!;
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return out;
  }

  /** Lenient, as a TextDecoder: a malformed sequence becomes U+FFFD. */
  function fromUtf8(bytes: number[]): string {
    let out = '';
    for (let i = 0; i < bytes.length;) {
      const b = bytes[i]!;
      const len = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
      let c = len === 1 ? b : len ? b & (0xff >> (len + 1)) : -1;
      let n = 1;
      while (c >= 0 && n < len) {
        const next = bytes[i + n];
        if (next === undefined || (next & 0xc0) !== 0x80) break;
        c = (c << 6) | (next & 63);
        n++;
      }
      const valid = c >= 0 && n === len && !(len === 3 && (c < 0x800 || (c >= 0xd800 && c < 0xe000))) && !(len === 4 && (c < 0x10000 || c > 0x10ffff));
      out += valid ? String.fromCodePoint(c) : '\ufffd';
      i += valid ? len : Math.max(1, n);
    }
    return out;
  }

  function base64(bytes: number[]): string {
    let out = '';
    for (let i = 0; i < bytes.length; i += 3) {
      const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
      out += B64[n >> 18]! + B64[(n >> 12) & 63]! + (i + 1 < bytes.length ? B64[(n >> 6) & 63]! : '=') + (i + 2 < bytes.length ? B64[n & 63]! : '=');
    }
    return out;
  }

  /** Forgiving like js-base64 (n8n's): URL-safe letters accepted, anything else outside the alphabet skipped. */
  function fromBase64(text: string): number[] {
    const clean = text
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .replace(/[^A-Za-z0-9+/]/g, '');
    const out: number[] = [];
    let acc = 0;
    let bits = 0;
    for (const ch of clean) {
      acc = (acc << 6) | B64.indexOf(ch);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out.push((acc >> bits) & 0xff);
      }
    }
    return out;
  }

  const hex = (words: number[], bytesPerWord: number, littleEndian = false): string =>
    words
      .map((w) => {
        let s = '';
        for (let k = 0; k < bytesPerWord; k++) {
          const shift = littleEndian ? 8 * k : 8 * (bytesPerWord - 1 - k);
          s += ((w >>> shift) & 0xff).toString(16).padStart(2, '0');
        }
        return s;
      })
      .join('');

  /** Message padding of the MD and SHA-2 families: 0x80, zeros, the bit length in `lengthBytes` bytes. */
  function pad(bytes: number[], block: number, lengthBytes: number, littleEndian: boolean): number[] {
    const out = bytes.slice();
    out.push(0x80);
    while ((out.length + lengthBytes) % block !== 0) out.push(0);
    const bitLength = BigInt(bytes.length) * 8n;
    const len: number[] = [];
    for (let k = 0; k < lengthBytes; k++) len.push(Number((bitLength >> BigInt(8 * k)) & 0xffn));
    out.push(...(littleEndian ? len : len.reverse()));
    return out;
  }

  const rotl = (x: number, n: number) => (x << n) | (x >>> (32 - n));
  const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));
  const word = (b: number[], i: number) => (b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!;

  let md5Table: { k: number[]; s: number[] } | undefined;
  function md5(bytes: number[]): string {
    md5Table ??= {
      k: Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0),
      s: [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21],
    };
    const { k, s } = md5Table;
    const m = pad(bytes, 64, 8, true);
    const h = [0x67452301, 0xefcdab89 | 0, 0x98badcfe | 0, 0x10325476];
    for (let off = 0; off < m.length; off += 64) {
      const x = Array.from({ length: 16 }, (_, j) => m[off + 4 * j]! | (m[off + 4 * j + 1]! << 8) | (m[off + 4 * j + 2]! << 16) | (m[off + 4 * j + 3]! << 24));
      let [a, b, c, d] = h as [number, number, number, number];
      for (let i = 0; i < 64; i++) {
        const round = i >> 4;
        const f = round === 0 ? (b & c) | (~b & d) : round === 1 ? (d & b) | (~d & c) : round === 2 ? b ^ c ^ d : c ^ (b | ~d);
        const g = round === 0 ? i : round === 1 ? (5 * i + 1) % 16 : round === 2 ? (3 * i + 5) % 16 : (7 * i) % 16;
        const t = d;
        d = c;
        c = b;
        b = (b + rotl((a + f + k[i]! + x[g]!) | 0, s[round * 4 + (i % 4)]!)) | 0;
        a = t;
      }
      h[0] = (h[0]! + a) | 0;
      h[1] = (h[1]! + b) | 0;
      h[2] = (h[2]! + c) | 0;
      h[3] = (h[3]! + d) | 0;
    }
    return hex(h, 4, true);
  }

  function sha1(bytes: number[]): string {
    const m = pad(bytes, 64, 8, false);
    const h = [0x67452301, 0xefcdab89 | 0, 0x98badcfe | 0, 0x10325476, 0xc3d2e1f0 | 0];
    const K = [0x5a827999, 0x6ed9eba1, 0x8f1bbcdc | 0, 0xca62c1d6 | 0];
    for (let off = 0; off < m.length; off += 64) {
      const w: number[] = [];
      for (let i = 0; i < 80; i++) w[i] = i < 16 ? word(m, off + 4 * i) : rotl(w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!, 1);
      let [a, b, c, d, e] = h as [number, number, number, number, number];
      for (let i = 0; i < 80; i++) {
        const r = Math.floor(i / 20);
        const f = r === 0 ? (b & c) | (~b & d) : r === 2 ? (b & c) | (b & d) | (c & d) : b ^ c ^ d;
        const t = (rotl(a, 5) + f + e + K[r]! + w[i]!) | 0;
        e = d;
        d = c;
        c = rotl(b, 30);
        b = a;
        a = t;
      }
      [a, b, c, d, e].forEach((v, j) => (h[j] = (h[j]! + v) | 0));
    }
    return hex(h, 4);
  }

  // SHA-2 constants: fractional parts of the square roots (initial values) and cube roots (round
  // constants) of the first primes, 64 bits each (SHA-256 uses their upper 32 bits).
  let sha2Table: { k: bigint[]; sqrt: bigint[] } | undefined;
  function sha2Constants() {
    if (sha2Table) return sha2Table;
    const primes: number[] = [];
    for (let n = 2; primes.length < 80; n++) if (primes.every((p) => n % p !== 0)) primes.push(n);
    const root = (value: bigint, degree: bigint) => {
      // floor(value^(1/degree)), by Newton's method from above
      let x = 1n << (BigInt(value.toString(2).length) / degree + 1n);
      for (;;) {
        const y = ((degree - 1n) * x + value / x ** (degree - 1n)) / degree;
        if (y >= x) return x;
        x = y;
      }
    };
    const frac64 = (p: number, degree: bigint) => root(BigInt(p) << (64n * degree), degree) & ((1n << 64n) - 1n);
    sha2Table = { k: primes.map((p) => frac64(p, 3n)), sqrt: primes.slice(0, 16).map((p) => frac64(p, 2n)) };
    return sha2Table;
  }

  function sha256(bytes: number[], variant: 224 | 256): string {
    const { k: k64, sqrt } = sha2Constants();
    const K = k64.slice(0, 64).map((v) => Number(v >> 32n) | 0);
    const h = variant === 256 ? sqrt.slice(0, 8).map((v) => Number(v >> 32n) | 0) : sqrt.slice(8, 16).map((v) => Number(v & 0xffffffffn) | 0);
    const m = pad(bytes, 64, 8, false);
    for (let off = 0; off < m.length; off += 64) {
      const w: number[] = [];
      for (let i = 0; i < 64; i++) {
        if (i < 16) w[i] = word(m, off + 4 * i);
        else {
          const s0 = rotr(w[i - 15]!, 7) ^ rotr(w[i - 15]!, 18) ^ (w[i - 15]! >>> 3);
          const s1 = rotr(w[i - 2]!, 17) ^ rotr(w[i - 2]!, 19) ^ (w[i - 2]! >>> 10);
          w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
        }
      }
      let [a, b, c, d, e, f, g, hh] = h as [number, number, number, number, number, number, number, number];
      for (let i = 0; i < 64; i++) {
        const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
        const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) | 0, c, b, a, (t1 + t2) | 0];
      }
      [a, b, c, d, e, f, g, hh].forEach((v, j) => (h[j] = (h[j]! + v) | 0));
    }
    return hex(h.slice(0, variant / 32), 4);
  }

  function sha512(bytes: number[], variant: 384 | 512): string {
    const { k: K, sqrt } = sha2Constants();
    const MASK = (1n << 64n) - 1n;
    const rot = (x: bigint, n: bigint) => ((x >> n) | (x << (64n - n))) & MASK;
    const h = (variant === 512 ? sqrt.slice(0, 8) : sqrt.slice(8, 16)).slice();
    const m = pad(bytes, 128, 16, false);
    for (let off = 0; off < m.length; off += 128) {
      const w: bigint[] = [];
      for (let i = 0; i < 80; i++) {
        if (i < 16) w[i] = (BigInt(word(m, off + 8 * i) >>> 0) << 32n) | BigInt(word(m, off + 8 * i + 4) >>> 0);
        else {
          const s0 = rot(w[i - 15]!, 1n) ^ rot(w[i - 15]!, 8n) ^ (w[i - 15]! >> 7n);
          const s1 = rot(w[i - 2]!, 19n) ^ rot(w[i - 2]!, 61n) ^ (w[i - 2]! >> 6n);
          w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) & MASK;
        }
      }
      let [a, b, c, d, e, f, g, hh] = h as [bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint];
      for (let i = 0; i < 80; i++) {
        const t1 = (hh + (rot(e, 14n) ^ rot(e, 18n) ^ rot(e, 41n)) + ((e & f) ^ (~e & MASK & g)) + K[i]! + w[i]!) & MASK;
        const t2 = ((rot(a, 28n) ^ rot(a, 34n) ^ rot(a, 39n)) + ((a & b) ^ (a & c) ^ (b & c))) & MASK;
        [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) & MASK, c, b, a, (t1 + t2) & MASK];
      }
      [a, b, c, d, e, f, g, hh].forEach((v, j) => (h[j] = (h[j]! + v) & MASK));
    }
    return h
      .slice(0, variant / 64)
      .map((v) => v.toString(16).padStart(16, '0'))
      .join('');
  }

  // Keccak-f[1600] for SHA3-512 (rate 72 bytes, domain padding 0x06): round constants from the
  // standard's LFSR, rotation offsets from its (x, y) walk.
  let keccakTable: { rc: bigint[]; rot: number[]; lane: number[] } | undefined;
  function keccakConstants() {
    if (keccakTable) return keccakTable;
    let r = 1;
    const bit = () => {
      const out = r & 1;
      r = r & 0x80 ? ((r << 1) ^ 0x71) & 0xff : r << 1;
      return out;
    };
    const rc = Array.from({ length: 24 }, () => {
      let c = 0n;
      for (let j = 0; j < 7; j++) if (bit()) c |= 1n << BigInt(2 ** j - 1);
      return c;
    });
    const rot = new Array<number>(25).fill(0);
    // pi: lane (x, y) moves to (y, 2x + 3y)
    const lane = new Array<number>(25).fill(0);
    let [x, y] = [1, 0];
    for (let t = 0; t < 24; t++) {
      rot[x + 5 * y] = (((t + 1) * (t + 2)) / 2) % 64;
      [x, y] = [y, (2 * x + 3 * y) % 5];
    }
    for (let px = 0; px < 5; px++) for (let py = 0; py < 5; py++) lane[px + 5 * py] = py + 5 * ((2 * px + 3 * py) % 5);
    keccakTable = { rc, rot, lane };
    return keccakTable;
  }

  function sha3(bytes: number[]): string {
    const { rc, rot, lane } = keccakConstants();
    const MASK = (1n << 64n) - 1n;
    const rotl64 = (v: bigint, n: number) => (n === 0 ? v : ((v << BigInt(n)) | (v >> BigInt(64 - n))) & MASK);
    const rate = 72;
    const m = bytes.slice();
    m.push(0x06);
    while (m.length % rate !== 0) m.push(0);
    m[m.length - 1]! |= 0x80;
    const s = new Array<bigint>(25).fill(0n);
    for (let off = 0; off < m.length; off += rate) {
      for (let i = 0; i < rate / 8; i++) {
        let v = 0n;
        for (let k = 7; k >= 0; k--) v = (v << 8n) | BigInt(m[off + 8 * i + k]!);
        s[i] = s[i]! ^ v;
      }
      for (let round = 0; round < 24; round++) {
        const c = [0, 1, 2, 3, 4].map((x) => s[x]! ^ s[x + 5]! ^ s[x + 10]! ^ s[x + 15]! ^ s[x + 20]!);
        for (let x = 0; x < 5; x++) {
          const d = c[(x + 4) % 5]! ^ rotl64(c[(x + 1) % 5]!, 1);
          for (let y = 0; y < 25; y += 5) s[x + y] = s[x + y]! ^ d;
        }
        const b = new Array<bigint>(25);
        for (let i = 0; i < 25; i++) b[lane[i]!] = rotl64(s[i]!, rot[i]!);
        for (let y = 0; y < 25; y += 5) for (let x = 0; x < 5; x++) s[x + y] = b[x + y]! ^ (~b[((x + 1) % 5) + y]! & MASK & b[((x + 2) % 5) + y]!);
        s[0] = s[0]! ^ rc[round]!;
      }
    }
    let out = '';
    for (let i = 0; i < 8; i++)
      for (let k = 0; k < 8; k++)
        out += Number((s[i]! >> BigInt(8 * k)) & 0xffn)
          .toString(16)
          .padStart(2, '0');
    return out;
  }

  function digest(algorithm: string, bytes: number[]): string {
    switch (algorithm) {
      case 'md5':
        return md5(bytes);
      case 'sha1':
        return sha1(bytes);
      case 'sha224':
      case 'sha256':
        return sha256(bytes, algorithm === 'sha224' ? 224 : 256);
      case 'sha384':
      case 'sha512':
        return sha512(bytes, algorithm === 'sha384' ? 384 : 512);
      default:
        return sha3(bytes);
    }
  }

  return { utf8, fromUtf8, base64, fromBase64, digest };
}
